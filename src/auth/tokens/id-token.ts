import { createHash } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { SigningKey } from './key-set.js';

/**
 * OpenID Connect ID tokens (Core §2, §3.1.3.6): who signed in, for which client, when, in answer to which nonce.
 * Signed by the active key of the set, like every other token, and verifiable with the JWKS when that key is ES256
 * or RS256 (with HS256 a client relies on TLS to the token endpoint, as Core §3.1.3.7 allows). An ID token has no
 * `token_type` and names the client as its audience, so kapi never accepts one as a bearer token. Pure.
 */
export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  azp: string;
  iat: number;
  exp: number;
  auth_time: number;
  nonce?: string;
  /** The login session; the same `sid` the access and refresh tokens carry. */
  sid: string;
  /** The left half of SHA-256 of the access token (Core §3.3.2.11), binding the two. */
  at_hash: string;
  preferred_username?: string;
  name?: string;
  email?: string;
  groups?: string[];
}

export interface IdTokenInput {
  issuer: string;
  username: string;
  clientId: string;
  sessionId: string;
  nowSeconds: number;
  expiresAt: number;
  authTime: number;
  nonce?: string;
  accessToken: string;
  /** The scopes granted: `profile`, `email` and `groups` add their claims. */
  scope: readonly string[];
  email?: string;
  groups: readonly string[];
}

export function idTokenClaims(input: IdTokenInput): IdTokenClaims {
  const claims: IdTokenClaims = {
    iss: input.issuer,
    sub: input.username,
    aud: input.clientId,
    azp: input.clientId,
    iat: input.nowSeconds,
    exp: input.expiresAt,
    auth_time: input.authTime,
    sid: input.sessionId,
    at_hash: accessTokenHash(input.accessToken),
  };
  if (input.nonce !== undefined) claims.nonce = input.nonce;
  Object.assign(claims, userClaims(input.username, input.scope, input.email, input.groups));
  return claims;
}

/** The claims about the user that the scopes allow, as the ID token and /oauth/userinfo give them. */
export function userClaims(
  username: string,
  scope: readonly string[],
  email: string | undefined,
  groups: readonly string[],
): Pick<IdTokenClaims, 'preferred_username' | 'name' | 'email' | 'groups'> {
  const claims: Pick<IdTokenClaims, 'preferred_username' | 'name' | 'email' | 'groups'> = {};
  if (scope.includes('profile')) {
    claims.preferred_username = username;
    claims.name = username;
  }
  if (scope.includes('email') && email !== undefined) claims.email = email;
  if (scope.includes('groups')) claims.groups = [...groups];
  return claims;
}

export function signIdToken(claims: IdTokenClaims, key: SigningKey): string {
  return jwt.sign(claims, key.signWith, {
    algorithm: key.algorithm,
    keyid: key.kid,
    header: { typ: 'JWT', alg: key.algorithm },
  });
}

/** at_hash for SHA-256 based algorithms (HS256, ES256, RS256): base64url of the left half of the digest. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}
