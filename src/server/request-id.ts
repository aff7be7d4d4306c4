import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/** A caller-supplied id is kept only when it looks like one (no header injection into logs). */
const ACCEPTABLE_ID = /^[A-Za-z0-9._-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.get('x-request-id');
  req.requestId = given && ACCEPTABLE_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', req.requestId);
  next();
}
