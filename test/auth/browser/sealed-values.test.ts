import { generateKeyPairSync } from 'node:crypto';
import { open, seal } from '../../../src/auth/browser/sealed-values.js';
import { hmacKey, hmacKeySet, keySetOf, privateKey, type SigningKey } from '../../../src/auth/tokens/key-set.js';
import { codeDigest, issueCode, openCode, pkceMatches } from '../../../src/auth/browser/authorization-codes.js';

const NOW = 2_000_000_000;
const keys = hmacKeySet(Buffer.alloc(32, 1), 'k1');

function key(kid: string, fill: number): SigningKey {
  const made = hmacKey(kid, Buffer.alloc(32, fill));
  if ('problem' in made) throw new Error(made.problem);
  return made;
}

describe('seal and open', () => {
  test('when a value is sealed, then it opens to the same value until it expires, and not from then on', () => {
    const sealed = seal(keys, 'browser-session', { user: 'alice' }, NOW + 60);
    expect(open(keys, 'browser-session', sealed, NOW + 59)).toEqual({
      ok: true,
      value: { user: 'alice' },
      expiresAt: NOW + 60,
    });
    expect(open(keys, 'browser-session', sealed, NOW + 60)).toEqual({ ok: false, reason: 'expired' });
  });

  test('when a sealed value is read, then it reveals nothing of its content', () => {
    const sealed = seal(keys, 'authorization-code', { username: 'alice-the-admin', nonce: 'secret-nonce' }, NOW + 60);
    expect(Buffer.from(sealed.split('.')[3]!, 'base64url').toString('latin1')).not.toMatch(/alice|nonce/);
  });

  test('when a value sealed for one purpose is opened for another, then it is refused', () => {
    const cookie = seal(keys, 'browser-session', { sid: 'x' }, NOW + 60);
    expect(open(keys, 'authorization-code', cookie, NOW)).toEqual({ ok: false, reason: 'forged' });
  });

  test.each([
    ['a flipped bit in the ciphertext', (s: string) => s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.at(-1)],
    ['another key id', (s: string) => s.replace('.k1.', '.k2.')],
    ['a truncated value', (s: string) => s.slice(0, 30)],
    ['another version', (s: string) => s.replace(/^s1/, 's2')],
    ['nothing', () => ''],
    ['an oversized value', () => 'x'.repeat(9000)],
  ])('when a value has %s, then it does not open', (_case, alter) => {
    const sealed = seal(keys, 'authorization-code', { a: 1 }, NOW + 60);
    expect(open(keys, 'authorization-code', alter(sealed), NOW).ok).toBe(false);
  });

  test('when the key set rotates, then values sealed by a key still in the set open, and by a removed key do not', () => {
    const old = keySetOf([key('k1', 1)]);
    const sealed = seal(old, 'authorization-request', 'r', NOW + 60);
    const rotated = keySetOf([key('k2', 2), key('k1', 1)], 'k2');
    expect(open(rotated, 'authorization-request', sealed, NOW)).toMatchObject({ ok: true, value: 'r' });
    expect(seal(rotated, 'authorization-request', 'r', NOW + 60)).toMatch(/^s1\.k2\./);
    expect(open(keySetOf([key('k2', 2)]), 'authorization-request', sealed, NOW)).toEqual({
      ok: false,
      reason: 'unknown key',
    });
  });

  test('when the same kid holds another secret (a replaced Secret), then old values do not open', () => {
    const sealed = seal(keySetOf([key('k1', 1)]), 'browser-session', 'v', NOW + 60);
    expect(open(keySetOf([key('k1', 9)]), 'browser-session', sealed, NOW)).toEqual({ ok: false, reason: 'forged' });
  });

  test('when the active key is an EC key, then values seal and open with a key derived from it', () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    });
    const ec = privateKey('ec1', Buffer.from(pem));
    if ('problem' in ec) throw new Error(ec.problem);
    const set = keySetOf([ec]);
    expect(open(set, 'browser-session', seal(set, 'browser-session', 7, NOW + 1), NOW)).toMatchObject({
      ok: true,
      value: 7,
    });
  });
});

describe('authorization codes', () => {
  const grant = {
    clientId: 'console',
    redirectUri: 'https://console.example.com/cb',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    scope: ['openid'],
    username: 'alice',
    authTime: NOW,
  };

  test('when a code is issued, then it opens for 60 seconds to its grant and a new session id', () => {
    const code = issueCode(keys, grant, NOW);
    const opened = openCode(keys, code, NOW + 59);
    expect(opened).toMatchObject({ ok: true, grant: { ...grant, sessionId: expect.stringMatching(/^[0-9a-f]{32}$/) } });
    expect(openCode(keys, code, NOW + 60)).toEqual({ ok: false, reason: 'code expired' });
  });

  test('when two codes are issued for one grant, then they differ and name different sessions', () => {
    const [a, b] = [issueCode(keys, grant, NOW), issueCode(keys, grant, NOW)];
    expect(a).not.toBe(b);
    expect(codeDigest(a)).not.toBe(codeDigest(b));
    const ids = [a, b].map((code) => (openCode(keys, code, NOW) as { grant: { sessionId: string } }).grant.sessionId);
    expect(ids[0]).not.toBe(ids[1]);
  });

  test.each([
    ['the RFC 7636 appendix B verifier', 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', true],
    ['another verifier', 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl', false],
    ['the challenge itself (plain)', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', false],
    ['nothing', '', false],
  ])('when the verifier is %s, then PKCE S256 matches: %p', (_case, verifier, matches) => {
    expect(pkceMatches(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(matches);
  });
});
