/**
 * Published keys and OpenID discovery, checked the way another service would use them: a standard JOSE library
 * (jose) fetches nothing but the JWKS served here and verifies a token kapi issued, with the issuer and audience
 * kube-apiserver's OIDC authenticator would be configured with.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import request from 'supertest';
import { hmacKeySet, keySetFromSecretData, type KeySet } from '../../../src/auth/tokens/key-set.js';
import { JWKS_PATH, OIDC_DISCOVERY_PATH } from '../../../src/auth/tokens/discovery-routes.js';
import { REFRESH_TOKEN_AUDIENCE, TOKEN_AUDIENCE, tokenPolicy } from '../../../src/auth/tokens/tokens.js';
import { login, refresh, testIdentity, type Tokens } from '../identity-app.js';

const ISSUER = 'https://kapi.example.com:9443';
const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64');
const pem = (type: 'ec' | 'rsa') =>
  (type === 'ec'
    ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : generateKeyPairSync('rsa', { modulusLength: 2048 })
  ).privateKey
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();

function keySet(data: Record<string, string>): KeySet {
  const result = keySetFromSecretData(data, 'test');
  if (!('keys' in result)) throw new Error(result.problems.join('; '));
  return result.keys;
}

function identityWith(keys: KeySet | undefined, issuer: string | undefined = ISSUER) {
  const t = testIdentity({ keys: { keys: () => keys }, policy: tokenPolicy(issuer) });
  t.users.add('alice', { password: 'alice-pw', groups: ['ops'] });
  return t;
}

describe.each([
  { alg: 'ES256', type: 'ec' as const },
  { alg: 'RS256', type: 'rsa' as const },
])('when the active key is $alg', ({ alg, type }) => {
  const keys = keySet({ 'old.key': b64(Buffer.alloc(48, 1)), 'new.pem': b64(pem(type)), active: b64('new') });

  test('then a token kapi issued verifies against the published JWKS with jose, with the claims kube-apiserver reads', async () => {
    const t = identityWith(keys);
    const jwks = await request(t.app).get(JWKS_PATH).expect(200);
    expect(jwks.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    expect(jwks.headers['cache-control']).toBe('public, max-age=60');
    const published = JSON.parse(jwks.text) as JSONWebKeySet;
    expect(published.keys.map((key) => [key.kid, key.alg])).toEqual([['new', alg]]);

    const { access_token, refresh_token } = await login(t.app, 'alice', 'alice-pw');
    const verified = await jwtVerify(access_token, createLocalJWKSet(published), {
      issuer: ISSUER,
      audience: TOKEN_AUDIENCE,
      algorithms: [alg],
      requiredClaims: ['exp', 'iat', 'sub'],
      currentDate: new Date(t.clock.now),
    });
    expect(verified.protectedHeader).toMatchObject({ alg, kid: 'new' });
    // --oidc-username-claim=username (or sub), --oidc-groups-claim=groups, --oidc-required-claim=token_type=access_token
    expect(verified.payload).toMatchObject({
      iss: ISSUER,
      aud: 'kapi',
      sub: 'alice',
      username: 'alice',
      groups: ['ops'],
      token_type: 'access_token',
    });
    // a refresh token is signed by the same key but names its own audience: a verifier of kapi's access tokens
    // (kube-apiserver's --oidc-client-id=kapi) refuses it as a bearer token
    await expect(
      jwtVerify(refresh_token, createLocalJWKSet(published), {
        issuer: ISSUER,
        audience: TOKEN_AUDIENCE,
        currentDate: new Date(t.clock.now),
      }),
    ).rejects.toThrow(/"aud" claim/);
    const asRefresh = await jwtVerify(refresh_token, createLocalJWKSet(published), {
      issuer: ISSUER,
      audience: REFRESH_TOKEN_AUDIENCE,
      currentDate: new Date(t.clock.now),
    });
    expect(asRefresh.payload.token_type).toBe('refresh_token');
    expect(asRefresh.payload).not.toHaveProperty('groups');
  });

  test('then OpenID discovery names the issuer, the JWKS, every endpoint, the grants, PKCE and the algorithm', async () => {
    const t = identityWith(keys);
    const res = await request(t.app).get(OIDC_DISCOVERY_PATH).expect(200);
    expect(res.body).toMatchObject({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}${JWKS_PATH}`,
      authorization_endpoint: `${ISSUER}/oauth/authorize`,
      token_endpoint: `${ISSUER}/oauth/token`,
      userinfo_endpoint: `${ISSUER}/oauth/userinfo`,
      revocation_endpoint: `${ISSUER}/oauth/revoke`,
      grant_types_supported: ['authorization_code', 'refresh_token', 'password'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: expect.arrayContaining(['openid', 'profile', 'email', 'groups']),
      id_token_signing_alg_values_supported: [alg],
      subject_types_supported: ['public'],
    });
  });
});

test('when the set holds only an HMAC key, then the JWKS is empty: a shared secret is never published', async () => {
  const t = identityWith(hmacKeySet(Buffer.alloc(32, 5)));
  const res = await request(t.app).get(JWKS_PATH).expect(200);
  expect(JSON.parse(res.text)).toEqual({ keys: [] });
  expect(res.text).not.toContain(Buffer.alloc(32, 5).toString('base64url'));
});

test('when no https issuer URL is configured, then discovery is a 404 Status saying how to enable it', async () => {
  const t = identityWith(hmacKeySet(Buffer.alloc(32, 5)), '');
  const res = await request(t.app).get(OIDC_DISCOVERY_PATH).expect(404);
  expect(res.body).toMatchObject({ kind: 'Status', code: 404, message: expect.stringMatching(/--issuer-url/) });
});

test('when the keys are not loaded yet, then both answer 503 Status', async () => {
  const t = identityWith(undefined);
  for (const path of [JWKS_PATH, OIDC_DISCOVERY_PATH]) {
    const res = await request(t.app).get(path).expect(503);
    expect(res.body).toMatchObject({ kind: 'Status', code: 503 });
  }
});

test('when asked without a token, then the JWKS and discovery answer (they are public)', async () => {
  const t = identityWith(keySet({ 'e.pem': b64(pem('ec')) }));
  await request(t.app).get(JWKS_PATH).expect(200);
  await request(t.app).get(OIDC_DISCOVERY_PATH).expect(200);
  await request(t.app).get('/whoami').expect(401);
});

test('when the key is ES256 (signatures differ each time), then a replay within the refresh grace still yields the current refresh token', async () => {
  const t = identityWith(keySet({ 'e.pem': b64(pem('ec')) }));
  const first = await login(t.app, 'alice', 'alice-pw');
  const a = (await refresh(t.app, first.refresh_token).expect(200)).body as Tokens;
  t.clock.advance(3);
  const b = (await refresh(t.app, first.refresh_token).expect(200)).body as Tokens;
  // not the same string (ECDSA signatures are randomized), but the same token: same claims, same jti
  const payload = (token: string) => token.split('.')[1];
  expect(payload(b.refresh_token)).toBe(payload(a.refresh_token));
  await request(t.app).get('/whoami').set('Authorization', `Bearer ${b.access_token}`).expect(200);
  // either string rotates the session once more
  await refresh(t.app, b.refresh_token).expect(200);
});
