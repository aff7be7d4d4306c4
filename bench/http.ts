import type http from 'node:http';
import { request } from './tls.js';

export interface HttpAnswer {
  status: number;
  body: Buffer;
  headers?: http.IncomingHttpHeaders;
}

export interface HttpCall {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: http.Agent;
  timeoutMs?: number;
}

/**
 * A request unanswered this long (no byte, idle socket) is an error, never a hang: one stuck answer once held a whole
 * run until an outer `timeout` killed it. BENCH_REQUEST_TIMEOUT_MS changes it.
 */
export const REQUEST_TIMEOUT_MS = Number(process.env.BENCH_REQUEST_TIMEOUT_MS ?? 30_000);

/** One request over node:http(s) (the backend's trust for https); the whole body is read. No retries, no redirects: a benchmark sees what it gets. */
export function send(url: string, call: HttpCall = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...call.headers };
    if (call.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(call.body));
    const req = request(url, { method: call.method ?? 'GET', headers, agent: call.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const timeoutMs = call.timeoutMs ?? REQUEST_TIMEOUT_MS;
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.end(call.body);
  });
}

/** As `send`, for a JSON answer with the expected status; anything else is an error quoting the start of the body. */
export async function sendJson<T>(url: string, call: HttpCall & { expect?: number } = {}): Promise<T> {
  const answer = await send(url, call);
  const expect = call.expect ?? 200;
  if (answer.status !== expect) throw new Error(`${call.method ?? 'GET'} ${pathOf(url)}: ${describeAnswer(answer)}`);
  return JSON.parse(answer.body.toString('utf8')) as T;
}

export function describeAnswer(answer: HttpAnswer): string {
  return `HTTP ${answer.status} ${answer.body.toString('utf8').slice(0, 200).replace(/\s+/g, ' ')}`;
}

/** The path of a URL without its query, for messages (queries may carry continue tokens, never credentials). */
export function pathOf(url: string): string {
  return new URL(url).pathname;
}

export function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

/** An access token from kapi's password grant (the default `kapi` client), or an error naming the answer. */
export async function passwordGrant(kapiUrl: string, user: { name: string; password: string }): Promise<string> {
  const answer = await sendJson<{ access_token: string }>(`${kapiUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: passwordGrantForm(user),
  });
  return answer.access_token;
}

/** The form of a password grant for `user` with the default `kapi` client. */
export function passwordGrantForm(user: { name: string; password: string }): string {
  return new URLSearchParams({
    grant_type: 'password',
    username: user.name,
    password: user.password,
    client_id: 'kapi',
    client_secret: 'kapi',
  }).toString();
}
