import { generateKeyPairSync, createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import {
  hmacKey,
  hmacKeySet,
  keySetFromSecretData,
  keySetOf,
  publicJwks,
  privateKey as privateKeyOf,
  type SigningKey,
} from '../../../src/auth/tokens/key-set.js';
import {
  buildClaims,
  CLOCK_TOLERANCE_SECONDS,
  newTokenId,
  signToken,
  tokenPolicy,
  VerifiedTokenCache,
  verifyToken,
  type TokenClaims,
  type TokenType,
} from '../../../src/auth/tokens/tokens.js';

const KEY = hmacKeySet(Buffer.alloc(32, 1));
const OTHER_KEY = hmacKeySet(Buffer.alloc(32, 2));
const NOW = 2_000_000_000;
const subject = { username: 'alice', clientId: 'kapi', sessionId: '0123456789abcdef0123456789abcdef' };

function claims(type: TokenType = 'access_token', overrides: Partial<TokenClaims> = {}): TokenClaims {
  return { ...buildClaims(type, subject, { id: 'jti-1', issuedAt: NOW - 60, expiresAt: NOW + 3600 }), ...overrides };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token assembled by hand, the way an attacker would: any header, any payload, any signature. */
function forged(header: object, payload: object, sign: (input: string) => string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(input)}`;
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('verifyToken', () => {
  const cases: Array<{
    name: string;
    token: () => string;
    expected?: TokenType | 'any';
    ok: boolean;
    reason?: RegExp;
  }> = [
    {
      name: 'when the token is ours and current, then it verifies',
      token: () => signToken(claims(), KEY.active),
      ok: true,
    },
    {
      name: 'when alg is none (no signature), then it is refused',
      token: () => forged({ alg: 'none', typ: 'JWT' }, claims(), () => ''),
      ok: false,
      reason: /algorithm none is not that of the key/,
    },
    {
      name: 'when the header says HS256 but another key signed it, then it is refused',
      token: () => signToken(claims(), OTHER_KEY.active),
      ok: false,
      reason: /invalid signature/,
    },
    {
      name: 'when the token is RS256 (asymmetric), then it is refused by the allow-list',
      token: () => jwt.sign(claims(), privateKey, { algorithm: 'RS256', noTimestamp: true }),
      ok: false,
      reason: /algorithm \w+ is not that of the key \(HS256\)/,
    },
    {
      name: 'when an attacker HMACs with the public key (algorithm confusion), then it is refused',
      token: () =>
        forged({ alg: 'HS256', typ: 'JWT' }, claims(), (input) =>
          createHmac('sha256', publicPem).update(input).digest('base64url'),
        ),
      ok: false,
      reason: /invalid signature/,
    },
    {
      name: 'when the header asks for HS512, then it is refused by the allow-list',
      token: () => jwt.sign(claims(), Buffer.alloc(32, 1), { algorithm: 'HS512', noTimestamp: true }),
      ok: false,
      reason: /algorithm \w+ is not that of the key \(HS256\)/,
    },
    {
      name: 'when it expired more than the tolerance ago, then it is refused',
      token: () => signToken(claims('access_token', { exp: NOW - 11 }), KEY.active),
      ok: false,
      reason: /expired/,
    },
    {
      name: 'when it expired within the 10 s tolerance, then it still verifies',
      token: () => signToken(claims('access_token', { exp: NOW - 9 }), KEY.active),
      ok: true,
    },
    {
      name: 'when the payload was changed after signing, then it is refused',
      token: () => {
        const [header, , signature] = signToken(claims(), KEY.active).split('.');
        return `${header}.${b64(claims('access_token', { username: 'admin', sub: 'admin' }))}.${signature}`;
      },
      ok: false,
      reason: /invalid signature/,
    },
    {
      name: 'when exp is missing, then it is refused',
      token: () => {
        const { exp: _exp, ...rest } = claims();
        return jwt.sign(rest, KEY.active.signWith, { algorithm: 'HS256', noTimestamp: true });
      },
      ok: false,
      reason: /claims/,
    },
    {
      name: 'when a refresh token is presented where an access token is expected, then it is refused (its audience)',
      token: () => signToken(claims('refresh_token'), KEY.active),
      expected: 'access_token',
      ok: false,
      reason: /audience/,
    },
    {
      name: 'when a refresh token of the audience kapi (issued before) is presented as an access token, then it is refused',
      token: () => signToken(claims('refresh_token', { aud: 'kapi' }), KEY.active),
      expected: 'access_token',
      ok: false,
      reason: /refresh_token where a access_token/,
    },
    {
      name: 'when an access token is presented where a refresh token is expected, then it is refused',
      token: () => signToken(claims('access_token'), KEY.active),
      expected: 'refresh_token',
      ok: false,
      reason: /access_token where a refresh_token/,
    },
    {
      name: 'when the audience is not kapi, then it is refused',
      token: () => signToken(claims('access_token', { aud: 'other' }), KEY.active),
      ok: false,
      reason: /audience/,
    },
    {
      name: 'when the issuer is not kapi, then it is refused',
      token: () => signToken(claims('access_token', { iss: 'someone' }), KEY.active),
      ok: false,
      reason: /issuer/,
    },
    {
      name: 'when token_type is unknown, then it is refused',
      token: () => signToken(claims('access_token', { token_type: 'id_token' as TokenType }), KEY.active),
      expected: 'any',
      ok: false,
      reason: /claims/,
    },
    {
      name: 'when sub and username disagree, then it is refused',
      token: () => signToken(claims('access_token', { sub: 'bob' }), KEY.active),
      ok: false,
      reason: /claims/,
    },
    {
      name: 'when the text is not a JWT, then it is refused',
      token: () => 'not-a-token',
      ok: false,
      reason: /malformed/,
    },
    { name: 'when the token is empty, then it is refused', token: () => '', ok: false, reason: /malformed/ },
    {
      name: 'when either type is acceptable (revocation), then a refresh token verifies',
      token: () => signToken(claims('refresh_token'), KEY.active),
      expected: 'any',
      ok: true,
    },
  ];

  test.each(cases)('$name', ({ token, expected, ok, reason }) => {
    const result = verifyToken(token(), KEY, expected ?? 'access_token', NOW);
    expect(result.ok).toBe(ok);
    if (!result.ok && reason) expect(result.reason).toMatch(reason);
  });

  test('when a token verifies, then its claims are all there with the session id', () => {
    const result = verifyToken(signToken(claims(), KEY.active), KEY, 'access_token', NOW);
    expect(result).toEqual({ ok: true, claims: claims() });
    if (result.ok)
      expect(Object.keys(result.claims).sort()).toEqual([
        'aud',
        'client_id',
        'exp',
        'iat',
        'iss',
        'jti',
        'sid',
        'sub',
        'token_type',
        'username',
      ]);
  });
});

describe('signToken', () => {
  test('when the same claims are signed twice, then the tokens are identical (refresh grace relies on it)', () => {
    expect(signToken(claims('refresh_token'), KEY.active)).toBe(signToken(claims('refresh_token'), KEY.active));
  });

  test('when a token is signed, then its header names HS256 and iat is the one the claims give', () => {
    const token = signToken(claims(), KEY.active);
    const decoded = jwt.decode(token, { complete: true });
    expect(decoded?.header.alg).toBe('HS256');
    expect((decoded?.payload as TokenClaims).iat).toBe(NOW - 60);
  });

  test('when token ids are made, then they are random and URL-safe', () => {
    const ids = new Set(Array.from({ length: 50 }, newTokenId));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('VerifiedTokenCache', () => {
  const EXP = NOW + 3600;

  test('when a token verifies, then it is remembered and later answers carry the same, frozen claims', () => {
    const cache = new VerifiedTokenCache();
    const token = signToken(claims(), KEY.active);
    const first = cache.verify(token, KEY, 'access_token', NOW);
    const again = cache.verify(token, KEY, 'access_token', NOW + 1);
    expect(first).toEqual({ ok: true, claims: claims() });
    expect(again).toEqual(first);
    expect(cache.size).toBe(1);
    if (again.ok) expect(Object.isFrozen(again.claims)).toBe(true);
  });

  test.each([
    { name: 'when a remembered token is within the clock tolerance of exp, then it is accepted', now: EXP, ok: true },
    {
      name: 'when a remembered token is one second short of exp + tolerance, then it is accepted',
      now: EXP + CLOCK_TOLERANCE_SECONDS - 1,
      ok: true,
    },
    {
      name: 'when a remembered token reaches exp + tolerance, then it is refused as expired and forgotten',
      now: EXP + CLOCK_TOLERANCE_SECONDS,
      ok: false,
    },
  ])('$name', ({ now, ok }) => {
    const cache = new VerifiedTokenCache();
    const token = signToken(claims(), KEY.active);
    expect(cache.verify(token, KEY, 'access_token', NOW).ok).toBe(true);
    const result = cache.verify(token, KEY, 'access_token', now);
    // the same answer jsonwebtoken gives for that instant
    expect(result.ok).toBe(verifyToken(token, KEY, 'access_token', now).ok);
    expect(result.ok).toBe(ok);
    if (!result.ok) {
      expect(result.reason).toBe('token expired');
      expect(cache.size).toBe(0);
    }
  });

  test('when a remembered refresh token is presented as an access token, then it is refused', () => {
    const cache = new VerifiedTokenCache();
    const token = signToken(claims('refresh_token'), KEY.active);
    expect(cache.verify(token, KEY, 'any', NOW).ok).toBe(true);
    const result = cache.verify(token, KEY, 'access_token', NOW);
    expect(result).toEqual({ ok: false, reason: 'a refresh_token where a access_token was expected' });
  });

  test('when the signing key changes, then tokens verified with the old one are forgotten and refused', () => {
    const cache = new VerifiedTokenCache();
    const token = signToken(claims(), KEY.active);
    expect(cache.verify(token, KEY, 'access_token', NOW).ok).toBe(true);
    const result = cache.verify(token, OTHER_KEY, 'access_token', NOW);
    expect(result.ok).toBe(false);
    expect(cache.size).toBe(0);
  });

  test('when a token fails verification, then it is not remembered', () => {
    const cache = new VerifiedTokenCache();
    expect(cache.verify(signToken(claims(), OTHER_KEY.active), KEY, 'access_token', NOW).ok).toBe(false);
    expect(cache.verify(signToken(claims('refresh_token'), KEY.active), KEY, 'access_token', NOW).ok).toBe(false);
    expect(cache.verify('not.a.token', KEY, 'access_token', NOW).ok).toBe(false);
    expect(cache.size).toBe(0);
  });

  test('when more tokens verify than it holds, then it stays at its capacity and still answers each correctly', () => {
    const cache = new VerifiedTokenCache(2);
    const tokens = ['jti-a', 'jti-b', 'jti-c'].map((jti) => signToken(claims('access_token', { jti }), KEY.active));
    for (const token of [...tokens, ...tokens]) {
      const result = cache.verify(token, KEY, 'access_token', NOW);
      expect(result.ok && result.claims.jti).toBe(verifyToken(token, KEY, 'access_token', NOW).ok && claimsOf(token));
      expect(cache.size).toBeLessThanOrEqual(2);
    }
  });
});

function claimsOf(token: string): string {
  return (jwt.decode(token) as TokenClaims).jti;
}

describe('key sets: kid, algorithms and rotation', () => {
  const pem = (type: 'ec' | 'rsa') =>
    Buffer.from(
      (type === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 2048 })
      ).privateKey
        .export({ type: 'pkcs8', format: 'pem' })
        .toString(),
    );
  const ecKey = expectKey(privateKeyOf('es-1', pem('ec')));
  const rsaKey = expectKey(privateKeyOf('rs-1', pem('rsa')));
  const oldHmac = expectKey(hmacKey('hs-old', Buffer.alloc(32, 3)));
  const legacy = KEY.active;

  test.each([
    { name: 'an ES256 key', key: ecKey, alg: 'ES256' },
    { name: 'an RS256 key', key: rsaKey, alg: 'RS256' },
    { name: 'an HS256 key', key: oldHmac, alg: 'HS256' },
  ])('when $name signs, then the header names its kid and algorithm and the set verifies it', ({ key, alg }) => {
    const token = signToken(claims(), key);
    const header = jwt.decode(token, { complete: true })?.header;
    expect([header?.alg, header?.kid]).toEqual([alg, key.kid]);
    expect(verifyToken(token, keySetOf([key]), 'access_token', NOW)).toEqual({ ok: true, claims: claims() });
  });

  test('when an attacker HMACs with the ES public key and names its kid (algorithm confusion), then it is refused', () => {
    const publicText = ecKey.verifyWith.export({ type: 'spki', format: 'pem' }).toString();
    const token = forged({ alg: 'HS256', typ: 'JWT', kid: ecKey.kid }, claims(), (input) =>
      createHmac('sha256', publicText).update(input).digest('base64url'),
    );
    expect(verifyToken(token, keySetOf([ecKey]), 'access_token', NOW)).toEqual({
      ok: false,
      reason: 'algorithm HS256 is not that of the key (ES256)',
    });
  });

  test('when an ES256 token names the kid of an HMAC key, then it is refused', () => {
    const token = jwt.sign(claims(), ecKey.signWith, { algorithm: 'ES256', keyid: oldHmac.kid });
    const result = verifyToken(token, keySetOf([oldHmac, ecKey]), 'access_token', NOW);
    expect(result).toEqual({ ok: false, reason: 'algorithm ES256 is not that of the key (HS256)' });
  });

  test('when an RS256 token names the kid of an ES256 key, then it is refused', () => {
    const token = jwt.sign(claims(), rsaKey.signWith, { algorithm: 'RS256', keyid: ecKey.kid });
    expect(verifyToken(token, keySetOf([ecKey, rsaKey]), 'access_token', NOW).ok).toBe(false);
  });

  test.each([
    { name: 'a kid outside the set', header: { alg: 'HS256', kid: 'nobody' }, reason: 'unknown key id' },
    { name: 'a kid that is not a string', header: { alg: 'HS256', kid: 7 }, reason: 'malformed key id' },
    { name: 'no kid, and no legacy key in the set', header: { alg: 'HS256' }, reason: 'no key id, and no legacy key' },
  ])('when the token has $name, then it is refused', ({ header, reason }) => {
    const token = forged(header, claims(), (input) =>
      createHmac('sha256', Buffer.alloc(32, 3)).update(input).digest('base64url'),
    );
    expect(verifyToken(token, keySetOf([oldHmac, ecKey]), 'access_token', NOW)).toEqual({ ok: false, reason });
  });

  test('when a token has no kid (issued before key sets), then the legacy key verifies it', () => {
    const token = jwt.sign(claims(), Buffer.alloc(32, 1), { algorithm: 'HS256' });
    expect(verifyToken(token, keySetOf([ecKey, legacy]), 'access_token', NOW).ok).toBe(true);
  });

  test('when the key rotates (add, activate, remove), then old tokens verify until their key is removed', () => {
    const before = keySetOf([oldHmac]);
    const oldToken = signToken(claims(), before.active);
    const added = keySetOf([oldHmac, ecKey], oldHmac.kid);
    const activated = keySetOf([oldHmac, ecKey], ecKey.kid);
    const newToken = signToken(claims(), activated.active);
    expect(jwt.decode(newToken, { complete: true })?.header.kid).toBe(ecKey.kid);
    for (const set of [added, activated]) {
      expect(verifyToken(oldToken, set, 'access_token', NOW).ok).toBe(true);
    }
    expect(verifyToken(newToken, activated, 'access_token', NOW).ok).toBe(true);
    const removed = keySetOf([ecKey]);
    expect(verifyToken(oldToken, removed, 'access_token', NOW)).toEqual({ ok: false, reason: 'unknown key id' });
    expect(verifyToken(newToken, removed, 'access_token', NOW).ok).toBe(true);
  });

  test('when the set changes, then the verified-token memory forgets tokens of a removed key', () => {
    const cache = new VerifiedTokenCache();
    const token = signToken(claims(), oldHmac);
    expect(cache.verify(token, keySetOf([oldHmac, ecKey]), 'access_token', NOW).ok).toBe(true);
    expect(cache.verify(token, keySetOf([ecKey]), 'access_token', NOW).ok).toBe(false);
  });
});

describe('issuer and groups', () => {
  const subjectWithGroups = { ...subject, groups: ['ops', 'dev'] };
  const lifetime = { id: 'jti-1', issuedAt: NOW - 60, expiresAt: NOW + 3600 };

  test('when an access token is built, then it carries the groups; a refresh token never does', () => {
    expect(buildClaims('access_token', subjectWithGroups, lifetime).groups).toEqual(['ops', 'dev']);
    expect(buildClaims('refresh_token', subjectWithGroups, lifetime)).not.toHaveProperty('groups');
  });

  test('when a refresh token is built, then its audience is its own, so no verifier of kapi’s access tokens takes it', () => {
    expect(buildClaims('access_token', subject, lifetime).aud).toBe('kapi');
    expect(buildClaims('refresh_token', subject, lifetime).aud).toBe('kapi-refresh');
    const refresh = signToken(claims('refresh_token'), KEY.active);
    expect(verifyToken(refresh, KEY, 'refresh_token', NOW).ok).toBe(true);
    expect(verifyToken(refresh, KEY, 'any', NOW).ok).toBe(true);
    expect(verifyToken(refresh, KEY, 'access_token', NOW)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/audience/),
    });
    // one issued before (audience `kapi`) is still a refresh token to kapi until it expires
    const older = signToken({ ...claims('refresh_token'), aud: 'kapi' }, KEY.active);
    expect(verifyToken(older, KEY, 'refresh_token', NOW).ok).toBe(true);
  });

  test('when the claim groups is not a list of strings, then the token is refused', () => {
    const token = signToken({ ...claims(), groups: [1] as unknown as string[] }, KEY.active);
    expect(verifyToken(token, KEY, 'access_token', NOW)).toEqual({ ok: false, reason: 'claims missing or malformed' });
  });

  test('when an issuer URL is set, then new tokens carry it, and tokens of the default issuer still verify', () => {
    const policy = tokenPolicy('https://kapi.example.com');
    const issued = signToken(buildClaims('access_token', subject, lifetime, policy.issuer), KEY.active);
    expect((jwt.decode(issued) as TokenClaims).iss).toBe('https://kapi.example.com');
    expect(verifyToken(issued, KEY, 'access_token', NOW, policy.acceptance).ok).toBe(true);
    expect(verifyToken(signToken(claims(), KEY.active), KEY, 'access_token', NOW, policy.acceptance).ok).toBe(true);
    const foreign = signToken(buildClaims('access_token', subject, lifetime, 'https://other'), KEY.active);
    expect(verifyToken(foreign, KEY, 'access_token', NOW, policy.acceptance).ok).toBe(false);
    expect(verifyToken(issued, KEY, 'access_token', NOW, tokenPolicy().acceptance).ok).toBe(false);
  });
});

function expectKey(key: SigningKey | { problem: string }): SigningKey {
  if ('problem' in key) throw new Error(key.problem);
  return key;
}

describe('a key added but not active yet (rotation step 1)', () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const legacy = Buffer.alloc(48, 7);
  const loaded = keySetFromSecretData(
    {
      key: legacy.toString('base64'),
      'next.pem': Buffer.from(ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()).toString('base64'),
    },
    'kapi-system/kapi-apiserver-jwt',
  );
  if (!('keys' in loaded)) throw new Error(loaded.problems.join('; '));
  const keys = loaded.keys;
  const next = keys.byKid.get('next')!;

  test('when the set is loaded, then the legacy key signs and the new key is published in the JWKS', () => {
    expect(keys.active.kid).toBe('key');
    expect(publicJwks(keys).keys.map((key) => [key.kid, key.alg])).toEqual([['next', 'ES256']]);
  });

  test('when tokens are issued, then they are the legacy key’s, and the new key verifies none of them', () => {
    const token = signToken(claims(), keys.active);
    expect(verifyToken(token, keys, 'access_token', NOW).ok).toBe(true);
    // the same token claiming the new key's kid, re-signed with the legacy key (HS256): refused
    const [, payload] = token.split('.');
    const renamed = forged(
      { alg: 'HS256', typ: 'JWT', kid: 'next' },
      JSON.parse(Buffer.from(payload!, 'base64url').toString()),
      (input) => createHmac('sha256', legacy).update(input).digest('base64url'),
    );
    expect(verifyToken(renamed, keys, 'access_token', NOW)).toMatchObject({ ok: false });
    // HS256 keyed with the new key's public PEM (algorithm confusion): refused
    const publicPem = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const confused = forged({ alg: 'HS256', typ: 'JWT', kid: 'next' }, claims(), (input) =>
      createHmac('sha256', publicPem).update(input).digest('base64url'),
    );
    expect(verifyToken(confused, keys, 'access_token', NOW)).toMatchObject({ ok: false });
    // a token with no kid is tried with the legacy key only, never the new one
    const noKid = jwt.sign(claims(), next.signWith, { algorithm: 'ES256' });
    expect(verifyToken(noKid, keys, 'access_token', NOW)).toMatchObject({ ok: false });
  });

  test('when a token names the new key and is signed with it, then it verifies (what it signed, once active)', () => {
    expect(verifyToken(signToken(claims(), next), keys, 'access_token', NOW).ok).toBe(true);
  });
});
