import type { AuthSettings } from '../../config/cluster-configuration.js';
import { belongsTo, isSessionAlive } from '../sessions/session-record.js';
import type { SessionStore } from '../sessions/sessions.js';
import type { KeySet } from '../tokens/key-set.js';
import { newTokenId } from '../tokens/tokens.js';
import type { UserRecord } from '../users/user-record.js';
import { LOCAL_PROVIDER, type SignedInUser } from '../providers/map-to-user.js';
import type { UserStore } from '../users/users.js';
import { open, seal } from './sealed-values.js';

/**
 * A browser signed in at kapi (single sign-on): once a user has signed in on the login page or through an upstream
 * provider, the authorization endpoint issues codes to that browser without asking again, until the browser session
 * ends. It is a LoginSession like any other — listed with `kubectl get loginsessions`, counted against the user's
 * session limit, ended by deleting it (on every replica), by the user being disabled or deleted, or at its expiry
 * (the refresh token lifetime) — whose client is `(browser)`, a name no OAuth client can have, so no token is ever
 * accepted for it. The browser holds a sealed cookie naming it.
 */
export const BROWSER_SESSION_CLIENT = '(browser)';

export interface BrowserSession {
  sessionId: string;
  username: string;
  userUid?: string;
  /** When the user authenticated, in seconds. */
  authTime: number;
  /** Seconds since the epoch. */
  expiresAt: number;
  /** Who vouched for the user (`local`: a password checked by kapi) and the groups that provider gave. */
  provider: string;
  upstreamGroups: readonly string[];
}

interface SealedBrowserSession {
  sid: string;
  sub: string;
  uid?: string;
  at: number;
}

export interface BrowserSessionDeps {
  sessions: SessionStore;
  users: UserStore;
}

/** Starts a browser session for `user`; the cookie value that names it, and the session. */
export async function startBrowserSession(
  deps: BrowserSessionDeps,
  keys: KeySet,
  signedIn: SignedInUser,
  nowMs: number,
  settings: AuthSettings,
): Promise<{ cookie: string; session: BrowserSession }> {
  const { user } = signedIn;
  const nowSeconds = Math.floor(nowMs / 1000);
  const expiresAt = nowSeconds + settings.refreshTokenMaxAgeSeconds;
  const upstream = signedIn.provider !== LOCAL_PROVIDER;
  const created = await deps.sessions.create({
    username: user.name,
    userUid: user.uid,
    clientId: BROWSER_SESSION_CLIENT,
    expiresAt,
    // never handed out: a browser session has no tokens
    refreshTokenId: newTokenId(),
    loginTime: nowMs,
    ...(upstream ? { identityProvider: signedIn.provider, groups: [...signedIn.upstreamGroups] } : {}),
  });
  const session: BrowserSession = {
    sessionId: created.id,
    username: user.name,
    userUid: user.uid,
    authTime: nowSeconds,
    expiresAt,
    provider: signedIn.provider,
    upstreamGroups: upstream ? [...signedIn.upstreamGroups] : [],
  };
  const sealed: SealedBrowserSession = { sid: session.sessionId, sub: user.name, uid: user.uid, at: nowSeconds };
  return { cookie: seal(keys, 'browser-session', sealed, expiresAt), session };
}

/**
 * The browser session a cookie names, if it is still alive: the LoginSession exists and has not expired, and its
 * user still exists (the same one, not one re-created under the name) and is not disabled. `undefined` otherwise.
 */
export async function resumeBrowserSession(
  deps: BrowserSessionDeps,
  keys: KeySet,
  cookie: string | undefined,
  nowMs: number,
): Promise<{ session: BrowserSession; user: UserRecord } | undefined> {
  if (!cookie) return undefined;
  const nowSeconds = Math.floor(nowMs / 1000);
  const opened = open(keys, 'browser-session', cookie, nowSeconds);
  if (!opened.ok) return undefined;
  const sealed = opened.value as SealedBrowserSession;
  const [stored, user] = await Promise.all([deps.sessions.find(sealed.sid), deps.users.get(sealed.sub)]);
  if (!stored || stored.clientId !== BROWSER_SESSION_CLIENT || stored.username !== sealed.sub) return undefined;
  if (!isSessionAlive(stored, nowSeconds)) return undefined;
  if (!user || user.state === 'Disabled' || !belongsTo(stored, user)) return undefined;
  return {
    session: {
      sessionId: stored.id,
      username: user.name,
      userUid: user.uid,
      authTime: sealed.at,
      expiresAt: stored.expiresAt,
      provider: stored.identityProvider ?? LOCAL_PROVIDER,
      upstreamGroups: stored.groups ?? [],
    },
    user,
  };
}
