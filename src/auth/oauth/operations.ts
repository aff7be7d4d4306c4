import { z } from 'zod';
import { defineOperation, type ResponseDefinition } from '../../openapi/operation.js';
import { RETRY_AFTER_HEADER, apiComponent } from '../../openapi/schemas.js';

/**
 * The OAuth endpoints as operations: the router mounts them by these definitions and the platform document shows
 * them. Bodies are forms (RFC 6749 §3.2); every answer, success or error, carries Cache-Control: no-store.
 */
export const OAUTH_BASE = '/oauth';
export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_token',
  'temporarily_unavailable',
  'server_error',
  'insufficient_scope',
] as const;

const OAuthErrorSchema = apiComponent(
  'OAuthError',
  z
    .object({
      error: z.enum(OAUTH_ERROR_CODES),
      error_description: z.string().describe('For people; never echoes a submitted value.'),
    })
    .describe('An RFC 6749 §5.2 error: the body of every error answer under /oauth.'),
);

const TokenResponseSchema = apiComponent(
  'TokenResponse',
  z
    .object({
      access_token: z.string().describe('A JWT for `Authorization: Bearer …`.'),
      token_type: z.literal('Bearer'),
      refresh_token: z
        .string()
        .describe('Rotates: each refresh returns a new one, and reusing an old one ends the login.'),
      expires_in: z.int().min(0).describe('Seconds until the access token expires (7200 by default).'),
      scope: z.string().optional().describe('authorization_code grant: the scopes granted, space-separated.'),
      id_token: z
        .string()
        .optional()
        .describe(
          'authorization_code grant with the openid scope: an OpenID Connect ID token (aud = the client, nonce echoed).',
        ),
    })
    .describe('A token pair (RFC 6749 §5.1).'),
);

const noStore = {
  'Cache-Control': { description: 'Always `no-store`.', schema: z.literal('no-store'), required: true },
  Pragma: { description: 'Always `no-cache`.', schema: z.literal('no-cache'), required: true },
} as const;
const retryAfter = RETRY_AFTER_HEADER;

function oauthError(description: string, headers: ResponseDefinition['headers'] = {}): ResponseDefinition {
  return { description, body: OAuthErrorSchema, headers: { ...noStore, ...headers } };
}

const tooLarge = oauthError('invalid_request: the body is larger than 16 KiB.');
const notForm = oauthError(`invalid_request: the body is not ${FORM_CONTENT_TYPE} (UTF-8).`);
const unavailable = oauthError(
  'temporarily_unavailable: the signing key is not loaded yet or the cluster cannot be reached; try again.',
  { 'Retry-After': retryAfter },
);
const badClient = oauthError(
  'invalid_client: unknown client or wrong secret (with `WWW-Authenticate: Basic` when Basic was used).',
  {
    'WWW-Authenticate': {
      description: 'Present when the client used HTTP Basic.',
      schema: z.string().regex(/^Basic /),
    },
  },
);

/** Client authentication, RFC 6749 §2.3.1: in the form, or HTTP Basic instead (never both). */
const clientFields = {
  client_id: z.string().optional().describe('The OAuth client (default client: `kapi`), unless HTTP Basic is used.'),
  client_secret: z.string().optional().describe('The client’s secret, unless HTTP Basic is used.'),
};

export const TokenRequestSchema = apiComponent(
  'TokenRequest',
  z
    .object({
      grant_type: z.enum(['password', 'refresh_token', 'authorization_code']),
      username: z.string().optional().describe('password grant: the user’s name or e-mail address.'),
      password: z.string().optional().describe('password grant: the user’s password.'),
      refresh_token: z.string().optional().describe('refresh_token grant: the current refresh token.'),
      code: z.string().optional().describe('authorization_code grant: the code from the redirect (single use, 60 s).'),
      redirect_uri: z
        .string()
        .optional()
        .describe('authorization_code grant: the redirect_uri of the authorization request, exactly.'),
      code_verifier: z
        .string()
        .optional()
        .describe('authorization_code grant: the PKCE verifier whose S256 digest was the code_challenge.'),
      ...clientFields,
    })
    .describe('Each parameter at most once; parameters in the query string are never read.'),
);

export const issueToken = defineOperation({
  operationId: 'issueToken',
  method: 'post',
  path: `${OAUTH_BASE}/token`,
  tags: ['oauth'],
  summary: 'Issue a token pair: password grant (log in), refresh_token grant, or authorization_code grant',
  description:
    'RFC 6749 §4.3, §6 and §4.1.3 with RFC 7636. Failed logins are limited per user and per client address (429 with ' +
    'Retry-After while the limit holds). Wrong password, unknown user and disabled user get the same answer. A ' +
    'public client authenticates with client_id alone. An authorization code is redeemed once: presented again, it ' +
    'is refused and the login session it started is revoked.',
  security: 'client',
  form: TokenRequestSchema,
  responses: {
    200: { description: 'The token pair.', body: TokenResponseSchema, headers: noStore },
    400: oauthError(
      'invalid_request (malformed, missing or repeated parameter), invalid_grant (wrong credentials; bad, ' +
        'expired or reused refresh token; an authorization code that is invalid, expired, used before, of another ' +
        'client or redirect URI, or whose code_verifier does not match), unauthorized_client (grant not allowed to ' +
        'the client) or unsupported_grant_type.',
    ),
    401: badClient,
    413: tooLarge,
    415: notForm,
    429: oauthError('invalid_grant: too many failed logins for this user or address.', {
      'Retry-After': retryAfter,
    }),
    503: unavailable,
  },
});

export const RevokeRequestSchema = apiComponent(
  'RevokeRequest',
  z.object({
    token: z.string().describe('An access or refresh token of the login session to end.'),
    token_type_hint: z.enum(['access_token', 'refresh_token']).optional().describe('Ignored: both kinds are read.'),
    ...clientFields,
  }),
);

export const revokeToken = defineOperation({
  operationId: 'revokeToken',
  method: 'post',
  path: `${OAUTH_BASE}/revoke`,
  tags: ['oauth'],
  summary: 'Revoke a token: its whole login session ends on every replica (RFC 7009)',
  description: 'An unknown, invalid or expired token is still a 200, as RFC 7009 §2.2 asks.',
  security: 'client',
  form: RevokeRequestSchema,
  responses: {
    200: { description: 'Revoked, or nothing to revoke. Empty body.', headers: noStore },
    400: oauthError('invalid_request: missing token, malformed body, or a token issued to another client.'),
    401: badClient,
    413: tooLarge,
    415: notForm,
    503: unavailable,
  },
});

const logoutResponses = {
  200: { description: 'The login session ended on every replica. Empty body.', headers: noStore },
  401: oauthError('invalid_token: no valid access token in the Authorization header.', {
    'WWW-Authenticate': {
      description: '`Bearer realm="kapi", error="invalid_token"`.',
      schema: z.string().regex(/^Bearer /),
      required: true,
    },
  }),
  503: unavailable,
} as const;

const logoutDescription =
  'Ends the login session of the access token in `Authorization: Bearer …`: its refresh token stops working and ' +
  'its open watches, log follows and exec sessions are cut.';

export const logout = defineOperation({
  operationId: 'logout',
  method: 'post',
  path: `${OAUTH_BASE}/logout`,
  tags: ['oauth'],
  summary: 'Log out: end the login session of the bearer token',
  description: logoutDescription,
  security: 'bearer',
  responses: logoutResponses,
});

export const logoutWithGet = defineOperation({
  ...logout,
  operationId: 'logoutWithGet',
  method: 'get',
  summary: 'Log out (GET, as KubeSphere offers it)',
});

const UserInfoSchema = apiComponent(
  'UserInfo',
  z
    .object({
      sub: z.string().describe('The user’s name, as the tokens’ sub.'),
      preferred_username: z.string().optional().describe('With the profile scope.'),
      name: z.string().optional().describe('With the profile scope.'),
      email: z.string().optional().describe('With the email scope, when the User has one.'),
      groups: z.array(z.string()).optional().describe('With the groups scope: the groups impersonated for the user.'),
    })
    .describe(
      'OpenID Connect user info (Core §5.3). A token from a password login carries no scope and gets every claim.',
    ),
);

const userInfoResponses = {
  200: { description: 'The user of the access token.', body: UserInfoSchema, headers: noStore },
  401: oauthError('invalid_token: no valid access token, or its login session or user has ended.', {
    'WWW-Authenticate': {
      description: '`Bearer realm="kapi", error="invalid_token"`.',
      schema: z.string().regex(/^Bearer /),
      required: true,
    },
  }),
  403: oauthError('insufficient_scope: the token of a browser sign-in was not granted openid.', {
    'WWW-Authenticate': {
      description: '`Bearer realm="kapi", error="insufficient_scope", scope="openid"`.',
      schema: z.string().regex(/^Bearer /),
      required: true,
    },
  }),
  503: unavailable,
} as const;

export const userInfo = defineOperation({
  operationId: 'userInfo',
  method: 'get',
  path: `${OAUTH_BASE}/userinfo`,
  tags: ['oauth'],
  summary: 'The user an access token belongs to (OpenID Connect user info)',
  security: 'bearer',
  responses: userInfoResponses,
});

export const userInfoWithPost = defineOperation({
  ...userInfo,
  operationId: 'userInfoWithPost',
  method: 'post',
  summary: 'The user an access token belongs to (POST, as OpenID Connect allows)',
});

export const oauthOperations = [issueToken, revokeToken, logout, logoutWithGet, userInfo, userInfoWithPost] as const;
