import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../observability/logger.js';
import { KubeApiError } from '../kube/client.js';
import { ApiError, ServiceUnavailableError, credentialsRefused, reasonForCode, statusBody } from './errors.js';

/** Any route that nothing served: a `Status`, as kube-apiserver answers unknown paths. */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new ApiError(404, 'NotFound', `the server could not find the requested resource (${req.method} ${req.path})`));
}

/**
 * The one place an error becomes a response. Errors we did not raise (body-parser, bugs) keep their HTTP code when
 * they carry a 4xx one; anything else is a 500 whose detail goes to the log, never to the client.
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void =>
    answerError(logger, err, req, res, req.path);
}

/** `errorHandler` without Express: for the forwarded requests' pipeline (and Express's). */
export function answerError(
  logger: Logger,
  err: unknown,
  req: IncomingMessage & { requestId?: string },
  res: ServerResponse,
  path: string,
) {
  const status =
    err instanceof ApiError
      ? err.toStatus()
      : err instanceof KubeApiError
        ? clusterFault(err).toStatus()
        : (() => {
            const code = httpCodeOf(err);
            const message =
              code < 500 && err instanceof Error ? err.message : 'an internal error occurred; see the server log';
            return statusBody(code, reasonForCode(code), message);
          })();
  if (status.code >= 500) {
    logger.error('request failed', {
      requestId: req.requestId,
      path,
      error: describe(err),
    });
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (status.details?.retryAfterSeconds) res.setHeader('Retry-After', String(status.details.retryAfterSeconds));
  // Forwarded requests carry their id to here; Express's pipeline has set the header already.
  if (req.requestId !== undefined && !res.hasHeader('X-Request-Id')) res.setHeader('X-Request-Id', req.requestId);
  const body = JSON.stringify(status);
  res.statusCode = status.code;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/**
 * A request kapi made of kube-apiserver for itself failed and nothing handled it: the cluster's fault (503), never
 * the caller's. A 401 there refused kapi's own credentials.
 */
function clusterFault(err: KubeApiError): ApiError {
  return err.code === 401
    ? credentialsRefused()
    : new ServiceUnavailableError(`kube-apiserver answered ${err.code}; try again`, 1);
}

function httpCodeOf(err: unknown): number {
  const candidate =
    (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown })?.statusCode;
  return typeof candidate === 'number' && candidate >= 400 && candidate < 600 ? candidate : 500;
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
