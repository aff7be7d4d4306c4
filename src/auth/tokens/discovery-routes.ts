import { Router, type Response } from 'express';
import { NotFoundError, ServiceUnavailableError } from '../../server/errors.js';
import { mountOperation } from '../../openapi/operation.js';
import { getJwks, getOpenIdConfiguration } from './discovery-operations.js';
import { JWKS_PATH } from './discovery-paths.js';
import { publicJwks } from './key-set.js';
import type { SigningKeyProvider } from './signing-key.js';
import { TOKEN_AUDIENCE, type TokenPolicy } from './tokens.js';
import { CODE_CHALLENGE_METHODS, SUPPORTED_SCOPES } from '../browser/authorization-request.js';

export { JWKS_PATH, OIDC_DISCOVERY_PATH } from './discovery-paths.js';
/** Short enough that a new key is seen soon after it is added; verifiers also refetch on an unknown kid. */
const MAX_AGE_SECONDS = 60;

export interface DiscoveryDeps {
  keys: SigningKeyProvider;
  policy: TokenPolicy;
}

/**
 * The JWKS (public keys of the asymmetric keys in the set; an HMAC key is never published) and, once an https
 * issuer URL is configured, the OpenID Provider metadata pointing at it: the endpoints of the browser sign-in
 * (authorization code with PKCE S256), the token, user info and revocation endpoints, and what kapi issues.
 */
export function discoveryRoutes(deps: DiscoveryDeps): Router {
  const router = Router();
  mountOperation(router, '', getJwks, (_req, res) => {
    const keys = deps.keys.keys();
    if (!keys) throw new ServiceUnavailableError('the token signing keys are not loaded yet');
    cacheable(res)
      .type('application/jwk-set+json')
      .send(JSON.stringify(publicJwks(keys)));
  });
  mountOperation(router, '', getOpenIdConfiguration, (_req, res) => {
    const issuer = deps.policy.issuer;
    if (!issuer.startsWith('https://')) {
      throw new NotFoundError(
        'OpenID discovery needs an https issuer URL: start kapi-apiserver with --issuer-url (chart: oidc.issuerURL)',
      );
    }
    const keys = deps.keys.keys();
    if (!keys) throw new ServiceUnavailableError('the token signing keys are not loaded yet');
    const algorithms = new Set<string>([keys.active.algorithm, ...publicJwks(keys).keys.map((key) => key.alg)]);
    cacheable(res).json(providerMetadata(issuer, [...algorithms]));
  });
  return router;
}

/** Pure: the metadata document for an issuer and the algorithms its ID tokens may be signed with. */
export function providerMetadata(issuer: string, algorithms: readonly string[]) {
  const base = issuer.replace(/\/+$/, '');
  return {
    issuer,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    userinfo_endpoint: `${base}/oauth/userinfo`,
    revocation_endpoint: `${base}/oauth/revoke`,
    jwks_uri: `${base}${JWKS_PATH}`,
    grant_types_supported: ['authorization_code', 'refresh_token', 'password'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: [...CODE_CHALLENGE_METHODS],
    scopes_supported: [...SUPPORTED_SCOPES],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    authorization_response_iss_parameter_supported: true,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algorithms,
    claims_supported: [
      'iss',
      'sub',
      'aud',
      'azp',
      'iat',
      'exp',
      'auth_time',
      'nonce',
      'at_hash',
      'jti',
      'username',
      'preferred_username',
      'name',
      'email',
      'groups',
      'client_id',
      'sid',
      'scope',
      'token_type',
    ],
    // not standard metadata: what a verifier needs beside the keys (kube-apiserver's --oidc-client-id)
    audience: TOKEN_AUDIENCE,
  };
}

function cacheable(res: Response): Response {
  return res.set('Cache-Control', `public, max-age=${MAX_AGE_SECONDS}`);
}
