import type { IncomingHttpHeaders } from 'node:http';

/**
 * Where a request carries its access token, as kube-apiserver reads it: `Authorization: Bearer <token>`, or, on a
 * WebSocket upgrade (browsers cannot set headers there), a `Sec-WebSocket-Protocol` entry
 * `base64url.bearer.authorization.k8s.io.<base64url(token)>` beside the real subprotocol. Pure.
 */
export const BEARER_SUBPROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

export type PresentedToken = { token: string; from: 'header' | 'subprotocol' } | { problem: string } | undefined;

const BEARER = /^Bearer +([^\s]+) *$/i;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function presentedToken(headers: IncomingHttpHeaders): PresentedToken {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization.trim());
    return match
      ? { token: match[1]!, from: 'header' }
      : { problem: 'the Authorization header is not "Bearer <token>"' };
  }
  if (!isWebSocketUpgrade(headers)) return undefined;
  const entries = subprotocols(headers['sec-websocket-protocol']);
  const carrying = entries.filter((entry) => entry.startsWith(BEARER_SUBPROTOCOL_PREFIX));
  if (carrying.length === 0) return undefined;
  if (carrying.length > 1) return { problem: 'more than one bearer token subprotocol' };
  if (carrying.length === entries.length) {
    // kube-apiserver's rule: the token entry is removed before forwarding, so another one must remain to agree on
    return { problem: 'a bearer token subprotocol needs another subprotocol beside it' };
  }
  const encoded = carrying[0]!.slice(BEARER_SUBPROTOCOL_PREFIX.length);
  if (!BASE64URL.test(encoded)) return { problem: 'the bearer token subprotocol is not base64url' };
  const token = Buffer.from(encoded, 'base64url').toString('utf8');
  return token ? { token, from: 'subprotocol' } : { problem: 'the bearer token subprotocol is empty' };
}

/**
 * The `Sec-WebSocket-Protocol` value without the token entry, for forwarding (`undefined` when nothing remains).
 * The forwarder must apply it: the client's token never travels further than kapi.
 */
export function withoutBearerSubprotocol(header: string | string[] | undefined): string | undefined {
  const kept = subprotocols(header).filter((entry) => !entry.startsWith(BEARER_SUBPROTOCOL_PREFIX));
  return kept.length > 0 ? kept.join(', ') : undefined;
}

/** A WebSocket handshake: `Upgrade: websocket` with `Connection: upgrade`. */
export function isWebSocketUpgrade(headers: IncomingHttpHeaders): boolean {
  const upgrade = headers.upgrade
    ?.toLowerCase()
    .split(',')
    .map((v) => v.trim());
  const connection = headers.connection
    ?.toLowerCase()
    .split(',')
    .map((v) => v.trim());
  return !!upgrade?.includes('websocket') && !!connection?.includes('upgrade');
}

/** The header may repeat; its values are comma-separated tokens (RFC 6455 §11.3.4). */
function subprotocols(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values
    .flatMap((value) => value.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
