import type { Request, Response } from 'express';
import type { Logger } from '../../observability/logger.js';
import { AuthorizationError } from './authorization-request.js';
import { errorPage, pageSecurityPolicy, type ErrorPageView } from './pages.js';
import { redirectWith } from './redirect-uris.js';

/**
 * How the browser flow answers: an HTML page of kapi's (a sign-in page, or why a sign-in cannot go on) or a 303
 * redirect. 303 See Other, never 307, so a browser never re-posts the login form's password to where it is sent
 * (RFC 9700 §4.12). Pages are marked not cacheable by the /oauth router, and never framed.
 */
export function sendPage(res: Response, status: number, html: string, formTargets: readonly string[] = []): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': pageSecurityPolicy(formTargets),
      'X-Frame-Options': 'DENY',
    })
    .send(html);
}

export function sendErrorPage(res: Response, status: number, view: ErrorPageView): void {
  sendPage(res, status, errorPage(view));
}

export function redirect(res: Response, location: string): void {
  res.status(303).set('Location', location).end();
}

/** An authorization error: back to the client when its redirect URI is proven, else on kapi's page. */
export function answerAuthorizationError(res: Response, error: AuthorizationError, issuer: string): void {
  if (error.redirect) {
    redirect(
      res,
      redirectWith(error.redirect.uri, {
        error: error.error,
        error_description: error.description,
        state: error.redirect.state,
        iss: issuer,
      }),
    );
    return;
  }
  sendErrorPage(res, 400, {
    title: 'This sign-in request cannot be used',
    detail: `The application sent an invalid sign-in request: ${error.description}.`,
    hint: 'Nothing was sent anywhere. Go back to the application and start again; if it keeps happening, tell its administrator.',
  });
}

/** Something failed on kapi's side: a page that says so (500 for a bug, 503 when the cluster could not be asked). */
export function answerUnexpected(req: Request, res: Response, logger: Logger, err: unknown): void {
  const bug = err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError;
  logger.error('browser sign-in failed', {
    requestId: req.requestId,
    path: req.path,
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
  });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (!bug) res.set('Retry-After', '1');
  sendErrorPage(res, bug ? 500 : 503, {
    title: 'Sign-in is not available right now',
    detail: bug ? 'kapi could not complete the sign-in.' : 'kapi cannot reach the cluster right now.',
    hint: 'Try again in a moment. The server log has the details (request id in the X-Request-Id header).',
  });
}
