import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { RequestAuthenticator } from '../auth/authenticate.js';
import type { UserInfo } from '../auth/identity.js';
import type { KubeConnection } from '../kube/connection.js';
import type { Logger } from '../observability/logger.js';
import {
  BadRequestError,
  ForbiddenError,
  ServiceUnavailableError,
  UnauthorizedError,
  credentialsRefused,
} from '../server/errors.js';
import {
  backendFailure,
  closedBeforeAnswering,
  createBackend,
  isRedirect,
  reachedBackend,
  redirectRefused,
  type BackendOptions,
  type Exchange,
  type ExchangeHandler,
} from './backend.js';
import { declaresBodyOver, DEFAULT_MAX_REQUEST_BODY_BYTES, limitBody, requestEntityTooLarge } from './body-limit.js';
import { clientAddress, clientProto, type StreamGauge } from './client-info.js';
import { forwardRequestHeaders, forwardResponseHeaders } from './forward-headers.js';
import { hasRequestBody, isLongRunning, isRelayedUpgrade, originFormTarget, streamKind } from './request-kind.js';
import { responseCut } from './stream-end.js';
import type { StreamRegistry } from './stream-registry.js';
import { createUpgradeRelay, type UpgradeHandler } from './upgrade.js';
import type { TokenPassThrough } from './token-pass-through.js';

export interface ForwarderDeps {
  connection: KubeConnection;
  logger: Logger;
  /** Authenticates a raw upgrade request (no Express pipeline runs for upgrades). */
  authenticateRequest: RequestAuthenticator;
  /** Counts relayed watches and upgraded streams. */
  metrics?: { streams: StreamGauge };
  /** Long-running streams are registered here, so a revoked session or user cuts them. */
  streamRegistry?: StreamRegistry;
  backend?: BackendOptions;
  /** The largest body of an ordinary request, as kube-apiserver's --max-resource-write-bytes (3 MiB by default). */
  maxRequestBodyBytes?: number;
  /** When kube-apiserver accepts kapi's tokens, requests carry the caller's own instead of impersonating (SPEC §5). */
  passThrough?: TokenPassThrough;
}

/** A request on its way to kube-apiserver: kapi's request id, and the user once authenticated. */
export type ForwardedRequest = IncomingMessage & {
  /** A server's request always has both. */
  method: string;
  url: string;
  requestId: string;
  clientRequestId?: string;
  user?: UserInfo;
};
/** Where a request that cannot be forwarded goes: the error becomes a `Status` answer. */
export type Fail = (error: unknown) => void;
/** Forwards one authenticated request (`req.user` set), or hands `fail` the error to answer with. */
export type ForwardRequest = (req: ForwardedRequest, res: ServerResponse, fail: Fail) => void;

export interface Forwarder {
  /** For /api, /apis, /version and /openapi, after authentication (`req.user` set). */
  forward: ForwardRequest;
  /** For the http(s) server's 'upgrade' event. */
  handleUpgrade: UpgradeHandler;
  /** For `http.createServer({ shouldUpgradeCallback })`: other upgrades (h2c, other paths) stay ordinary requests. */
  shouldUpgrade(req: IncomingMessage): boolean;
  /** Closes the sockets of long-running requests' agent. */
  close(): void;
}

/**
 * The most of a short answer held until it ends, to go out in one write with its length (see `exchange`): every
 * single object kube-apiserver serves fits; at most this much per request in flight.
 */
export const HELD_ANSWER_BYTES = 32 * 1024;

/** A short answer while it is held: its head as it will go out, and the body so far. */
interface HeldAnswer {
  code: number;
  statusMessage: string;
  head: string[];
  chunks: Buffer[];
  bytes: number;
}

/** Errors on a pooled socket that kube-apiserver closed while idle: a bodiless request is safe to send again. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const STALE_SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Forwards /api and /apis to kube-apiserver as the caller: kapi's own credentials plus Impersonate-* for the
 * authenticated user. Requests and responses stream through unbuffered; the answer comes back unchanged except for
 * hop-by-hop headers, a redirect (502) and an unreachable kube-apiserver (503).
 */
export function createForwarder(deps: ForwarderDeps): Forwarder {
  const backend = createBackend(deps.connection, deps.backend);
  const credentials = () => deps.connection.authHeaders();
  const streams = deps.metrics?.streams;
  const maxBody = deps.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES;

  const forward = (
    req: ForwardedRequest,
    res: ServerResponse,
    next: Fail,
    user: UserInfo,
    target: string,
    auth: Record<string, string>,
    passed: boolean,
  ) => {
    const headers = forwardRequestHeaders(req.rawHeaders, {
      user,
      credentials: auth,
      backendHost: backend.host,
      clientIp: clientAddress(req.socket),
      clientProto: clientProto(req.socket),
      requestId: req.requestId,
      passThrough: passed,
    });
    if (!headers.ok) return next(new ForbiddenError(headers.message));
    if (res.destroyed) return;
    const longRunning = isLongRunning(req.method, target);
    const withBody = hasRequestBody(req.headers);
    if (!longRunning && !withBody) return exchange(req, res, next, target, headers.headers, passed);
    const limited = withBody && !longRunning;
    if (limited && declaresBodyOver(req.headers, maxBody)) return refuseBody(req, res, next, maxBody);
    let upstream: ClientRequest;
    let answered = false;
    let clientGone = false;
    let bodyRefused = false;

    res.once('close', () => {
      if (res.writableFinished) return;
      clientGone = true;
      upstream.destroy();
    });

    const send = (retry: boolean) => {
      upstream = backend.send({
        method: req.method,
        target,
        headers: headers.headers,
        longRunning,
        bodyless: !withBody,
      });
      upstream.on('response', (upstreamRes: IncomingMessage) => {
        answered = true;
        relayResponse(upstreamRes);
      });
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        if (clientGone || bodyRefused) return;
        // kube-apiserver answered and closed before taking the whole body (as it does past its own limit): its answer
        // still goes out whole, and the rest of the body is dropped. A cut answer is cut by the response's own error.
        if (answered) return void discardBody(req, upstream);
        if (retry && upstream.reusedSocket && STALE_SOCKET_ERRORS.has(error.code ?? '')) return send(false);
        failed(req, next, error, reachedBackend(upstream));
      });
      if (limited) {
        limitBody(req, maxBody, () => {
          discardBody(req, upstream);
          if (answered) return;
          // What was sent ends without its last chunk: kube-apiserver never sees a complete request.
          bodyRefused = true;
          upstream.destroy();
          refuseBody(req, res, next, maxBody);
        });
      }
      if (withBody) req.pipe(upstream);
      else upstream.end();
    };

    const relayResponse = (upstreamRes: IncomingMessage) => {
      const code = upstreamRes.statusCode ?? 502;
      if (isRedirect(code)) {
        upstreamRes.resume();
        return next(redirectRefused());
      }
      if (code === 401) {
        upstreamRes.resume();
        return next(refusedCredentials(passed));
      }
      res.writeHead(code, upstreamRes.statusMessage || undefined, answerHead(upstreamRes.rawHeaders, req.requestId));
      if (longRunning) {
        // A watch's head goes out now, not with its first event.
        res.flushHeaders();
        const kind = streams && streamKind(req.url);
        if (kind) streams.inc(kind);
        const unregister = deps.streamRegistry?.register(user, responseCut(upstreamRes, res));
        res.once('close', () => {
          if (kind) streams.dec(kind);
          unregister?.();
        });
      }
      // A cut backend stream reaches the client as a cut stream, never as a clean end. (Not `pipeline`: its
      // per-request AbortController costs ~10% of the forwarding CPU.)
      upstreamRes.once('error', () => res.destroy());
      upstreamRes.pipe(res);
    };

    // A request that may have reached kube-apiserver before a stale socket failed is retried only when repeating it
    // is harmless.
    send(!withBody && SAFE_METHODS.has(req.method));
  };

  /**
   * kube-apiserver refused the credentials sent: kapi's own (a fault of kapi's, 503, never the caller's 401), or the
   * caller's passed-through token, after which kapi impersonates; the caller is told to retry at once (client-go
   * does, on a 503 with Retry-After).
   */
  const refusedCredentials = (passed: boolean) => {
    if (!passed) {
      deps.connection.credentialsRefused();
      return credentialsRefused();
    }
    deps.passThrough?.refusedByCluster();
    return new ServiceUnavailableError(
      'kube-apiserver no longer accepts kapi’s tokens: kapi impersonates from now on; retry',
      1,
    );
  };

  /**
   * A 413 Status, then the connection closes; the rest of the body is read and dropped meanwhile, so a client still
   * sending it is not cut off before it can read the answer.
   */
  const refuseBody = (req: ForwardedRequest, res: ServerResponse, next: Fail, limit: number) => {
    res.setHeader('Connection', 'close');
    req.resume();
    next(requestEntityTooLarge(limit));
  };

  /**
   * No answer came: kube-apiserver closed a connection it had taken (502, not an outage), or could not be reached
   * at all (503).
   */
  const failed = (req: ForwardedRequest, next: Fail, error: NodeJS.ErrnoException, reached: boolean) => {
    const fields = { requestId: req.requestId, error: error.message };
    if (reached) {
      deps.logger.warn('kube-apiserver closed the connection before answering', fields);
      return next(closedBeforeAnswering(error));
    }
    deps.logger.warn('kube-apiserver unreachable', fields);
    next(backendFailure(error));
  };

  /**
   * A short request without a body (gets, lists, deletes: most of them), relayed as kube-apiserver answers it. An
   * answer is held until it ends, up to `HELD_ANSWER_BYTES`, and goes out as one write with its length: kube-apiserver
   * frames every body over 2 KiB as chunks, sent as several TLS records (4 KiB each, then the last chunk), and relaying
   * each as it came cost one write to the client, and one wake-up of it, per record. A larger answer (a long list)
   * streams on from there with the client's back-pressure.
   */
  const exchange = (
    req: ForwardedRequest,
    res: ServerResponse,
    next: Fail,
    target: string,
    headers: string[],
    passed: boolean,
  ) => {
    const relay = new RelayedAnswer(req, res, next, target, headers, passed);
    res.on('close', () => relay.clientClosed());
    // Sent again only when repeating it is harmless; a bodiless DELETE or POST may have reached kube-apiserver.
    relay.start(SAFE_METHODS.has(req.method));
  };

  /** One short exchange relayed to its client: its state in fields, the handler's steps as methods (no closures). */
  class RelayedAnswer implements ExchangeHandler {
    private current: Exchange | undefined;
    private answered = false;
    private clientGone = false;
    private retry = false;
    private held: HeldAnswer | undefined;
    /** Which dispatch is current: a retry started from within a dispatch must not be overwritten by it. */
    private attempts = 0;
    private resumeAfterDrain: (() => void) | undefined;

    constructor(
      private readonly req: ForwardedRequest,
      private readonly res: ServerResponse,
      private readonly next: Fail,
      private readonly target: string,
      private readonly headers: string[],
      private readonly passed: boolean,
    ) {}

    start(retry: boolean): void {
      this.retry = retry;
      const attempt = ++this.attempts;
      const current = backend.exchange({ method: this.req.method, target: this.target, headers: this.headers }, this);
      if (attempt === this.attempts) this.current = current;
    }

    clientClosed(): void {
      if (this.res.writableFinished) return;
      this.clientGone = true;
      this.current?.abort();
    }

    onHead(code: number, rawHeaders: string[], statusMessage: string): boolean {
      this.answered = true;
      if (isRedirect(code)) {
        this.next(redirectRefused());
        return false;
      }
      if (code === 401) {
        this.next(refusedCredentials(this.passed));
        return false;
      }
      this.held = { code, statusMessage, head: answerHead(rawHeaders, this.req.requestId), chunks: [], bytes: 0 };
      return true;
    }

    onData(chunk: Buffer): boolean {
      const held = this.held;
      if (!held) return this.send(chunk);
      held.chunks.push(chunk);
      held.bytes += chunk.length;
      if (held.bytes <= HELD_ANSWER_BYTES) return true;
      // a long answer: what came so far goes out now, the rest as it comes
      this.res.writeHead(held.code, held.statusMessage || undefined, held.head);
      this.held = undefined;
      let flowing = true;
      for (const part of held.chunks) flowing = this.res.write(part);
      if (flowing) return true;
      this.waitForDrain();
      return false;
    }

    onEnd(): void {
      const held = this.held;
      if (!held) return void this.res.end();
      this.held = undefined;
      const { code, statusMessage, head, chunks, bytes } = held;
      if (framesItsLength(this.req.method, code) && !hasHeader(head, 'content-length')) {
        head.push('Content-Length', String(bytes));
      }
      this.res.writeHead(code, statusMessage || undefined, head);
      this.res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, bytes));
    }

    onError(error: NodeJS.ErrnoException): void {
      if (this.clientGone) return;
      // A cut backend answer reaches the client as a cut answer, never as a clean end (or a complete one).
      if (this.answered) return void this.res.destroy();
      if (this.retry && STALE_SOCKET_ERRORS.has(error.code ?? '')) return this.start(false);
      failed(this.req, this.next, error, reachedBackend(error));
    }

    private send(chunk: Buffer): boolean {
      if (this.res.write(chunk)) return true;
      this.waitForDrain();
      return false;
    }

    private waitForDrain(): void {
      this.resumeAfterDrain ??= () => this.current?.resume();
      this.res.once('drain', this.resumeAfterDrain);
    }
  }

  const forwardRequest: ForwardRequest = (req, res, next) => {
    const user = req.user;
    // Defence in depth: never forward a request nobody authenticated, whatever the mount order.
    if (!user) return next(new UnauthorizedError());
    const target = originFormTarget(req.url);
    if (!target)
      return next(
        new BadRequestError(
          'the request target must be a plain path: no absolute URL, dot segments or encoded slashes',
        ),
      );
    const token = deps.passThrough?.tokenFor(user);
    if (token !== undefined) return forward(req, res, next, user, target, { Authorization: `Bearer ${token}` }, true);
    const current = deps.connection.currentAuthHeaders?.();
    if (current) return forward(req, res, next, user, target, current, false);
    credentials().then(
      (auth) => forward(req, res, next, user, target, auth, false),
      (error: unknown) => {
        deps.logger.error('kapi credentials for kube-apiserver unavailable', {
          requestId: req.requestId,
          error: error instanceof Error ? error.message : String(error),
        });
        next(new ServiceUnavailableError('kapi’s credentials for kube-apiserver are unavailable'));
      },
    );
  };

  return {
    forward: forwardRequest,
    handleUpgrade: createUpgradeRelay({
      backend,
      credentials,
      credentialsRefused: () => deps.connection.credentialsRefused(),
      authenticateRequest: deps.authenticateRequest,
      logger: deps.logger,
      streams,
      registry: deps.streamRegistry,
    }),
    shouldUpgrade: (req) => isRelayedUpgrade(req.url ?? '', req.headers.upgrade),
    close: () => backend.close(),
  };
}

/** Whether an answer's length may be stated: not for HEAD (its length is the GET's), 1xx, 204 or 304 (no body). */
function framesItsLength(method: string, code: number): boolean {
  return method !== 'HEAD' && code >= 200 && code !== 204 && code !== 304;
}

function hasHeader(flat: readonly string[], lowerName: string): boolean {
  for (let i = 0; i < flat.length; i += 2) if (flat[i]!.toLowerCase() === lowerName) return true;
  return false;
}

/** Stops sending the client's body to kube-apiserver; what else the client sends is read and dropped. */
function discardBody(req: IncomingMessage, upstream: ClientRequest): void {
  req.unpipe(upstream);
  req.resume();
}

/**
 * kube-apiserver's answer headers as relayed (hop-by-hop ones dropped, repeats such as Warning kept), with kapi's
 * X-Request-Id. Handed to `writeHead` as one flat list: on a response with no header set before, Node writes it as it
 * is, without building a header object.
 */
function answerHead(rawHeaders: readonly string[], requestId: string): string[] {
  const relayed = forwardResponseHeaders(rawHeaders);
  relayed.push('X-Request-Id', requestId);
  return relayed;
}
