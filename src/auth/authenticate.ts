import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../observability/logger.js';
import { ServiceUnavailableError, UnauthorizedError } from '../server/errors.js';
import { BEARER_SUBPROTOCOL_PREFIX, presentedToken, withoutBearerSubprotocol } from './tokens/bearer-token.js';
import type { UserInfo } from './identity.js';
import { belongsTo, isSessionAlive } from './sessions/session-record.js';
import type { SessionStore } from './sessions/sessions.js';
import type { LoginSession } from './sessions/session-record.js';
import type { SigningKeyProvider } from './tokens/signing-key.js';
import { VerifiedTokenCache, signingKeyOf, timesProblem, type TokenClaims, type TokenPolicy } from './tokens/tokens.js';
import type { KeySet, SigningKey } from './tokens/key-set.js';
import { isPassable, keepPassableToken } from './passable-token.js';
import type { AuthSettings } from '../config/cluster-configuration.js';
import type { UserStore } from './users/users.js';
import type { UserRecord } from './users/user-record.js';

export const AUTHENTICATED_GROUP = 'system:authenticated';

export interface AuthenticatorDeps {
  keys: SigningKeyProvider;
  /** The configured lifetimes: an access token valid for longer was not issued by kapi as configured. */
  settings?: () => Pick<AuthSettings, 'accessTokenMaxAgeSeconds'>;
  policy: TokenPolicy;
  sessions: SessionStore;
  users: UserStore;
  clock: () => number;
  logger: Logger;
}

/**
 * Who sent a request, or why nobody (a thrown or rejected `UnauthorizedError` or `ServiceUnavailableError`). Answered
 * at once when every check can be made from memory (the token verified before, its session and user in the watched
 * caches: nearly every request), else as a promise.
 */
export type RequestAuthenticator = (req: IncomingMessage) => UserInfo | Promise<UserInfo>;

/**
 * Who sent a request: a valid access token (never a refresh token) whose login session still exists and whose user
 * still exists and is not disabled — checked on every request, so logout, revocation, deletion and disabling take
 * effect on the next one, not at token expiry. Refuses with `UnauthorizedError` (401 Status), or
 * `ServiceUnavailableError` when the cluster cannot be asked. Works on raw upgrade requests too; on success a token
 * carried as a WebSocket subprotocol is removed from the request, as kube-apiserver does.
 */
export function requestAuthenticator(deps: AuthenticatorDeps): RequestAuthenticator {
  const log = deps.logger.child({ component: 'authenticate' });
  const tokens = new VerifiedTokenCache();
  /** The groups last sent for a session, while its record and its user's stay the same objects (see `groupsOf`). */
  const groupsBySession = new WeakMap<
    LoginSession,
    { user: UserRecord; userGroups: readonly string[]; groups: string[] }
  >();
  const groupsOf = (user: UserRecord, session: LoginSession) => {
    // the User's groups as kapi may assert them now (none while the tenant guard is missing)
    const userGroups = deps.users.groupsOf(user);
    const known = groupsBySession.get(session);
    if (known?.user === user && known.userGroups === userGroups) return known.groups;
    const groups = impersonatedGroups({ groups: userGroups }, session);
    groupsBySession.set(session, { user, userGroups, groups });
    return groups;
  };

  /**
   * The key a verified token was signed with, read from its header once per token (by its claims, the same frozen
   * object on every request that presents it), not decoded again on every request. A memo never outlives its key
   * set: the verified-token cache starts afresh (new claims objects) whenever the key set changes.
   */
  const signingKeys = new WeakMap<TokenClaims, SigningKey | null>();
  const signingKeyOfVerified = (token: string, claims: TokenClaims, keys: KeySet) => {
    let key = signingKeys.get(claims);
    if (key === undefined) {
      key = signingKeyOf(token, keys) ?? null;
      signingKeys.set(claims, key);
    }
    return key ?? undefined;
  };

  function refuse(reason: string): UnauthorizedError {
    log.debug('request not authenticated', { reason });
    return new UnauthorizedError();
  }

  /** The checks of the session and the user, and the identity they make. */
  const identify = (
    req: IncomingMessage,
    presented: { token: string },
    keys: KeySet,
    claims: TokenClaims,
    nowSeconds: number,
    session: LoginSession | undefined,
    user: UserRecord | undefined,
    checkedAt: number,
  ): UserInfo => {
    if (!session || session.username !== claims.username || session.clientId !== claims.client_id) {
      throw refuse('login session ended');
    }
    if (!isSessionAlive(session, nowSeconds)) throw refuse('login session expired');
    if (!user || user.state === 'Disabled') throw refuse('user deleted or disabled');
    if (!belongsTo(session, user)) throw refuse('the user was deleted and created again');

    const protocols = req.headers['sec-websocket-protocol'];
    if (protocols?.includes(BEARER_SUBPROTOCOL_PREFIX)) {
      const rest = withoutBearerSubprotocol(protocols);
      if (rest === undefined) delete req.headers['sec-websocket-protocol'];
      else req.headers['sec-websocket-protocol'] = rest;
    }
    const identity: UserInfo =
      claims.scope === undefined
        ? { username: user.name, uid: user.uid, groups: groupsOf(user, session), sessionId: session.id, checkedAt }
        : {
            username: user.name,
            uid: user.uid,
            groups: groupsOf(user, session),
            sessionId: session.id,
            scope: claims.scope,
            checkedAt,
          };
    // an https issuer is the only kind kube-apiserver can trust: only then is the token looked at for pass-through
    if (claims.iss.startsWith('https://')) {
      const key = signingKeyOfVerified(presented.token, claims, keys);
      const signedWith = { algorithm: key?.algorithm ?? 'HS256', active: key !== undefined && key === keys.active };
      if (isPassable(claims, signedWith, deps.policy.issuer, identity.groups, AUTHENTICATED_GROUP, nowSeconds))
        keepPassableToken(identity, { token: presented.token, expiresAt: claims.exp, kid: key!.kid });
    }
    return identity;
  };

  return (req) => {
    const presented = presentedToken(req.headers);
    if (presented === undefined) throw new UnauthorizedError();
    if ('problem' in presented) throw refuse(presented.problem);
    const keys = deps.keys.keys();
    if (!keys) throw new ServiceUnavailableError('the token signing key is not loaded yet');

    const nowSeconds = Math.floor(deps.clock() / 1000);
    const verified = tokens.verify(presented.token, keys, 'access_token', nowSeconds, deps.policy.acceptance);
    if (!verified.ok) throw refuse(verified.reason);
    const claims = verified.claims;
    const lifetime = deps.settings && timesProblem(claims, nowSeconds, deps.settings().accessTokenMaxAgeSeconds);
    if (lifetime) throw refuse(lifetime);

    const checkedAt = performance.now();
    // From memory when both are there (no promise on the request's path); else asked, maybe of the cluster.
    const knownSession = deps.sessions.known?.(claims.sid);
    const knownUser = knownSession && deps.users.known?.(claims.username);
    if (knownUser) return identify(req, presented, keys, claims, nowSeconds, knownSession, knownUser, checkedAt);
    return Promise.all([deps.sessions.find(claims.sid), deps.users.get(claims.username)]).then(
      ([session, user]) => identify(req, presented, keys, claims, nowSeconds, session, user, checkedAt),
      (err: unknown) => {
        log.warn('could not check a login session or user', { error: String(err) });
        throw new ServiceUnavailableError('the identity of the request could not be checked; try again');
      },
    );
  };
}

/**
 * The groups kube-apiserver sees: the User's own, those its identity provider gave the session (at the login or the
 * last refresh), and system:authenticated. Neither source can hold a `system:` group (both are filtered when read).
 */
export function impersonatedGroups(
  user: { groups: readonly string[] },
  session: { groups?: readonly string[] },
): string[] {
  return [...new Set([...user.groups, ...(session.groups ?? []), AUTHENTICATED_GROUP])];
}

/** Express middleware: `req.user`, or the error to the error handler (401/503 Status). */
export function authenticate(authenticateRequest: RequestAuthenticator): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const authenticated = (user: UserInfo) => {
      req.user = user;
      next();
    };
    try {
      const user = authenticateRequest(req);
      if (user instanceof Promise) user.then(authenticated, next);
      else authenticated(user);
    } catch (error) {
      next(error);
    }
  };
}
