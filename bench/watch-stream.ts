import type http from 'node:http';
import { describeAnswer } from './http.js';
import { request } from './tls.js';

export interface WatchEvent {
  type: string;
  object: { metadata?: { name?: string; resourceVersion?: string }; message?: string };
}

export interface WatchHandlers {
  /** Every event line, with the hrtime (ns) at which the chunk completing it arrived. */
  onEvent(event: WatchEvent, arrivedNs: number): void;
  /** The stream ended or broke while still wanted (not called after `close()`). */
  onEnd(reason: string): void;
}

export interface WatchStream {
  close(): void;
}

const now = (): number => Number(process.hrtime.bigint());

/**
 * Opens a watch. The arrival time is taken when a chunk comes in, before any line of it is parsed, so the parse
 * cost of earlier lines does not skew later ones. Resolves once the response head says 200; rejects on any other
 * answer or when no head comes within `timeoutMs`.
 */
export function openWatch(
  url: string,
  headers: Record<string, string>,
  agent: http.Agent,
  handlers: WatchHandlers,
  timeoutMs: number,
): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const req = request(url, { headers, agent });
    const timer = setTimeout(() => req.destroy(new Error(`watch not opened within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on('response', (res) => {
      clearTimeout(timer);
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          reject(new Error(describeAnswer({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }))),
        );
        return;
      }
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const arrived = now();
        pending += chunk;
        let newline = pending.indexOf('\n');
        while (newline >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.trim()) handlers.onEvent(JSON.parse(line) as WatchEvent, arrived);
          newline = pending.indexOf('\n');
        }
      });
      res.on('error', (error) => {
        if (!closed) handlers.onEnd(`stream broke: ${error.message}`);
      });
      res.on('end', () => {
        if (!closed) handlers.onEnd('stream ended');
      });
      resolve({
        close: () => {
          closed = true;
          req.destroy();
        },
      });
    });
    req.end();
  });
}
