import type { UserInfo } from '../auth/identity.js';

/**
 * Header hygiene for requests forwarded to kube-apiserver, as pure functions over Node's `rawHeaders` (names in the
 * client's case, duplicates kept). The caller's own credentials and any identity claim it makes are removed first;
 * only then is kapi's identity (its Authorization) and the caller's (Impersonate-*) added.
 */

/** Hop-by-hop headers (RFC 9110 §7.6.1) plus the non-standard ones proxies also treat as hop-by-hop. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Request headers never passed on: the caller's credentials (kapi adds its own), cookies (kube-apiserver ignores them
 * and a browser session must not travel further), `Expect` (kapi's server already answered it), `Host` (set to
 * kube-apiserver's), forwarding headers (rewritten from what kapi saw: a client must not forge kube's audit
 * `sourceIPs`), and `Audit-ID` and `X-Request-Id` (kapi sends its own request id as Audit-ID, so both audit trails
 share one id that no client chose).
 */
const DROPPED_REQUEST_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'expect',
  'host',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-real-ip',
  'audit-id',
  'x-request-id',
]);

const IMPERSONATE_PREFIX = /^impersonate-/i;
/**
 * kube-apiserver's front-proxy identity headers (--requestheader-*-headers defaults). They count only on a connection
 * with a front-proxy client certificate, which kapi's should never be; dropped so a client can never lean on it.
 */
const REQUEST_HEADER_IDENTITY = /^x-remote-(user|group|extra-)/i;

/** kube-apiserver accepts a WebSocket bearer token in this subprotocol; kapi consumed it, kube must not see it. */
export const BEARER_SUBPROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

export const IMPERSONATION_REFUSED_MESSAGE =
  'impersonation through kapi is not allowed: remove the Impersonate-* headers; kapi forwards every request as the authenticated user';

export interface ForwardContext {
  user: UserInfo;
  /** kapi's own credentials for kube-apiserver (`Authorization`), from `KubeConnection.authHeaders()`. */
  credentials: Readonly<Record<string, string>>;
  /** `host[:port]` of kube-apiserver, sent as `Host`. */
  backendHost: string;
  /** The caller's address as kapi's socket saw it. */
  clientIp: string | undefined;
  /** The scheme the caller used to reach kapi. */
  clientProto: 'http' | 'https';
  /** kapi's request id, sent as `Audit-ID`. */
  requestId?: string;
  /** A protocol upgrade (exec, attach, port-forward): `Connection: Upgrade` and `Upgrade` are kept. */
  upgrade?: boolean;
  /**
   * `credentials` are the caller's own token (token pass-through, SPEC §5): kube-apiserver authenticates the caller
   * itself, so no Impersonate-* is added.
   */
  passThrough?: boolean;
}

export type ForwardHeadersResult =
  { ok: true; headers: string[] } | { ok: false; reason: 'impersonation' | 'identity'; message: string };

/**
 * The headers to send to kube-apiserver, flat as `rawHeaders` ([name, value, name, value, …]), or why the request
 * must be refused: any `Impersonate-*` header, in any case, or named in `Connection`, is refused rather than
 * silently dropped, so a client learns its impersonation did not happen.
 */
export function forwardRequestHeaders(raw: readonly string[], ctx: ForwardContext): ForwardHeadersResult {
  const named = connectionTokens(raw);
  for (let i = 0; i < raw.length; i += 2) {
    if (IMPERSONATE_PREFIX.test(raw[i]!)) return refuseImpersonation();
  }
  for (const token of named) {
    if (IMPERSONATE_PREFIX.test(token)) return refuseImpersonation();
  }

  const out: string[] = [];
  let hadBody = false;
  let contentLength: string | undefined;
  let upgradeTo: string | undefined;
  let originalHost: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    // Framing is never taken from the client's header list (a `Connection: content-length` would strip it and let a
    // body run on as a second, smuggled request): it is re-emitted below from what Node's parser read.
    if (lower === 'transfer-encoding') {
      hadBody = true;
      continue;
    }
    if (lower === 'content-length') {
      contentLength ??= value;
      continue;
    }
    if (lower === 'host') originalHost ??= value;
    if (lower === 'upgrade') upgradeTo = upgradeTo === undefined ? value : `${upgradeTo}, ${value}`;
    if (HOP_BY_HOP.has(lower) || DROPPED_REQUEST_HEADERS.has(lower) || named.has(lower)) continue;
    if (REQUEST_HEADER_IDENTITY.test(lower)) continue;
    if (lower === 'sec-websocket-protocol') {
      const kept = withoutBearerSubprotocol(value);
      if (kept) out.push(name, kept);
      continue;
    }
    out.push(name, value);
  }

  out.push('Host', ctx.backendHost);
  if (ctx.upgrade && upgradeTo !== undefined) out.push('Connection', 'Upgrade', 'Upgrade', upgradeTo);
  // Node decoded a chunked body; it re-chunks it only when told the body is chunked.
  if (hadBody) out.push('Transfer-Encoding', 'chunked');
  else if (contentLength !== undefined) out.push('Content-Length', contentLength);
  if (ctx.clientIp) out.push('X-Forwarded-For', ctx.clientIp);
  out.push('X-Forwarded-Proto', ctx.clientProto);
  if (originalHost) out.push('X-Forwarded-Host', originalHost);
  if (ctx.requestId) out.push('Audit-ID', ctx.requestId);
  for (const name in ctx.credentials) out.push(name, ctx.credentials[name]!);
  if (ctx.passThrough) return { ok: true, headers: out };

  const identity = impersonationHeadersOf(ctx.user);
  if (!identity) {
    return {
      ok: false,
      reason: 'identity',
      message: 'the caller’s name or groups contain characters that cannot be sent to kube-apiserver',
    };
  }
  out.push(...identity);
  return { ok: true, headers: out };
}

/** kube-apiserver adds these to every impersonated user by itself (its impersonation filter), see below. */
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const ANONYMOUS = 'system:anonymous';

/**
 * `Impersonate-User`, `Impersonate-Uid` and one `Impersonate-Group` per group, without duplicates: no more than the
 * caller's identity needs, because kube-apiserver makes one authorization check of kapi's right to impersonate per
 * header value. `system:authenticated` is not sent: kube-apiserver adds it to every impersonated user other than
 * `system:anonymous` unless `system:unauthenticated` is among the groups (k8s.io/apiserver's WithImpersonation, as
 * in every supported version), so RBAC sees it all the same, one check cheaper. Non-ASCII text travels as UTF-8
 * bytes (as client-go sends it); control characters cannot travel at all (undefined).
 */
export function impersonationHeaders(user: UserInfo): string[] | undefined {
  const name = headerText(user.username);
  if (!name) return undefined;
  const out = ['Impersonate-User', name];
  if (user.uid) {
    const uid = headerText(user.uid);
    if (!uid) return undefined;
    out.push('Impersonate-Uid', uid);
  }
  const groups = new Set(user.groups.filter((group) => group !== ''));
  if (user.username !== ANONYMOUS && !groups.has(UNAUTHENTICATED)) groups.delete(AUTHENTICATED);
  for (const group of groups) {
    const text = headerText(group);
    if (!text) return undefined;
    out.push('Impersonate-Group', text);
  }
  return out;
}

/**
 * The Impersonate-* headers last made for a list of groups, with the name and uid they were made with: an
 * authenticated caller's groups are the same list on every request of its session while its User is unchanged
 * (authenticate.ts), so its headers are made once, not per request.
 */
const impersonationByGroups = new WeakMap<
  readonly string[],
  { username: string; uid: string | undefined; headers: readonly string[] | undefined }
>();

function impersonationHeadersOf(user: UserInfo): readonly string[] | undefined {
  const made = impersonationByGroups.get(user.groups);
  if (made && made.username === user.username && made.uid === user.uid) return made.headers;
  const headers = impersonationHeaders(user);
  impersonationByGroups.set(user.groups, { username: user.username, uid: user.uid, headers });
  return headers;
}

/**
 * The response headers to pass back: everything except hop-by-hop headers and those named in `Connection`. Node
 * frames the body again itself (chunked or by Content-Length).
 */
export function forwardResponseHeaders(raw: readonly string[]): string[] {
  const named = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** A `Sec-WebSocket-Protocol` value without the bearer-token entry; empty when nothing else was offered. */
export function withoutBearerSubprotocol(value: string): string {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && !entry.toLowerCase().startsWith(BEARER_SUBPROTOCOL_PREFIX))
    .join(', ');
}

const NO_TOKENS: ReadonlySet<string> = new Set();

/** Lower-cased header names listed in every `Connection` header. */
function connectionTokens(raw: readonly string[]): ReadonlySet<string> {
  let tokens: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    tokens ??= new Set<string>();
    for (const token of raw[i + 1]!.split(',')) {
      const trimmed = token.trim().toLowerCase();
      if (trimmed) tokens.add(trimmed);
    }
  }
  return tokens ?? NO_TOKENS;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;
// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;

/** Header text for an identity value: Node writes header strings as latin1, so UTF-8 goes in as its bytes. */
function headerText(value: string): string | undefined {
  if (value === '' || CONTROL.test(value)) return undefined;
  return NON_ASCII.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
}

function refuseImpersonation(): ForwardHeadersResult {
  return { ok: false, reason: 'impersonation', message: IMPERSONATION_REFUSED_MESSAGE };
}
