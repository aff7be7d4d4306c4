import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { LoginResult } from '../oauth/login-audit.js';
import {
  ProviderUnavailable,
  UpstreamLoginRefused,
  isRedirectProvider,
  type RedirectProvider,
} from '../providers/identity-provider.js';
import { signInUpstream } from '../providers/map-to-user.js';
import type { IdentityProviders } from '../providers/registry.js';
import type { KeySet } from '../tokens/key-set.js';
import { answerUnexpected, redirect, sendErrorPage } from './browser-answers.js';
import { resumeBrowserSession } from './browser-sessions.js';
import { BROWSER_SESSION_COOKIE, UPSTREAM_LOGIN_COOKIE, clearCookie, cookieValue, setCookie } from './cookies.js';
import type { ProviderButton } from './pages.js';
import { parseParameters } from './request-parameters.js';
import { open, seal } from './sealed-values.js';
import { answerWithCode, answerWithError, isSecure, openRequest, signInBrowser, type SignInDeps } from './sign-in.js';

/**
 * Sign-in through an upstream provider (OpenID Connect): the login page's button leads to `GET /oauth/login/{idp}`,
 * which sends the browser to the provider with PKCE, `state` and `nonce`, and keeps what the answer must match in a
 * sealed cookie of this browser (so a forged or replayed answer, or one meant for another browser, is refused on any
 * replica); `GET /oauth/callback/{idp}` takes the answer, has the provider prove the identity (code exchange, ID token
 * checks), maps it to a User as every provider's login is mapped (`signInUpstream`), starts the browser session and
 * continues the original authorization request with a code.
 */
export interface UpstreamSignInDeps extends SignInDeps {
  providers?: IdentityProviders;
}

interface UpstreamLoginState {
  idp: string;
  state: string;
  nonce: string;
  verifier: string;
  callbackUrl: string;
  /** The sealed authorization request the sign-in continues. */
  request: string;
}

export const UPSTREAM_LOGIN_PATH = '/oauth/login';
export const UPSTREAM_CALLBACK_PATH = '/oauth/callback';

/** The login page's buttons: one per redirect provider, each starting its sign-in for this request. */
export function upstreamButtons(deps: UpstreamSignInDeps): (sealedRequest: string) => ProviderButton[] {
  return (sealedRequest) =>
    redirectProviders(deps).map((provider) => ({
      label: provider.displayName,
      href: `${UPSTREAM_LOGIN_PATH}/${provider.settings.name}?request=${encodeURIComponent(sealedRequest)}`,
    }));
}

export function upstreamStartEndpoint(deps: UpstreamSignInDeps): RequestHandler {
  return (req, res) => {
    start(deps, req, res).catch((err: unknown) => answerUnexpected(req, res, deps.logger, err));
  };
}

export function upstreamCallbackEndpoint(deps: UpstreamSignInDeps): RequestHandler {
  return (req, res) => {
    callback(deps, req, res).catch((err: unknown) => answerUnexpected(req, res, deps.logger, err));
  };
}

async function start(deps: UpstreamSignInDeps, req: Request, res: Response): Promise<void> {
  const keys = signingKeys(deps, res);
  if (!keys) return;
  const idp = String(req.params.idp);
  const sealed = queryOf(req).values.get('request');
  const nowSeconds = Math.floor(deps.clock() / 1000);
  const opened = openRequest(keys, sealed, deps.settings(), nowSeconds);
  if (!opened.ok) {
    sendErrorPage(res, 400, {
      title: 'This sign-in cannot go on',
      detail: opened.reason === 'expired' ? 'The sign-in took too long.' : 'The sign-in request is not valid.',
      hint: 'Go back to the application and sign in again.',
    });
    return;
  }
  const provider = redirectProviders(deps).find((candidate) => candidate.settings.name === idp);
  if (!provider) {
    sendErrorPage(res, 404, {
      title: 'No such sign-in option',
      detail: 'kapi has no identity provider of that name for sign-in from a browser.',
      hint: 'Go back to the login page and choose another way to sign in.',
    });
    return;
  }
  const callbackUrl = callbackUrlOf(deps, req, provider);
  const login: UpstreamLoginState = {
    idp,
    state: random(),
    nonce: random(),
    verifier: random(),
    callbackUrl,
    request: sealed!,
  };
  let url: string;
  try {
    url = await provider.loginUrl({
      callbackUrl,
      state: login.state,
      nonce: login.nonce,
      codeChallenge: createHash('sha256').update(login.verifier).digest('base64url'),
    });
  } catch (err) {
    if (!(err instanceof ProviderUnavailable)) throw err;
    deps.logger.warn('identity provider unavailable for a sign-in', { provider: idp, reason: err.reason });
    unavailable(res, provider);
    return;
  }
  res.append(
    'Set-Cookie',
    setCookie(UPSTREAM_LOGIN_COOKIE, seal(keys, 'upstream-login', login, opened.expiresAt), {
      secure: isSecure(req, deps.policy),
      maxAge: opened.expiresAt - nowSeconds,
    }),
  );
  redirect(res, url);
}

async function callback(deps: UpstreamSignInDeps, req: Request, res: Response): Promise<void> {
  const keys = signingKeys(deps, res);
  if (!keys) return;
  const idp = String(req.params.idp);
  const answer = queryOf(req);
  const nowSeconds = Math.floor(deps.clock() / 1000);
  const sourceIp = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const audit = (result: LoginResult, reason: string, extra: { user?: string; client?: string } = {}) =>
    deps.audit({
      grant: 'upstream',
      provider: idp,
      sourceIp,
      userAgent: req.headers['user-agent'],
      result,
      reason,
      ...extra,
    });

  const cookie = cookieValue(req.headers.cookie, UPSTREAM_LOGIN_COOKIE, isSecure(req, deps.policy));
  const opened = cookie ? open(keys, 'upstream-login', cookie, nowSeconds) : undefined;
  const login = opened?.ok ? (opened.value as UpstreamLoginState) : undefined;
  // this browser's sign-in, through this provider, answered with its own state: else nothing is trusted or sent on
  if (
    !login ||
    login.idp !== idp ||
    !sameText(answer.values.get('state') ?? '', login.state) ||
    answer.malformed ||
    answer.repeated.size > 0
  ) {
    audit('failure', !login ? 'no sign-in under way in this browser' : 'state does not match this browser’s sign-in');
    sendErrorPage(res, 400, {
      title: 'This sign-in cannot go on',
      detail:
        'The answer of the identity provider does not belong to a sign-in this browser started, or it has expired.',
      hint: 'Go back to the application and sign in again. If your browser blocks cookies for this site, allow them.',
    });
    return;
  }
  // the state is single-use: whatever happens next, this answer cannot be presented again
  res.append('Set-Cookie', clearCookie(UPSTREAM_LOGIN_COOKIE, { secure: isSecure(req, deps.policy) }));
  const request = openRequest(keys, login.request, deps.settings(), nowSeconds);
  const provider = redirectProviders(deps).find((candidate) => candidate.settings.name === idp);
  if (!request.ok || !provider) {
    audit('failure', !provider ? 'provider no longer configured' : 'request expired or client removed');
    sendErrorPage(res, 400, {
      title: 'This sign-in cannot go on',
      detail: !provider
        ? 'This identity provider is no longer configured.'
        : 'The sign-in took too long, or the application is no longer registered.',
      hint: 'Go back to the application and sign in again.',
    });
    return;
  }
  const client = { client: request.request.clientId };

  let identity;
  try {
    identity = await provider.handleCallback(new URLSearchParams([...answer.values]), {
      callbackUrl: login.callbackUrl,
      state: login.state,
      nonce: login.nonce,
      codeVerifier: login.verifier,
    });
  } catch (err) {
    if (err instanceof ProviderUnavailable) {
      audit('error', err.reason, client);
      unavailable(res, provider);
      return;
    }
    if (!(err instanceof UpstreamLoginRefused)) throw err;
    audit('failure', err.reason, client);
    if (answer.values.has('error')) {
      // the provider refused (the user cancelled there, or may not use this client): the application hears it
      answerWithError(deps, res, request.request, 'access_denied', `the identity provider refused the sign-in`);
      return;
    }
    sendErrorPage(res, 400, {
      title: 'The identity provider’s answer was not accepted',
      detail: `kapi could not verify the sign-in at ${provider.displayName}.`,
      hint: 'Try again; if it keeps happening, tell the administrator (kapi’s log says why).',
    });
    return;
  }

  const mapping = await signInUpstream(identity, provider.settings, deps.users, deps.logger);
  if ('refused' in mapping) {
    audit('failure', mapping.refused, { ...client, user: identity.username });
    sendErrorPage(res, 403, {
      title: 'You cannot sign in to kapi',
      detail: `Your account at ${provider.displayName} is not allowed to sign in to kapi.`,
      hint: 'Ask the administrator to give your account access.',
    });
    return;
  }
  const { signedIn } = mapping;
  audit('success', 'signed in', { ...client, user: signedIn.user.name });
  const previous = await resumeBrowserSession(
    deps,
    keys,
    cookieValue(req.headers.cookie, BROWSER_SESSION_COOKIE, isSecure(req, deps.policy)),
    deps.clock(),
  );
  const session = await signInBrowser(deps, req, res, keys, signedIn, previous?.session.sessionId);
  answerWithCode(deps, res, keys, request.request, {
    ...signedIn,
    authTime: session.authTime,
    browserSessionId: session.sessionId,
    via: 'upstream',
  });
}

function redirectProviders(deps: UpstreamSignInDeps): RedirectProvider[] {
  return (deps.providers?.list() ?? []).filter(isRedirectProvider);
}

/**
 * The callback URL the provider has registered: the provider's `redirectURL`, else kapi's https issuer URL, else the
 * address this browser reached kapi at (a port-forward or a laptop).
 */
function callbackUrlOf(deps: UpstreamSignInDeps, req: Request, provider: RedirectProvider): string {
  const configured = 'oidc' in provider.settings ? provider.settings.oidc.redirectURL : undefined;
  if (configured) return configured;
  const base = deps.policy.issuer.startsWith('https://')
    ? deps.policy.issuer.replace(/\/+$/, '')
    : `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  return `${base}${UPSTREAM_CALLBACK_PATH}/${provider.settings.name}`;
}

function unavailable(res: Response, provider: RedirectProvider): void {
  res.set('Retry-After', '5');
  sendErrorPage(res, 503, {
    title: 'Sign-in is not available right now',
    detail: `kapi cannot reach ${provider.displayName} right now.`,
    hint: 'Try again in a moment, or sign in another way.',
  });
}

function signingKeys(deps: UpstreamSignInDeps, res: Response): KeySet | undefined {
  const keys = deps.keys.keys();
  if (keys) return keys;
  res.set('Retry-After', '1');
  sendErrorPage(res, 503, { title: 'Sign-in is not available yet', detail: 'kapi is starting.', hint: 'Try again.' });
  return undefined;
}

function queryOf(req: Request) {
  const at = req.originalUrl.indexOf('?');
  return parseParameters(at < 0 ? '' : req.originalUrl.slice(at + 1));
}

function random(): string {
  return randomBytes(32).toString('base64url');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
