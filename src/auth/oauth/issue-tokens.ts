import {
  GRANT_TYPES,
  type AuthSettings,
  type GrantType,
  type OAuthClient,
} from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import { authenticateClient, clientCredentialsOf, requireGrant } from './client-authentication.js';
import type { LoginAudit, LoginResult } from './login-audit.js';
import type { LoginLimiter } from '../users/login-limiter.js';
import { startLoginSession, tokenPair } from './login-session.js';
import {
  BAD_REFRESH_TOKEN,
  OAuthError,
  invalidGrant,
  invalidRequest,
  temporarilyUnavailable,
  unsupportedGrantType,
} from './oauth-error.js';
import { requiredParam, type FormParams } from './oauth-form.js';
import { checkPassword, type PasswordLoginDeps } from './password-login.js';
import { refreshedUpstreamGroups, upstreamEnded } from './upstream-refresh.js';
import { LOCAL_PROVIDER } from '../providers/map-to-user.js';
import type { PasswordVerifier } from '../users/passwords.js';
import { belongsTo, decideRefresh, rotatedSpec } from '../sessions/session-record.js';
import type { SessionStore } from '../sessions/sessions.js';
import type { KeySet } from '../tokens/key-set.js';
import type { SigningKeyProvider } from '../tokens/signing-key.js';
import { newTokenId, timesProblem, verifyToken, type TokenPolicy } from '../tokens/tokens.js';
import type { UserStore } from '../users/users.js';

/** The token endpoint's use cases: the password grant and the refresh grant (RFC 6749 §4.3, §6). */
export interface TokenIssuerDeps extends Pick<PasswordLoginDeps, 'providers'> {
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
  /** `grant_type=authorization_code`, when browser sign-in is assembled (browser/code-grant.ts). */
  authorizationCode?: AuthorizationCodeGrant;
}

/** Redeems an authorization code for `client`; notes the user for the audit line. */
export type AuthorizationCodeGrant = (
  client: OAuthClient,
  params: FormParams,
  note: { user?: string; provider?: string },
) => Promise<TokenResponse>;

/** rotated: a new pair; replayed: the pair just issued, again (concurrent refreshes); reused: an old token, replayed. */
export type RefreshResult = 'rotated' | 'replayed' | 'reused';
/**
 * Why a login session was ended here: RFC 7009 revoke, logout, a reused refresh token, a new login with
 * multipleLogin off (single_login), a login beyond the user's session cap (session_cap), a password change that ends
 * the user's other sessions (password_change), or an authorization code
 * presented a second time (code_reuse).
 */
export type RevocationVia =
  'revoke' | 'logout' | 'refresh_reuse' | 'single_login' | 'session_cap' | 'code_reuse' | 'password_change';

export interface TokenEvents {
  refreshed?(result: RefreshResult): void;
  revoked?(via: RevocationVia): void;
}

export interface TokenRequest {
  params: FormParams;
  authorization: string | undefined;
  sourceIp: string;
  userAgent?: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  refresh_token: string;
  expires_in: number;
  /** The scopes granted, for a browser sign-in's code (RFC 6749 §5.1). */
  scope?: string;
  /** With the `openid` scope (OpenID Connect Core §3.1.3.3). */
  id_token?: string;
}

/** The attempt as the audit line tells it; filled in as the request is understood. */
interface AttemptNote {
  grant: string;
  user?: string;
  client?: string;
  provider?: string;
}

/**
 * POST /oauth/token: authenticate the client, then run the grant it asked for. Every outcome is audited once. The
 * unsupported grant is refused before the client is authenticated only when kapi supports no such grant at all.
 */
export async function issueTokens(deps: TokenIssuerDeps, request: TokenRequest): Promise<TokenResponse> {
  const note: AttemptNote = { grant: request.params.get('grant_type') ?? '' };
  try {
    const credentials = clientCredentialsOf(request.params, request.authorization);
    note.client = credentials.clientId;
    const grantType = requiredParam(request.params, 'grant_type');
    const client = authenticateClient(credentials, deps.settings().clients);
    const codeGrant = deps.authorizationCode;
    if (!isGrantType(grantType) || (grantType === 'authorization_code' && !codeGrant)) throw unsupportedGrantType();
    requireGrant(client, grantType);
    const response =
      grantType === 'password'
        ? await passwordGrant(deps, client, request, note)
        : grantType === 'refresh_token'
          ? await refreshGrant(deps, client, request, note)
          : await codeGrant!(client, request.params, note);
    deps.audit({ ...note, ...origin(request), result: 'success', reason: 'tokens issued' });
    return response;
  } catch (err) {
    const { result, reason } = outcomeOf(err);
    deps.audit({ ...note, ...origin(request), result, reason });
    throw err;
  }
}

function isGrantType(grantType: string): grantType is GrantType {
  return (GRANT_TYPES as readonly string[]).includes(grantType);
}

function origin(request: TokenRequest): { sourceIp: string; userAgent?: string } {
  return request.userAgent === undefined
    ? { sourceIp: request.sourceIp }
    : { sourceIp: request.sourceIp, userAgent: request.userAgent };
}

/** How a refused request is audited: the client's fault, a limit, or ours (the cluster could not be asked). */
function outcomeOf(err: unknown): { result: LoginResult; reason: string } {
  if (!(err instanceof OAuthError)) return { result: 'error', reason: 'cluster unavailable' };
  const result = err.status === 429 ? 'limited' : err.status >= 500 ? 'error' : 'failure';
  return { result, reason: err.auditReason ?? err.error };
}

/** Password grant: the password under the login limits, then a new login session and its first token pair. */
async function passwordGrant(deps: TokenIssuerDeps, client: OAuthClient, request: TokenRequest, note: AttemptNote) {
  const login = requiredParam(request.params, 'username');
  // an empty password is an attempt like any other: checked (it fails), counted and recorded
  const password = request.params.get('password');
  if (password === undefined) throw invalidRequest('missing parameter "password"');
  const key = signingKey(deps);
  const signedIn = await checkPassword(deps, { login, password, sourceIp: request.sourceIp }, note);
  const { user } = signedIn;
  // read after the check, which may have waited for other checks
  const settings = deps.settings();
  const now = deps.clock();
  const session = await startLoginSession(deps, { ...signedIn, clientId: client.name, now }, settings);
  return tokenPair(deps.policy, key, session, deps.users.groupsOf(user), Math.floor(now / 1000), settings);
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
  const lifetime = timesProblem(claims, nowSeconds, settings.refreshTokenMaxAgeSeconds);
  if (lifetime) throw invalidGrant(BAD_REFRESH_TOKEN).because(lifetime);
  note.user = claims.username;
  if (claims.client_id !== client.name) throw invalidGrant(BAD_REFRESH_TOKEN).because('issued to another client');

  const user = await deps.users.get(claims.username);
  if (!user || user.state === 'Disabled') throw invalidGrant(BAD_REFRESH_TOKEN).because('user deleted or disabled');

  let session = await deps.sessions.find(claims.sid);
  note.provider = session?.identityProvider ?? LOCAL_PROVIDER;
  let fresh = false;
  /** The identity provider's answer, asked once even when a concurrent rotation makes this one try again. */
  let upstream: Awaited<ReturnType<typeof refreshedUpstreamGroups>> | undefined;
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
        return tokenPair(deps.policy, key, session, deps.users.groupsOf(user), nowSeconds, settings);
      case 'rotate': {
        upstream ??= await refreshedUpstreamGroups(deps.providers, user, session, deps.logger);
        if ('ended' in upstream) {
          await deps.sessions.delete(session.id);
          throw upstreamEnded(upstream.ended);
        }
        const next = rotatedSpec(
          session,
          newTokenId(),
          nowSeconds,
          settings.refreshTokenMaxAgeSeconds,
          upstream.groups,
        );
        const result = await deps.sessions.replace(session, next);
        if (result === 'gone') throw invalidGrant(BAD_REFRESH_TOKEN).because('session ended');
        if (result !== 'conflict') {
          deps.events?.refreshed?.('rotated');
          return tokenPair(deps.policy, key, result, deps.users.groupsOf(user), nowSeconds, settings);
        }
        session = await deps.sessions.read(claims.sid);
        fresh = true;
      }
    }
  }
  throw temporarilyUnavailable('the login session is being updated concurrently; try again');
}

function signingKey(deps: TokenIssuerDeps): KeySet {
  const key = deps.keys.keys();
  if (!key) throw temporarilyUnavailable('the token signing key is not loaded yet').because('signing key not loaded');
  return key;
}
