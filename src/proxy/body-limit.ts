import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { ApiError } from '../server/errors.js';

/**
 * Request bodies of ordinary requests are held to kube-apiserver's own limit (its --max-resource-write-bytes, 3 MiB
 * by default), so a body it would refuse is refused by kapi with the same 413 Status, whether the body declares its
 * length or comes chunked, and never half-sent to kube-apiserver. Long-running requests are not limited (a
 * `proxy` subresource streams what it streams).
 */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** kube-apiserver's answer to a body over its limit, word for word. */
export function requestEntityTooLarge(limit: number): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

/** A Content-Length above the limit: refused before anything is read or sent. */
export function declaresBodyOver(headers: IncomingHttpHeaders, limit: number): boolean {
  const length = headers['content-length'];
  return length !== undefined && Number(length) > limit;
}

/** Calls `exceeded` once, as soon as more than `limit` body bytes arrived, and stops counting. */
export function limitBody(req: IncomingMessage, limit: number, exceeded: () => void): void {
  let received = 0;
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received <= limit) return;
    req.off('data', count);
    exceeded();
  };
  req.on('data', count);
}
