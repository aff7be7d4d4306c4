/**
 * Redirect URIs as a client registers them (RFC 6749 §3.1.2, RFC 8252 §7, RFC 9700 §2.1 and §4.1). Pure.
 *
 * A registered URI is compared with the one a request names by exact string match, so it must be written the one
 * way a client sends it: for http and https, in the WHATWG URL parser's form (`https://app.example.com/cb`, not
 * `HTTPS://App.Example.com/cb` nor `https://app.example.com/a/../cb`). The only latitude is the port of a loopback
 * IP redirect (`http://127.0.0.1/cb` or `http://[::1]/cb`), which native apps choose when they start (RFC 8252 §7.3).
 */
export const MAX_REDIRECT_URIS = 16;
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** The loopback IP literals whose port a request may choose (RFC 8252 §7.3); `localhost` is not one (§8.3). */
const LOOPBACK_IP_HOSTS = ['127.0.0.1', '[::1]'];
/** http is allowed for loopback redirects only: the browser never leaves the machine. */
const LOOPBACK_HOSTS = [...LOOPBACK_IP_HOSTS, 'localhost'];
/** A private-use scheme (RFC 8252 §7.1): a reverse domain name such as com.example.app. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/;
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTERS = /[\u0000-\u0020\u007f-\u009f\\]/;

/** Why `uri` cannot be registered, or `undefined` when it can. Never echoes more than the URI itself. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length === 0) return 'is empty';
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (UNSAFE_CHARACTERS.test(uri)) return 'contains a space, a control character or a backslash';
  if (uri.includes('#')) return 'has a fragment (#…), which a redirect URI may not have (RFC 6749 §3.1.2)';
  if (uri.includes('*')) return 'has a wildcard (*): redirect URIs are matched exactly (RFC 9700 §2.1)';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https' || scheme === 'http') {
    if (url.username !== '' || url.password !== '') return 'has a user name or password (user@host)';
    if (scheme === 'http' && !LOOPBACK_HOSTS.includes(url.hostname)) {
      return 'uses http for a host other than 127.0.0.1, [::1] or localhost; use https (RFC 9700 §2.6)';
    }
    if (url.href !== uri) return `is not written as a browser sends it: use ${JSON.stringify(url.href)}`;
    return undefined;
  }
  if (!PRIVATE_USE_SCHEME.test(scheme)) {
    return `has the scheme "${scheme}": use https, http for loopback, or a private-use scheme named by a reverse domain name such as com.example.app (RFC 8252 §7.1)`;
  }
  if (uri.startsWith(`${scheme}://`))
    return `names a host after "${scheme}://"; write it as ${scheme}:/path (RFC 8252 §7.1)`;
  return undefined;
}

export interface LoopbackRedirect {
  /** `127.0.0.1` or `[::1]`. */
  host: string;
  /** The port as written, absent for none. */
  port: number | undefined;
  /** Everything after the authority: path and query, as written. */
  rest: string;
}

const LOOPBACK_IP_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::([0-9]{1,5}))?([/?][^#]*)?$/;

/**
 * A loopback IP redirect (`http://127.0.0.1[:port]/…` or `http://[::1][:port]/…`) taken apart as written, without
 * normalizing anything; `undefined` for any other URI, or a port outside 1-65535.
 */
export function loopbackRedirect(uri: string): LoopbackRedirect | undefined {
  const match = LOOPBACK_IP_REDIRECT.exec(uri);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535 || match[2]!.startsWith('0'))) return undefined;
  if (!LOOPBACK_IP_HOSTS.includes(match[1]!)) return undefined;
  return { host: match[1]!, port, rest: match[3] ?? '' };
}
