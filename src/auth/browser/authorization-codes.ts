import { createHash, timingSafeEqual } from 'node:crypto';
import type { KeySet } from '../tokens/key-set.js';
import { newSessionId } from '../sessions/session-record.js';
import { open, seal } from './sealed-values.js';

/**
 * Authorization codes (RFC 6749 §4.1.2): what a browser sign-in hands the client, to exchange at the token endpoint
 * within 60 seconds, once. A code is a sealed value (sealed-values.ts) holding everything it is bound to — the
 * client, the redirect URI, the PKCE challenge, the user, the scopes, the nonce — so any replica can check it
 * without shared memory; that it is used only once is recorded in the cluster when it is redeemed
 * (`CodeRedemptions`). It also names the login session it will start, so a second redemption knows which session
 * to revoke (RFC 6749 §4.1.2: the tokens issued from a code used twice are revoked). Pure.
 */
export const CODE_LIFETIME_SECONDS = 60;

export interface CodeGrant {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string[];
  nonce?: string;
  username: string;
  userUid?: string;
  /** When the user authenticated (seconds): the ID token's auth_time. */
  authTime: number;
  /** The login session the code will start (a LoginSession name, chosen when the code is issued). */
  sessionId: string;
  /** The browser session the code was issued in, if any: a new login with multipleLogin false keeps it. */
  browserSessionId?: string;
  /** The identity provider that vouched for the user (absent: a local password), and the groups it gave. */
  provider?: string;
  upstreamGroups?: string[];
}

/** A code for `grant` and the session id it will start; valid for CODE_LIFETIME_SECONDS. */
export function issueCode(keys: KeySet, grant: Omit<CodeGrant, 'sessionId'>, nowSeconds: number): string {
  const sealed: CodeGrant = { ...grant, sessionId: newSessionId() };
  return seal(keys, 'authorization-code', sealed, nowSeconds + CODE_LIFETIME_SECONDS);
}

export type OpenedCode = { ok: true; grant: CodeGrant; expiresAt: number } | { ok: false; reason: string };

/** What `code` stands for, if kapi issued it (under a key still in the set) and it has not expired. */
export function openCode(keys: KeySet, code: string, nowSeconds: number): OpenedCode {
  const opened = open(keys, 'authorization-code', code, nowSeconds);
  if (!opened.ok) return { ok: false, reason: `code ${opened.reason}` };
  return { ok: true, grant: opened.value as CodeGrant, expiresAt: opened.expiresAt };
}

/** The name a redemption is recorded under: a digest, so the record never holds a usable code. */
export function codeDigest(code: string): string {
  return createHash('sha256').update(code).digest('hex').slice(0, 40);
}

/** RFC 7636 §4.1: 43-128 unreserved characters. */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 7636 §4.6 with S256, compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** A redemption as recorded: enough for an operator to see whose it was, nothing to redeem it with. */
export interface Redemption {
  clientId: string;
  username: string;
  sessionId: string;
  /** When the code expires (seconds): the record is kept until then, and deleted after. */
  expiresAt: number;
}

/**
 * Where redeemed codes are recorded: every replica writes to it, and a record is created at most once, so of two
 * replicas redeeming one code at the same moment exactly one succeeds.
 */
export interface CodeRedemptions {
  /** Records the redemption of the code with this digest; false when it was recorded before. */
  record(digest: string, redemption: Redemption): Promise<boolean>;
}
