import { loopbackRedirect } from '../../config/redirect-uri.js';

/**
 * Where the authorization endpoint may send a browser back (pure). A requested redirect URI must equal one the
 * client registered, character for character (RFC 9700 §2.1: no prefix, no pattern, no normalization that could
 * turn `/cb/../evil` or `good.example@evil.example` into a match). The one exception is the port of a loopback IP
 * redirect (RFC 8252 §7.3): `http://127.0.0.1:51004/cb` matches a registered `http://127.0.0.1/cb`, and only when
 * everything after the port is identical as written.
 */
export function isRegisteredRedirect(requested: string, registered: readonly string[]): boolean {
  if (registered.includes(requested)) return true;
  const loopback = loopbackRedirect(requested);
  if (!loopback) return false;
  return registered.some((uri) => {
    const candidate = loopbackRedirect(uri);
    return candidate !== undefined && candidate.host === loopback.host && candidate.rest === loopback.rest;
  });
}

/**
 * The redirect URI with `params` added to its query (RFC 6749 §4.1.2): the registered query, if any, is kept as
 * written, and a value absent is left out. The URI has no fragment (registration refuses one).
 */
export function redirectWith(redirectUri: string, params: Readonly<Record<string, string | undefined>>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  const added = query.toString();
  if (added === '') return redirectUri;
  const separator = !redirectUri.includes('?')
    ? '?'
    : redirectUri.endsWith('?') || redirectUri.endsWith('&')
      ? ''
      : '&';
  return `${redirectUri}${separator}${added}`;
}

/**
 * The CSP source a form may be redirected to after it is submitted (Content-Security-Policy `form-action` applies to
 * the redirect that follows the login form): the origin of an http(s) redirect URI, or the scheme of a private-use one.
 */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  return url.protocol;
}
