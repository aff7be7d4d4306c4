import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { LruMap } from '../lru-map.js';

/**
 * Token claims: building, signing and verifying. Pure (the key and `now` come in as arguments).
 *
 * One algorithm is allowed, HS256, fixed on the server: a token's own header never picks the algorithm, so
 * `alg: none`, RS/ES tokens and HMAC-with-a-public-key confusion all fail. `exp` is required, clock skew is bounded,
 * and the `token_type` claim keeps refresh tokens and access tokens apart in both directions.
 */
export const TOKEN_ISSUER = 'kapi';
export const TOKEN_AUDIENCE = 'kapi';
export const CLOCK_TOLERANCE_SECONDS = 10;
const ALGORITHM = 'HS256';
/** Longer input is not a token of ours; refusing it early bounds the work a request can cause. */
const MAX_TOKEN_LENGTH = 4096;

export type TokenType = 'access_token' | 'refresh_token';

export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  token_type: TokenType;
  username: string;
  client_id: string;
  /** The login session (LoginSession name) the token belongs to. */
  sid: string;
}

export interface TokenSubject {
  username: string;
  clientId: string;
  sessionId: string;
}

/** Times in whole seconds since the epoch, as JWT counts them. */
export interface TokenLifetime {
  id: string;
  issuedAt: number;
  expiresAt: number;
}

/** Claims in one fixed order, so the same inputs always sign to the same token (the refresh grace relies on it). */
export function buildClaims(type: TokenType, subject: TokenSubject, lifetime: TokenLifetime): TokenClaims {
  return {
    iss: TOKEN_ISSUER,
    sub: subject.username,
    aud: TOKEN_AUDIENCE,
    iat: lifetime.issuedAt,
    exp: lifetime.expiresAt,
    jti: lifetime.id,
    token_type: type,
    username: subject.username,
    client_id: subject.clientId,
    sid: subject.sessionId,
  };
}

/**
 * jsonwebtoken handed a Buffer first tries it as a public key (which throws) on every call: ~6x the cost of the
 * HMAC itself. A KeyObject made once per key skips that.
 */
const secretKeys = new WeakMap<Buffer, KeyObject>();
function hmacKey(key: Buffer): KeyObject {
  let object = secretKeys.get(key);
  if (!object) {
    object = createSecretKey(key);
    secretKeys.set(key, object);
  }
  return object;
}

export function signToken(claims: TokenClaims, key: Buffer): string {
  // iat comes from the claims (jsonwebtoken keeps a given iat; noTimestamp would drop it)
  return jwt.sign(claims, hmacKey(key), { algorithm: ALGORITHM });
}

/** A random token id (jti): 128 bits, URL-safe. */
export function newTokenId(): string {
  return randomBytes(16).toString('base64url');
}

export type VerifiedToken = { ok: true; claims: TokenClaims } | { ok: false; reason: string };

/**
 * Checks signature, algorithm, issuer, audience, expiry (± the tolerance) and the claim shapes, then the type.
 * `expected` 'any' is for revocation, which takes either kind. The reason is for logs; it never contains the token.
 */
export function verifyToken(
  token: string,
  key: Buffer,
  expected: TokenType | 'any',
  nowSeconds: number,
): VerifiedToken {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'malformed token' };
  let payload: unknown;
  try {
    payload = jwt.verify(token, hmacKey(key), {
      algorithms: [ALGORITHM],
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      clockTimestamp: nowSeconds,
    });
  } catch (err) {
    return { ok: false, reason: reasonOf(err) };
  }
  const claims = claimsOf(payload);
  if (!claims) return { ok: false, reason: 'claims missing or malformed' };
  if (expected !== 'any' && claims.token_type !== expected) {
    return { ok: false, reason: `a ${claims.token_type} where a ${expected} was expected` };
  }
  return { ok: true, claims };
}

/** Enough for every active client of one replica; a bounded map keeps hostile input from growing it. */
const VERIFIED_TOKENS_CAPACITY = 4096;

/**
 * `verifyToken` with a memory of tokens already verified, for the per-request check: jsonwebtoken costs 10-30 µs a
 * call, a hit well under one. Only tokens that verified are kept (least recently used out first); a hit still checks
 * expiry with the same tolerance, and the expected type. A different signing key (a reload) empties the memory, so
 * nothing verified with an old key outlives it. Sessions and users are not cached here: callers check them each time.
 */
export class VerifiedTokenCache {
  private readonly verified: LruMap<string, VerifiedToken & { ok: true }>;
  private key: Buffer | undefined;

  constructor(capacity = VERIFIED_TOKENS_CAPACITY) {
    this.verified = new LruMap(capacity);
  }

  verify(token: string, key: Buffer, expected: TokenType | 'any', nowSeconds: number): VerifiedToken {
    if (key !== this.key) {
      this.verified.clear();
      this.key = key;
    }
    const hit = this.verified.get(token);
    if (!hit) {
      const result = verifyToken(token, key, expected, nowSeconds);
      // Frozen: the same claims object is handed to every later request with this token.
      if (result.ok) this.verified.set(token, Object.freeze({ ok: true, claims: Object.freeze(result.claims) }));
      return result;
    }
    // jsonwebtoken's rule: expired once now >= exp + tolerance.
    if (nowSeconds >= hit.claims.exp + CLOCK_TOLERANCE_SECONDS) {
      this.verified.delete(token);
      return { ok: false, reason: 'token expired' };
    }
    if (expected !== 'any' && hit.claims.token_type !== expected) {
      return { ok: false, reason: `a ${hit.claims.token_type} where a ${expected} was expected` };
    }
    return hit;
  }

  get size(): number {
    return this.verified.size;
  }
}

/** Every claim present with its type; `exp` in particular (jsonwebtoken accepts tokens without it). */
function claimsOf(payload: unknown): TokenClaims | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const p = payload as Record<string, unknown>;
  const strings = ['iss', 'sub', 'aud', 'jti', 'username', 'client_id', 'sid'] as const;
  if (!strings.every((name) => typeof p[name] === 'string' && (p[name] as string).length > 0)) return undefined;
  if (!Number.isFinite(p.exp) || !Number.isFinite(p.iat)) return undefined;
  if (p.token_type !== 'access_token' && p.token_type !== 'refresh_token') return undefined;
  if (p.sub !== p.username) return undefined;
  return {
    iss: p.iss as string,
    sub: p.sub as string,
    aud: p.aud as string,
    iat: p.iat as number,
    exp: p.exp as number,
    jti: p.jti as string,
    token_type: p.token_type,
    username: p.username as string,
    client_id: p.client_id as string,
    sid: p.sid as string,
  };
}

function reasonOf(err: unknown): string {
  if (err instanceof jwt.TokenExpiredError) return 'token expired';
  if (err instanceof jwt.NotBeforeError) return 'token not yet valid';
  if (err instanceof jwt.JsonWebTokenError) return err.message;
  return 'token could not be verified';
}
