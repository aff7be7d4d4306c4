import http from 'node:http';
import https from 'node:https';
import type { KubeStatus } from '../server/errors.js';
import type { KubeConnection } from './connection.js';

/** An error answer from kube-apiserver, with its `Status` body when it sent one. */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: KubeStatus | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export interface KubeRequest {
  method?: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** A header given several values (`Impersonate-Group`) is sent once per value. */
  headers?: Record<string, string | string[]>;
  signal?: AbortSignal;
  /** Milliseconds before a request with no answer is abandoned (not used for watches). */
  timeoutMs?: number;
}

/**
 * Raw JSON access to the Kubernetes API through one connection. Objects stay plain JSON (no model classes), which
 * keeps caches small and fast; callers type them with the client-node interfaces.
 */
export class KubeClient {
  constructor(readonly connection: KubeConnection) {}

  async request<T>(req: KubeRequest): Promise<T> {
    const res = await this.send(req);
    const text = await readBody(res);
    const code = res.statusCode ?? 0;
    if (code >= 200 && code < 300) {
      try {
        return (text ? JSON.parse(text) : undefined) as T;
      } catch {
        // A garbled answer is the cluster's failure, not ours: callers map it like any other cluster error.
        throw new KubeApiError(502, undefined, `${req.method ?? 'GET'} ${req.path}: the answer was not JSON`);
      }
    }
    throw toKubeApiError(code, text, req);
  }

  /** Sends the request and resolves with the response once its head arrived, for streaming (watch, logs). */
  async stream(req: KubeRequest): Promise<http.IncomingMessage> {
    const res = await this.send(req);
    const code = res.statusCode ?? 0;
    if (code >= 200 && code < 300) return res;
    throw toKubeApiError(code, await readBody(res), req);
  }

  private async send(req: KubeRequest): Promise<http.IncomingMessage> {
    // A name taken from a caller's path may be "." or "..": URL would fold it into another path (a namespace's
    // objects into every namespace's), so such a path is refused as kube-apiserver refuses such a name.
    if (DOT_SEGMENT.test(req.path)) {
      const message = `${req.method ?? 'GET'} ${req.path}: a path segment may not be "." or ".."`;
      const status: KubeStatus = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason: 'BadRequest',
        code: 400,
      };
      throw new KubeApiError(400, status, message);
    }
    // Kept under the server's own path (a kube-apiserver behind a proxy prefix), as the forwarder does.
    const base = this.connection.server;
    const url = new URL(base.pathname.replace(/\/+$/, '') + req.path, base);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    const headers: Record<string, string | string[]> = {
      Accept: 'application/json',
      ...(await this.connection.authHeaders()),
      ...req.headers,
    };
    if (payload) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(
        url,
        { method: req.method ?? 'GET', headers, agent: this.connection.agent, signal: req.signal },
        (res) => {
          // every request here carries kapi's credentials: a 401 is about them, never about a caller
          if (res.statusCode === 401) this.connection.credentialsRefused();
          else this.connection.health.accepted();
          resolve(res);
        },
      );
      if (req.timeoutMs) {
        request.setTimeout(req.timeoutMs, () =>
          request.destroy(new Error(`no answer from ${url.origin} in ${req.timeoutMs} ms`)),
        );
      }
      request.on('error', reject);
      request.end(payload);
    });
  }
}

function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** "." or ".." as a whole path segment, also percent-encoded (URL folds "%2e%2e" as it folds ".."). */
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

function toKubeApiError(code: number, text: string, req: KubeRequest): KubeApiError {
  let status: KubeStatus | undefined;
  try {
    const parsed = JSON.parse(text) as KubeStatus;
    if (parsed && parsed.kind === 'Status') status = parsed;
  } catch {
    // not JSON: keep the code only
  }
  return new KubeApiError(code, status, status?.message ?? `${req.method ?? 'GET'} ${req.path}: HTTP ${code}`);
}
