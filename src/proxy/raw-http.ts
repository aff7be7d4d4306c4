import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { KubeStatus } from '../server/errors.js';

/**
 * HTTP/1.1 written by hand on a socket that Node's server handed over for an upgrade: there is no ServerResponse
 * there, so the status line, headers and connection close are ours to get right.
 */

/** How long a closed-for-writing socket is drained before it is cut, so the client reads the answer first. */
const LINGER_MS = 5_000;

/** Status line and headers (flat `[name, value, …]`), ending with the blank line. */
export function responseHead(
  statusCode: number,
  statusMessage: string | undefined,
  headers: readonly string[],
): string {
  let head = `HTTP/1.1 ${statusCode} ${statusMessage || STATUS_CODES[statusCode] || ''}\r\n`;
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/** A `Status` answer, then the connection is closed: nothing else the client sent on it is read. */
export function writeStatusAndClose(socket: Duplex, status: KubeStatus, headers: readonly string[] = []): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(status);
  const head = responseHead(status.code, undefined, [
    'Content-Type',
    'application/json',
    'Content-Length',
    String(Buffer.byteLength(body)),
    'Cache-Control',
    'no-store',
    ...headers,
    'Connection',
    'close',
  ]);
  socket.write(head, 'latin1');
  socket.write(body);
  closeGracefully(socket);
}

/**
 * Ends the socket after what was written, then discards whatever the client still sends (a pipelined request is
 * never parsed) until it closes or `LINGER_MS` passes. Cutting at once could reset the connection before the client
 * read the answer.
 */
export function closeGracefully(socket: Duplex): void {
  if (socket.destroyed) return;
  socket.end();
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
