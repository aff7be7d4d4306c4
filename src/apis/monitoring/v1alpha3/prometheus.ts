import { Agent, request } from 'undici';
import type { MonitoringSettings as MonitoringBackendSettings } from '../../../config/cluster-configuration.js';
import type { Timing } from './request.js';

/**
 * The Prometheus-compatible query API kapi reads metrics from (SPEC §19): named in the ClusterConfiguration
 * (`spec.monitoring`: endpoint, a bearer token Secret, a CA), asked with kapi's own credentials only. Bounded:
 * at most `maxInFlight` queries at once per replica (more wait their turn), each abandoned after `timeoutMs` (and
 * told to Prometheus as its `timeout`), each answer at most `maxSeries` series and `maxAnswerBytes`; identical queries
 * at the same aligned time within `cacheMs` share one answer (the cache holds at most `cacheBytes` of them), so fifty
 * people on one overview cost one upstream query.
 */
export type { MonitoringSettings as MonitoringBackendSettings } from '../../../config/cluster-configuration.js';

export interface PrometheusData {
  resultType: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  result: any[];
}

export type QueryAnswer = { data: PrometheusData } | { error: string };

export interface PrometheusOptions {
  timeoutMs?: number;
  maxInFlight?: number;
  cacheMs?: number;
  maxSeries?: number;
  /** Entries the cache holds at most (the oldest go first). */
  cacheEntries?: number;
  now?: () => number;
  /** Told of each query sent upstream (metrics, tests). */
  onUpstream?: (outcome: 'ok' | 'error') => void;
  /** Told of each query answered from the cache. */
  onCacheHit?: () => void;
  /** Told why a query could not be sent or read (for kapi's log: it may name the endpoint). */
  onFailure?: (detail: string) => void;
  /** Bytes of answers the cache holds at most (the oldest go first). */
  cacheBytes?: number;
  /** Bytes of one upstream answer read at most (past it, that metric's `error`). */
  maxAnswerBytes?: number;
}

export const DEFAULTS = {
  timeoutMs: 10_000,
  maxInFlight: 32,
  cacheMs: 10_000,
  maxSeries: 2_000,
  cacheEntries: 2_000,
  cacheBytes: 4 << 20,
  maxAnswerBytes: 4 << 20,
};

/**
 * The times a query is asked upstream at, on the cache window's grid, and how far they moved back (`shift`, whole
 * seconds, less than the window and never more than a range's step): requests a few seconds apart (fifty people on one
 * overview, each with its own "now") share one upstream query, and their answers' points are moved forward again to
 * the times each asked (start + k·step), as KubeSphere's console looks its points up by those times.
 */
export function alignedTiming(timing: Timing, windowSeconds: number): { upstream: Timing; shift: number } {
  if ('instant' in timing) {
    const shift = windowSeconds > 1 ? timing.instant % windowSeconds : 0;
    return { upstream: { instant: timing.instant - shift }, shift };
  }
  const window = Math.min(windowSeconds, timing.step);
  const shift = window > 1 ? timing.end % window : 0;
  return { upstream: { start: timing.start - shift, end: timing.end - shift, step: timing.step }, shift };
}

/** An answer with every point moved `shift` seconds later (a new answer: the cached one is shared). */
export function shifted(answer: QueryAnswer, shift: number): QueryAnswer {
  if (shift === 0 || !('data' in answer)) return answer;
  const move = (point: [number, string]): [number, string] => [point[0] + shift, point[1]];
  const result = answer.data.result.map((series: { value?: [number, string]; values?: [number, string][] }) => ({
    ...series,
    ...(series.value && { value: move(series.value) }),
    ...(series.values && { values: series.values.map(move) }),
  }));
  return { data: { resultType: answer.data.resultType, result } };
}

export class PrometheusBackend {
  private readonly options: Required<Omit<PrometheusOptions, 'onUpstream' | 'onCacheHit' | 'onFailure'>> &
    Pick<PrometheusOptions, 'onUpstream' | 'onCacheHit' | 'onFailure'>;
  private agent: { key: string; agent: Agent } | undefined;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * The cache's keys, oldest first, from `head` on (a queue: a Map iterated from its start after many deletions walks
   * their holes every time).
   */
  private order: { key: string; entry: CacheEntry }[] = [];
  private head = 0;
  private cachedBytes = 0;

  constructor(options: PrometheusOptions = {}) {
    this.options = { ...DEFAULTS, now: () => Date.now(), ...options };
  }

  /**
   * One query, through the cache (keyed by the endpoint, the final PromQL and the aligned times); never rejects: an
   * upstream failure is the answer's `error`.
   */
  async query(settings: MonitoringBackendSettings, promql: string, timing: Timing): Promise<QueryAnswer> {
    const { upstream, shift } = alignedTiming(timing, Math.max(1, Math.floor(this.options.cacheMs / 1000)));
    const key = `${settings.endpoint}\u0000${promql}\u0000${JSON.stringify(upstream)}`;
    const now = this.options.now();
    this.expire(now);
    let entry = this.cache.get(key);
    if (entry) this.options.onCacheHit?.();
    else {
      const fresh: CacheEntry = { expires: now + this.options.cacheMs, bytes: 0, answer: undefined as never };
      fresh.answer = this.limited(() => this.send(settings, promql, upstream)).then(({ answer, bytes }) => {
        // a failure is not kept: the next request asks again
        if ('error' in answer || this.cache.get(key) !== fresh) this.forget(key, fresh);
        else {
          fresh.bytes = bytes;
          this.cachedBytes += bytes;
          this.trim();
        }
        return answer;
      });
      entry = fresh;
      this.cache.set(key, fresh);
      this.order.push({ key, entry: fresh });
      this.trim();
    }
    return shifted(await entry.answer, shift);
  }

  /** Queries in flight upstream (tests, metrics). */
  get running(): number {
    return this.inFlight;
  }

  async close(): Promise<void> {
    await this.agent?.agent.close();
    this.agent = undefined;
    this.cache.clear();
    this.order = [];
    this.head = 0;
    this.cachedBytes = 0;
  }

  private expire(now: number): void {
    for (let next = this.order[this.head]; next && next.entry.expires <= now; next = this.order[this.head])
      this.dropOldest();
  }

  private trim(): void {
    while (
      this.head < this.order.length &&
      (this.cache.size > this.options.cacheEntries || this.cachedBytes > this.options.cacheBytes)
    )
      this.dropOldest();
  }

  private dropOldest(): void {
    const { key, entry } = this.order[this.head++] as { key: string; entry: CacheEntry };
    this.forget(key, entry);
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  private forget(key: string, entry: CacheEntry): void {
    if (this.cache.get(key) !== entry) return;
    this.cache.delete(key);
    this.cachedBytes -= entry.bytes;
  }

  /** At most `maxInFlight` at once; a finished query hands its place straight to the next waiting one. */
  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.options.maxInFlight) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }

  private dispatcher(settings: MonitoringBackendSettings): Agent {
    const key = settings.ca ?? '';
    if (!this.agent || this.agent.key !== key) {
      void this.agent?.agent.close();
      this.agent = { key, agent: new Agent({ connections: 16, ...(settings.ca && { connect: { ca: settings.ca } }) }) };
    }
    return this.agent.agent;
  }

  /**
   * One read of another Prometheus API (`/api/v1/series`, `/api/v1/targets/metadata`), not cached, with the same
   * bounds as a query (in flight, timeout, answer size); never rejects.
   */
  async read(
    settings: MonitoringBackendSettings,
    path: string,
    params: URLSearchParams,
  ): Promise<{ data: unknown } | { error: string }> {
    // a GET: Prometheus serves its targets' metadata to no other method
    const { answer } = await this.limited(() =>
      this.exchange(settings, 'GET', path, params, (status, text) => apiDataOf(status, text, settings.bearerToken)),
    );
    return answer;
  }

  private send(
    settings: MonitoringBackendSettings,
    promql: string,
    timing: Timing,
  ): Promise<{ answer: QueryAnswer; bytes: number }> {
    const params = new URLSearchParams({ query: promql, timeout: `${Math.ceil(this.options.timeoutMs / 1000)}s` });
    if ('instant' in timing) params.set('time', String(timing.instant));
    else {
      params.set('start', String(timing.start));
      params.set('end', String(timing.end));
      params.set('step', String(timing.step));
    }
    const path = 'instant' in timing ? '/api/v1/query' : '/api/v1/query_range';
    return this.exchange(settings, 'POST', path, params, (status, text) =>
      answerOf(status, text, this.options.maxSeries, settings.bearerToken),
    );
  }

  /** One request upstream (a form POST, or a GET), its answer read by `read`, or the failure as an `error`. */
  private async exchange<T extends object>(
    settings: MonitoringBackendSettings,
    method: 'GET' | 'POST',
    path: string,
    params: URLSearchParams,
    read: (status: number, text: string) => T | { error: string },
  ): Promise<{ answer: T | { error: string }; bytes: number }> {
    const { timeoutMs, maxAnswerBytes } = this.options;
    const base = settings.endpoint.replace(/\/+$/, '');
    let answer: T | { error: string };
    let bytes = 0;
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      const authorization = settings.bearerToken ? { authorization: `Bearer ${settings.bearerToken}` } : {};
      const response = await request(`${base}${path}${method === 'GET' ? `?${params}` : ''}`, {
        method,
        headers:
          method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded', ...authorization } : authorization,
        ...(method === 'POST' && { body: params.toString() }),
        dispatcher: this.dispatcher(settings),
        signal: deadline,
      });
      const text = await boundedText(response.body, maxAnswerBytes);
      if (text === undefined) {
        answer = {
          error: `the monitoring backend's answer is larger than ${size(maxAnswerBytes)}: name fewer resources`,
        };
      } else {
        bytes = text.length;
        answer = read(response.statusCode, text);
      }
    } catch (error) {
      const timedOut = deadline.aborted;
      // the cause goes to kapi's log; the caller is told what failed, not where the backend is
      this.options.onFailure?.(error instanceof Error ? error.message : String(error));
      answer = {
        error: timedOut
          ? `the monitoring backend did not answer within ${timeoutMs / 1000} s`
          : 'the monitoring backend could not be reached',
      };
    }
    this.options.onUpstream?.('error' in answer ? 'error' : 'ok');
    return { answer, bytes };
  }
}

const size = (bytes: number) => (bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`);

interface CacheEntry {
  expires: number;
  /** The answer's size as read (0 until it is in). */
  bytes: number;
  answer: Promise<QueryAnswer>;
}

/** A body's text, or undefined (the rest dropped) once it passes `maxBytes`. */
async function boundedText(body: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number) {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A Prometheus API answer read (pure): its data, or the error it names, with kapi's token taken out should a proxy in
 * front of it have echoed it.
 */
export function answerOf(status: number, text: string, maxSeries: number, secret?: string): QueryAnswer {
  const read = apiDataOf(status, text, secret);
  if ('error' in read) return read;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const data = read.data as any;
  if (typeof data?.resultType !== 'string')
    return { error: `the monitoring backend answered ${status} without a query result` };
  // a scalar's or a string's result is one sample, not series: KubeSphere answers none of them
  const result =
    Array.isArray(data.result) && (data.resultType === 'vector' || data.resultType === 'matrix') ? data.result : [];
  if (result.length > maxSeries)
    return { error: `too many series (${result.length}; at most ${maxSeries}): name fewer resources` };
  return { data: { resultType: data.resultType, result } };
}

/** A Prometheus API answer's `data`, or the error it names (kapi's token taken out should it be echoed). Pure. */
export function apiDataOf(status: number, text: string, secret?: string): { data: unknown } | { error: string } {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return { error: `the monitoring backend answered ${status} without a Prometheus API body` };
  }
  if (body?.status !== 'success' || body?.data === undefined) {
    const why = typeof body?.error === 'string' ? body.error : `status ${status}`;
    const error = `${typeof body?.errorType === 'string' ? `${body.errorType}: ` : ''}${why}`;
    return { error: (secret ? error.replaceAll(secret, '[redacted]') : error).slice(0, 500) };
  }
  return { data: body.data };
}
