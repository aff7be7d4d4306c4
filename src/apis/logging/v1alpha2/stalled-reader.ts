import type { ServerResponse } from 'node:http';

/**
 * Calls `onStall` once when an answer has bytes waiting to go out and none has gone out for `timeoutMs`: the client
 * stopped reading (or reads slower than anything useful). Time spent producing the answer (reading logs) never
 * counts: only time with output waiting. Returns the function that stops watching.
 */
export function watchForStalledReader(res: ServerResponse, timeoutMs: number, onStall: () => void): () => void {
  const socket = res.socket;
  if (!socket || timeoutMs <= 0) return () => undefined;
  // Bytes the socket has handed to the kernel: bytesWritten counts what is still queued in Node too.
  const sent = () => socket.bytesWritten - socket.writableLength;
  let mark = sent();
  let waitingSince: number | undefined;
  const timer = setInterval(
    () => {
      const now = sent();
      if (res.writableLength === 0 || now !== mark) {
        mark = now;
        waitingSince = undefined;
        return;
      }
      waitingSince ??= Date.now();
      if (Date.now() - waitingSince >= timeoutMs) {
        clearInterval(timer);
        onStall();
      }
    },
    Math.max(10, Math.min(1_000, timeoutMs / 4)),
  );
  timer.unref();
  return () => clearInterval(timer);
}
