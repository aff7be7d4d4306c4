import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from './logger.js';

/**
 * One audit line per request once it is answered: who, what, the outcome. The query string is left out (it may
 * carry tokens on some clients); only the path is logged.
 */
export function accessLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    auditRequest(logger, req, res, req.path, () => req.ip ?? req.socket.remoteAddress);
    next();
  };
}

/** The request as the audit line reads it when the answer is finished (`user` is set by then when authenticated). */
type AuditedRequest = IncomingMessage & { requestId?: string; clientRequestId?: string; user?: { username: string } };

/** Writes the audit line when the exchange ends, answered or abandoned; `sourceIp` is asked only then. */
export function auditRequest(
  logger: Logger,
  req: AuditedRequest,
  res: ServerResponse,
  path: string,
  sourceIp: () => string | undefined,
): void {
  // A line nobody keeps costs nothing here: no listener, no fields gathered.
  if (!logger.isLevelEnabled('info')) return;
  const started = process.hrtime.bigint();
  // 'close', not 'finish': a request the client abandons (a watch or log follow it ends, a GET it gave up on) is
  // never finished, and it is audited all the same
  res.on('close', () => {
    const finished = res.writableFinished;
    logger.info('request', {
      audit: true,
      requestId: req.requestId,
      clientRequestId: req.clientRequestId,
      user: req.user?.username,
      verb: req.method,
      path,
      // what the client was sent; nothing sent: nginx's 499, the client closed the request
      status: finished || res.headersSent ? res.statusCode : CLIENT_CLOSED_REQUEST,
      ...(finished ? {} : { aborted: true }),
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      sourceIp: sourceIp(),
    });
  });
}

/** The status an audit line gives a request whose client went away before any answer was sent (nginx's code). */
export const CLIENT_CLOSED_REQUEST = 499;
