import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { Pool, type Dispatcher } from 'undici';
import type { KubeConnection } from '../kube/connection.js';
import { ApiError, ServiceUnavailableError } from '../server/errors.js';

export interface BackendOptions {
  /** A TCP connect (and TLS handshake) taking longer than this is abandoned: 503. */
  connectTimeoutMs?: number;
  /** An ordinary (not long-running) request whose response head takes longer than this is abandoned: 504. */
  responseTimeoutMs?: number;
}

export interface BackendRequest {
  method: string;
  /** Origin-form target (`/api/v1/nodes?x=y`), appended to kube-apiserver's base path. */
  target: string;
  /** Flat raw headers, as `forwardRequestHeaders` returns them. */
  headers: string[];
  /** Watches, logs, exec…: an unpooled socket with TCP keep-alive and no response timeout. */
  longRunning: boolean;
  /** The request carries no body: it is sent with no body framing at all (see `framedAsEmpty`). */
  bodyless: boolean;
}

/** An ordinary request without a body: no watch, stream or upgrade. */
export interface ShortRequest {
  method: string;
  /** Origin-form target, appended to kube-apiserver's base path. */
  target: string;
  /** Flat raw headers, as `forwardRequestHeaders` returns them (no body framing: there is no body). */
  headers: string[];
}

/** What a short exchange reports: the head once, then data and the end, or an error at any point. */
export interface ExchangeHandler {
  /** The response head, raw headers flat as Node's `rawHeaders`. `false`: the body is not wanted (discarded). */
  onHead(statusCode: number, rawHeaders: string[], statusMessage: string): boolean;
  /** A body chunk. `false` pauses the response until `resume()`. */
  onData(chunk: Buffer): boolean;
  onEnd(): void;
  /** Errors carry Node's codes (ECONNREFUSED, ECONNRESET, ETIMEDOUT) or are a `ResponseTimeoutError`. */
  onError(error: NodeJS.ErrnoException): void;
}

export interface Exchange {
  resume(): void;
  /** Gives up the exchange (the client went away); nothing more is reported. */
  abort(): void;
}

/** Raised on the request when the response head did not come in time. */
export class ResponseTimeoutError extends Error {
  readonly code = 'ERESPONSETIMEOUT';
}

/** Sends requests to kube-apiserver over the connection's TLS settings. */
export interface Backend {
  /** `host[:port]` for the Host header. */
  readonly host: string;
  send(request: BackendRequest): http.ClientRequest;
  /**
   * A short, bodiless request over a pooled HTTP/1.1 connection (undici: about a third less CPU a request than
   * `http.request`), relayed as it arrives. Watches, streams, upgrades and bodies go through `send`.
   */
  exchange(request: ShortRequest, handler: ExchangeHandler): Exchange;
  /** Closes the sockets this backend opened itself (long-running requests, the short-request pool). */
  close(): void;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
// Above kube-apiserver's own 60 s request timeout, so its 504 Status normally arrives first.
const DEFAULT_RESPONSE_TIMEOUT_MS = 120_000;
/** A dead peer on a long-lived stream is noticed by TCP keep-alive probes starting after this idle time. */
const STREAM_KEEPALIVE_MS = 30_000;
/** As the connection's agent: enough sockets for every concurrent short request. */
const POOL_CONNECTIONS = 256;
/** Idle pooled sockets are closed well before kube-apiserver's own 90 s idle timeout would close them under us. */
const POOL_IDLE_MS = 30_000;

export function createBackend(connection: KubeConnection, options: BackendOptions = {}): Backend {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const responseTimeoutMs = options.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS;
  const server = connection.server;
  const secure = server.protocol === 'https:';
  const transport = secure ? https : http;
  const basePath = server.pathname.replace(/\/+$/, '');
  // Long-running requests would pin the pooled agent's sockets (it caps them): they get their own unpooled agent
  // with the same TLS settings (CA, client certificate, server name).
  const streamAgent = secure
    ? new https.Agent({ ...(connection.agent as https.Agent).options, keepAlive: false, maxSockets: Infinity })
    : new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const tls = secure ? (connection.agent as https.Agent).options : {};
  const pool = new Pool(server.origin, {
    connections: POOL_CONNECTIONS,
    pipelining: 1,
    // HTTP/1.1 as every other request kapi sends; undici would otherwise offer h2 by ALPN.
    allowH2: false,
    connect: {
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      rejectUnauthorized: tls.rejectUnauthorized,
      servername: tls.servername,
      timeout: connectTimeoutMs,
    },
    headersTimeout: responseTimeoutMs,
    // as `send`: once the head is in, the body may take as long as it takes
    bodyTimeout: 0,
    keepAliveTimeout: POOL_IDLE_MS,
  });

  return {
    host: server.host,
    send(request) {
      const req = transport.request({
        protocol: server.protocol,
        hostname: server.hostname.replace(/^\[|\]$/g, ''),
        port: server.port || (secure ? 443 : 80),
        method: request.method,
        path: basePath + request.target,
        headers: request.bodyless ? framedAsEmpty(request.method, request.headers) : request.headers,
        agent: request.longRunning ? streamAgent : connection.agent,
      });
      req.on('socket', (socket: Socket) => {
        socket.setNoDelay(true);
        if (request.longRunning) socket.setKeepAlive(true, STREAM_KEEPALIVE_MS);
        limitConnect(req, socket, connectTimeoutMs);
      });
      if (!request.longRunning) limitResponseHead(req, responseTimeoutMs);
      return req;
    },
    exchange(request, handler) {
      return dispatchExchange(pool, basePath + request.target, request, handler, responseTimeoutMs);
    },
    close() {
      streamAgent.destroy();
      pool.destroy().catch(() => undefined);
    },
  };
}

function dispatchExchange(
  pool: Dispatcher,
  path: string,
  request: ShortRequest,
  handler: ExchangeHandler,
  responseTimeoutMs: number,
): Exchange {
  const exchange = new PooledExchange(handler, responseTimeoutMs);
  pool.dispatch({ method: request.method, path, headers: framedAsEmpty(request.method, request.headers) }, exchange);
  return exchange;
}

/**
 * One short exchange: undici's handler and the caller's `Exchange` in one object, its state in fields (no closures
 * made per request: this runs for most forwarded requests).
 */
class PooledExchange implements Dispatcher.DispatchHandler, Exchange {
  private controller: Dispatcher.DispatchController | undefined;
  private given = false;
  private discard = false;

  constructor(
    private readonly handler: ExchangeHandler,
    private readonly responseTimeoutMs: number,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.given) this.abandon();
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    _headers: unknown,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return; // 1xx: informational, the real head follows
    const raw = (controller.rawHeaders ?? []) as (Buffer | string)[];
    this.discard = !this.handler.onHead(statusCode, raw.map(latin1), statusMessage ?? '');
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.discard && !this.handler.onData(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    if (!this.discard) this.handler.onEnd();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (!this.given && !this.discard) this.handler.onError(nodeError(error, this.responseTimeoutMs));
  }

  resume(): void {
    this.controller?.resume();
  }

  abort(): void {
    this.given = true;
    this.abandon();
  }

  private abandon(): void {
    this.controller?.abort(Object.assign(new Error('the client went away'), { code: 'ECANCELED' }));
  }
}

function latin1(value: Buffer | string): string {
  return typeof value === 'string' ? value : value.toString('latin1');
}

/** undici's errors in the terms `send` reports (and `backendFailure` and the stale-socket retry read). */
function nodeError(error: Error, responseTimeoutMs: number): NodeJS.ErrnoException {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT')
    return new ResponseTimeoutError(`no response within ${responseTimeoutMs / 1000} s`);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return Object.assign(new Error(error.message), { code: 'ETIMEDOUT' });
  if (code === 'UND_ERR_SOCKET') {
    // "other side closed": the socket ended under the request, as a reset does for `send`
    const cause = (error.cause as NodeJS.ErrnoException | undefined)?.code;
    const closed = Object.assign(new Error(error.message), { code: cause ?? 'ECONNRESET' });
    closedUnder.add(closed);
    return closed;
  }
  return error;
}

/** Methods Node sends without a chunked body unless told otherwise. */
const UNCHUNKED_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/**
 * A bodiless POST would otherwise go out as `Transfer-Encoding: chunked` with an empty last chunk; on an upgrade
 * (kubectl's SPDY exec is a POST) those bytes would follow the request into the switched protocol. An explicit
 * `Content-Length: 0`, as client-go sends, avoids both.
 */
function framedAsEmpty(method: string, headers: string[]): string[] {
  if (UNCHUNKED_METHODS.has(method)) return headers;
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === 'content-length') return headers;
  return [...headers, 'Content-Length', '0'];
}

/** Requests whose connection to kube-apiserver was established (TCP and TLS), so their failure is not an outage. */
const connected = new WeakSet<http.ClientRequest>();
/** Errors of short exchanges whose connection kube-apiserver closed under them. */
const closedUnder = new WeakSet<Error>();

/**
 * Whether a failed request had reached kube-apiserver: a pooled socket or a new one that connected (`send`), or an
 * exchange whose connection was closed under it.
 */
export function reachedBackend(failed: http.ClientRequest | Error): boolean {
  if (failed instanceof Error) return closedUnder.has(failed);
  return failed.reusedSocket || connected.has(failed);
}

/** A new socket must connect (and finish its TLS handshake) in time; a pooled socket is already connected. */
function limitConnect(req: http.ClientRequest, socket: Socket, timeoutMs: number): void {
  const tls = socket instanceof TLSSocket;
  if (req.reusedSocket || (!tls && !socket.connecting)) {
    connected.add(req);
    return;
  }
  const timer = setTimeout(() => {
    const error = Object.assign(new Error(`no connection within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
    req.destroy(error);
  }, timeoutMs);
  timer.unref();
  const done = () => clearTimeout(timer);
  socket.once(tls ? 'secureConnect' : 'connect', () => {
    connected.add(req);
    done();
  });
  socket.once('close', done);
}

function limitResponseHead(req: http.ClientRequest, timeoutMs: number): void {
  const timer = setTimeout(
    () => req.destroy(new ResponseTimeoutError(`no response within ${timeoutMs / 1000} s`)),
    timeoutMs,
  );
  timer.unref();
  const done = () => clearTimeout(timer);
  req.once('response', done);
  req.once('close', done);
}

/** What a failure to reach kube-apiserver becomes for the caller: never a 500, and no internal detail. */
export function backendFailure(error: unknown): ApiError {
  if (error instanceof ResponseTimeoutError) {
    return new ApiError(504, 'Timeout', 'kube-apiserver did not answer in time');
  }
  return new ServiceUnavailableError(`kube-apiserver is unavailable${namedCode(error)}`);
}

/** ` (ECONNREFUSED)`: a system error's code, never its message (which may name internal addresses). */
function namedCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) ? ` (${code})` : '';
}

/**
 * kube-apiserver took the connection and closed it without an answer (mid-request, or a pooled connection it had
 * dropped): a 502, not the 503 of an unreachable kube-apiserver.
 */
export function closedBeforeAnswering(error: unknown): ApiError {
  return new ApiError(502, 'InternalError', `kube-apiserver closed the connection before answering${namedCode(error)}`);
}

/** The 502 that replaces a redirect from kube-apiserver. */
export function redirectRefused(): ApiError {
  return new ApiError(
    502,
    'InternalError',
    'kube-apiserver answered with a redirect; kapi does not follow or relay redirects',
  );
}

/** 3xx except 304 Not Modified, which is a cache answer rather than a redirect. */
export function isRedirect(statusCode: number): boolean {
  return statusCode >= 300 && statusCode < 400 && statusCode !== 304;
}
