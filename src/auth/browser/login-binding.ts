import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeySet } from '../tokens/key-set.js';
import { open, seal } from './sealed-values.js';

/**
 * CSRF protection of the login form (and of the state of an upstream sign-in): the browser holds a random binding
 * cookie, and the form carries a token sealed for that binding and that authorization request. Another site can
 * make a browser post the form, but cannot read the token a page of kapi's holds, nor set kapi's cookie; a token
 * copied from one browser does not work in another (login CSRF, RFC 9700 §4.7). Pure.
 */
export function newBinding(): string {
  return randomBytes(32).toString('base64url');
}

const BINDING = /^[A-Za-z0-9_-]{43}$/;

/** A binding cookie value as kapi makes them; anything else is treated as none. */
export function validBinding(value: string | undefined): string | undefined {
  return value !== undefined && BINDING.test(value) ? value : undefined;
}

interface SealedCsrf {
  b: string;
  r: string;
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}

/** The form token for `binding` and the sealed request `request`, valid as long as the request. */
export function csrfToken(keys: KeySet, binding: string, request: string, expiresAt: number): string {
  return seal(keys, 'login-binding', { b: digest(binding), r: digest(request) } satisfies SealedCsrf, expiresAt);
}

/** Whether `token` was made for this browser's binding and this request. */
export function csrfMatches(
  keys: KeySet,
  token: string | undefined,
  binding: string | undefined,
  request: string,
  nowSeconds: number,
): boolean {
  if (!token || !binding) return false;
  const opened = open(keys, 'login-binding', token, nowSeconds);
  if (!opened.ok) return false;
  const sealed = opened.value as SealedCsrf;
  return equal(sealed.b, digest(binding)) && equal(sealed.r, digest(request));
}

function equal(a: unknown, b: string): boolean {
  if (typeof a !== 'string') return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
