import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { AuthSettings } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import { authenticateClient, clientCredentialsOf } from './client-authentication.js';
import { issueTokens, type TokenIssuerDeps } from './issue-tokens.js';
import { OAuthError, invalidRequest, temporarilyUnavailable } from './oauth-error.js';
import { isFormContentType, parseForm, requiredParam } from './oauth-form.js';
import { presentedToken } from '../tokens/bearer-token.js';
import type { SessionStore } from '../sessions/sessions.js';
import type { SigningKeyProvider } from '../tokens/signing-key.js';
import { verifyToken, type TokenPolicy } from '../tokens/tokens.js';
import { mountOperation } from '../../openapi/operation.js';
import {
  FORM_CONTENT_TYPE,
  OAUTH_BASE,
  issueToken,
  logout as logoutOperation,
  logoutWithGet,
  revokeToken,
  userInfo,
  userInfoWithPost,
} from './operations.js';

export interface OAuthRouteDeps {
  issuer: TokenIssuerDeps;
  /** The browser sign-in endpoints (/oauth/authorize, /oauth/login, …), when assembled. */
  browser?: Router;
  /** GET and POST /oauth/userinfo, when assembled. */
  userInfo?: RequestHandler;
  sessions: SessionStore;
  keys: SigningKeyProvider;
  policy: TokenPolicy;
  settings: () => AuthSettings;
  clock: () => number;
  logger: Logger;
}

const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The public OAuth endpoints under /oauth. Everything here answers RFC 6749 JSON (`{"error","error_description"}`)
 * through the router's own error handler, never a Kubernetes Status, and every answer is marked not cacheable.
 * Parameters come from the form body only: the query string is never read (it ends up in logs and histories).
 */
export function oauthRoutes(deps: OAuthRouteDeps): Router {
  const oauth = Router();
  oauth.use(noStore);
  if (deps.browser) oauth.use(deps.browser);
  if (deps.userInfo) {
    mountOperation(oauth, OAUTH_BASE, userInfo, deps.userInfo);
    mountOperation(oauth, OAUTH_BASE, userInfoWithPost, deps.userInfo);
  }

  mountOperation(oauth, OAUTH_BASE, issueToken, formBody, (req, res, next) => {
    issueTokens(deps.issuer, {
      params: parseForm(req.body as Buffer),
      authorization: req.headers.authorization,
      sourceIp: sourceIpOf(req),
      userAgent: req.headers['user-agent'],
    }).then((tokens) => res.status(200).json(tokens), next);
  });

  // RFC 7009: any authentic client may revoke its own tokens; an unknown or invalid token is still a 200.
  mountOperation(oauth, OAUTH_BASE, revokeToken, formBody, (req, res, next) => {
    const params = parseForm(req.body as Buffer);
    const client = authenticateClient(clientCredentialsOf(params, req.headers.authorization), deps.settings().clients);
    const token = requiredParam(params, 'token');
    const keys = deps.keys.keys();
    if (!keys) throw temporarilyUnavailable('the token signing key is not loaded yet');
    const verified = verifyToken(token, keys, 'any', nowSeconds(deps), deps.policy.acceptance);
    if (!verified.ok) {
      res.status(200).end();
      return;
    }
    if (verified.claims.client_id !== client.name) throw invalidRequest('the token was not issued to this client');
    deps.sessions.delete(verified.claims.sid).then(() => {
      deps.issuer.events?.revoked?.('revoke');
      deps.logger.info('login session revoked', {
        audit: 'logout',
        user: verified.claims.username,
        client: client.name,
        via: 'revoke',
      });
      res.status(200).end();
    }, next);
  });

  // Logout with the access token in the Authorization header: the whole login session ends, on every replica.
  const logout: RequestHandler = (req, res, next) => {
    const presented = presentedToken({ authorization: req.headers.authorization });
    const keys = deps.keys.keys();
    if (!keys) throw temporarilyUnavailable('the token signing key is not loaded yet');
    const verified =
      presented && 'token' in presented
        ? verifyToken(presented.token, keys, 'access_token', nowSeconds(deps), deps.policy.acceptance)
        : undefined;
    if (!verified?.ok) {
      throw new OAuthError(401, 'invalid_token', 'a valid access token is required in the Authorization header', {
        'WWW-Authenticate': 'Bearer realm="kapi", error="invalid_token"',
      });
    }
    deps.sessions.delete(verified.claims.sid).then(() => {
      deps.issuer.events?.revoked?.('logout');
      deps.logger.info('login session ended', { audit: 'logout', user: verified.claims.username, via: 'logout' });
      res.status(200).end();
    }, next);
  };
  mountOperation(oauth, OAUTH_BASE, logoutWithGet, logout);
  mountOperation(oauth, OAUTH_BASE, logoutOperation, logout);

  oauth.all('/token', methodNotAllowed('POST'));
  oauth.all('/revoke', methodNotAllowed('POST'));
  oauth.all('/logout', methodNotAllowed('GET, POST'));
  for (const path of ['/userinfo', '/authorize', '/login']) oauth.all(path, methodNotAllowed('GET, POST'));
  oauth.use((_req: Request, _res: Response, next: NextFunction) => {
    next(new OAuthError(404, 'invalid_request', 'no such OAuth endpoint'));
  });
  oauth.use(oauthErrorHandler(deps.logger));

  const router = Router();
  router.use(OAUTH_BASE, oauth);
  return router;
}

function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  next();
}

const readBody = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES });

/** Only form bodies (415 otherwise), at most 16 KiB (413). */
function formBody(req: Request, res: Response, next: NextFunction): void {
  if (!isFormContentType(req.headers['content-type'])) {
    next(new OAuthError(415, 'invalid_request', `the body must be ${FORM_CONTENT_TYPE}`));
    return;
  }
  readBody(req, res, (err?: unknown) => {
    if (err) {
      next(err);
      return;
    }
    if (!Buffer.isBuffer(req.body)) req.body = Buffer.alloc(0);
    next();
  });
}

function methodNotAllowed(allow: string): RequestHandler {
  return (_req, res, next) => {
    res.setHeader('Allow', allow);
    next(new OAuthError(405, 'invalid_request', `use ${allow}`));
  };
}

/** The one place an /oauth error becomes a response. Unexpected errors are logged, never described to the client. */
function oauthErrorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const error = toOAuthError(err);
    if (error.status >= 500) {
      logger.error('OAuth request failed', { requestId: req.requestId, path: req.path, error: describe(err) });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(error.headers).status(error.status).json(error.body());
  };
}

function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  const status = (err as { status?: unknown } | null)?.status;
  const type = (err as { type?: unknown } | null)?.type;
  // body-parser's errors
  if (status === 413 || type === 'entity.too.large') {
    return new OAuthError(413, 'invalid_request', `the body is larger than ${BODY_LIMIT_BYTES} bytes`);
  }
  if (status === 415) return new OAuthError(415, 'invalid_request', 'unsupported content encoding');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new OAuthError(400, 'invalid_request', 'the request body could not be read');
  }
  if (
    err instanceof TypeError ||
    err instanceof RangeError ||
    err instanceof ReferenceError ||
    err instanceof SyntaxError
  ) {
    return new OAuthError(500, 'server_error', 'an internal error occurred; see the server log');
  }
  // the cluster could not be asked (users, sessions, status writes): try again later, never a guess
  return temporarilyUnavailable('the login service cannot reach the cluster right now; try again');
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function sourceIpOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

function nowSeconds(deps: OAuthRouteDeps): number {
  return Math.floor(deps.clock() / 1000);
}
