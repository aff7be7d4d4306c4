/**
 * HTTP to kapi with exact control of the bytes: header names in any case, repeated headers, several requests on one
 * connection. `fetch` would normalize all of these away, and they are what the SPEC §5 attacks are made of.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on a fresh connection; `headers` is a flat [name, value, …] list sent exactly as given. */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path: string; headers?: string[]; body?: string },
): Promise<RawAnswer> {
  const headers = ['Host', new URL(baseUrl).host, ...(options.headers ?? [])];
  if (options.body !== undefined) headers.push('Content-Length', String(Buffer.byteLength(options.body)));
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${options.path}`,
      { method: options.method ?? 'GET', headers, agent: false, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer to ${options.path} within 10 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

export function bearer(token: string): string[] {
  return ['Authorization', `Bearer ${token}`];
}

/**
 * Writes `text` on one TCP connection and collects everything until the server closes it, or `timeoutMs` passes
 * (then `closedByServer` is false).
 */
export function exchangeOnOneConnection(
  port: number,
  text: string,
  timeoutMs = 8_000,
): Promise<{ data: string; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data: Buffer.concat(chunks).toString('latin1'), closedByServer: false });
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks).toString('latin1'), closedByServer: true });
    });
    socket.write(text);
  });
}

/** The status codes of every HTTP response head in `data`, in order. */
export function responseCodes(data: string): number[] {
  return [...data.matchAll(/^HTTP\/1\.[01] (\d{3}) /gm)].map((match) => Number(match[1]));
}

/** A complete request as text: request line, headers, blank line. */
export function requestText(path: string, host: string, headers: string[], method = 'GET'): string {
  let text = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${text}\r\n`;
}

/** The headers of a WebSocket handshake offering kube's v5 channel protocol (as kubectl exec does). */
export function webSocketUpgrade(extra: string[] = []): string[] {
  return [
    'Connection',
    'Upgrade',
    'Upgrade',
    'websocket',
    'Sec-WebSocket-Version',
    '13',
    'Sec-WebSocket-Key',
    randomBytes(16).toString('base64'),
    'Sec-WebSocket-Protocol',
    'v5.channel.k8s.io',
    ...extra,
  ];
}

export interface WatchEvent {
  type: string;
  object: { metadata?: { name?: string; labels?: Record<string, string> }; [key: string]: unknown };
}

/** An open watch: its response head, and each event with the time it arrived. */
export interface OpenWatch {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: { event: WatchEvent; at: number }[];
  close(): void;
}

/** Opens a watch and resolves once its response head arrived; events are parsed line by line as they come. */
export function openWatch(baseUrl: string, path: string, headers: string[]): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, {
      headers: ['Host', new URL(baseUrl).host, ...headers],
      agent: false,
    });
    req.on('response', (res) => {
      const events: OpenWatch['events'] = [];
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
          const line = pending.slice(0, newline).trim();
          pending = pending.slice(newline + 1);
          if (line) events.push({ event: JSON.parse(line) as WatchEvent, at: Date.now() });
        }
      });
      res.on('error', () => undefined);
      resolve({ status: res.statusCode!, headers: res.headers, events, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}
