import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { clientRequestIdOf, newRequestId } from '../observability/request-id.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** kapi's id for this request (audit line, X-Request-Id answer header, kube-apiserver's Audit-ID). */
    requestId: string;
    /** The client's own X-Request-Id when it sent a plausible one: logged beside kapi's id, never used as it. */
    clientRequestId?: string;
  }
}

export function requestId(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Request-Id', assignRequestId(req));
  next();
}

/**
 * kapi's id on the request (and the client's own, when plausible), without Express. The caller puts it in the
 * X-Request-Id answer header: the forwarder writes it with kube-apiserver's head, `answerError` with an error.
 */
export function assignRequestId(req: IncomingMessage & { requestId?: string; clientRequestId?: string }): string {
  const id = newRequestId();
  req.requestId = id;
  const given = clientRequestIdOf(req.headers['x-request-id']);
  if (given !== undefined) req.clientRequestId = given;
  return id;
}
