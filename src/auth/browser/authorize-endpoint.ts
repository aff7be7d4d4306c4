import type { Request, RequestHandler, Response } from 'express';
import { AuthorizationError, checkAuthorizationRequest, type AuthorizationRequest } from './authorization-request.js';
import { answerAuthorizationError, answerUnexpected, redirect, sendErrorPage } from './browser-answers.js';
import { resumeBrowserSession } from './browser-sessions.js';
import { BROWSER_SESSION_COOKIE, cookieValue } from './cookies.js';
import { parseParameters } from './request-parameters.js';
import {
  answerWithCode,
  sessionSignIn,
  answerWithError,
  forgetBrowserSession,
  sealRequest,
  tooOld,
  type SignInDeps,
  isSecure,
} from './sign-in.js';

export const LOGIN_PAGE_PATH = '/oauth/login';

/**
 * GET and POST /oauth/authorize (RFC 6749 §4.1.1; OpenID Connect Core §3.1.2.1 asks for both methods). A browser
 * signed in at kapi gets its code at once; any other goes to the login page, carrying the checked request sealed in
 * the page's URL (so any replica can serve the next step, and nothing is kept in memory for it).
 */
export function authorizeEndpoint(deps: SignInDeps): RequestHandler {
  return (req, res) => {
    authorize(deps, req, res).catch((err: unknown) => answerUnexpected(req, res, deps.logger, err));
  };
}

async function authorize(deps: SignInDeps, req: Request, res: Response): Promise<void> {
  const keys = deps.keys.keys();
  if (!keys) {
    res.set('Retry-After', '1');
    sendErrorPage(res, 503, {
      title: 'Sign-in is not available yet',
      detail: 'kapi is starting: its signing keys are not loaded yet.',
      hint: 'Try again in a moment.',
    });
    return;
  }
  const encoded = req.method === 'POST' ? (req.body as Buffer) : queryOf(req.originalUrl);
  let request: AuthorizationRequest;
  try {
    request = checkAuthorizationRequest(parseParameters(encoded), deps.settings().clients);
  } catch (err) {
    if (!(err instanceof AuthorizationError)) throw err;
    answerAuthorizationError(res, err, deps.policy.issuer);
    return;
  }

  const now = deps.clock();
  const nowSeconds = Math.floor(now / 1000);
  const cookie = cookieValue(req.headers.cookie, BROWSER_SESSION_COOKIE, isSecure(req, deps.policy));
  // A public client (a native app on a loopback port, RFC 8252 §8.6) can be played by anything that opens a URL:
  // a code for it from a browser that is merely signed in needs the user's click on kapi's page first.
  const confirm = deps.settings().clients.find((client) => client.name === request.clientId)?.public === true;
  if (request.prompt !== 'login' && cookie) {
    const resumed = await resumeBrowserSession(deps, keys, cookie, now);
    if (!resumed) forgetBrowserSession(req, res, deps.policy);
    else if (!tooOld(request, resumed.session, nowSeconds)) {
      if (confirm && request.prompt === 'none') {
        answerWithError(deps, res, request, 'consent_required', 'a public client needs the user to continue on kapi');
        return;
      }
      if (confirm) {
        redirect(res, `${LOGIN_PAGE_PATH}?request=${encodeURIComponent(sealRequest(keys, request, nowSeconds))}`);
        return;
      }
      answerWithCode(deps, res, keys, request, sessionSignIn(resumed, 'browser_session'));
      return;
    }
  }
  if (request.prompt === 'none') {
    answerWithError(deps, res, request, 'login_required', 'the user is not signed in at kapi (prompt=none)');
    return;
  }
  redirect(res, `${LOGIN_PAGE_PATH}?request=${encodeURIComponent(sealRequest(keys, request, nowSeconds))}`);
}

function queryOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}
