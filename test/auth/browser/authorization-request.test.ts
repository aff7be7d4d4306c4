import type { OAuthClient } from '../../../src/config/cluster-configuration.js';
import {
  AuthorizationError,
  checkAuthorizationRequest,
  type AuthorizationRequest,
} from '../../../src/auth/browser/authorization-request.js';
import { parseParameters } from '../../../src/auth/browser/request-parameters.js';

const CALLBACK = 'https://console.example.com/oauth/callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const clients: OAuthClient[] = [
  {
    name: 'console',
    secret: 's',
    public: false,
    grantTypes: ['authorization_code', 'refresh_token'],
    redirectURIs: [CALLBACK],
  },
  { name: 'kapi', secret: 'kapi', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
];
const BASE = {
  response_type: 'code',
  client_id: 'console',
  redirect_uri: CALLBACK,
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  state: 'xyz',
};

function query(params: Record<string, string | undefined>, extra = ''): string {
  const defined = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return new URLSearchParams(defined).toString() + extra;
}

function check(text: string): AuthorizationRequest {
  return checkAuthorizationRequest(parseParameters(text), clients);
}

function refusal(text: string): AuthorizationError {
  try {
    check(text);
  } catch (err) {
    if (err instanceof AuthorizationError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('checkAuthorizationRequest', () => {
  test('when every parameter is right, then the request holds them, scopes in a fixed order', () => {
    expect(check(query({ ...BASE, scope: 'email openid offline_access', nonce: 'n', login_hint: 'alice' }))).toEqual({
      clientId: 'console',
      redirectUri: CALLBACK,
      state: 'xyz',
      codeChallenge: CHALLENGE,
      scope: ['openid', 'email', 'offline_access'],
      nonce: 'n',
      prompt: undefined,
      loginHint: 'alice',
    });
  });

  test.each([
    ['prompt=login', { prompt: 'login' }, { prompt: 'login' }],
    ['prompt=none', { prompt: 'none' }, { prompt: 'none' }],
    ['prompt=consent (no consent screen: operator-registered clients)', { prompt: 'consent' }, { prompt: undefined }],
    ['max_age=0', { max_age: '0' }, { maxAge: 0 }],
    ['no state', { state: undefined }, { state: undefined }],
    ['response_mode=query', { response_mode: 'query' }, {}],
    ['unknown extra parameters (ignored)', { ui_locales: 'de', acr_values: 'x' }, {}],
  ])('when the request has %s, then it is accepted', (_case, extra, expected) => {
    expect(check(query({ ...BASE, ...extra }))).toMatchObject(expected);
  });

  // Before the client and its redirect URI are proven, nothing is redirected: kapi's page shows the problem.
  test.each([
    ['client_id is missing', query({ ...BASE, client_id: undefined }), 'client_id is missing'],
    ['client_id is unknown', query({ ...BASE, client_id: 'ghost' }), 'the client is not registered for sign-in'],
    ['the client has no authorization_code grant', query({ ...BASE, client_id: 'kapi' }), 'not registered for sign-in'],
    ['client_id is repeated', query(BASE, '&client_id=console'), 'client_id is given more than once'],
    ['redirect_uri is missing', query({ ...BASE, redirect_uri: undefined }), 'redirect_uri is missing'],
    [
      'redirect_uri is not registered',
      query({ ...BASE, redirect_uri: 'https://evil.example/cb' }),
      'not one the client',
    ],
    ['redirect_uri is repeated', query(BASE, `&redirect_uri=${encodeURIComponent(CALLBACK)}`), 'more than once'],
    [
      'redirect_uri has userinfo in front of another host',
      query({ ...BASE, redirect_uri: 'https://console.example.com@evil.example/oauth/callback' }),
      'not one the client',
    ],
    [
      'redirect_uri walks out of the registered path',
      query({ ...BASE, redirect_uri: `${CALLBACK}/../../evil` }),
      'not one the client',
    ],
    ['redirect_uri adds a fragment', query({ ...BASE, redirect_uri: `${CALLBACK}#x` }), 'not one the client'],
    ['the query is not valid percent-encoding', `${query(BASE)}&x=%zz`, 'not valid URL encoding'],
    [
      'the query is not valid percent-encoding before the client',
      `client_id=%E0%A4%A&${query({ ...BASE, client_id: undefined })}`,
      'not valid URL encoding',
    ],
  ])('when %s, then it is shown on kapi’s page, never redirected', (_case, text, description) => {
    const error = refusal(text);
    expect(error.redirect).toBeUndefined();
    expect(error.error).toBe('invalid_request');
    expect(error.description).toContain(description);
  });

  // Once client and redirect URI are proven, the client hears of the problem at its redirect URI, with its state.
  test.each([
    ['response_type is missing', { response_type: undefined }, 'invalid_request'],
    ['response_type is token (implicit)', { response_type: 'token' }, 'unsupported_response_type'],
    ['response_type is code id_token (hybrid)', { response_type: 'code id_token' }, 'unsupported_response_type'],
    ['code_challenge is missing', { code_challenge: undefined }, 'invalid_request'],
    ['code_challenge_method is missing (plain by default)', { code_challenge_method: undefined }, 'invalid_request'],
    ['code_challenge_method is plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['code_challenge is not a digest', { code_challenge: 'short' }, 'invalid_request'],
    [
      'code_challenge has a character outside base64url',
      { code_challenge: `${CHALLENGE.slice(0, 42)}+` },
      'invalid_request',
    ],
    ['a scope is unknown', { scope: 'openid admin' }, 'invalid_scope'],
    ['prompt=none is combined', { prompt: 'none login' }, 'invalid_request'],
    ['prompt is unknown', { prompt: 'create' }, 'invalid_request'],
    ['max_age is not a number', { max_age: '1h' }, 'invalid_request'],
    ['response_mode is fragment', { response_mode: 'fragment' }, 'invalid_request'],
    ['response_mode is form_post', { response_mode: 'form_post' }, 'invalid_request'],
    ['a request object is sent', { request: 'eyJ…' }, 'request_not_supported'],
    ['a request_uri is sent', { request_uri: 'https://a.example/r' }, 'request_uri_not_supported'],
    ['registration is sent', { registration: '{}' }, 'registration_not_supported'],
    ['nonce is very long', { nonce: 'n'.repeat(513) }, 'invalid_request'],
  ])('when %s, then the error goes to the redirect URI with the state', (_case, extra, code) => {
    const error = refusal(query({ ...BASE, ...extra }));
    expect(error.error).toBe(code);
    expect(error.redirect).toEqual({ uri: CALLBACK, state: 'xyz' });
  });

  test('when state is repeated, then the error is redirected without a state', () => {
    const error = refusal(query(BASE, '&state=other'));
    expect(error.redirect).toEqual({ uri: CALLBACK, state: undefined });
    expect(error.description).toBe('state is given more than once');
  });

  test('when another parameter is repeated, then invalid_request names it', () => {
    const error = refusal(query(BASE, '&scope=openid&scope=email'));
    expect([error.error, error.description]).toEqual(['invalid_request', 'parameter "scope" is given more than once']);
  });

  test('when an error is described, then no submitted value is echoed', () => {
    const error = refusal(query({ ...BASE, scope: '<script>alert(1)</script>' }));
    expect(error.description).not.toContain('<script>');
    expect(refusal(query({ ...BASE, redirect_uri: 'https://evil.example/phish' })).description).not.toContain('evil');
  });
});
