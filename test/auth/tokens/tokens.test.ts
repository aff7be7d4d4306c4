import { generateKeyPairSync, createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import {
  buildClaims,
  CLOCK_TOLERANCE_SECONDS,
  newTokenId,
  signToken,
  VerifiedTokenCache,
  verifyToken,
  type TokenClaims,
  type TokenType,
} from '../../../src/auth/tokens/tokens.js';

const KEY = Buffer.alloc(32, 1);
const OTHER_KEY = Buffer.alloc(32, 2);
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
    { name: 'when the token is ours and current, then it verifies', token: () => signToken(claims(), KEY), ok: true },
    {
      name: 'when alg is none (no signature), then it is refused',
      token: () => forged({ alg: 'none', typ: 'JWT' }, claims(), () => ''),
      ok: false,
      reason: /signature is required|invalid/,
    },
    {
      name: 'when the header says HS256 but another key signed it, then it is refused',
      token: () => signToken(claims(), OTHER_KEY),
      ok: false,
      reason: /invalid signature/,
    },
    {
      name: 'when the token is RS256 (asymmetric), then it is refused by the allow-list',
      token: () => jwt.sign(claims(), privateKey, { algorithm: 'RS256', noTimestamp: true }),
      ok: false,
      reason: /invalid algorithm/,
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
      token: () => jwt.sign(claims(), KEY, { algorithm: 'HS512', noTimestamp: true }),
      ok: false,
      reason: /invalid algorithm/,
    },
    {
      name: 'when it expired more than the tolerance ago, then it is refused',
      token: () => signToken(claims('access_token', { exp: NOW - 11 }), KEY),
      ok: false,
      reason: /expired/,
    },
    {
      name: 'when it expired within the 10 s tolerance, then it still verifies',
      token: () => signToken(claims('access_token', { exp: NOW - 9 }), KEY),
      ok: true,
    },
    {
      name: 'when the payload was changed after signing, then it is refused',
      token: () => {
        const [header, , signature] = signToken(claims(), KEY).split('.');
        return `${header}.${b64(claims('access_token', { username: 'admin', sub: 'admin' }))}.${signature}`;
      },
      ok: false,
      reason: /invalid signature/,
    },
    {
      name: 'when exp is missing, then it is refused',
      token: () => {
        const { exp: _exp, ...rest } = claims();
        return jwt.sign(rest, KEY, { algorithm: 'HS256', noTimestamp: true });
      },
      ok: false,
      reason: /claims/,
    },
    {
      name: 'when a refresh token is presented where an access token is expected, then it is refused',
      token: () => signToken(claims('refresh_token'), KEY),
      expected: 'access_token',
      ok: false,
      reason: /refresh_token where a access_token/,
    },
    {
      name: 'when an access token is presented where a refresh token is expected, then it is refused',
      token: () => signToken(claims('access_token'), KEY),
      expected: 'refresh_token',
      ok: false,
      reason: /access_token where a refresh_token/,
    },
    {
      name: 'when the audience is not kapi, then it is refused',
      token: () => signToken(claims('access_token', { aud: 'other' }), KEY),
      ok: false,
      reason: /audience/,
    },
    {
      name: 'when the issuer is not kapi, then it is refused',
      token: () => signToken(claims('access_token', { iss: 'someone' }), KEY),
      ok: false,
      reason: /issuer/,
    },
    {
      name: 'when token_type is unknown, then it is refused',
      token: () => signToken(claims('access_token', { token_type: 'id_token' as TokenType }), KEY),
      expected: 'any',
      ok: false,
      reason: /claims/,
    },
    {
      name: 'when sub and username disagree, then it is refused',
      token: () => signToken(claims('access_token', { sub: 'bob' }), KEY),
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
      token: () => signToken(claims('refresh_token'), KEY),
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
    const result = verifyToken(signToken(claims(), KEY), KEY, 'access_token', NOW);
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
    expect(signToken(claims('refresh_token'), KEY)).toBe(signToken(claims('refresh_token'), KEY));
  });

  test('when a token is signed, then its header names HS256 and iat is the one the claims give', () => {
    const token = signToken(claims(), KEY);
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
    const token = signToken(claims(), KEY);
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
    const token = signToken(claims(), KEY);
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
    const token = signToken(claims('refresh_token'), KEY);
    expect(cache.verify(token, KEY, 'any', NOW).ok).toBe(true);
    const result = cache.verify(token, KEY, 'access_token', NOW);
    expect(result).toEqual({ ok: false, reason: 'a refresh_token where a access_token was expected' });
  });

  test('when the signing key changes, then tokens verified with the old one are forgotten and refused', () => {
    const cache = new VerifiedTokenCache();
    const token = signToken(claims(), KEY);
    expect(cache.verify(token, KEY, 'access_token', NOW).ok).toBe(true);
    const result = cache.verify(token, OTHER_KEY, 'access_token', NOW);
    expect(result.ok).toBe(false);
    expect(cache.size).toBe(0);
  });

  test('when a token fails verification, then it is not remembered', () => {
    const cache = new VerifiedTokenCache();
    expect(cache.verify(signToken(claims(), OTHER_KEY), KEY, 'access_token', NOW).ok).toBe(false);
    expect(cache.verify(signToken(claims('refresh_token'), KEY), KEY, 'access_token', NOW).ok).toBe(false);
    expect(cache.verify('not.a.token', KEY, 'access_token', NOW).ok).toBe(false);
    expect(cache.size).toBe(0);
  });

  test('when more tokens verify than it holds, then it stays at its capacity and still answers each correctly', () => {
    const cache = new VerifiedTokenCache(2);
    const tokens = ['jti-a', 'jti-b', 'jti-c'].map((jti) => signToken(claims('access_token', { jti }), KEY));
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
