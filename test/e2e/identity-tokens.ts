/**
 * Hand-made JWTs for the token cases: the claims of a real token, re-signed (or not) the ways an attacker would try.
 * The real signing key is read from the Secret the harness created, on the sandbox and on a real cluster alike, so
 * a forged token can differ from an accepted one in exactly one property.
 */
import { createHmac, createSecretKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import jwt from 'jsonwebtoken';
import type { KubeClient } from '../../src/kube/client.js';

export type Claims = Record<string, unknown>;

export function claimsOf(token: string): Claims {
  const payload = token.split('.')[1];
  if (payload === undefined) throw new Error('not a JWT');
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
}

export async function readSigningKey(admin: KubeClient, secret: { namespace: string; name: string }): Promise<Buffer> {
  const object = await admin.request<V1Secret>({
    path: `/api/v1/namespaces/${secret.namespace}/secrets/${secret.name}`,
  });
  const encoded = object.data?.key;
  if (!encoded) throw new Error(`Secret ${secret.namespace}/${secret.name} has no data.key`);
  return Buffer.from(encoded, 'base64');
}

/** The encodings a key could leak in. */
export function keyEncodings(key: Buffer): string[] {
  return [key.toString('base64'), key.toString('base64url'), key.toString('hex')];
}

/** `claims` with a fresh id and a lifetime around now (whole seconds), then `changes`; `undefined` drops a claim. */
export function freshClaims(claims: Claims, changes: Claims = {}, nowSeconds = Math.floor(Date.now() / 1000)): Claims {
  const result: Claims = {
    ...claims,
    jti: randomBytes(16).toString('base64url'),
    iat: nowSeconds,
    exp: nowSeconds + 300,
  };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

export function signHs(claims: Claims, key: Buffer, algorithm: 'HS256' | 'HS512' = 'HS256'): string {
  return jwt.sign(claims, createSecretKey(key), { algorithm });
}

/** Signed by a key pair the attacker made: a genuine RS256 token that kapi has no reason to trust. */
export function signWithOwnRsaKey(claims: Claims): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return jwt.sign(claims, privateKey, { algorithm: 'RS256' });
}

/** `alg: none` and an empty signature. */
export function unsigned(claims: Claims): string {
  return `${segment({ alg: 'none', typ: 'JWT' })}.${segment(claims)}.`;
}

/** Algorithm confusion: the header says RS256, the signature is an HMAC-SHA256 made with the real key. */
export function rs256LabelledHmac(claims: Claims, key: Buffer): string {
  const signingInput = `${segment({ alg: 'RS256', typ: 'JWT' })}.${segment(claims)}`;
  return `${signingInput}.${createHmac('sha256', key).update(signingInput).digest('base64url')}`;
}

/** The token's header and signature kept, its payload replaced. */
export function withPayload(token: string, claims: Claims): string {
  const [header, , signature] = token.split('.');
  return `${header}.${segment(claims)}.${signature}`;
}

function segment(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}
