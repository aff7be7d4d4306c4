import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

/** Parsed JSON as the tests read it: any property path, checked by the assertions rather than the compiler. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** A sandbox with a small seed and no CRD directory unless asked, for fast tests. */
export function testSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ nodes: 6, podsPerNode: 4, crdDir: '/nonexistent', bookmarkIntervalMs: 200, ...options });
}

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** JSON request to the sandbox with a bearer token. */
export async function call<T = Record<string, unknown>>(
  sandbox: Sandbox,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; contentType?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const token = options.token === undefined ? sandbox.adminToken : options.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['Content-Type'] = options.contentType ?? 'application/json';
  }
  const res = await fetch(sandbox.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain text answers (logs, health) stay text
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export function configMap(name: string, data: Record<string, string> = { a: '1' }, labels?: Record<string, string>) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
}

/** Reads newline-delimited watch events from a streaming response until `count` arrived or `timeoutMs` passed. */
export async function readEvents(
  res: Response,
  count: number,
  timeoutMs = 3000,
): Promise<{ type: string; object: Json }[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { type: string; object: Json }[] = [];
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (events.length < count && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<{ done: true; value: undefined }>((resolve) => {
          timer = setTimeout(() => resolve({ done: true, value: undefined }), Math.max(1, deadline - Date.now()));
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim()) events.push(JSON.parse(line));
      }
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return events;
}

/** Opens a watch; the caller reads events and must abort the controller. */
export async function openWatch(
  sandbox: Sandbox,
  path: string,
  token = sandbox.adminToken,
): Promise<{ res: Response; abort: AbortController }> {
  const abort = new AbortController();
  const res = await fetch(sandbox.url + path, { headers: { Authorization: `Bearer ${token}` }, signal: abort.signal });
  return { res, abort };
}
