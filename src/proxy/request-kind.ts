import type { IncomingHttpHeaders } from 'node:http';
import { PathMemo } from '../observability/path-memo.js';

/**
 * What kind of Kubernetes API request a URL is, decided from the URL alone (no I/O), the way kube-apiserver's
 * RequestInfo and LongRunningRequestCheck decide it.
 */

/** Subresources kube-apiserver itself treats as long-running (no request timeout). */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
/** `namespaces/{name}/{x}` where x is a subresource of the Namespace, not a resource inside it. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
/** Values Go's strconv.ParseBool reads as true, which is how kube-apiserver reads `watch`. */
const TRUE_VALUES = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

/** Where upgrades are relayed, as Express mounts prefixes: the prefix itself or anything below it. */
const UPGRADE_PREFIXES = ['/api', '/apis'];

/** Subresources that stream whatever the method, so also with a request body (kubectl exec/attach send POST). */
const STREAMING_ANY_METHOD = new Set(['attach', 'exec', 'proxy', 'portforward']);

/**
 * A GET watch (by parameter or the legacy `/watch/` path) or log, a legacy `/proxy/` path, or a streaming subresource
 * (exec, attach, port-forward, proxy): such requests may stay open indefinitely. A watch is a GET only (kube-apiserver
 * reads `watch` for a list), so `?watch=true` on a write does not make its body unlimited.
 */
export function isLongRunning(method: string, url: string): boolean {
  const { pathname, query } = splitUrl(url);
  const read = method === 'GET';
  if (read && query && hasTrueWatchParameter(query)) return true;
  return (read ? longRunningReads : longRunningOthers).get(pathname);
}

/** Paths of GETs, and of other methods, and whether they are long-running. */
const longRunningReads = new PathMemo((pathname) => isLongRunningPath(pathname, true));
const longRunningOthers = new PathMemo((pathname) => isLongRunningPath(pathname, false));

/** `isLongRunning` for the path alone (its query already read). */
function isLongRunningPath(pathname: string, read: boolean): boolean {
  const parts = pathname.split('/').filter((part) => part !== '');
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) rest = parts.slice(2);
  else if (parts[0] === 'apis' && parts.length >= 3) rest = parts.slice(3);
  else return false;
  if (rest[0] === 'proxy' || (read && rest[0] === 'watch')) return true;
  if (rest[0] === 'namespaces' && rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  const subresource = rest[2];
  if (subresource === undefined) return false;
  return (read ? LONG_RUNNING_SUBRESOURCES : STREAMING_ANY_METHOD).has(subresource);
}

/** What a relayed stream is, for the open-streams metric. */
export type StreamKind = 'watch' | 'log' | 'exec' | 'attach' | 'portforward' | 'proxy' | 'other';
const STREAM_SUBRESOURCES: ReadonlySet<string> = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

/** The kind of a long-running request (see `isLongRunning`), from its URL alone. */
export function streamKind(url: string): StreamKind {
  const { pathname, query } = splitUrl(url);
  if (query && hasTrueWatchParameter(query)) return 'watch';
  const parts = pathname.split('/').filter((part) => part !== '');
  let rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : [];
  if (rest[0] === 'watch') return 'watch';
  if (rest[0] === 'proxy') return 'proxy';
  if (rest[0] === 'namespaces' && rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  const subresource = rest[2];
  return subresource !== undefined && STREAM_SUBRESOURCES.has(subresource) ? (subresource as StreamKind) : 'other';
}

/**
 * Whether an upgrade request is one kapi relays: a WebSocket or SPDY/3.1 upgrade under `/api` or `/apis` (exec,
 * attach, port-forward). Anything else (h2c, other paths) is served as an ordinary request.
 */
export function isRelayedUpgrade(url: string, upgradeHeader: string | undefined): boolean {
  if (!upgradeHeader) return false;
  if (!hasPrefix(splitUrl(url).pathname, UPGRADE_PREFIXES)) return false;
  return upgradeHeader.split(',').some((protocol) => {
    const p = protocol.trim().toLowerCase();
    return p === 'websocket' || p === 'spdy/3.1';
  });
}

/** Whether a request carries a body: HTTP/1.1 frames one only by Transfer-Encoding or a non-zero Content-Length. */
export function hasRequestBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The request target to send to kube-apiserver: origin-form only (`/path?query`). Absolute-form or other targets are
 * not forwarded (undefined).
 */
export function originFormTarget(url: string): string | undefined {
  if (!url.startsWith('/') || url.startsWith('//')) return undefined;
  // Dot segments and encoded separators could walk out of a kube-apiserver reached under a path prefix (a proxy
  // such as Rancher's); no Kubernetes client sends them.
  const { pathname } = splitUrl(url);
  if (DOT_SEGMENT.test(pathname) || ENCODED_SEPARATOR.test(pathname)) return undefined;
  return url;
}

const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;
const ENCODED_SEPARATOR = /%2f|%5c|\\/i;

function splitUrl(url: string): { pathname: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { pathname: url, query: '' } : { pathname: url.slice(0, q), query: url.slice(q + 1) };
}

function hasPrefix(pathname: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

function hasTrueWatchParameter(query: string): boolean {
  if (!query.includes('watch')) return false;
  for (const value of new URLSearchParams(query).getAll('watch')) {
    if (TRUE_VALUES.has(value)) return true;
  }
  return false;
}
