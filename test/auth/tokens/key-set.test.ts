import { generateKeyPairSync } from 'node:crypto';
import { keySetFromSecretData, publicJwks, MAX_KEYS } from '../../../src/auth/tokens/key-set.js';

const where = 'kapi-system/kapi-apiserver-jwt';
const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64');
const hmac = (fill: number, bytes = 48) => b64(Buffer.alloc(bytes, fill));
const ecPem = (curve = 'P-256', type: 'pkcs8' | 'sec1' = 'pkcs8') =>
  generateKeyPairSync('ec', { namedCurve: curve }).privateKey.export({ type, format: 'pem' }).toString();
const rsaPem = (bits: number) =>
  generateKeyPairSync('rsa', { modulusLength: bits }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const ed25519Pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

interface Loads {
  name: string;
  data: Record<string, string>;
  active: string;
  alg: string;
  kids: string[];
}

describe('keySetFromSecretData', () => {
  test.each<Loads>([
    { name: 'the legacy data.key alone', data: { key: hmac(1) }, active: 'key', alg: 'HS256', kids: ['key'] },
    { name: 'one <kid>.key without active', data: { 'a.key': hmac(1) }, active: 'a', alg: 'HS256', kids: ['a'] },
    {
      name: 'an HMAC key and an EC key, the EC one active',
      data: { 'old.key': hmac(1), 'new.pem': b64(ecPem()), active: b64('new\n') },
      active: 'new',
      alg: 'ES256',
      kids: ['old', 'new'],
    },
    {
      name: 'an EC key in SEC1 form (as helm genPrivateKey writes it)',
      data: { 'e.pem': b64(ecPem('P-256', 'sec1')) },
      active: 'e',
      alg: 'ES256',
      kids: ['e'],
    },
    { name: 'an RSA key', data: { 'r.pem': b64(rsaPem(2048)) }, active: 'r', alg: 'RS256', kids: ['r'] },
    {
      name: 'the legacy key and a new key beside it, no active yet (rotation step 1): the legacy key still signs',
      data: { key: hmac(1), '20261125.pem': b64(ecPem()) },
      active: 'key',
      alg: 'HS256',
      kids: ['key', '20261125'],
    },
  ])('when the Secret holds $name, then the set has those keys', ({ data, active, alg, kids }) => {
    const result = keySetFromSecretData(data, where);
    if (!('keys' in result)) throw new Error(result.problems.join('; '));
    expect([result.keys.active.kid, result.keys.active.algorithm]).toEqual([active, alg]);
    expect([...result.keys.byKid.keys()]).toEqual(kids);
  });

  test.each([
    { name: 'nothing', data: {}, problem: /no signing key/ },
    { name: 'an HMAC key shorter than 32 bytes', data: { 'a.key': hmac(1, 31) }, problem: /31 bytes; at least 32/ },
    { name: 'an EC key on P-384', data: { 'a.pem': b64(ecPem('P-384')) }, problem: /secp384r1; ES256 needs P-256/ },
    { name: 'a 1024-bit RSA key', data: { 'a.pem': b64(rsaPem(1024)) }, problem: /1024-bit RSA key/ },
    { name: 'an Ed25519 key', data: { 'a.pem': b64(ed25519Pem) }, problem: /ed25519 key/ },
    { name: 'a .pem that is not PEM', data: { 'a.pem': b64('garbage') }, problem: /not a PEM private key/ },
    { name: 'a misspelt entry', data: { 'a.kye': hmac(1) }, problem: /data.a.kye: not a key entry/ },
    { name: 'a kid with bad characters', data: { 'a b.key': hmac(1) }, problem: /not a key entry/ },
    { name: 'two keys for one kid', data: { key: hmac(1), 'key.key': hmac(2) }, problem: /second key with kid key/ },
    { name: 'two keys and no active', data: { 'a.key': hmac(1), 'b.key': hmac(2) }, problem: /must name the signing/ },
    { name: 'an active kid not in the set', data: { 'a.key': hmac(1), active: b64('b') }, problem: /"b", not in/ },
    {
      name: 'key material pasted into active',
      data: { 'a.key': hmac(1), active: b64('not/a+kid=but-secret-key-material') },
      problem: /data.active is not a kid \(33 characters/,
    },
    {
      name: 'more keys than allowed',
      data: Object.fromEntries(Array.from({ length: MAX_KEYS + 1 }, (_, i) => [`k${i}.key`, hmac(i)])),
      problem: /at most 16/,
    },
  ])('when the Secret holds $name, then it is refused with the reason and no key material', ({ data, problem }) => {
    const result = keySetFromSecretData(data as Record<string, string>, where);
    expect('problems' in result).toBe(true);
    const text = 'problems' in result ? result.problems.join('; ') : '';
    expect(text).toMatch(problem);
    expect(text).toContain(`Secret ${where}`);
    for (const value of Object.values(data as Record<string, string>)) {
      if (value.length > 8) expect(text).not.toContain(value);
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      if (decoded.length > 8) expect(text).not.toContain(decoded);
    }
  });

  test('when the same data is read twice, then the fingerprints match; any change changes it', () => {
    const data = { 'a.key': hmac(1), 'b.key': hmac(2), active: b64('a') };
    const fingerprint = (d: Record<string, string>) => {
      const result = keySetFromSecretData(d, where);
      return 'keys' in result ? result.keys.fingerprint : undefined;
    };
    expect(fingerprint(data)).toBe(fingerprint({ ...data }));
    expect(fingerprint({ ...data, active: b64('b') })).not.toBe(fingerprint(data));
  });
});

describe('publicJwks', () => {
  test('when the set holds HMAC and asymmetric keys, then only the public keys are published, with kid and alg', () => {
    const result = keySetFromSecretData(
      { 'h.key': hmac(1), 'e.pem': b64(ecPem()), 'r.pem': b64(rsaPem(2048)), active: b64('e') },
      where,
    );
    if (!('keys' in result)) throw new Error('unexpected');
    const { keys } = publicJwks(result.keys);
    expect(keys.map((key) => [key.kid, key.alg, key.kty, key.use])).toEqual([
      ['e', 'ES256', 'EC', 'sig'],
      ['r', 'RS256', 'RSA', 'sig'],
    ]);
    for (const key of keys) expect(key).not.toHaveProperty('d');
    expect(JSON.stringify(keys)).not.toContain(hmac(1));
  });
});
