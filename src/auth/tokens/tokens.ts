import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { LruMap } from '../lru-map.js';
import { LEGACY_KID, type KeySet, type SigningKey } from './key-set.js';

/**
 * Token claims: building, signing and verifying. Pure (the keys and `now` come in as arguments).
 *
 * The server picks the algorithm, never the token: the header's `kid` selects a key of the set, and that key's own
 * algorithm is the only one allowed for it. So `alg: none`, an unknown kid, and algorithm confusion (an HS256 token
 * checked against a public key, an ES256 token against an HMAC key) all fail. `exp` is required, clock skew is
 * bounded, and the `token_type` claim keeps refresh tokens and access tokens apart in both directions.
 */
export const TOKEN_ISSUER = 'kapi';
export const TOKEN_AUDIENCE = 'kapi';
/**
 * Refresh tokens name an audience of their own: a verifier trusting kapi's tokens for `kapi` (kube-apiserver's
 * `--oidc-client-id=kapi`, token pass-through) must never take one as a bearer token. Refresh tokens issued before
 * name `kapi` and are still honoured by kapi as refresh tokens until they expire.
 */
export const REFRESH_TOKEN_AUDIENCE = 'kapi-refresh';
export const CLOCK_TOLERANCE_SECONDS = 10;
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
  /**
   * Access tokens only: the user's groups when it was issued, for services that verify kapi's tokens themselves
   * (kube-apiserver's `--oidc-groups-claim=groups`). kapi itself reads the User on every request instead.
   */
  groups?: string[];
  /** Access tokens of a browser sign-in only: the OAuth scopes granted (space-separated). */
  scope?: string;
}

export interface TokenSubject {
  username: string;
  clientId: string;
  sessionId: string;
  groups?: readonly string[];
  scope?: string;
}

/** Times in whole seconds since the epoch, as JWT counts them. */
export interface TokenLifetime {
  id: string;
  issuedAt: number;
  expiresAt: number;
}

/**
 * Claims in one fixed order, so the same inputs always give the same claims: the refresh grace hands the current
 * refresh token out again (the same string with HS256 and RS256; ES256 signatures differ, its claims and jti do not).
 */
export function buildClaims(
  type: TokenType,
  subject: TokenSubject,
  lifetime: TokenLifetime,
  issuer: string = TOKEN_ISSUER,
): TokenClaims {
  const claims: TokenClaims = {
    iss: issuer,
    sub: subject.username,
    aud: type === 'refresh_token' ? REFRESH_TOKEN_AUDIENCE : TOKEN_AUDIENCE,
    iat: lifetime.issuedAt,
    exp: lifetime.expiresAt,
    jti: lifetime.id,
    token_type: type,
    username: subject.username,
    client_id: subject.clientId,
    sid: subject.sessionId,
  };
  if (type === 'access_token' && subject.groups) claims.groups = [...subject.groups];
  if (type === 'access_token' && subject.scope !== undefined) claims.scope = subject.scope;
  return claims;
}

/** Signed with the key given (the set's active one), naming it in the header's `kid`. */
export function signToken(claims: TokenClaims, key: SigningKey): string {
  // iat comes from the claims (jsonwebtoken keeps a given iat; noTimestamp would drop it). KeyObjects, made once per
  // key, spare jsonwebtoken from parsing a Buffer on every call.
  return jwt.sign(claims, key.signWith, { algorithm: key.algorithm, keyid: key.kid });
}

/** A random token id (jti): 128 bits, URL-safe. */
export function newTokenId(): string {
  return randomBytes(16).toString('base64url');
}

export type VerifiedToken = { ok: true; claims: TokenClaims } | { ok: false; reason: string };

/** What a token must have been issued as: by one of these issuers (the current one first). */
export interface TokenAcceptance {
  issuers: readonly [string, ...string[]];
}

const DEFAULT_ACCEPTANCE: TokenAcceptance = { issuers: [TOKEN_ISSUER] };

/**
 * Checks the key (by kid), its algorithm, the signature, issuer, audience, expiry (± the tolerance) and the claim
 * shapes, then the type. `expected` 'any' is for revocation, which takes either kind. The reason is for logs; it
 * never contains the token.
 */
export function verifyToken(
  token: string,
  keys: KeySet,
  expected: TokenType | 'any',
  nowSeconds: number,
  acceptance: TokenAcceptance = DEFAULT_ACCEPTANCE,
): VerifiedToken {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'malformed token' };
  const key = keyFor(token, keys);
  if ('reason' in key) return { ok: false, reason: key.reason };
  let payload: unknown;
  try {
    payload = jwt.verify(token, key.verifyWith, {
      algorithms: [key.algorithm],
      issuer: [...acceptance.issuers],
      // an access token only for `kapi`; a refresh token (or revocation's either) also for its own audience
      audience: expected === 'access_token' ? TOKEN_AUDIENCE : [TOKEN_AUDIENCE, REFRESH_TOKEN_AUDIENCE],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      clockTimestamp: nowSeconds,
    });
  } catch (err) {
    return { ok: false, reason: reasonOf(err) };
  }
  const claims = claimsOf(payload);
  if (!claims) return { ok: false, reason: 'claims missing or malformed' };
  const times = timesProblem(claims, nowSeconds);
  if (times) return { ok: false, reason: times };
  if (expected !== 'any' && claims.token_type !== expected) {
    return { ok: false, reason: `a ${claims.token_type} where a ${expected} was expected` };
  }
  return { ok: true, claims };
}

/** The key of the set a (verified) token was signed with, or undefined when its header names none of it. */
export function signingKeyOf(token: string, keys: KeySet): SigningKey | undefined {
  const key = keyFor(token, keys);
  return 'reason' in key ? undefined : key;
}

/**
 * The key a token names, if its header asks for that key's own algorithm. A token without a kid predates key sets:
 * only the legacy HS256 key (`data.key`) may verify it.
 */
function keyFor(token: string, keys: KeySet): SigningKey | { reason: string } {
  const dot = token.indexOf('.');
  if (dot < 1) return { reason: 'malformed token' };
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
  } catch {
    return { reason: 'malformed token header' };
  }
  if (typeof header !== 'object' || header === null) return { reason: 'malformed token header' };
  const { kid, alg } = header as { kid?: unknown; alg?: unknown };
  if (kid !== undefined && typeof kid !== 'string') return { reason: 'malformed key id' };
  const key = keys.byKid.get(kid ?? LEGACY_KID);
  if (!key) return { reason: kid === undefined ? 'no key id, and no legacy key' : 'unknown key id' };
  if (alg !== key.algorithm) return { reason: `algorithm ${String(alg)} is not that of the key (${key.algorithm})` };
  return key;
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
  private keys: KeySet | undefined;
  private acceptance: TokenAcceptance | undefined;

  constructor(capacity = VERIFIED_TOKENS_CAPACITY) {
    this.verified = new LruMap(capacity);
  }

  verify(
    token: string,
    keys: KeySet,
    expected: TokenType | 'any',
    nowSeconds: number,
    acceptance: TokenAcceptance = DEFAULT_ACCEPTANCE,
  ): VerifiedToken {
    if (keys !== this.keys || acceptance !== this.acceptance) {
      this.verified.clear();
      this.keys = keys;
      this.acceptance = acceptance;
    }
    const hit = this.verified.get(token);
    if (!hit) {
      const result = verifyToken(token, keys, expected, nowSeconds, acceptance);
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

/**
 * A token's times that no issuer of ours would write (pure): issued in the future beyond the clock tolerance, or
 * valid for longer than `maxLifetimeSeconds` (the configured lifetime of its kind) allows.
 */
export function timesProblem(
  claims: { iat: number; exp: number },
  nowSeconds: number,
  maxLifetimeSeconds?: number,
): string | undefined {
  if (claims.iat > nowSeconds + CLOCK_TOLERANCE_SECONDS) return 'issued in the future';
  if (maxLifetimeSeconds !== undefined && claims.exp - claims.iat > maxLifetimeSeconds + CLOCK_TOLERANCE_SECONDS) {
    return 'valid for longer than its kind may be';
  }
  return undefined;
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
  const groups = p.groups;
  if (groups !== undefined && !(Array.isArray(groups) && groups.every((group) => typeof group === 'string'))) {
    return undefined;
  }
  if (p.scope !== undefined && typeof p.scope !== 'string') return undefined;
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
    ...(groups ? { groups: groups as string[] } : {}),
    ...(typeof p.scope === 'string' ? { scope: p.scope } : {}),
  };
}

function reasonOf(err: unknown): string {
  if (err instanceof jwt.TokenExpiredError) return 'token expired';
  if (err instanceof jwt.NotBeforeError) return 'token not yet valid';
  if (err instanceof jwt.JsonWebTokenError) return err.message;
  return 'token could not be verified';
}

/** Who kapi says issued its tokens, and which issuers it accepts: the configured one, and the default 'kapi'. */
export interface TokenPolicy {
  issuer: string;
  acceptance: TokenAcceptance;
}

/**
 * `issuerUrl` (an https URL, for OIDC consumers such as kube-apiserver) becomes the `iss` of new tokens. Tokens that
 * say 'kapi', issued before it was set, stay valid until they expire: setting it logs nobody out.
 */
export function tokenPolicy(issuerUrl?: string): TokenPolicy {
  const issuer = issuerUrl || TOKEN_ISSUER;
  return {
    issuer,
    acceptance: { issuers: issuer === TOKEN_ISSUER ? [TOKEN_ISSUER] : [issuer, TOKEN_ISSUER] },
  };
}
