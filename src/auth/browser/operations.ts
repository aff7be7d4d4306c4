import { z } from 'zod';
import { defineOperation, type ResponseDefinition } from '../../openapi/operation.js';
import { apiComponent } from '../../openapi/schemas.js';
import { SUPPORTED_SCOPES } from './authorization-request.js';

/**
 * The browser sign-in endpoints as operations of the platform document: the authorization endpoint, kapi's login
 * page, and (with upstream providers) the start and the callback of an upstream sign-in. Their answers are pages and
 * redirects for a browser, never JSON; every one is marked not cacheable.
 */
const HtmlPageSchema = apiComponent(
  'HtmlPage',
  z
    .string()
    .describe(
      'A page of kapi’s for a browser (text/html, no script, Content-Security-Policy default-src none with ' +
        'frame-ancestors none): the login page, or why the sign-in cannot go on.',
    ),
);

const noStore = {
  'Cache-Control': { description: 'Always `no-store`.', schema: z.literal('no-store'), required: true },
} as const;

function page(description: string, extraHeaders: ResponseDefinition['headers'] = {}): ResponseDefinition {
  return {
    description,
    body: HtmlPageSchema,
    contentType: 'text/html',
    headers: {
      ...noStore,
      'Content-Security-Policy': {
        description: 'No script, no external resource; forms post to kapi; never framed.',
        schema: z.string(),
        required: true,
      },
      ...extraHeaders,
    },
  };
}

function redirectTo(description: string): ResponseDefinition {
  return {
    description,
    headers: {
      ...noStore,
      Location: { description: 'Where the browser goes next.', schema: z.string(), required: true },
    },
  };
}

const retryAfter = {
  'Retry-After': { description: 'Seconds to wait.', schema: z.string().regex(/^\d+$/), required: true },
} as const;

const AuthorizationRequestSchema = apiComponent(
  'AuthorizationRequest',
  z
    .object({
      response_type: z.literal('code').describe('Only the authorization code flow exists (no implicit grant).'),
      client_id: z.string().describe('A client registered with the authorization_code grant.'),
      redirect_uri: z
        .string()
        .describe(
          'Required; one of the client’s redirectURIs exactly (http://127.0.0.1 and http://[::1] redirects on any port).',
        ),
      code_challenge: z.string().describe('BASE64URL(SHA256(code_verifier)), 43 characters (RFC 7636).'),
      code_challenge_method: z.literal('S256').describe('Only S256.'),
      state: z.string().optional().describe('Returned unchanged with the code (at most 2048 characters).'),
      scope: z
        .string()
        .optional()
        .describe(`Space-separated, of ${SUPPORTED_SCOPES.join(', ')}; openid adds an ID token to the token answer.`),
      nonce: z.string().optional().describe('Echoed in the ID token (at most 512 characters).'),
      prompt: z
        .string()
        .optional()
        .describe('login: ask for credentials even when the browser is signed in; none: never show a page.'),
      max_age: z.string().optional().describe('Seconds: an older sign-in of the browser asks again.'),
      login_hint: z.string().optional().describe('A user name to fill in on the login page.'),
      response_mode: z.literal('query').optional().describe('Only query.'),
    })
    .describe(
      'An authorization request (RFC 6749 §4.1.1, RFC 7636, OpenID Connect Core §3.1.2.1). Each parameter at most once.',
    ),
);

const authorizeResponses = {
  303: redirectTo(
    'To the client’s redirect URI with `code`, `state` and `iss` (a browser signed in at kapi), or with `error`, ' +
      '`error_description`, `state` and `iss` (a problem found after the client and redirect URI were proven); or to ' +
      'the login page.',
  ),
  400: page('The client or the redirect URI is missing, unknown or not registered: shown here, never redirected.'),
  503: page('kapi is starting (signing keys not loaded) or cannot reach the cluster.', retryAfter),
} as const;

export const authorize = defineOperation({
  operationId: 'authorize',
  method: 'get',
  path: '/oauth/authorize',
  tags: ['browser sign-in'],
  summary: 'Start a sign-in from a browser: authorization code with PKCE (S256)',
  description:
    'RFC 6749 §4.1 as RFC 9700 asks: PKCE S256 for every client, exact redirect URIs, no implicit grant, `iss` in ' +
    'the answer (RFC 9207). A browser with a kapi session gets a code at once; another goes to the login page.',
  security: 'public',
  query: AuthorizationRequestSchema,
  responses: authorizeResponses,
});

export const authorizeWithPost = defineOperation({
  ...authorize,
  operationId: 'authorizeWithPost',
  method: 'post',
  query: undefined,
  form: AuthorizationRequestSchema,
  summary: 'Start a sign-in from a browser (the same request as a form post)',
  responses: {
    ...authorizeResponses,
    413: page('The form is larger than 16 KiB.'),
    415: page('The body is not a form.'),
  },
});

export const showLoginPage = defineOperation({
  operationId: 'showLoginPage',
  method: 'get',
  path: '/oauth/login',
  tags: ['browser sign-in'],
  summary: 'kapi’s login page',
  description:
    'Where /oauth/authorize sends a browser without a session: a user name and password form, and one button per ' +
    'upstream identity provider. Sets the `kapi_login` cookie the form is bound to (CSRF protection).',
  security: 'public',
  query: z.object({
    request: z.string().describe('The sealed authorization request, as /oauth/authorize wrote it.'),
  }),
  responses: {
    200: page('The login page.'),
    400: page('No request, an expired one, or one whose client is no longer registered.'),
    503: page('kapi is starting or cannot reach the cluster.', retryAfter),
  },
});

const LoginFormSchema = apiComponent(
  'LoginForm',
  z
    .object({
      request: z.string().describe('The sealed authorization request, from the page.'),
      csrf: z.string().describe('The form token, from the page: bound to this browser’s kapi_login cookie.'),
      action: z.enum(['login', 'cancel']).optional().describe('cancel: back to the client with access_denied.'),
      username: z.string().optional().describe('A user name or e-mail address.'),
      password: z.string().optional(),
    })
    .describe('The login page’s form.'),
);

export const submitLoginForm = defineOperation({
  operationId: 'submitLoginForm',
  method: 'post',
  path: '/oauth/login',
  tags: ['browser sign-in'],
  summary: 'Sign in with a user name and password on kapi’s login page',
  description:
    'The same password check, login limits and audit line as the password grant. Success starts a browser session ' +
    '(cookie `kapi_session`, a LoginSession of client `(browser)`) and sends the browser to the client with a code.',
  security: 'public',
  form: LoginFormSchema,
  responses: {
    303: redirectTo('To the client’s redirect URI with a code (signed in) or access_denied (cancelled).'),
    400: page('Wrong user name or password, a field missing, or an expired or unusable request; shown on the page.'),
    403: page('The form token does not match this browser (CSRF) or has expired.'),
    413: page('The form is larger than 16 KiB.'),
    415: page('The body is not a form.'),
    429: page('Too many failed logins for this user or address.', retryAfter),
    503: page('kapi is busy or cannot reach the cluster.', retryAfter),
  },
});

const idpParameter = z.object({
  idp: z.string().describe('The identity provider’s name (`identityProviders[].name`).'),
});

export const startUpstreamLogin = defineOperation({
  operationId: 'startUpstreamLogin',
  method: 'get',
  path: '/oauth/login/{idp}',
  tags: ['browser sign-in'],
  summary: 'Sign in through an upstream OpenID Connect provider (a button of the login page)',
  description:
    'Sends the browser to the provider’s authorization endpoint with PKCE S256, `state` and `nonce`, and keeps what ' +
    'its answer must match in the sealed `kapi_upstream` cookie of this browser.',
  security: 'public',
  pathParameters: idpParameter,
  query: z.object({ request: z.string().describe('The sealed authorization request, from the login page.') }),
  responses: {
    303: redirectTo('To the provider’s authorization endpoint.'),
    400: page('No request, or an expired one.'),
    404: page('No provider of that name offers sign-in from a browser.'),
    503: page('The provider’s metadata cannot be read right now, or kapi is starting.', retryAfter),
  },
});

export const upstreamCallback = defineOperation({
  operationId: 'upstreamCallback',
  method: 'get',
  path: '/oauth/callback/{idp}',
  tags: ['browser sign-in'],
  summary: 'Where an upstream OpenID Connect provider sends the browser back',
  description:
    'Checks the answer against this browser’s sign-in (state), exchanges the code with the PKCE verifier, verifies ' +
    'the ID token (signature from the provider’s keys, iss, aud, azp, exp, nonce), maps the identity to a User ' +
    '(mappingMethod auto or lookup), starts the browser session and continues the authorization request with a code.',
  security: 'public',
  pathParameters: idpParameter,
  query: z.object({
    code: z.string().optional(),
    state: z.string().optional(),
    iss: z.string().optional(),
    error: z.string().optional(),
    error_description: z.string().optional(),
  }),
  responses: {
    303: redirectTo(
      'To the client’s redirect URI with a code (signed in), or with access_denied (the provider refused).',
    ),
    400: page('No sign-in of this browser matches the answer (a forged or replayed state), or its ID token failed.'),
    403: page('The identity is not allowed to sign in (no linked User with mappingMethod lookup, or a disabled User).'),
    503: page('The provider cannot be reached, or kapi is starting.', retryAfter),
  },
});

export const browserOperations = [
  authorize,
  authorizeWithPost,
  showLoginPage,
  submitLoginForm,
  startUpstreamLogin,
  upstreamCallback,
] as const;
