import type { OAuthClient } from '../../../src/config/cluster-configuration.js';
import {
  authenticateClient,
  clientCredentialsOf,
  requireGrant,
  secretsEqual,
} from '../../../src/auth/oauth/client-authentication.js';
import { OAuthError } from '../../../src/auth/oauth/oauth-error.js';
import { parseForm } from '../../../src/auth/oauth/oauth-form.js';

const clients: OAuthClient[] = [
  { name: 'kapi', secret: 'kapi', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
  { name: 'reporter', secret: 'r3p0rt', public: false, grantTypes: ['refresh_token'], redirectURIs: [] },
  {
    name: 'kubectl',
    secret: undefined,
    public: true,
    grantTypes: ['authorization_code', 'refresh_token'],
    redirectURIs: ['http://127.0.0.1/callback'],
  },
];
const form = (body: string) => parseForm(Buffer.from(body));
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

function failure(fn: () => unknown): { status: number; error: string; headers: Record<string, string> } {
  try {
    fn();
  } catch (err) {
    if (err instanceof OAuthError) return { status: err.status, error: err.error, headers: { ...err.headers } };
    throw err;
  }
  throw new Error('expected an OAuthError');
}

describe('clientCredentialsOf', () => {
  test('when the body carries only client_id (a public client), then the credentials have no secret', () => {
    expect(clientCredentialsOf(form('client_id=kubectl'), undefined)).toEqual({
      clientId: 'kubectl',
      secret: undefined,
      usedBasic: false,
    });
  });

  test('when the body carries client_id and client_secret, then they are the credentials', () => {
    expect(clientCredentialsOf(form('client_id=kapi&client_secret=kapi'), undefined)).toEqual({
      clientId: 'kapi',
      secret: 'kapi',
      usedBasic: false,
    });
  });

  test('when HTTP Basic carries them, then they are the credentials', () => {
    expect(clientCredentialsOf(form(''), basic('kapi', 'kapi'))).toEqual({
      clientId: 'kapi',
      secret: 'kapi',
      usedBasic: true,
    });
  });

  test('when Basic comes with the same client_id in the body, then that is tolerated', () => {
    expect(clientCredentialsOf(form('client_id=kapi'), basic('kapi', 'kapi')).usedBasic).toBe(true);
  });

  const refused: Array<[string, string, string | undefined, number, string]> = [
    [
      'when both methods are used (secret in body and Basic), then invalid_request',
      'client_id=kapi&client_secret=kapi',
      basic('kapi', 'kapi'),
      400,
      'invalid_request',
    ],
    [
      'when Basic and a different body client_id are sent, then invalid_request',
      'client_id=other',
      basic('kapi', 'kapi'),
      400,
      'invalid_request',
    ],
    [
      'when a body secret comes without client_id, then invalid_request',
      'client_secret=kapi',
      undefined,
      400,
      'invalid_request',
    ],
    [
      'when there are no client credentials at all, then invalid_client',
      'grant_type=password',
      undefined,
      401,
      'invalid_client',
    ],
  ];
  test.each(refused)('%s', (_name, body, header, status, error) => {
    expect(failure(() => clientCredentialsOf(form(body), header))).toMatchObject({ status, error });
  });
});

describe('authenticateClient', () => {
  test('when id and secret match a configured client, then that client is returned', () => {
    expect(authenticateClient({ clientId: 'kapi', secret: 'kapi', usedBasic: false }, clients)).toBe(clients[0]);
  });

  test.each([
    ['no secret', { clientId: 'kubectl', secret: undefined, usedBasic: false }],
    ['an empty Basic password', { clientId: 'kubectl', secret: '', usedBasic: true }],
  ])('when a public client sends %s, then that client is returned', (_case, credentials) => {
    expect(authenticateClient(credentials, clients)).toBe(clients[2]);
  });

  const refused: Array<
    [string, { clientId: string; secret: string | undefined; usedBasic: boolean }, Record<string, string>]
  > = [
    [
      'when a confidential client sends no secret, then invalid_client',
      { clientId: 'kapi', secret: undefined, usedBasic: false },
      {},
    ],
    [
      'when a public client sends a secret, then invalid_client (it has none to prove)',
      { clientId: 'kubectl', secret: 'guess', usedBasic: false },
      {},
    ],
    [
      'when the secret is wrong (body), then invalid_client without a challenge',
      { clientId: 'kapi', secret: 'nope', usedBasic: false },
      {},
    ],
    [
      'when the secret is wrong (Basic), then invalid_client with a Basic challenge',
      { clientId: 'kapi', secret: 'nope', usedBasic: true },
      { 'WWW-Authenticate': 'Basic realm="kapi"' },
    ],
    ['when the client is unknown, then invalid_client', { clientId: 'ghost', secret: 'kapi', usedBasic: false }, {}],
    [
      'when the secret is a prefix of the right one, then invalid_client',
      { clientId: 'reporter', secret: 'r3p0', usedBasic: false },
      {},
    ],
    ['when the secret is empty, then invalid_client', { clientId: 'kapi', secret: '', usedBasic: false }, {}],
  ];
  test.each(refused)('%s', (_name, credentials, headers) => {
    expect(failure(() => authenticateClient(credentials, clients))).toEqual({
      status: 401,
      error: 'invalid_client',
      headers,
    });
  });
});

describe('requireGrant', () => {
  test('when the client may use the grant, then nothing is thrown', () => {
    expect(() => requireGrant(clients[0]!, 'password')).not.toThrow();
  });
  test('when the client may not use the grant, then unauthorized_client (400)', () => {
    expect(failure(() => requireGrant(clients[1]!, 'password'))).toMatchObject({
      status: 400,
      error: 'unauthorized_client',
    });
  });
});

describe('secretsEqual', () => {
  const cases: Array<[string, string, boolean]> = [
    ['kapi', 'kapi', true],
    ['kapi', 'kap', false],
    ['', '', true],
    ['a'.repeat(1000), 'a'.repeat(1000), true],
    ['a'.repeat(1000), 'a'.repeat(999) + 'b', false],
    ['ü', 'u', false],
  ];
  test.each(cases)('when %p is compared with %p, then equal is %p', (a, b, expected) => {
    expect(secretsEqual(a, b)).toBe(expected);
  });
});
