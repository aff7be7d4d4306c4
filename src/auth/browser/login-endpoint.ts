import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { LoginResult } from '../oauth/login-audit.js';
import { OAuthError } from '../oauth/oauth-error.js';
import { isFormContentType } from '../oauth/oauth-form.js';
import { checkPassword, type AttemptSubject, type PasswordLoginDeps } from '../oauth/password-login.js';
import type { KeySet } from '../tokens/key-set.js';
import type { SignedInUser } from '../providers/map-to-user.js';
import type { AuthorizationRequest } from './authorization-request.js';
import { answerUnexpected, sendErrorPage, sendPage } from './browser-answers.js';
import { resumeBrowserSession } from './browser-sessions.js';
import { BROWSER_SESSION_COOKIE, LOGIN_BINDING_COOKIE, cookieValue, setCookie } from './cookies.js';
import { csrfMatches, csrfToken, newBinding, validBinding } from './login-binding.js';
import { loginPage, type ProviderButton } from './pages.js';
import { formActionSource } from './redirect-uris.js';
import { parseParameters } from './request-parameters.js';
import {
  answerWithCode,
  sessionSignIn,
  answerWithError,
  isSecure,
  openRequest,
  signInBrowser,
  tooOld,
  type OpenedRequest,
  type SignInDeps,
} from './sign-in.js';

export interface LoginPageDeps extends SignInDeps, PasswordLoginDeps {
  /** The upstream providers offered as buttons, for the request being signed in. */
  providerButtons?: (sealedRequest: string) => readonly ProviderButton[];
}

const BODY_LIMIT_BYTES = 16 * 1024;
const readBody = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES });

/** A form body for a page: anything else is answered with a page, not RFC 6749 JSON. */
export const pageFormBody: RequestHandler = (req, res, next) => {
  if (!isFormContentType(req.headers['content-type'])) {
    sendErrorPage(res, 415, { title: 'This form cannot be read', detail: 'The form was not sent as a web form.' });
    return;
  }
  readBody(req, res, (err?: unknown) => {
    if (err) {
      sendErrorPage(res, 413, { title: 'This form cannot be read', detail: 'The form sent is too large.' });
      return;
    }
    if (!Buffer.isBuffer(req.body)) req.body = Buffer.alloc(0);
    next();
  });
};

/**
 * GET /oauth/login: kapi's login page for the sealed authorization request in `?request=`; POST /oauth/login: the
 * form. A password is checked exactly as the password grant checks it (`checkPassword`: the same limits, lockout
 * and audit line, with `via: login_page`); a success starts a browser session and sends the browser back to the
 * client with a code.
 */
export function loginPageEndpoints(deps: LoginPageDeps): { show: RequestHandler; submit: RequestHandler[] } {
  const show: RequestHandler = (req, res) => {
    showLoginPage(deps, req, res).catch((err: unknown) => answerUnexpected(req, res, deps.logger, err));
  };
  const submit: RequestHandler = (req, res, next: NextFunction) => {
    submitLoginForm(deps, req, res).catch((err: unknown) => {
      if (res.headersSent) next(err);
      else answerUnexpected(req, res, deps.logger, err);
    });
  };
  return { show, submit: [pageFormBody, submit] };
}

async function showLoginPage(deps: LoginPageDeps, req: Request, res: Response): Promise<void> {
  const keys = signingKeys(deps, res);
  if (!keys) return;
  const sealed = firstQueryValue(req, 'request');
  const opened = openRequest(keys, sealed, deps.settings(), nowSeconds(deps));
  if (!opened.ok) {
    answerBadRequest(res, opened.reason);
    return;
  }
  let binding = validBinding(cookieValue(req.headers.cookie, LOGIN_BINDING_COOKIE, isSecure(req, deps.policy)));
  if (!binding) {
    binding = newBinding();
    res.append('Set-Cookie', setCookie(LOGIN_BINDING_COOKIE, binding, { secure: isSecure(req, deps.policy) }));
  }
  const continueAs = (await signedInToConfirm(deps, req, keys, opened))?.user.name;
  renderLogin(deps, res, keys, opened, sealed!, binding, 200, { username: opened.request.loginHint, continueAs });
}

/**
 * The browser's own sign-in, when the request may go on with one click on kapi's page: a public client (the
 * authorization endpoint sends those here rather than answering at once), no `prompt=login`, and a sign-in recent
 * enough for `max_age`.
 */
async function signedInToConfirm(
  deps: LoginPageDeps,
  req: Request,
  keys: KeySet,
  opened: OpenedRequest & { ok: true },
) {
  const { request, client } = opened;
  if (!client.public || request.prompt === 'login') return undefined;
  const cookie = cookieValue(req.headers.cookie, BROWSER_SESSION_COOKIE, isSecure(req, deps.policy));
  const resumed = await resumeBrowserSession(deps, keys, cookie, deps.clock());
  return resumed && !tooOld(request, resumed.session, nowSeconds(deps)) ? resumed : undefined;
}

async function submitLoginForm(deps: LoginPageDeps, req: Request, res: Response): Promise<void> {
  const keys = signingKeys(deps, res);
  if (!keys) return;
  const form = parseParameters(req.body as Buffer);
  const sealed = form.values.get('request');
  const opened = openRequest(keys, sealed, deps.settings(), nowSeconds(deps));
  if (!opened.ok) {
    answerBadRequest(res, opened.reason);
    return;
  }
  const binding = validBinding(cookieValue(req.headers.cookie, LOGIN_BINDING_COOKIE, isSecure(req, deps.policy)));
  const crossSite = req.headers['sec-fetch-site'] === 'cross-site';
  if (form.malformed || crossSite || !csrfMatches(keys, form.values.get('csrf'), binding, sealed!, nowSeconds(deps))) {
    sendErrorPage(res, 403, {
      title: 'This sign-in form cannot be used',
      detail: 'The form was not sent from the login page kapi showed this browser, or it has expired.',
      hint: 'Go back to the application and sign in again. If your browser blocks cookies for this site, allow them.',
    });
    return;
  }
  const { request } = opened;
  if (form.values.get('action') === 'cancel') {
    answerWithError(deps, res, request, 'access_denied', 'the user cancelled the sign-in');
    return;
  }
  if (form.values.get('action') === 'continue') {
    const resumed = await signedInToConfirm(deps, req, keys, opened);
    if (!resumed) {
      renderLogin(deps, res, keys, opened, sealed!, binding!, 400, {
        error: { title: 'Your sign-in has ended.', detail: ' Sign in again.' },
      });
      return;
    }
    answerWithCode(deps, res, keys, request, sessionSignIn(resumed, 'browser_session_confirmed'));
    return;
  }
  const username = form.values.get('username');
  const password = form.values.get('password');
  if (username === undefined || password === undefined || form.repeated.size > 0) {
    renderLogin(deps, res, keys, opened, sealed!, binding!, 400, {
      username,
      error: { title: 'Enter your user name and password.' },
    });
    return;
  }

  const user = await passwordLogin(deps, req, request, username, password);
  if ('failed' in user) {
    if (user.retryAfter) res.set('Retry-After', user.retryAfter);
    renderLogin(deps, res, keys, opened, sealed!, binding!, user.status, { username, error: user.failed });
    return;
  }
  const previous = await resumeBrowserSession(
    deps,
    keys,
    cookieValue(req.headers.cookie, BROWSER_SESSION_COOKIE, isSecure(req, deps.policy)),
    deps.clock(),
  );
  const session = await signInBrowser(deps, req, res, keys, user.signedIn, previous?.session.sessionId);
  answerWithCode(deps, res, keys, request, {
    ...user.signedIn,
    authTime: session.authTime,
    browserSessionId: session.sessionId,
    via: 'login_page',
  });
}

type LoginOutcome =
  { signedIn: SignedInUser } | { failed: { title: string; detail?: string }; status: number; retryAfter?: string };

/** The password grant's own check, audited as a password login through the login page. */
async function passwordLogin(
  deps: LoginPageDeps,
  req: Request,
  request: AuthorizationRequest,
  login: string,
  password: string,
): Promise<LoginOutcome> {
  const sourceIp = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const note: AttemptSubject = {};
  const audit = (result: LoginResult, reason: string) =>
    deps.audit({
      grant: 'password',
      via: 'login_page',
      user: note.user,
      provider: note.provider,
      client: request.clientId,
      sourceIp,
      userAgent: req.headers['user-agent'],
      result,
      reason,
    });
  try {
    const signedIn = await checkPassword(deps, { login, password, sourceIp }, note);
    audit('success', 'signed in');
    return { signedIn };
  } catch (err) {
    if (!(err instanceof OAuthError)) {
      audit('error', 'cluster unavailable');
      throw err;
    }
    audit(err.status === 429 ? 'limited' : err.status >= 500 ? 'error' : 'failure', err.auditReason ?? err.error);
    if (err.status === 429) {
      const seconds = Number(err.headers['Retry-After'] ?? '60');
      return {
        failed: {
          title: 'Too many failed sign-ins.',
          detail: ` Try again in ${seconds >= 90 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} seconds`}.`,
        },
        status: 429,
        retryAfter: String(seconds),
      };
    }
    if (err.status >= 500) {
      return {
        failed: { title: 'kapi is busy right now.', detail: ' Try again in a moment.' },
        status: 503,
        retryAfter: '1',
      };
    }
    return { failed: { title: 'Wrong user name or password.' }, status: 400 };
  }
}

function renderLogin(
  deps: LoginPageDeps,
  res: Response,
  keys: KeySet,
  opened: OpenedRequest & { ok: true },
  sealed: string,
  binding: string,
  status: number,
  view: { username?: string; error?: { title: string; detail?: string }; continueAs?: string },
): void {
  const { request, client, expiresAt } = opened;
  sendPage(
    res,
    status,
    loginPage({
      clientName: client.name,
      request: sealed,
      csrf: csrfToken(keys, binding, sealed, expiresAt),
      username: view.username,
      error: view.error,
      continueAs: view.continueAs,
      providers: deps.providerButtons?.(sealed) ?? [],
    }),
    // the form's answer redirects to the client (with a code, or access_denied): CSP's form-action must allow it
    [formActionSource(request.redirectUri)],
  );
}

function answerBadRequest(res: Response, reason: 'invalid' | 'expired' | 'client'): void {
  sendErrorPage(res, 400, {
    title: reason === 'expired' ? 'This sign-in has expired' : 'This sign-in cannot go on',
    detail:
      reason === 'expired'
        ? 'The sign-in took too long.'
        : reason === 'client'
          ? 'The application is no longer registered for sign-in from a browser.'
          : 'This page is reached from an application’s sign-in, not directly.',
    hint: 'Go back to the application and sign in again.',
  });
}

function signingKeys(deps: LoginPageDeps, res: Response): KeySet | undefined {
  const keys = deps.keys.keys();
  if (keys) return keys;
  res.set('Retry-After', '1');
  sendErrorPage(res, 503, {
    title: 'Sign-in is not available yet',
    detail: 'kapi is starting: its signing keys are not loaded yet.',
    hint: 'Try again in a moment.',
  });
  return undefined;
}

function firstQueryValue(req: Request, name: string): string | undefined {
  const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
  return parseParameters(query).values.get(name);
}

function nowSeconds(deps: LoginPageDeps): number {
  return Math.floor(deps.clock() / 1000);
}
