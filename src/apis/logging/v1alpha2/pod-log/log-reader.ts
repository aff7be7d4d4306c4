import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { KubeClient } from '../../../../kube/client.js';
import { parseLogLine, sinceTime, type TimedLine } from './log-line.js';
import type { ContainerTarget } from './containers.js';

export interface ReadOptions {
  /** Epoch ms; sent as `sinceTime` at whole seconds (earlier lines of that second still arrive: callers skip them). */
  sinceMs?: number;
  tailLines?: number;
  /** Bytes the kubelet sends at most: bounds what one read can cost. */
  limitBytes: number;
  /** Idle time before a silent read is abandoned. */
  timeoutMs: number;
}

/** How a read ended: the log's end, the caller had enough, or `limitBytes` cut it (a partial last line is dropped). */
export type ReadEnd = 'eof' | 'stopped' | 'limit';

/**
 * Streams one container's log through the pod-log API, line by line, as it arrives; nothing is buffered beyond the
 * line being split. `onLine` returns false to stop: the request is aborted at once, so the kubelet stops sending.
 * Lines without a timestamp (never sent by a kubelet) are skipped. Errors (pod gone, container waiting) are thrown.
 */
export async function readContainerLog(
  client: KubeClient,
  target: ContainerTarget,
  options: ReadOptions,
  onLine: (line: TimedLine) => boolean,
  signal: AbortSignal,
): Promise<ReadEnd> {
  const stop = new AbortController();
  const reading = AbortSignal.any([signal, stop.signal]);
  const response = await openLog(client, target, options, reading);
  const release = ignoreAbortErrors(response, reading);
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  let partial = '';
  const take = (text: string): boolean => {
    const line = parseLogLine(text);
    return line === undefined || onLine(line);
  };
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      const text = partial + decoder.write(chunk);
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        const line = text.slice(start, end);
        start = end + 1;
        if (!take(line)) {
          stop.abort();
          return 'stopped';
        }
      }
      partial = text.slice(start);
    }
  } catch (error) {
    if (stop.signal.aborted && !signal.aborted) return 'stopped';
    throw error;
  } finally {
    release();
  }
  const rest = partial + decoder.end();
  if (bytes >= options.limitBytes) return 'limit';
  if (rest && !take(rest)) return 'stopped';
  return 'eof';
}

/**
 * When the container's first line (at or after `sinceMs`) was written, in epoch ms, reading only its first bytes;
 * undefined when there is no such line.
 */
export async function firstLineMs(
  client: KubeClient,
  target: ContainerTarget,
  options: Omit<ReadOptions, 'limitBytes' | 'tailLines'>,
  signal: AbortSignal,
): Promise<number | undefined> {
  const response = await openLog(client, target, { ...options, limitBytes: PROBE_BYTES }, signal);
  const release = ignoreAbortErrors(response, signal);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
  } finally {
    release();
  }
  // The timestamp is all that is needed: the line itself may be longer than the bytes read.
  const first = Buffer.concat(chunks).toString('utf8').split('\n')[0] ?? '';
  const line = parseLogLine(`${first} `);
  return line === undefined ? undefined : line.sec * 1000 + line.nano / 1e6;
}

/** Enough for kubelet's longest timestamp (35 characters) and the space after it. */
const PROBE_BYTES = 64;

/** `GET /api/v1/namespaces/{ns}/pods/{pod}/log?container=…&timestamps=true&sinceTime=…&limitBytes=…`, streamed. */
function openLog(
  client: KubeClient,
  target: ContainerTarget,
  options: ReadOptions,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return client.stream({
    path: `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}/log`,
    query: {
      container: target.container,
      timestamps: true,
      sinceTime: options.sinceMs === undefined ? undefined : sinceTime(options.sinceMs),
      tailLines: options.tailLines,
      limitBytes: options.limitBytes,
    },
    signal,
    timeoutMs: options.timeoutMs,
  });
}

/**
 * Aborting a read (we had enough, or the client went away) destroys the response and its socket with an AbortError
 * after nobody listens any more: the expected end, not a failure. The socket's listener is added only then, since
 * kept-alive sockets serve many reads. Returns the clean-up for a read that ended by itself.
 */
function ignoreAbortErrors(response: IncomingMessage, signal: AbortSignal): () => void {
  response.on('error', ignore);
  const onAbort = () => response.socket?.on('error', ignore);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

function ignore(): void {}
