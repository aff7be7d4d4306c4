import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import { closeGracefully } from './raw-http.js';

/**
 * Ending a relayed stream because its access ended (logout, expiry, a user disabled) so that the client sees a
 * proper end — the last chunk of a chunked watch, a WebSocket close frame — never a reset connection or half an
 * event. A frame or event half-relayed when the cut comes is finished first, for at most `FINISH_MS`.
 */
const FINISH_MS = 1_000;
const NEWLINE = 0x0a;
/** RFC 6455 §7.4.1: the endpoint ends the connection because a message violates its policy. */
const POLICY_VIOLATION = 1008;
const WEBSOCKET_CLOSE_REASON = 'the login session ended';

/** Cuts a relayed long-running response; call at once to follow its framing. */
export type StreamCut = () => void;

/**
 * For a relayed watch or log follow: the returned function ends the response cleanly. Newline-delimited JSON (watch
 * events) ends between two events; other bodies (log lines, protobuf frames) end where they are.
 */
export function responseCut(upstream: IncomingMessage, res: ServerResponse): StreamCut {
  const eventFramed = /json/i.test(upstream.headers['content-type'] ?? '');
  let between = true;
  const follow = (chunk: Buffer) => {
    if (chunk.length > 0) between = chunk[chunk.length - 1] === NEWLINE;
  };
  if (eventFramed) upstream.on('data', follow);
  return () => {
    upstream.off('data', follow);
    upstream.unpipe(res);
    const finish = () => {
      upstream.destroy();
      res.end();
    };
    if (between) return finish();
    finishWithin(
      upstream,
      (chunk) => {
        const end = chunk.indexOf(NEWLINE);
        res.write(end < 0 ? chunk : chunk.subarray(0, end + 1));
        return end >= 0;
      },
      finish,
      () => {
        upstream.destroy();
        res.destroy();
      },
    );
  };
}

/**
 * For an exec / attach / port-forward tunnel after the 101: the returned function closes it. A WebSocket gets a
 * close frame (1008, "the login session ended") between two of kube-apiserver's frames; SPDY, which has no such
 * frame kapi could add, gets the end of the connection. `relayed`: what kube-apiserver sent with its 101 (already
 * written to the client). Call once the sockets are spliced.
 */
export function tunnelCut(client: Duplex, backend: Socket, websocket: boolean, relayed: Buffer): StreamCut {
  const frames = websocket ? new FrameCursor() : undefined;
  frames?.advance(relayed, false);
  const follow = (chunk: Buffer) => frames?.advance(chunk, false);
  if (frames) backend.on('data', follow);
  return () => {
    backend.off('data', follow);
    backend.unpipe(client);
    client.unpipe(backend);
    const finish = () => {
      if (frames) client.write(closeFrame(POLICY_VIOLATION, WEBSOCKET_CLOSE_REASON));
      closeGracefully(client);
      backend.destroy();
    };
    if (!frames || frames.between) return finish();
    finishWithin(
      backend,
      (chunk) => {
        const used = frames.advance(chunk, true);
        client.write(chunk.subarray(0, used));
        return frames.between;
      },
      finish,
      () => {
        client.destroy();
        backend.destroy();
      },
    );
  };
}

/** Relays `source` through `relay` until it says the frame in flight is complete, then `finish`; else `fail`. */
function finishWithin(source: Readable, relay: (chunk: Buffer) => boolean, finish: () => void, fail: () => void): void {
  let done = false;
  const settle = (outcome: () => void) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    source.off('data', onData);
    outcome();
  };
  const onData = (chunk: Buffer) => {
    if (relay(chunk)) settle(finish);
  };
  const timer = setTimeout(() => settle(fail), FINISH_MS);
  timer.unref();
  source.on('data', onData);
  source.once('close', () => settle(fail));
  source.resume();
}

/** A server's close frame (unmasked, RFC 6455 §5.5.1): the status code, then the reason in UTF-8 (≤ 123 bytes). */
export function closeFrame(code: number, reason: string): Buffer {
  const text = Buffer.from(reason, 'utf8').subarray(0, 123);
  const frame = Buffer.alloc(4 + text.length);
  frame[0] = 0x88; // FIN + opcode 8 (close)
  frame[1] = 2 + text.length;
  frame.writeUInt16BE(code, 2);
  text.copy(frame, 4);
  return frame;
}

/**
 * Follows the frame boundaries of a WebSocket byte stream (RFC 6455 §5.2) without buffering it: only the few header
 * bytes of each frame are read, payloads are skipped by their length.
 */
export class FrameCursor {
  private readonly header = Buffer.alloc(14);
  private headerLength = 0;
  /** Header bytes still to read; 0 while in a payload or between frames. */
  private headerNeeded = 2;
  private payloadLeft = 0;

  /** Whether the bytes seen so far end exactly at the end of a frame. */
  get between(): boolean {
    return this.headerLength === 0 && this.payloadLeft === 0;
  }

  /**
   * Consumes `chunk` (all of it, or with `stopAtBoundary` up to the end of the frame in flight); returns the bytes
   * consumed.
   */
  advance(chunk: Buffer, stopAtBoundary: boolean): number {
    let at = 0;
    if (stopAtBoundary && this.between) return 0;
    while (at < chunk.length) {
      if (this.payloadLeft > 0) {
        const skip = Math.min(this.payloadLeft, chunk.length - at);
        this.payloadLeft -= skip;
        at += skip;
      } else {
        this.header[this.headerLength++] = chunk[at++]!;
        if (this.headerLength === 2) this.headerNeeded = headerSize(this.header);
        if (this.headerLength < this.headerNeeded) continue;
        this.payloadLeft = payloadSize(this.header);
        this.headerLength = 0;
        this.headerNeeded = 2;
      }
      if (stopAtBoundary && this.between) break;
    }
    return at;
  }
}

function headerSize(header: Buffer): number {
  const length = header[1]! & 0x7f;
  const masked = (header[1]! & 0x80) !== 0;
  return 2 + (length === 126 ? 2 : length === 127 ? 8 : 0) + (masked ? 4 : 0);
}

function payloadSize(header: Buffer): number {
  const length = header[1]! & 0x7f;
  if (length === 126) return header.readUInt16BE(2);
  if (length === 127) return Number(header.readBigUInt64BE(2));
  return length;
}
