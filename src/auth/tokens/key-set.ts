import {
  createHash,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';

/**
 * The token signing keys as a set, read from the Secret every replica shares. Pure: Secret data in, keys or the
 * reasons they are unusable out (never the key material).
 *
 * Secret layout (`data`, base64 as always):
 * - `<kid>.key`: an HS256 key, at least 32 random bytes;
 * - `<kid>.pem`: a PEM private key: EC P-256 signs ES256, RSA (2048 bits or more) signs RS256;
 * - `key`: the single HS256 key of earlier versions; its kid is `key`, and it also verifies tokens without a kid;
 * - `active`: the kid that signs new tokens (optional when the set holds one key, or a legacy `key`, which then
 *   signs).
 * Every key in the set verifies what it signed (tokens naming its kid); rotation is: add a key (it is published in
 * the JWKS at once and signs nothing yet), make it active, remove the old one once the tokens it signed have expired
 * (the refresh token lifetime).
 */
export type SigningAlgorithm = 'HS256' | 'ES256' | 'RS256';

export interface SigningKey {
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  /** The HMAC secret, or the private key. */
  readonly signWith: KeyObject;
  /** The HMAC secret, or the public key. */
  readonly verifyWith: KeyObject;
  /** The public key as a JWK, for asymmetric keys only (an HMAC key is never published). */
  readonly publicJwk?: PublicJwk;
}

export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: SigningAlgorithm;
  use: 'sig';
}

export interface KeySet {
  /** The key new tokens are signed with. */
  readonly active: SigningKey;
  readonly byKid: ReadonlyMap<string, SigningKey>;
  /** A digest of the whole set: equal sets give equal fingerprints (a reload that changed nothing is no change). */
  readonly fingerprint: string;
}

/** HS256 wants a key at least as long as its output: 256 bits. */
export const MIN_HMAC_KEY_BYTES = 32;
export const MIN_RSA_KEY_BITS = 2048;
export const LEGACY_KID = 'key';
export const ACTIVE_ENTRY = 'active';
/** A kid is a Secret data key's stem: no dots, so `<kid>.key` and `<kid>.pem` stay unambiguous. */
const KID = /^[A-Za-z0-9_-]{1,64}$/;
/** More keys than any rotation needs; it bounds the work one Secret can cause. */
export const MAX_KEYS = 16;

export type KeySetResult = { keys: KeySet } | { problems: string[] };

/** `data` as in a Secret (base64 values). `where` names the Secret in the problems. */
export function keySetFromSecretData(data: Readonly<Record<string, string>> | undefined, where: string): KeySetResult {
  const problems: string[] = [];
  const byKid = new Map<string, SigningKey>();
  let activeKid: string | undefined;
  for (const [entry, encoded] of Object.entries(data ?? {})) {
    const bytes = Buffer.from(encoded, 'base64');
    if (entry === ACTIVE_ENTRY) {
      activeKid = bytes.toString('utf8').trim();
      continue;
    }
    const named = entryName(entry);
    if (!named) {
      problems.push(`data.${entry}: not a key entry (expected <kid>.key, <kid>.pem, key or active)`);
      continue;
    }
    if (byKid.has(named.kid)) {
      problems.push(`data.${entry}: a second key with kid ${named.kid}`);
      continue;
    }
    const key = named.kind === 'hmac' ? hmacKey(named.kid, bytes) : privateKey(named.kid, bytes);
    if ('problem' in key) problems.push(`data.${entry}: ${key.problem}`);
    else byKid.set(named.kid, key);
  }
  if (byKid.size > MAX_KEYS) problems.push(`${byKid.size} keys; at most ${MAX_KEYS} are allowed`);
  if (byKid.size === 0 && problems.length === 0) {
    problems.push(`no signing key (data.<kid>.key, data.<kid>.pem or data.key)`);
  }
  // Without `active`, a legacy `key` keeps signing: step 1 of a rotation adds a key beside it, published (JWKS) and
  // verifying only what it signs, before step 2 makes it active.
  const implicit = byKid.size === 1 ? [...byKid.values()][0] : byKid.get(LEGACY_KID);
  if (activeKid === undefined && !implicit && byKid.size > 1) {
    problems.push(`data.${ACTIVE_ENTRY} must name the signing key when there are several and none is the legacy key`);
  }
  const active = activeKid === undefined ? implicit : byKid.get(activeKid);
  if (activeKid !== undefined && !active)
    // a value that is no kid at all may be key material pasted into the wrong entry: it is never quoted
    problems.push(
      KID.test(activeKid)
        ? `data.${ACTIVE_ENTRY} names kid "${activeKid}", not in the set`
        : `data.${ACTIVE_ENTRY} is not a kid (${activeKid.length} characters; a kid is 1-64 of A-Z a-z 0-9 _ -)`,
    );
  if (problems.length > 0 || !active) return { problems: problems.map((problem) => `Secret ${where} ${problem}`) };
  return { keys: { active, byKid, fingerprint: fingerprintOf(data ?? {}) } };
}

/** A set of one HS256 key (tests, and the sandbox's in-memory key). */
export function hmacKeySet(secret: Buffer, kid = LEGACY_KID): KeySet {
  const key = hmacKey(kid, secret);
  if ('problem' in key) throw new Error(key.problem);
  return { active: key, byKid: new Map([[kid, key]]), fingerprint: createHash('sha256').update(secret).digest('hex') };
}

/** A set of the given keys, the first one active (tests; rotation steps). */
export function keySetOf(keys: readonly SigningKey[], activeKid = keys[0]?.kid): KeySet {
  const active = keys.find((key) => key.kid === activeKid);
  if (!active) throw new Error(`no key ${activeKid}`);
  return {
    active,
    byKid: new Map(keys.map((key) => [key.kid, key])),
    fingerprint: keys.map((key) => `${key.kid}:${key.algorithm}`).join(','),
  };
}

/** The public keys of the set, as a JWKS document. */
export function publicJwks(keys: KeySet | undefined): { keys: PublicJwk[] } {
  return { keys: [...(keys?.byKid.values() ?? [])].flatMap((key) => (key.publicJwk ? [key.publicJwk] : [])) };
}

function entryName(entry: string): { kid: string; kind: 'hmac' | 'pem' } | undefined {
  if (entry === LEGACY_KID) return { kid: LEGACY_KID, kind: 'hmac' };
  const dot = entry.lastIndexOf('.');
  const kid = entry.slice(0, dot);
  const suffix = entry.slice(dot + 1);
  if (dot < 1 || !KID.test(kid)) return undefined;
  if (suffix === 'key') return { kid, kind: 'hmac' };
  if (suffix === 'pem') return { kid, kind: 'pem' };
  return undefined;
}

export function hmacKey(kid: string, secret: Buffer): SigningKey | { problem: string } {
  if (secret.length < MIN_HMAC_KEY_BYTES) {
    return { problem: `holds ${secret.length} bytes; at least ${MIN_HMAC_KEY_BYTES} are required` };
  }
  const object = createSecretKey(secret);
  return Object.freeze({ kid, algorithm: 'HS256', signWith: object, verifyWith: object });
}

export function privateKey(kid: string, pem: Buffer): SigningKey | { problem: string } {
  let signWith: KeyObject;
  try {
    signWith = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    // the parser's message may quote the input: it is not passed on
    return { problem: 'is not a PEM private key (EC P-256 or RSA)' };
  }
  const algorithm = algorithmOf(signWith);
  if ('problem' in algorithm) return algorithm;
  const verifyWith = createPublicKey(signWith);
  const publicJwk: PublicJwk = Object.freeze({
    ...verifyWith.export({ format: 'jwk' }),
    kid,
    alg: algorithm.algorithm,
    use: 'sig' as const,
  });
  return Object.freeze({ kid, algorithm: algorithm.algorithm, signWith, verifyWith, publicJwk });
}

function algorithmOf(key: KeyObject): { algorithm: SigningAlgorithm } | { problem: string } {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'ec') {
    return details.namedCurve === 'prime256v1'
      ? { algorithm: 'ES256' }
      : { problem: `is an EC key on ${details.namedCurve ?? 'an unknown curve'}; ES256 needs P-256 (prime256v1)` };
  }
  if (key.asymmetricKeyType === 'rsa') {
    const bits = details.modulusLength ?? 0;
    return bits >= MIN_RSA_KEY_BITS
      ? { algorithm: 'RS256' }
      : { problem: `is a ${bits}-bit RSA key; RS256 needs at least ${MIN_RSA_KEY_BITS} bits` };
  }
  return { problem: `is a ${key.asymmetricKeyType ?? 'unknown'} key; use EC P-256 (ES256) or RSA (RS256)` };
}

function fingerprintOf(data: Readonly<Record<string, string>>): string {
  const hash = createHash('sha256');
  for (const entry of Object.keys(data).sort()) hash.update(entry).update('\0').update(data[entry]!).update('\0');
  return hash.digest('hex');
}
