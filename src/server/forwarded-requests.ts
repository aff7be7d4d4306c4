import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import proxyAddr from 'proxy-addr';
import type { RequestAuthenticator } from '../auth/authenticate.js';
import { writeAuditLine } from '../observability/access-log.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Fail, ForwardedRequest, ForwardRequest } from '../proxy/forwarder.js';
import { answerError } from './error-handler.js';
import { assignRequestId } from './request-id.js';

/** Paths forwarded to kube-apiserver as the caller; nothing else kapi serves lives under them. */
const FORWARDED_PATH = /^\/(?:api|apis|version|openapi)(?:\/|$)/;

/**
 * The path of a request target, as Express routes it: the origin form up to its query, or an absolute form's path
 * (which the forwarder then refuses with a 400).
 */
export function requestPath(target: string): string {
  if (target.startsWith('/')) {
    const query = target.indexOf('?');
    return query === -1 ? target : target.slice(0, query);
  }
  try {
    return new URL(target).pathname;
  } catch {
    return target;
  }
}

export function isForwardedPath(path: string): boolean {
  return FORWARDED_PATH.test(path);
}

/** Serves a request on a forwarded path (`path`: its target's path, already worked out). */
export type ForwardedHandler = (req: IncomingMessage, res: ServerResponse, path: string) => void;

export interface ForwardingDeps {
  logger: Logger;
  /** Who sent the request (401/503 errors otherwise). */
  authenticate: RequestAuthenticator;
  forward: ForwardRequest;
  metrics?: Metrics;
  /** Proxies trusted to name the client in X-Forwarded-For (the audit line's sourceIp), as Express's `trust proxy`. */
  trustedProxies?: readonly string[];
}

/**
 * Forwarded requests, most of kapi's traffic, take this pipeline beside Express: request id → metrics → audit line →
 * authentication → forwarder, and every error becomes a `Status` through the same `answerError` Express uses.
 * The steps are Express's own for kapi's other paths; what is left out is Express itself. Express re-parents every
 * request and response object (`setPrototypeOf`), which made property reads in Node's HTTP code megamorphic; in some
 * process starts those reads missed V8's shared lookup cache on every request and forwarding cost a third more CPU.
 * Forwarded answers get no browser security headers: they come back as kube-apiserver sent them.
 */
export function forwardedRequests(deps: ForwardingDeps): ForwardedHandler {
  const trusted = deps.trustedProxies?.length ? proxyAddr.compile([...deps.trustedProxies]) : undefined;
  // Without trusted proxies the peer is the client (as Express's req.ip), and no X-Forwarded-For is parsed.
  const sourceIpOf = (req: IncomingMessage) =>
    trusted ? proxyAddr(req, trusted) : (req.socket.remoteAddress ?? undefined);
  const metrics = deps.metrics;
  // A line nobody keeps costs nothing: no listener, no fields gathered.
  const audited = deps.logger.isLevelEnabled('info');
  const forward = (req: ForwardedRequest, res: ServerResponse, fail: Fail, user: ForwardedRequest['user']) => {
    req.user = user;
    try {
      deps.forward(req, res, fail);
    } catch (error) {
      fail(error);
    }
  };
  return (incoming, res, path) => {
    const req = incoming as ForwardedRequest;
    assignRequestId(req);
    // One listener for both the metrics and the audit line, when the exchange ends (answered or abandoned). `on`, not
    // `once`: a response closes once, and `once` wraps every listener in two more objects.
    if (metrics || audited) {
      const started = performance.now();
      res.on('close', () => {
        const ms = performance.now() - started;
        if (metrics && res.writableFinished) metrics.answered(req.method, path, req.url, res.statusCode, ms / 1000);
        if (audited) writeAuditLine(deps.logger, req, res, path, sourceIpOf(req), ms);
      });
    }
    const fail: Fail = (error) => answerError(deps.logger, error, req, res, path);
    // As Express would: a step that throws instead of rejecting still ends in a Status, never in a crash.
    let user: ReturnType<RequestAuthenticator>;
    try {
      user = deps.authenticate(req);
    } catch (error) {
      return fail(error);
    }
    // nearly always known at once (from memory): forwarded without a promise in between
    if (user instanceof Promise) user.then((known) => forward(req, res, fail, known), fail);
    else forward(req, res, fail, user);
  };
}

/** Forwarded paths to `forwarded`, everything else to `app` (Express). */
export function withForwarding(forwarded: ForwardedHandler, app: RequestListener): RequestListener {
  return (req, res) => {
    const path = requestPath(req.url ?? '/');
    if (isForwardedPath(path)) forwarded(req, res, path);
    else app(req, res);
  };
}
