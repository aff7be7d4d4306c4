import type { Request, Response } from 'express';
import type { AuthSettings, OAuthClient } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import type { LoginAudit } from '../oauth/login-audit.js';
import { endSessionsBeyondLimits } from '../oauth/login-session.js';
import type { TokenEvents } from '../oauth/issue-tokens.js';
import type { SessionStore } from '../sessions/sessions.js';
import type { KeySet } from '../tokens/key-set.js';
import type { SigningKeyProvider } from '../tokens/signing-key.js';
import type { TokenPolicy } from '../tokens/tokens.js';
import { LOCAL_PROVIDER, type SignedInUser } from '../providers/map-to-user.js';
import type { UserStore } from '../users/users.js';
import { issueCode } from './authorization-codes.js';
import type { AuthorizationRequest } from './authorization-request.js';
import { redirect } from './browser-answers.js';
import { BROWSER_SESSION_CLIENT, startBrowserSession, type BrowserSession } from './browser-sessions.js';
import { BROWSER_SESSION_COOKIE, clearCookie, setCookie } from './cookies.js';
import { isRegisteredRedirect, redirectWith } from './redirect-uris.js';
import { open, seal } from './sealed-values.js';

/**
 * What the authorization endpoint, the login page and the upstream callback share: the authorization request
 * carried between them (sealed, in the login page's URL and form), the browser session, and the last step of every
 * successful sign-in — a code, sent to the client's redirect URI.
 */
export interface SignInDeps {
  users: UserStore;
  sessions: SessionStore;
  keys: SigningKeyProvider;
  policy: TokenPolicy;
  settings: () => AuthSettings;
  clock: () => number;
  logger: Logger;
  audit: LoginAudit;
  events?: TokenEvents;
}

/** How long a browser may stay on the login page (and at an upstream provider) before the request expires. */
export const SIGN_IN_REQUEST_SECONDS = 15 * 60;

export function sealRequest(keys: KeySet, request: AuthorizationRequest, nowSeconds: number): string {
  return seal(keys, 'authorization-request', request, nowSeconds + SIGN_IN_REQUEST_SECONDS);
}

export type OpenedRequest =
  | { ok: true; request: AuthorizationRequest; client: OAuthClient; expiresAt: number }
  | { ok: false; reason: 'invalid' | 'expired' | 'client' };

/**
 * A sealed request from the login page or an upstream callback, checked again against the configuration as it is now:
 * the client may have been removed, or its redirect URIs changed, since the request began.
 */
export function openRequest(keys: KeySet, sealed: string | undefined, settings: AuthSettings, nowSeconds: number) {
  if (!sealed) return { ok: false, reason: 'invalid' } as const;
  const opened = open(keys, 'authorization-request', sealed, nowSeconds);
  if (!opened.ok) return { ok: false, reason: opened.reason === 'expired' ? 'expired' : 'invalid' } as const;
  const request = opened.value as AuthorizationRequest;
  const client = settings.clients.find((candidate) => candidate.name === request.clientId);
  if (
    !client ||
    !client.grantTypes.includes('authorization_code') ||
    !isRegisteredRedirect(request.redirectUri, client.redirectURIs)
  ) {
    return { ok: false, reason: 'client' } as const;
  }
  return { ok: true, request, client, expiresAt: opened.expiresAt } as const satisfies OpenedRequest;
}

/** The sign-in a browser session stands for, as `answerWithCode` takes it (`via`: how it was used, for the audit). */
export function sessionSignIn(
  resumed: { session: BrowserSession; user: SignedInUser['user'] },
  via: string,
): Parameters<typeof answerWithCode>[4] {
  return {
    user: resumed.user,
    provider: resumed.session.provider,
    upstreamGroups: resumed.session.upstreamGroups,
    authTime: resumed.session.authTime,
    browserSessionId: resumed.session.sessionId,
    via,
  };
}

/**
 * Whether a browser session is too old for the request (OpenID Connect `max_age`). Times are whole seconds, so an
 * elapsed 0 may be up to a second: reaching `max_age` counts, and `max_age=0` always asks again.
 */
export function tooOld(request: AuthorizationRequest, session: BrowserSession, nowSeconds: number): boolean {
  return request.maxAge !== undefined && nowSeconds - session.authTime >= request.maxAge;
}

/**
 * The end of a sign-in: a code for the client, sent to its redirect URI with the request's `state` and kapi's `iss`
 * (RFC 9207, so a client talking to several servers knows which one answered).
 */
export function answerWithCode(
  deps: SignInDeps,
  res: Response,
  keys: KeySet,
  request: AuthorizationRequest,
  signedIn: SignedInUser & { authTime: number; browserSessionId?: string; via: string },
): void {
  const nowSeconds = Math.floor(deps.clock() / 1000);
  const code = issueCode(
    keys,
    {
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      scope: request.scope,
      nonce: request.nonce,
      username: signedIn.user.name,
      userUid: signedIn.user.uid,
      authTime: signedIn.authTime,
      browserSessionId: signedIn.browserSessionId,
      ...(signedIn.provider === LOCAL_PROVIDER
        ? {}
        : { provider: signedIn.provider, upstreamGroups: [...signedIn.upstreamGroups] }),
    },
    nowSeconds,
  );
  deps.logger.info('authorization code issued', {
    audit: 'authorize',
    user: signedIn.user.name,
    client: request.clientId,
    provider: signedIn.provider,
    via: signedIn.via,
  });
  redirect(res, redirectWith(request.redirectUri, { code, state: request.state, iss: deps.policy.issuer }));
}

/** The user is sent back to the client with `error` (the user cancelled, a provider refused, …). */
export function answerWithError(
  deps: SignInDeps,
  res: Response,
  request: AuthorizationRequest,
  error: string,
  description: string,
): void {
  redirect(
    res,
    redirectWith(request.redirectUri, {
      error,
      error_description: description,
      state: request.state,
      iss: deps.policy.issuer,
    }),
  );
}

/**
 * A user who just authenticated in this browser gets a browser session (single sign-on for the next requests): the
 * one the browser held before, if any, ends; the user's session limits apply as to any login.
 */
export async function signInBrowser(
  deps: SignInDeps,
  req: Request,
  res: Response,
  keys: KeySet,
  signedIn: SignedInUser,
  previousSessionId: string | undefined,
): Promise<BrowserSession> {
  const settings = deps.settings();
  const now = deps.clock();
  if (previousSessionId) await deps.sessions.delete(previousSessionId);
  const { cookie, session } = await startBrowserSession(deps, keys, signedIn, now, settings);
  await endSessionsBeyondLimits(deps, signedIn.user.name, [session.sessionId], settings);
  res.append(
    'Set-Cookie',
    setCookie(BROWSER_SESSION_COOKIE, cookie, {
      secure: isSecure(req, deps.policy),
      maxAge: session.expiresAt - Math.floor(now / 1000),
    }),
  );
  return session;
}

/** Forgets a browser session the browser still names but that has ended. */
export function forgetBrowserSession(req: Request, res: Response, policy: TokenPolicy): void {
  res.append('Set-Cookie', clearCookie(BROWSER_SESSION_COOKIE, { secure: isSecure(req, policy) }));
}

/**
 * Whether cookies get `Secure`: kapi reached over HTTPS (its TLS listener, or a trusted proxy's X-Forwarded-Proto),
 * or an https issuer URL when the browser is not on a loopback address (a port-forward to http://127.0.0.1).
 */
export function isSecure(req: Request, policy: TokenPolicy): boolean {
  if (req.secure) return true;
  const loopback = ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(req.hostname);
  return policy.issuer.startsWith('https://') && !loopback;
}

export { BROWSER_SESSION_CLIENT };
