import { goRfc3339Error } from './decode-errors.js';
import { parseBool, parseInteger } from './list-options.js';
import { hashString, seededRandom, pick } from './random.js';
import type { KubeObject } from './resource-types.js';
import { badRequest, invalid, type FieldError } from './status.js';

/**
 * Container logs generated on demand instead of stored: each container has a deterministic sequence of lines
 * (a few dozen from its start up to the sandbox start, then, while it runs, one more every `intervalMs`), so 50,000
 * pods cost no memory for logs. Line i always has the same time and text.
 */
export interface ContainerLog {
  readonly pod: string;
  readonly container: string;
  readonly seed: number;
  /** How many lines existed before the live ones (24..60). */
  readonly historic: number;
  readonly startMs: number;
  /** When the historic lines end and live lines begin. */
  readonly liveFromMs: number;
  readonly running: boolean;
  readonly intervalMs: number;
}

/** A fixed log volume per container before the sandbox started (see SandboxOptions.logHistory). */
export interface LogHistory {
  readonly lines: number;
  readonly spanMs: number;
}

export interface LogOptions {
  container: string | undefined;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines: number | undefined;
  sinceSeconds: number | undefined;
  /** Epoch milliseconds. */
  sinceTime: number | undefined;
  limitBytes: number | undefined;
}

function integer(query: URLSearchParams, name: string): number | undefined {
  return parseInteger(query.get(name));
}

/** PodLogOptions from the query, validated as kube does (422 on `PodLogOptions "<pod>"`). */
export function parseLogOptions(query: URLSearchParams, podName: string): LogOptions {
  const sinceTimeText = query.get('sinceTime');
  let sinceTime: number | undefined;
  if (sinceTimeText) {
    const refused = goRfc3339Error(sinceTimeText);
    if (refused) throw badRequest(refused);
    sinceTime = Date.parse(sinceTimeText.replace(',', '.'));
  }
  const options: LogOptions = {
    container: query.get('container') || undefined,
    follow: parseBool(query.get('follow')) ?? false,
    previous: parseBool(query.get('previous')) ?? false,
    timestamps: parseBool(query.get('timestamps')) ?? false,
    tailLines: integer(query, 'tailLines'),
    sinceSeconds: integer(query, 'sinceSeconds'),
    sinceTime,
    limitBytes: integer(query, 'limitBytes'),
  };
  const errors: FieldError[] = [];
  if (options.tailLines !== undefined && options.tailLines < 0) {
    errors.push({
      type: 'Invalid',
      field: 'tailLines',
      value: options.tailLines,
      detail: 'must be greater than or equal to 0',
    });
  }
  if (options.limitBytes !== undefined && options.limitBytes < 1) {
    errors.push({ type: 'Invalid', field: 'limitBytes', value: options.limitBytes, detail: 'must be greater than 0' });
  }
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined) {
    errors.push({
      type: 'Forbidden',
      field: '',
      detail: 'at most one of `sinceTime` or `sinceSeconds` may be specified',
    });
  } else if (options.sinceSeconds !== undefined && options.sinceSeconds < 1) {
    errors.push({
      type: 'Invalid',
      field: 'sinceSeconds',
      value: options.sinceSeconds,
      detail: 'must be greater than 0',
    });
  }
  if (errors.length) throw invalid({ group: '', kind: 'PodLogOptions' }, podName, errors);
  return options;
}

type Obj = Record<string, unknown>;
const record = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const names = (list: unknown): string[] => (Array.isArray(list) ? list.map((c) => String(record(c).name)) : []);

/**
 * The container a log, exec or attach request is for, checked as kube-apiserver does before it asks the kubelet: the
 * only one when none is named, else a 400 listing them; a name the pod does not have is a 400 too.
 */
export function chosenContainer(pod: KubeObject, named: string | undefined): string {
  const podName = pod.metadata.name as string;
  const spec = record(pod.spec);
  const containers = names(spec.containers);
  const init = names(spec.initContainers);
  if (!named) {
    if (containers.length !== 1) {
      const initPart = init.length ? ` or one of the init containers: [${init.join(' ')}]` : '';
      throw badRequest(
        `a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]${initPart}`,
      );
    }
    return containers[0] as string;
  }
  if (!containers.includes(named) && !init.includes(named)) {
    throw badRequest(`container ${named} is not valid for pod ${podName}`);
  }
  return named;
}

/** The log of one container of a pod, or the 400 kube gives (no container chosen, unknown, not started, previous). */
export function containerLog(
  pod: KubeObject,
  options: LogOptions,
  sandboxStartMs: number,
  intervalMs: number,
  history?: LogHistory,
): ContainerLog {
  const podName = pod.metadata.name as string;
  const status = record(pod.status);
  const container = chosenContainer(pod, options.container);
  if (options.previous) throw badRequest(`previous terminated container "${container}" in pod "${podName}" not found`);
  const statuses = [
    ...(Array.isArray(status.containerStatuses) ? status.containerStatuses : []),
    ...(Array.isArray(status.initContainerStatuses) ? status.initContainerStatuses : []),
  ];
  const state = record(record(statuses.map(record).find((s) => s.name === container)).state);
  const running = record(state.running);
  const terminated = record(state.terminated);
  if (!state.running && !state.terminated) {
    const reason = String(record(state.waiting).reason ?? 'ContainerCreating');
    throw badRequest(`container "${container}" in pod "${podName}" is waiting to start: ${reason}`);
  }
  const seed = hashString(`${pod.metadata.namespace}/${podName}/${container}`);
  const startMs = Date.parse(String(running.startedAt ?? terminated.startedAt ?? pod.metadata.creationTimestamp));
  const endMs = state.terminated
    ? Date.parse(String(terminated.finishedAt ?? startMs))
    : Math.max(startMs, sandboxStartMs);
  const liveFromMs = Math.max(endMs, startMs);
  return {
    pod: podName,
    container,
    seed,
    historic: history ? history.lines : 24 + (seed % 37),
    startMs: history ? Math.max(startMs, liveFromMs - history.spanMs) : startMs,
    liveFromMs,
    running: Boolean(state.running),
    intervalMs,
  };
}

/** Lines that exist at `nowMs`. */
export function lineCount(log: ContainerLog, nowMs: number): number {
  if (!log.running || nowMs < log.liveFromMs) return log.historic;
  return log.historic + Math.floor((nowMs - log.liveFromMs) / log.intervalMs);
}

/** When line `index` was written, in epoch milliseconds (non-decreasing in the index). */
export function lineTime(log: ContainerLog, index: number): number {
  if (index < log.historic) {
    const span = log.liveFromMs - log.startMs;
    return log.startMs + Math.floor(((index + 1) * span) / (log.historic + 1));
  }
  return log.liveFromMs + (index - log.historic + 1) * log.intervalMs;
}

/** The first index whose time is at or after `ms`. */
export function firstLineAtOrAfter(log: ContainerLog, ms: number, count: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (lineTime(log, mid) < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const PATHS = ['/api/v1/items', '/api/v1/orders', '/healthz', '/metrics', '/api/v1/users', '/login'];
const MESSAGES = [
  (r: () => number) => `GET ${pick(r, PATHS)} 200 ${1 + Math.floor(r() * 40)}ms`,
  (r: () => number) => `POST ${pick(r, PATHS)} 201 ${5 + Math.floor(r() * 80)}ms`,
  (r: () => number) => `processed batch size=${10 + Math.floor(r() * 500)} duration=${Math.floor(r() * 900)}ms`,
  () => 'health check passed',
  (r: () => number) => `cache hit ratio=${(60 + r() * 39).toFixed(1)}%`,
  (r: () => number) =>
    `connected to upstream addr=10.96.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}:${pick(r, [5432, 6379, 8080])}`,
];
const WARNINGS = [
  (r: () => number) => `slow request took ${800 + Math.floor(r() * 4000)}ms`,
  () => 'retrying connection to upstream (attempt 2/5)',
];
const ERRORS = [() => 'upstream connect error: connection refused', () => 'request failed: context deadline exceeded'];

function rfc3339Millis(ms: number): string {
  return new Date(ms).toISOString();
}

/** kubelet's RFC3339Nano timestamps: nanoseconds with trailing zeros trimmed. */
export function rfc3339Nano(ms: number, nanos: number): string {
  const base = new Date(ms - (ms % 1000)).toISOString().slice(0, 19);
  const fraction = String((ms % 1000) * 1_000_000 + nanos)
    .padStart(9, '0')
    .replace(/0+$/, '');
  return `${base}${fraction ? `.${fraction}` : ''}Z`;
}

export function lineText(log: ContainerLog, index: number): string {
  const random = seededRandom(log.seed ^ Math.imul(index + 1, 0x9e3779b1));
  const time = rfc3339Millis(lineTime(log, index));
  if (index === 0) return `${time} INFO  starting ${log.container} pid=1`;
  const roll = random();
  if (roll < 0.04) return `${time} ERROR ${pick(random, ERRORS)()}`;
  if (roll < 0.12) return `${time} WARN  ${pick(random, WARNINGS)(random)}`;
  if (roll < 0.2) return `${time} DEBUG ${pick(random, MESSAGES)(random)}`;
  return `${time} INFO  ${pick(random, MESSAGES)(random)}`;
}

/** One output line, with kube's timestamp prefix when asked for. */
export function renderLine(log: ContainerLog, index: number, timestamps: boolean): string {
  const text = lineText(log, index);
  if (!timestamps) return `${text}\n`;
  const nanos = (Math.imul(log.seed ^ index, 2_654_435_761) >>> 0) % 1_000_000;
  return `${rfc3339Nano(lineTime(log, index), nanos)} ${text}\n`;
}

/** The index range [from, to) a request returns before following. */
export function selectLines(log: ContainerLog, options: LogOptions, nowMs: number): { from: number; to: number } {
  const to = lineCount(log, nowMs);
  let from = 0;
  const since =
    options.sinceTime ?? (options.sinceSeconds !== undefined ? nowMs - options.sinceSeconds * 1000 : undefined);
  if (since !== undefined) from = firstLineAtOrAfter(log, since, to);
  if (options.tailLines !== undefined) from = Math.max(from, to - options.tailLines);
  return { from, to };
}
