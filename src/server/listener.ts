import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../observability/logger.js';
import { newRequestId } from '../observability/request-id.js';
import { clientAddress } from '../proxy/client-info.js';
import { closeGracefully, responseHead } from '../proxy/raw-http.js';
import type { ConnectionCap } from './connection-cap.js';
import {
  answerFormat,
  auditPath,
  CONNECT_REFUSED,
  errorAnswer,
  EXPECTATION_FAILED,
  MISSING_HOST,
  parserFailure,
  requestTargetIn,
  type AnswerFormat,
  type ParserFailure,
} from './framing-errors.js';

export interface Listener {
  readonly server: http.Server | https.Server;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then cuts what is left (watches). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * How long a client may take to send an ordinary request. Once a request is in — a watch, a log follow, an
 * exec/attach/port-forward upgrade — its answer may run as long as it runs: these bound receiving, never serving.
 */
export interface ConnectionTimeouts {
  /** From a connection's start (after its TLS handshake) or a request's first byte to the end of its headers. */
  readHeaderTimeoutMs: number;
  /** From a request's first byte to the end of its body. 0: unbounded. */
  readTimeoutMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  idleTimeoutMs: number;
}

export const DEFAULT_CONNECTION_TIMEOUTS: ConnectionTimeouts = {
  readHeaderTimeoutMs: 20_000,
  readTimeoutMs: 60_000,
  idleTimeoutMs: 65_000,
};

/** Node's default request line and header limit; larger heads are answered 431. */
const MAX_HEADER_BYTES = 16 * 1024;

/** Starts an HTTP(S) server and keeps track of its sockets so shutdown can drain them. */
export async function listen(
  handler: http.RequestListener,
  options: {
    port: number;
    host: string;
    tls?: https.ServerOptions;
    /** Which Upgrade requests leave Express (exec, watch over WebSocket) and who takes them. */
    upgrade?: {
      should(req: http.IncomingMessage): boolean;
      handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
    };
    timeouts?: ConnectionTimeouts;
    /** Shared by all listeners, so one address is capped across them. */
    cap?: ConnectionCap;
    /** Where answers Node's HTTP layer forced are logged (an audit line each). */
    logger?: Logger;
    /** The error body for a request target; by default RFC 6749 JSON under /oauth and a `Status` elsewhere. */
    errorFormat?: (target: string | undefined) => AnswerFormat;
  },
): Promise<Listener> {
  const timeouts = options.timeouts ?? DEFAULT_CONNECTION_TIMEOUTS;
  const serverOptions: http.ServerOptions = {
    ...nodeTimeouts(timeouts),
    maxHeaderSize: MAX_HEADER_BYTES,
    // Answered below in the API's own format instead of Node's bare 400.
    requireHostHeader: false,
    // Without shouldUpgradeCallback Node hands every Upgrade request (h2c included) to the 'upgrade' listener.
    ...(options.upgrade ? { shouldUpgradeCallback: options.upgrade.should } : {}),
  };
  const answer = framingAnswerer(options.logger, options.errorFormat ?? answerFormat);
  const withHost: http.RequestListener = (req, res) => {
    if (req.headers.host === undefined && req.httpVersion === '1.1') return answer.onResponse(req, res, MISSING_HOST);
    handler(req, res);
  };
  const server = options.tls
    ? https.createServer(
        {
          minVersion: 'TLSv1.2',
          // A connection that never completes its handshake is held no longer than one that never sends headers.
          handshakeTimeout: timeouts.readHeaderTimeoutMs || undefined,
          ...options.tls,
          ...serverOptions,
        },
        withHost,
      )
    : http.createServer(serverOptions, withHost);
  if (options.upgrade) server.on('upgrade', options.upgrade.handle);
  server.on('clientError', answer.onClientError);
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) =>
    answer.onResponse(req, res, EXPECTATION_FAILED),
  );
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => answer.onSocket(req, socket, CONNECT_REFUSED));

  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    options.cap?.track(socket);
    if (socket.destroyed) return;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    stop: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // a keep-alive connection whose answer ends during the grace (a watch ended by the drain) is closed then,
        // not when its idle timeout runs out
        const idle = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, graceMs);
        timer.unref();
        idle.unref();
        server.once('close', () => {
          clearTimeout(timer);
          clearInterval(idle);
        });
      }),
  };
}

/** While stopping, connections that have become idle are closed this often. */
const IDLE_SWEEP_MS = 100;

/**
 * Node's server settings for the timeouts. Node checks the header and request deadlines on an interval (30 s by
 * default); it runs here at a quarter of the shorter deadline, so a deadline is kept within a quarter of itself.
 */
export function nodeTimeouts(timeouts: ConnectionTimeouts): http.ServerOptions {
  const deadlines = [timeouts.readHeaderTimeoutMs, timeouts.readTimeoutMs].filter((ms) => ms > 0);
  const shortest = deadlines.length > 0 ? Math.min(...deadlines) : 120_000;
  return {
    headersTimeout: timeouts.readHeaderTimeoutMs,
    requestTimeout: timeouts.readTimeoutMs,
    keepAliveTimeout: timeouts.idleTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(shortest / 4))),
  };
}

/** The target as the client sent it: Express rewrites `url` below a mounted router (`/oauth/token` → `/token`). */
function targetOf(req: http.IncomingMessage): string | undefined {
  return (req as http.IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url;
}

/** Kapi's answers where Node would write its own (bare 400, 408, 413, 417, 431) or none (CONNECT). */
function framingAnswerer(logger: Logger | undefined, formatOf: (target: string | undefined) => AnswerFormat) {
  const answered = new WeakSet<Duplex>();

  const audit = (socket: Duplex, target: string | undefined, status: number, method?: string) =>
    logger?.info('request', {
      audit: true,
      requestId: newRequestId(),
      verb: method,
      path: auditPath(target),
      status,
      sourceIp: clientAddress(socket as Socket),
    });

  /** Written by hand: there is no response object, or it must not be used. */
  const onSocket = (
    req: http.IncomingMessage | undefined,
    socket: Duplex,
    failure: ParserFailure,
    target = req && targetOf(req),
  ) => {
    answered.add(socket);
    const reply = errorAnswer(failure.status, failure.message, formatOf(target));
    socket.write(responseHead(reply.status, undefined, reply.headers), 'latin1');
    socket.write(reply.body);
    audit(socket, target, reply.status, req?.method);
    closeGracefully(socket);
  };

  return {
    onSocket,

    /** A request Node parsed but must not reach the app: answered on its own response, then the connection closes. */
    onResponse(req: http.IncomingMessage, res: http.ServerResponse, failure: ParserFailure) {
      const reply = errorAnswer(failure.status, failure.message, formatOf(targetOf(req)));
      res.writeHead(reply.status, reply.headers).end(reply.body);
      audit(req.socket, req.url, reply.status, req.method);
    },

    onClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) {
      const failure = parserFailure(error.code, { maxHeaderBytes: MAX_HEADER_BYTES });
      // Node's parser reports each later chunk of a broken connection again: it is answered once.
      if (!failure || answered.has(socket) || !socket.writable) return void socket.destroy();
      // An answer already under way cannot be replaced by another.
      const inFlight = (socket as Duplex & { _httpMessage?: http.ServerResponse })._httpMessage;
      if (inFlight?.headersSent) return void socket.destroy();
      // The request whose body is being read (a stalled upload), else the request line in the bytes that failed.
      const incoming = (socket as Duplex & { parser?: { incoming?: http.IncomingMessage | null } }).parser?.incoming;
      const current = incoming && !incoming.complete ? incoming : undefined;
      onSocket(current, socket, failure, current ? targetOf(current) : requestTargetIn(error.rawPacket));
    },
  };
}
