import type { AuthSettings } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import type { LoginSession } from '../sessions/session-record.js';
import type { SessionStore } from '../sessions/sessions.js';
import type { KeySet } from '../tokens/key-set.js';
import { buildClaims, newTokenId, signToken, type TokenPolicy } from '../tokens/tokens.js';
import { LOCAL_PROVIDER } from '../../config/identity-providers/index.js';
import type { UserRecord } from '../users/user-record.js';
import type { TokenEvents, TokenResponse } from './issue-tokens.js';

/**
 * A login that succeeded becomes a login session and its first token pair, whichever way the user proved who they
 * are (a password at the token endpoint, an authorization code from a browser sign-in): the session limits
 * (`multipleLogin`, `maxSessionsPerUser`) hold the same for every grant.
 */
export interface LoginSessionDeps {
  sessions: SessionStore;
  policy: TokenPolicy;
  logger: Logger;
  events?: TokenEvents;
}

export interface NewLogin {
  user: UserRecord;
  clientId: string;
  /** Milliseconds since the epoch. */
  now: number;
  /** The identity provider that vouched for the user (`SignedInUser.provider`); absent or `local`: a local password. */
  provider?: string;
  /** The groups the session keeps from that provider (`SignedInUser.upstreamGroups`). */
  upstreamGroups?: readonly string[];
}

/** Creates the session, then ends the user's others as the settings ask (a failure there leaves the login standing). */
export async function startLoginSession(
  deps: LoginSessionDeps,
  login: NewLogin,
  settings: AuthSettings,
): Promise<LoginSession> {
  const nowSeconds = Math.floor(login.now / 1000);
  const session = await deps.sessions.create({
    username: login.user.name,
    userUid: login.user.uid,
    clientId: login.clientId,
    expiresAt: nowSeconds + settings.refreshTokenMaxAgeSeconds,
    refreshTokenId: newTokenId(),
    loginTime: login.now,
    ...(login.provider && login.provider !== LOCAL_PROVIDER
      ? { identityProvider: login.provider, groups: [...(login.upstreamGroups ?? [])] }
      : {}),
  });
  await endSessionsBeyondLimits(deps, login.user.name, [session.id], settings);
  return session;
}

/**
 * multipleLogin false: this login ends every other session of the user, on every replica; otherwise the user holds
 * at most `maxSessionsPerUser`, the oldest ending first. `keep` is the new login's session first, then any that
 * belongs to the same login (the browser session a code was issued in).
 */
export async function endSessionsBeyondLimits(
  deps: LoginSessionDeps,
  username: string,
  keep: readonly [string, ...string[]],
  settings: AuthSettings,
): Promise<void> {
  if (!settings.multipleLogin) await endOtherSessions(deps, username, keep);
  else await endSessionsBeyondCap(deps, username, settings.maxSessionsPerUser, keep[0]);
}

async function endOtherSessions(deps: LoginSessionDeps, username: string, keep: readonly string[]): Promise<void> {
  const sessions = await deps.sessions.listForUser(username);
  const others = sessions.filter((s) => !keep.includes(s.id));
  await Promise.all(others.map((s) => deps.sessions.delete(s.id)));
  for (let i = 0; i < others.length; i++) deps.events?.revoked?.('single_login');
}

/**
 * A user holds at most `cap` sessions: this login's is the newest, the oldest end. Failing to end them leaves the
 * login standing (the sweep ends them later).
 */
async function endSessionsBeyondCap(deps: LoginSessionDeps, username: string, cap: number, keep: string) {
  try {
    const ended = await deps.sessions.endBeyondCap(username, cap, keep);
    for (let i = 0; i < ended.length; i++) deps.events?.revoked?.('session_cap');
    if (ended.length > 0) {
      deps.logger.info('session limit reached: the oldest sessions of the user ended', {
        user: username,
        ended: ended.length,
        maxSessionsPerUser: cap,
      });
    }
  } catch (err) {
    deps.logger.warn('could not end login sessions beyond the limit', { user: username, error: String(err) });
  }
}

/**
 * A fresh access token and the session's current refresh token. The refresh token is rebuilt from the session
 * (id, rotation time, end), so asking twice gives the identical token; the access token ends with the session.
 * `groups` are the User's; the groups its identity provider gave the session are added.
 */
export function tokenPair(
  policy: TokenPolicy,
  keys: KeySet,
  session: LoginSession,
  groups: readonly string[],
  nowSeconds: number,
  settings: AuthSettings,
): TokenResponse {
  const subject = {
    username: session.username,
    clientId: session.clientId,
    sessionId: session.id,
    groups: session.groups?.length ? [...new Set([...groups, ...session.groups])] : groups,
    scope: session.scope,
  };
  const issuer = policy.issuer;
  const accessExpiresAt = Math.min(nowSeconds + settings.accessTokenMaxAgeSeconds, session.expiresAt);
  const access = buildClaims(
    'access_token',
    subject,
    { id: newTokenId(), issuedAt: nowSeconds, expiresAt: accessExpiresAt },
    issuer,
  );
  const refresh = buildClaims(
    'refresh_token',
    subject,
    { id: session.refreshTokenId, issuedAt: session.rotatedAt ?? nowSeconds, expiresAt: session.expiresAt },
    issuer,
  );
  return {
    access_token: signToken(access, keys.active),
    token_type: 'Bearer',
    refresh_token: signToken(refresh, keys.active),
    expires_in: accessExpiresAt - nowSeconds,
  };
}
