import type { AuthSettings, OAuthClient } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import type { TokenEvents, TokenResponse } from '../oauth/issue-tokens.js';
import { endSessionsBeyondLimits, tokenPair } from '../oauth/login-session.js';
import { invalidGrant, invalidRequest, temporarilyUnavailable } from '../oauth/oauth-error.js';
import { param, requiredParam, type FormParams } from '../oauth/oauth-form.js';
import { belongsTo, type LoginSession } from '../sessions/session-record.js';
import { SessionExists, type SessionStore } from '../sessions/sessions.js';
import { idTokenClaims, signIdToken } from '../tokens/id-token.js';
import type { SigningKeyProvider } from '../tokens/signing-key.js';
import { newTokenId, type TokenPolicy } from '../tokens/tokens.js';
import type { UserStore } from '../users/users.js';
import { LOCAL_PROVIDER } from '../providers/map-to-user.js';
import {
  CODE_VERIFIER,
  codeDigest,
  openCode,
  pkceMatches,
  type CodeGrant,
  type CodeRedemptions,
} from './authorization-codes.js';

/** The one description for every refused code, so an answer never tells which check failed. */
export const BAD_CODE = 'the authorization code is invalid, expired, already used or issued for another request';

export interface CodeGrantDeps {
  users: UserStore;
  sessions: SessionStore;
  redemptions: CodeRedemptions;
  keys: SigningKeyProvider;
  policy: TokenPolicy;
  settings: () => AuthSettings;
  clock: () => number;
  logger: Logger;
  events?: TokenEvents;
}

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5): the code must be kapi's, unexpired, issued to
 * this client for this redirect URI, and answered by the code_verifier of its challenge. Redeeming it starts the login
 * session the code names and records the redemption in the cluster; a code presented again, on any replica, is
 * refused and ends that session (RFC 6749 §4.1.2). With the `openid` scope the answer carries an ID token.
 */
export async function authorizationCodeGrant(
  deps: CodeGrantDeps,
  client: OAuthClient,
  params: FormParams,
  note: { user?: string; provider?: string },
): Promise<TokenResponse> {
  const code = requiredParam(params, 'code');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const verifier = param(params, 'code_verifier');
  if (verifier === undefined) throw invalidRequest('missing parameter "code_verifier" (PKCE is required)');
  if (!CODE_VERIFIER.test(verifier)) {
    throw invalidRequest('code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)');
  }
  const keys = deps.keys.keys();
  if (!keys) throw temporarilyUnavailable('the token signing key is not loaded yet').because('signing key not loaded');
  const now = deps.clock();
  const nowSeconds = Math.floor(now / 1000);

  const opened = openCode(keys, code, nowSeconds);
  if (!opened.ok) throw invalidGrant(BAD_CODE).because(opened.reason);
  const { grant, expiresAt } = opened;
  note.user = grant.username;
  note.provider = grant.provider ?? LOCAL_PROVIDER;
  if (grant.clientId !== client.name) throw invalidGrant(BAD_CODE).because('code issued to another client');
  if (grant.redirectUri !== redirectUri) throw invalidGrant(BAD_CODE).because('redirect_uri differs from the code’s');
  if (!pkceMatches(verifier, grant.codeChallenge)) throw invalidGrant(BAD_CODE).because('PKCE verification failed');

  const user = await deps.users.get(grant.username);
  if (!user || user.state === 'Disabled' || !belongsTo({ username: grant.username, userUid: grant.userUid }, user)) {
    throw invalidGrant(BAD_CODE).because('user deleted or disabled since the sign-in');
  }

  const settings = deps.settings();
  const session = await redeem(deps, { code, grant, expiresAt }, settings, now);
  const keep: [string, ...string[]] = [session.id, ...(grant.browserSessionId ? [grant.browserSessionId] : [])];
  await endSessionsBeyondLimits(deps, user.name, keep, settings);
  const pair = tokenPair(deps.policy, keys, session, deps.users.groupsOf(user), nowSeconds, settings);
  const response: TokenResponse = { ...pair, scope: grant.scope.join(' ') };
  if (grant.scope.includes('openid')) {
    response.id_token = signIdToken(
      idTokenClaims({
        issuer: deps.policy.issuer,
        username: user.name,
        clientId: client.name,
        sessionId: session.id,
        nowSeconds,
        expiresAt: nowSeconds + pair.expires_in,
        authTime: grant.authTime,
        nonce: grant.nonce,
        accessToken: pair.access_token,
        scope: grant.scope,
        email: user.email,
        groups: [...new Set([...deps.users.groupsOf(user), ...(session.groups ?? [])])],
      }),
      keys.active,
    );
  }
  return response;
}

/**
 * Starts the session the code names, then records the redemption. Either step finding its object already there means
 * the code was redeemed before: the session is ended (the tokens issued from the code stop working) and the request
 * refused. Session first, record second: if the session was ended since (logout), the record still refuses a replay;
 * and of two redemptions at once, the one that finds the session taken ends it whatever order the writes land in.
 */
async function redeem(
  deps: CodeGrantDeps,
  { code, grant, expiresAt }: { code: string; grant: CodeGrant; expiresAt: number },
  settings: AuthSettings,
  now: number,
): Promise<LoginSession> {
  const nowSeconds = Math.floor(now / 1000);
  let session: LoginSession;
  try {
    session = await deps.sessions.create(
      {
        username: grant.username,
        userUid: grant.userUid,
        clientId: grant.clientId,
        expiresAt: nowSeconds + settings.refreshTokenMaxAgeSeconds,
        refreshTokenId: newTokenId(),
        loginTime: now,
        scope: grant.scope.join(' '),
        ...(grant.provider ? { identityProvider: grant.provider, groups: grant.upstreamGroups ?? [] } : {}),
      },
      grant.sessionId,
    );
  } catch (err) {
    if (err instanceof SessionExists) return replayed(deps, grant);
    throw err;
  }
  let first: boolean;
  try {
    first = await deps.redemptions.record(codeDigest(code), {
      clientId: grant.clientId,
      username: grant.username,
      sessionId: grant.sessionId,
      expiresAt,
    });
  } catch (err) {
    // not recorded: no tokens, and the session goes again (a retry of the same code then starts it afresh)
    await deps.sessions.delete(session.id).catch(() => undefined);
    throw err;
  }
  if (!first) return replayed(deps, grant);
  return session;
}

async function replayed(deps: CodeGrantDeps, grant: CodeGrant): Promise<never> {
  await deps.sessions.delete(grant.sessionId);
  deps.events?.revoked?.('code_reuse');
  deps.logger.warn('authorization code used again: the login session it started is revoked', {
    user: grant.username,
    client: grant.clientId,
    session: grant.sessionId,
  });
  throw invalidGrant(BAD_CODE).because('code used again; session revoked');
}
