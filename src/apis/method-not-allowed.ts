import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../server/errors.js';

/** Read-only resources: any other method is a 405 Status, with the methods that are served. */
export function methodNotAllowed(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Allow', 'GET, HEAD');
  next(
    new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${req.method} ${req.originalUrl.split('?')[0]})`,
    ),
  );
}
