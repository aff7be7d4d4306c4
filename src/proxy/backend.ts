import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
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

/** Raised on the request when the response head did not come in time. */
export class ResponseTimeoutError extends Error {
  readonly code = 'ERESPONSETIMEOUT';
}

/** Sends requests to kube-apiserver over the connection's TLS settings. */
export interface Backend {
  /** `host[:port]` for the Host header. */
  readonly host: string;
  send(request: BackendRequest): http.ClientRequest;
  /** Closes the sockets this backend opened itself (long-running requests). */
  close(): void;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
// Above kube-apiserver's own 60 s request timeout, so its 504 Status normally arrives first.
const DEFAULT_RESPONSE_TIMEOUT_MS = 120_000;
/** A dead peer on a long-lived stream is noticed by TCP keep-alive probes starting after this idle time. */
const STREAM_KEEPALIVE_MS = 30_000;

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
    close() {
      streamAgent.destroy();
    },
  };
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

/** A new socket must connect (and finish its TLS handshake) in time; a pooled socket is already connected. */
function limitConnect(req: http.ClientRequest, socket: Socket, timeoutMs: number): void {
  const tls = socket instanceof TLSSocket;
  if (req.reusedSocket || (!tls && !socket.connecting)) return;
  const timer = setTimeout(() => {
    const error = Object.assign(new Error(`no connection within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
    req.destroy(error);
  }, timeoutMs);
  timer.unref();
  const done = () => clearTimeout(timer);
  socket.once(tls ? 'secureConnect' : 'connect', done);
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
  const code = (error as { code?: unknown } | null)?.code;
  return new ServiceUnavailableError(
    typeof code === 'string' && /^[A-Z_]+$/.test(code)
      ? `kube-apiserver is unavailable (${code})`
      : 'kube-apiserver is unavailable',
  );
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
