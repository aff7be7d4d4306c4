import type { RequestHandler } from 'express';
import { ServiceUnavailableError, UnauthorizedError } from '../../server/errors.js';
import type { RequestAuthenticator } from '../authenticate.js';
import { userClaims } from '../tokens/id-token.js';
import type { UserStore } from '../users/users.js';
import { OAuthError, temporarilyUnavailable } from './oauth-error.js';

/** Every claim the user info endpoint can give, for an access token without scopes (a password login). */
const ALL_USER_SCOPES = ['openid', 'profile', 'email', 'groups'] as const;

/**
 * GET and POST /oauth/userinfo (OpenID Connect Core §5.3): the user an access token belongs to, checked as every
 * request is (session alive, user neither deleted nor disabled). A token from a browser sign-in gets the claims its
 * scopes allow and needs `openid`; a token from a password login carries no scope and gets them all. Errors are
 * RFC 6750 §3: 401 invalid_token with a Bearer challenge, 403 insufficient_scope.
 */
export function userInfoEndpoint(deps: {
  authenticateRequest: RequestAuthenticator;
  users: UserStore;
}): RequestHandler {
  return (req, res, next) => {
    (async () => {
      let caller;
      try {
        caller = await deps.authenticateRequest(req);
      } catch (err) {
        if (err instanceof UnauthorizedError) throw invalidToken();
        if (err instanceof ServiceUnavailableError) throw temporarilyUnavailable(err.message);
        throw err;
      }
      const scope = caller.scope === undefined ? ALL_USER_SCOPES : caller.scope.split(' ');
      if (!scope.includes('openid')) {
        throw new OAuthError(403, 'insufficient_scope', 'the access token was not granted the openid scope', {
          'WWW-Authenticate': 'Bearer realm="kapi", error="insufficient_scope", scope="openid"',
        });
      }
      const user = await deps.users.get(caller.username);
      const groups = caller.groups.filter((group) => group !== 'system:authenticated');
      res.status(200).json({ sub: caller.username, ...userClaims(caller.username, scope, user?.email, groups) });
    })().catch(next);
  };
}

function invalidToken(): OAuthError {
  return new OAuthError(401, 'invalid_token', 'a valid access token is required in the Authorization header', {
    'WWW-Authenticate': 'Bearer realm="kapi", error="invalid_token"',
  });
}
