/**
 * The cookies of the browser flow (pure). Every one is HttpOnly (no script reads it; the pages have none anyway) and
 * SameSite=Lax (sent on top-level navigations back to kapi, such as an upstream provider's redirect to the callback,
 * never with another site's form posts or subresources). Over HTTPS each is a `__Host-` cookie (RFC 6265bis §4.1.3.2:
 * Secure, Path=/, no Domain), which no sibling subdomain and no plain-HTTP page can set or shadow; over plain HTTP
 * (loopback, a port-forward) it keeps its bare name, limited to /oauth.
 */
export const BROWSER_SESSION_COOKIE = 'kapi_session';
export const LOGIN_BINDING_COOKIE = 'kapi_login';
export const UPSTREAM_LOGIN_COOKIE = 'kapi_upstream';

const COOKIE_PATH = '/oauth';
const MAX_COOKIE_VALUE = 4096;

/** The name a cookie goes by: `__Host-<name>` over HTTPS. */
export function cookieName(name: string, secure: boolean): string {
  return secure ? `${HOST_PREFIX}${name}` : name;
}

const HOST_PREFIX = '__Host-';

/**
 * The value of cookie `name` (as `cookieName` names it for `secure`) in a Cookie header; `undefined` when absent,
 * repeated or oversized.
 */
export function cookieValue(header: string | undefined, base: string, secure: boolean): string | undefined {
  if (!header) return undefined;
  const name = cookieName(base, secure);
  let found: string | undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    // two cookies of one name (another path, a subdomain's): trust neither
    if (found !== undefined) return undefined;
    found = part.slice(at + 1).trim();
  }
  if (found === undefined || found === '' || found.length > MAX_COOKIE_VALUE) return undefined;
  return found;
}

export interface CookieOptions {
  secure: boolean;
  /** Seconds; absent: until the browser closes. */
  maxAge?: number;
}

/** A Set-Cookie header value. `value` is one of kapi's sealed values or random base64url: nothing to escape. */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  const path = options.secure ? '/' : COOKIE_PATH;
  const parts = [`${cookieName(name, options.secure)}=${value}`, `Path=${path}`, 'HttpOnly', 'SameSite=Lax'];
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`);
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** A Set-Cookie header value that deletes the cookie. */
export function clearCookie(name: string, options: { secure: boolean }): string {
  return setCookie(name, '', { ...options, maxAge: 0 });
}
