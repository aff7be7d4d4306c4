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
  const response = await openLog(client, target, options, AbortSignal.any([signal, stop.signal]));
  // Aborting (we had enough, or the client went away) destroys the response and its socket with an AbortError
  // after nobody listens any more: it is the expected end, not a failure.
  ignoreErrors(response);
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
  ignoreErrors(response);
  const chunks: Buffer[] = [];
  for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
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

function ignoreErrors(response: IncomingMessage): void {
  response.on('error', ignore);
  response.socket?.on('error', ignore);
}

function ignore(): void {}
