import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { KeySet, SigningKey } from '../tokens/key-set.js';

/**
 * Values kapi hands to a browser or a client and reads back later, on any replica: authorization codes, the
 * authorization request carried through the login page, the browser-session cookie, the state of an upstream
 * sign-in. Each is sealed (AES-256-GCM: encrypted and authenticated), so its holder can neither read nor alter it,
 * and it carries its own expiry.
 *
 * The keys come from the token signing key set every replica already shares (the Secret), derived with HKDF-SHA256
 * per purpose, so a value sealed for one purpose (a cookie) never opens as another (a code), and nothing new has to
 * be distributed. A sealed value names the kid it was sealed under: after a rotation, values sealed with the old key
 * still open while that key stays in the set. Pure: the key set and `now` come in as arguments.
 */
export type SealPurpose =
  'authorization-code' | 'authorization-request' | 'browser-session' | 'login-binding' | 'upstream-login';

/** Format version, kid, IV, ciphertext + tag: `s1.<kid>.<iv>.<sealed>` (base64url; a kid has no dots). */
const VERSION = 's1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** No value kapi seals is near this; longer input is refused before any work. */
const MAX_SEALED_LENGTH = 8192;

interface Envelope {
  /** Expiry, seconds since the epoch. */
  exp: number;
  /** The payload. */
  v: unknown;
}

const derivedKeys = new WeakMap<SigningKey, Map<SealPurpose, Buffer>>();

/** The AES key of `purpose` under one signing key (cached per key object, which a reload replaces). */
export function sealingKey(key: SigningKey, purpose: SealPurpose): Buffer {
  let byPurpose = derivedKeys.get(key);
  if (!byPurpose) derivedKeys.set(key, (byPurpose = new Map()));
  let derived = byPurpose.get(purpose);
  if (!derived) {
    const material = secretMaterial(key.signWith);
    derived = Buffer.from(hkdfSync('sha256', material, `kapi/${key.kid}`, `kapi sealed value: ${purpose}`, 32));
    byPurpose.set(purpose, derived);
  }
  return derived;
}

/** The bytes only the Secret's holders know: the HMAC key, or the private key's PKCS#8 encoding. */
function secretMaterial(key: KeyObject): Buffer {
  return key.type === 'secret' ? key.export() : key.export({ format: 'der', type: 'pkcs8' });
}

/** Seals `value` under the set's active key until `expiresAt` (seconds). */
export function seal(keys: KeySet, purpose: SealPurpose, value: unknown, expiresAt: number): string {
  const key = keys.active;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(key, purpose), iv);
  cipher.setAAD(Buffer.from(`${VERSION}.${key.kid}.${purpose}`));
  const body = JSON.stringify({ exp: expiresAt, v: value } satisfies Envelope);
  const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${key.kid}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

export type Opened =
  | { ok: true; value: unknown; expiresAt: number }
  | { ok: false; reason: 'malformed' | 'unknown key' | 'forged' | 'expired' };

/**
 * The value sealed for `purpose`, if it was sealed by a key of the set, was not altered and has not expired at
 * `nowSeconds`. Reasons are for logs and audit lines.
 */
export function open(keys: KeySet, purpose: SealPurpose, sealed: string, nowSeconds: number): Opened {
  if (sealed.length > MAX_SEALED_LENGTH) return { ok: false, reason: 'malformed' };
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) return { ok: false, reason: 'malformed' };
  const [, kid, ivText, bodyText] = parts as [string, string, string, string];
  const key = keys.byKid.get(kid);
  if (!key) return { ok: false, reason: 'unknown key' };
  const iv = Buffer.from(ivText, 'base64url');
  const body = Buffer.from(bodyText, 'base64url');
  if (iv.length !== IV_BYTES || body.length <= TAG_BYTES || iv.toString('base64url') !== ivText) {
    return { ok: false, reason: 'malformed' };
  }
  let text: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(key, purpose), iv);
    decipher.setAAD(Buffer.from(`${VERSION}.${kid}.${purpose}`));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    text = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return { ok: false, reason: 'forged' };
  }
  const envelope = JSON.parse(text) as Envelope;
  if (!Number.isFinite(envelope.exp) || nowSeconds >= envelope.exp) return { ok: false, reason: 'expired' };
  return { ok: true, value: envelope.v, expiresAt: envelope.exp };
}
