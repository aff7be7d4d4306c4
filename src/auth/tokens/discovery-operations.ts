import { z } from 'zod';
import { defineOperation } from '../../openapi/operation.js';
import { StatusSchema, apiComponent } from '../../openapi/schemas.js';
import { JWKS_PATH, OIDC_DISCOVERY_PATH } from './discovery-paths.js';

/** The published keys and the OpenID Provider metadata, as operations of the platform document. */
const cacheControl = {
  'Cache-Control': { description: '`public, max-age=60`.', schema: z.string(), required: true },
} as const;
const keysNotLoaded = { description: 'The signing keys are not loaded yet.', body: StatusSchema } as const;

const JwkSetSchema = apiComponent(
  'JwkSet',
  z
    .object({
      keys: z.array(
        z
          .looseObject({
            kty: z.enum(['RSA', 'EC']),
            kid: z.string(),
            alg: z.string().describe('RS256 or ES256.'),
            use: z.literal('sig'),
          })
          .describe('A public key (RFC 7517): n and e for RSA, crv, x and y for EC.'),
      ),
    })
    .describe('The public keys tokens are verified with (RFC 7517). An HMAC key is never published.'),
);

const ProviderMetadataSchema = apiComponent(
  'OpenIdProviderMetadata',
  z
    .looseObject({
      issuer: z.string(),
      authorization_endpoint: z.string(),
      token_endpoint: z.string(),
      userinfo_endpoint: z.string(),
      revocation_endpoint: z.string(),
      jwks_uri: z.string(),
      grant_types_supported: z.array(z.string()),
      response_types_supported: z.array(z.string()),
      response_modes_supported: z.array(z.string()),
      code_challenge_methods_supported: z.array(z.literal('S256')),
      scopes_supported: z.array(z.string()),
      token_endpoint_auth_methods_supported: z.array(z.string()),
      authorization_response_iss_parameter_supported: z.literal(true),
      subject_types_supported: z.array(z.string()),
      id_token_signing_alg_values_supported: z.array(z.string()),
      claims_supported: z.array(z.string()),
      audience: z.string().describe('Not standard: the `aud` of kapi’s tokens (kube-apiserver’s --oidc-client-id).'),
    })
    .describe('OpenID Provider metadata: what kapi issues, for verifiers such as kube-apiserver’s OIDC authenticator.'),
);

export const getJwks = defineOperation({
  operationId: 'getJwks',
  method: 'get',
  path: JWKS_PATH,
  tags: ['discovery'],
  summary: 'The public signing keys (JWKS)',
  security: 'public',
  responses: {
    200: {
      description: 'The key set.',
      body: JwkSetSchema,
      contentType: 'application/jwk-set+json',
      headers: cacheControl,
    },
    503: keysNotLoaded,
  },
});

export const getOpenIdConfiguration = defineOperation({
  operationId: 'getOpenIdConfiguration',
  method: 'get',
  path: OIDC_DISCOVERY_PATH,
  tags: ['discovery'],
  summary: 'OpenID Provider metadata (served once an https issuer URL is configured)',
  security: 'public',
  responses: {
    200: { description: 'The metadata.', body: ProviderMetadataSchema, headers: cacheControl },
    404: { description: 'No https issuer URL is configured (--issuer-url).', body: StatusSchema },
    503: keysNotLoaded,
  },
});

export const discoveryOperations = [getJwks, getOpenIdConfiguration] as const;
