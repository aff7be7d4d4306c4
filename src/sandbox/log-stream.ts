import type { Exchange } from './exchange.js';
import { lineCount, lineTime, renderLine, selectLines, type ContainerLog, type LogOptions } from './pod-logs.js';

/**
 * Serves a container log over HTTP: the selected lines as text/plain, and with `follow` on a running container, each
 * new line as it appears until the client goes away (or `limitBytes` is reached, or the sandbox stops).
 */
export function serveLog(
  x: Exchange,
  log: ContainerLog,
  options: LogOptions,
  now: () => number,
  /** Open follow streams, so the sandbox can end them on stop. */
  follows: Set<() => void>,
): void {
  const { from, to } = selectLines(log, options, now());
  let budget = options.limitBytes ?? Infinity;
  const take = (first: number, last: number): string => {
    let out = '';
    for (let i = first; i < last && budget > 0; i++) {
      let line = renderLine(log, i, options.timestamps);
      if (Buffer.byteLength(line) > budget) line = Buffer.from(line).subarray(0, budget).toString('utf8');
      budget -= Buffer.byteLength(line);
      out += line;
    }
    return out;
  };
  if (!options.follow || !log.running) {
    streamLines(x, from, to, take);
    return;
  }

  const initial = take(from, to);
  if (budget <= 0) {
    x.sendText(200, initial);
    return;
  }
  x.startStream(200, 'text/plain');
  if (initial) x.res.write(initial);
  let next = to;
  let timer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    clearTimeout(timer);
    follows.delete(stop);
    if (!x.res.writableEnded) x.res.end();
  };
  follows.add(stop);
  x.res.on('close', stop);
  const schedule = (): void => {
    timer = setTimeout(
      () => {
        const available = lineCount(log, now());
        if (available > next) {
          x.res.write(take(next, available));
          next = available;
        }
        if (budget <= 0) stop();
        else schedule();
      },
      Math.max(0, lineTime(log, next) - now()),
    );
  };
  schedule();
}

/** Lines rendered a chunk at a time as the client takes them, as a kubelet streams a log file: a client that stops
 * reading (or goes away) early costs only what it read. */
function streamLines(x: Exchange, from: number, to: number, take: (first: number, last: number) => string): void {
  const CHUNK_LINES = 256;
  let next = from;
  let closed = false;
  x.res.on('close', () => (closed = true));
  x.startStream(200, 'text/plain');
  const pump = (): void => {
    while (!closed && next < to) {
      const last = Math.min(to, next + CHUNK_LINES);
      const text = take(next, last);
      next = text ? last : to; // an empty chunk: limitBytes is spent
      if (text && !x.res.write(text)) {
        x.res.once('drain', pump);
        return;
      }
    }
    if (!closed) x.res.end();
  };
  pump();
}
