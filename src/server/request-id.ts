import type { IncomingMessage, ServerResponse } from 'node:http';
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
  assignRequestId(req, res);
  next();
}

/** `requestId` without Express: kapi's id on the request and in the X-Request-Id answer header. */
export function assignRequestId(
  req: IncomingMessage & { requestId?: string; clientRequestId?: string },
  res: ServerResponse,
): string {
  const id = newRequestId();
  req.requestId = id;
  const given = clientRequestIdOf(req.headers['x-request-id']);
  if (given !== undefined) req.clientRequestId = given;
  res.setHeader('X-Request-Id', id);
  return id;
}
