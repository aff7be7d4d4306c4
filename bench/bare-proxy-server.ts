import http from 'node:http';
import https from 'node:https';
import { Pool } from 'undici';

/**
 * The least a Node proxy can do for a bodiless GET (and a watch, relayed chunk by chunk), as a yardstick for kapi's
 * forwarding: the same client library and pool settings as kapi's backend (src/proxy/backend.ts), the same identity
 * headers (kapi's service-account token and Impersonate-*), the answer held and written once with its length, as kapi
 * does; no authentication, audit log, metrics or header checks. Its CPU per request is what this machine charges any
 * Node proxy on the path; kapi's above it is kapi's own. Served by a process of its own (bare-proxy-main.ts), or from
 * inside kapi's process (bare-proxy-in-kapi.ts, BENCH_BARE_PROXY_IN_KAPI=1).
 */
export interface BareProxyOptions {
  backendUrl: string;
  /** PEM: the backend's CA. */
  ca?: string;
  servername?: string;
  /** Added to every request (the caller's Authorization is dropped). */
  headers: Record<string, string | string[]>;
  /**
   * `https`: Node's core client with a keep-alive agent, the answer piped through as it comes: the yardstick issue 27
   * was measured against from outside (what a plain Node proxy does), beside the bench's own, which does as kapi does.
   */
  client?: 'undici' | 'https';
}

/** Not relayed either way: hop-by-hop, the caller's credentials, and framing the proxy sets itself. */
const DROPPED = new Set(['authorization', 'host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function relayed(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!DROPPED.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

/** Headers as one flat list of names and values, a repeated header once per value. */
function flat(headers: Record<string, string | string[]>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : [value]) out.push(name, one);
  }
  return out;
}

/** A watch (`watch=1` or `watch=true`) is relayed chunk by chunk as it comes; every other answer is held whole. */
const WATCH = /[?&]watch=(1|true)(&|$)/;

/** The bare proxy's request listener and how to close its pool. */
export function bareProxy(options: BareProxyOptions): { listener: http.RequestListener; close(): void } {
  if (options.client === 'https') return coreHttpsProxy(options);
  const backend = new URL(options.backendUrl);
  const basePath = backend.pathname.replace(/\/+$/, '');
  const pool = new Pool(backend.origin, {
    connections: 256,
    pipelining: 1,
    allowH2: false,
    connect: { ca: options.ca, servername: options.servername },
    bodyTimeout: 0,
  });
  const added = ['Host', backend.host, ...flat(options.headers)];
  const listener: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    let code = 502;
    let head: string[] = [];
    const streaming = WATCH.test(req.url ?? '');
    pool.dispatch(
      {
        method: req.method ?? 'GET',
        path: basePath + (req.url ?? '/'),
        headers: [...relayed(req.rawHeaders), ...added],
      },
      {
        onRequestStart(controller) {
          if (streaming) res.once('close', () => controller.abort(new Error('the caller went away')));
        },
        onResponseStart(controller, statusCode) {
          code = statusCode;
          head = relayed(((controller.rawHeaders ?? []) as Buffer[]).map((value) => value.toString('latin1')));
          if (streaming) res.writeHead(code, head).flushHeaders();
        },
        onResponseData(_controller, chunk) {
          if (streaming) res.write(chunk);
          else chunks.push(chunk);
        },
        onResponseEnd() {
          if (streaming) return void res.end();
          const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          head.push('Content-Length', String(body.length));
          res.writeHead(code, head);
          res.end(body);
        },
        onResponseError(_controller, error) {
          if (res.headersSent) return void res.destroy();
          res.writeHead(502, { 'Content-Type': 'text/plain' });
          res.end(error.message);
        },
      },
    );
  };
  return { listener, close: () => void pool.destroy() };
}

/**
 * With Node's core `https` client (`http` for a plain-http backend, as the sandbox's with BENCH_SANDBOX_TLS=0): a
 * keep-alive agent, the same identity headers, the answer piped as it comes.
 */
function coreHttpsProxy(options: BareProxyOptions): { listener: http.RequestListener; close(): void } {
  const backend = new URL(options.backendUrl);
  const basePath = backend.pathname.replace(/\/+$/, '');
  const secure = backend.protocol === 'https:';
  const agent = secure
    ? new https.Agent({ keepAlive: true, maxSockets: 256, ca: options.ca, servername: options.servername })
    : new http.Agent({ keepAlive: true, maxSockets: 256 });
  const request = secure ? https.request : http.request;
  // given as a flat list, the headers get no Host of Node's own
  const added = ['Host', backend.host, ...flat(options.headers)];
  const listener: http.RequestListener = (req, res) => {
    const upstream = request(
      {
        host: backend.hostname,
        port: backend.port,
        method: req.method,
        path: basePath + (req.url ?? '/'),
        headers: [...relayed(req.rawHeaders), ...added],
        agent,
      },
      (answer) => {
        // its length kept when it came with one; a chunked answer goes on chunked, framed by Node
        const length = answer.headers['content-length'];
        const head = relayed(answer.rawHeaders);
        if (length !== undefined) head.push('Content-Length', length);
        res.writeHead(answer.statusCode ?? 502, head);
        answer.once('error', () => res.destroy());
        answer.pipe(res);
      },
    );
    upstream.once('error', (error) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(error.message);
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };
  return { listener, close: () => agent.destroy() };
}
