import { createHmac, randomBytes } from 'node:crypto';
import type { AuthSettings, GrantType, OAuthClient } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import { authenticateClient, clientCredentialsOf, requireGrant } from './client-authentication.js';
import type { LoginAudit, LoginResult } from './login-audit.js';
import type { LoginLimiter } from '../users/login-limiter.js';
import {
  BAD_CREDENTIALS,
  BAD_REFRESH_TOKEN,
  OAuthError,
  invalidGrant,
  temporarilyUnavailable,
  tooManyAttempts,
  unsupportedGrantType,
} from './oauth-error.js';
import { requiredParam, type FormParams } from './oauth-form.js';
import { PasswordChecksBusy, type PasswordVerifier } from '../users/passwords.js';
import { belongsTo, decideRefresh, rotatedSpec, type LoginSession } from '../sessions/session-record.js';
import type { SessionStore } from '../sessions/sessions.js';
import type { KeySet } from '../tokens/key-set.js';
import type { SigningKeyProvider } from '../tokens/signing-key.js';
import { buildClaims, newTokenId, signToken, verifyToken, type TokenPolicy } from '../tokens/tokens.js';
import type { UserStore } from '../users/users.js';

/** The token endpoint's use cases: the password grant and the refresh grant (RFC 6749 §4.3, §6). */
export interface TokenIssuerDeps {
  users: UserStore;
  sessions: SessionStore;
  passwords: PasswordVerifier;
  limiter: LoginLimiter;
  keys: SigningKeyProvider;
  policy: TokenPolicy;
  settings: () => AuthSettings;
  clock: () => number;
  audit: LoginAudit;
  logger: Logger;
  /** Token events for metrics: each refresh's outcome, each login session this replica revokes. */
  events?: TokenEvents;
}

/** rotated: a new pair; replayed: the pair just issued, again (concurrent refreshes); reused: an old token, replayed. */
export type RefreshResult = 'rotated' | 'replayed' | 'reused';
/**
 * Why a login session was ended here: RFC 7009 revoke, logout, a reused refresh token, a new login with
 * multipleLogin off (single_login), or a login beyond the user's session cap (session_cap).
 */
export type RevocationVia = 'revoke' | 'logout' | 'refresh_reuse' | 'single_login' | 'session_cap';

export interface TokenEvents {
  refreshed?(result: RefreshResult): void;
  revoked?(via: RevocationVia): void;
}

export interface TokenRequest {
  params: FormParams;
  authorization: string | undefined;
  sourceIp: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  refresh_token: string;
  expires_in: number;
}

/** The attempt as the audit line tells it; filled in as the request is understood. */
interface AttemptNote {
  grant: string;
  user?: string;
  client?: string;
}

/** POST /oauth/token: authenticate the client, then run the grant it asked for. Every outcome is audited once. */
export async function issueTokens(deps: TokenIssuerDeps, request: TokenRequest): Promise<TokenResponse> {
  const note: AttemptNote = { grant: request.params.get('grant_type') ?? '' };
  try {
    const credentials = clientCredentialsOf(request.params, request.authorization);
    note.client = credentials.clientId;
    const grantType = requiredParam(request.params, 'grant_type');
    const client = authenticateClient(credentials, deps.settings().clients);
    if (grantType !== 'password' && grantType !== 'refresh_token') throw unsupportedGrantType();
    requireGrant(client, grantType satisfies GrantType);
    const response =
      grantType === 'password'
        ? await passwordGrant(deps, client, request, note)
        : await refreshGrant(deps, client, request, note);
    deps.audit({ ...note, sourceIp: request.sourceIp, result: 'success', reason: 'tokens issued' });
    return response;
  } catch (err) {
    const { result, reason } = outcomeOf(err);
    deps.audit({ ...note, sourceIp: request.sourceIp, result, reason });
    throw err;
  }
}

/** How a refused request is audited: the client's fault, a limit, or ours (the cluster could not be asked). */
function outcomeOf(err: unknown): { result: LoginResult; reason: string } {
  if (!(err instanceof OAuthError)) return { result: 'error', reason: 'cluster unavailable' };
  const result = err.status === 429 ? 'limited' : err.status >= 500 ? 'error' : 'failure';
  return { result, reason: err.auditReason ?? err.error };
}

/** Password grant: limits, then the password, then a new login session and its first token pair. */
async function passwordGrant(deps: TokenIssuerDeps, client: OAuthClient, request: TokenRequest, note: AttemptNote) {
  const login = requiredParam(request.params, 'username');
  const password = requiredParam(request.params, 'password');
  const key = signingKey(deps);
  const admission = await deps.limiter.admit(
    {
      sourceIp: request.sourceIp,
      login,
      lookup: async (name) => {
        const found = await deps.users.find(name);
        note.user = found ? found.name : unknownLogin(name);
        return found;
      },
    },
    deps.clock,
    () => deps.settings().loginLimit,
  );
  // refused before the user was looked up (a limited address): the audit line still names who was tried
  if (!('admitted' in admission)) note.user ??= await auditedName(deps, login);
  if ('busy' in admission) {
    throw temporarilyUnavailable('too many logins are being checked right now; try again').because(
      'waited too long for the login checks in flight',
    );
  }
  if ('retryAfterSeconds' in admission) {
    throw tooManyAttempts(admission.retryAfterSeconds).because(`too many failures (${admission.limitedBy})`);
  }
  const { admitted } = admission;
  const user = admitted.user;
  // read after the admission, which may have waited for other checks
  const settings = deps.settings();
  const now = deps.clock();
  let matches: boolean;
  try {
    matches = await deps.passwords.verify(password, user?.passwordHash);
  } catch (err) {
    // saturated checks say nothing about the password: never a failed login, never a step towards a lockout
    if (err instanceof PasswordChecksBusy) {
      admitted.withdrawn();
      throw temporarilyUnavailable('too many logins are being checked right now; try again').because(
        'password checks saturated',
      );
    }
    await admitted.failed(deps.clock());
    throw err;
  }
  if (!matches || !user || user.state === 'Disabled') await admitted.failed(deps.clock());
  if (!user) throw invalidGrant(BAD_CREDENTIALS).because('unknown user');
  if (!matches) throw invalidGrant(BAD_CREDENTIALS).because('wrong password');
  if (user.state === 'Disabled') throw invalidGrant(BAD_CREDENTIALS).because('user disabled');
  await admitted.succeeded(now).catch((err: unknown) => {
    // the login stands; only the bookkeeping (last login, cleared failures) is missing
    deps.logger.warn('could not record a successful login in the User status', { user: user.name, error: String(err) });
  });

  const nowSeconds = Math.floor(now / 1000);
  const session = await deps.sessions.create({
    username: user.name,
    userUid: user.uid,
    clientId: client.name,
    expiresAt: nowSeconds + settings.refreshTokenMaxAgeSeconds,
    refreshTokenId: newTokenId(),
    loginTime: now,
  });
  if (!settings.multipleLogin) await endOtherSessions(deps, user.name, session.id);
  else await endSessionsBeyondCap(deps, user.name, settings.maxSessionsPerUser, session.id);
  return tokenPair(deps, key, session, user.groups, nowSeconds, settings);
}

/**
 * Refresh grant with rotation: the current refresh token gets a new pair; the one just replaced, within the grace,
 * gets the same current refresh token again (concurrent refreshes); any other is a replayed token, and the whole
 * login session is revoked. Decisions that would refuse are re-checked against the cluster, not a stale cache.
 */
async function refreshGrant(deps: TokenIssuerDeps, client: OAuthClient, request: TokenRequest, note: AttemptNote) {
  const token = requiredParam(request.params, 'refresh_token');
  const key = signingKey(deps);
  const settings = deps.settings();
  const nowSeconds = Math.floor(deps.clock() / 1000);

  const verified = verifyToken(token, key, 'refresh_token', nowSeconds, deps.policy.acceptance);
  if (!verified.ok) throw invalidGrant(BAD_REFRESH_TOKEN).because(verified.reason);
  const claims = verified.claims;
  note.user = claims.username;
  if (claims.client_id !== client.name) throw invalidGrant(BAD_REFRESH_TOKEN).because('issued to another client');

  const user = await deps.users.get(claims.username);
  if (!user || user.state === 'Disabled') throw invalidGrant(BAD_REFRESH_TOKEN).because('user deleted or disabled');

  let session = await deps.sessions.find(claims.sid);
  let fresh = false;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (!session || !belongsTo(session, user)) throw invalidGrant(BAD_REFRESH_TOKEN).because('session ended');
    const decision = decideRefresh(session, claims.jti, nowSeconds);
    if ((decision === 'reuse' || decision === 'expired') && !fresh) {
      session = await deps.sessions.read(claims.sid);
      fresh = true;
      continue;
    }
    switch (decision) {
      case 'expired':
        throw invalidGrant(BAD_REFRESH_TOKEN).because('session expired');
      case 'reuse':
        await deps.sessions.delete(session.id);
        deps.events?.refreshed?.('reused');
        deps.events?.revoked?.('refresh_reuse');
        deps.logger.warn('refresh token reused: login session revoked', { user: claims.username, session: session.id });
        throw invalidGrant(BAD_REFRESH_TOKEN).because('refresh token reused; session revoked');
      case 'replay':
        deps.events?.refreshed?.('replayed');
        return tokenPair(deps, key, session, user.groups, nowSeconds, settings);
      case 'rotate': {
        const next = rotatedSpec(session, newTokenId(), nowSeconds, settings.refreshTokenMaxAgeSeconds);
        const result = await deps.sessions.replace(session, next);
        if (result === 'gone') throw invalidGrant(BAD_REFRESH_TOKEN).because('session ended');
        if (result !== 'conflict') {
          deps.events?.refreshed?.('rotated');
          return tokenPair(deps, key, result, user.groups, nowSeconds, settings);
        }
        session = await deps.sessions.read(claims.sid);
        fresh = true;
      }
    }
  }
  throw temporarilyUnavailable('the login session is being updated concurrently; try again');
}

/** multipleLogin false: the new login ends every other session of the user, on every replica. */
async function endOtherSessions(deps: TokenIssuerDeps, username: string, keep: string): Promise<void> {
  const sessions = await deps.sessions.listForUser(username);
  const others = sessions.filter((s) => s.id !== keep);
  await Promise.all(others.map((s) => deps.sessions.delete(s.id)));
  for (let i = 0; i < others.length; i++) deps.events?.revoked?.('single_login');
}

/**
 * A user holds at most `cap` sessions: this login's is the newest, the oldest end. Failing to end them leaves the
 * login standing (the sweep ends them later).
 */
async function endSessionsBeyondCap(deps: TokenIssuerDeps, username: string, cap: number, keep: string): Promise<void> {
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
 */
function tokenPair(
  deps: TokenIssuerDeps,
  keys: KeySet,
  session: LoginSession,
  groups: readonly string[],
  nowSeconds: number,
  settings: AuthSettings,
): TokenResponse {
  const subject = { username: session.username, clientId: session.clientId, sessionId: session.id, groups };
  const issuer = deps.policy.issuer;
  const accessExpiresAt = Math.min(nowSeconds + settings.accessTokenMaxAgeSeconds, session.expiresAt);
  const access = buildClaims(
    'access_token',
    subject,
    {
      id: newTokenId(),
      issuedAt: nowSeconds,
      expiresAt: accessExpiresAt,
    },
    issuer,
  );
  const refresh = buildClaims(
    'refresh_token',
    subject,
    {
      id: session.refreshTokenId,
      issuedAt: session.rotatedAt ?? nowSeconds,
      expiresAt: session.expiresAt,
    },
    issuer,
  );
  return {
    access_token: signToken(access, keys.active),
    token_type: 'Bearer',
    refresh_token: signToken(refresh, keys.active),
    expires_in: accessExpiresAt - nowSeconds,
  };
}

/**
 * A name that matches nobody may be a password typed into the wrong field, so it is logged only as a keyed digest:
 * repeated attempts on one name still correlate within this process, but the log holds nothing to guess against.
 */
const UNKNOWN_LOGIN_KEY = randomBytes(32);
function unknownLogin(login: string): string {
  return `unknown:${createHmac('sha256', UNKNOWN_LOGIN_KEY).update(login).digest('hex').slice(0, 12)}`;
}

/** The name an attempt tried, for the audit line: from the watched cache as it stands, never a cluster read. */
async function auditedName(deps: TokenIssuerDeps, login: string): Promise<string> {
  const user = await deps.users.find(login, { cacheOnly: true }).catch(() => undefined);
  return user ? user.name : unknownLogin(login);
}

function signingKey(deps: TokenIssuerDeps): KeySet {
  const key = deps.keys.keys();
  if (!key) throw temporarilyUnavailable('the token signing key is not loaded yet').because('signing key not loaded');
  return key;
}
