import type { KubeClient } from '../../../../kube/client.js';
import { BadRequestError } from '../../../../server/errors.js';
import { bucketStart, fillBuckets, type Interval } from '../interval.js';
import type {
  Answer,
  Histogram,
  LogBackend,
  LogRecord,
  LogSearch,
  QueryResult,
  SkippedContainers,
  Statistics,
} from '../log-backend.js';
import { MAX_RESULT_WINDOW, type SortOrder } from '../query.js';
import { keywordMatcher } from '../text-match.js';
import { selectContainers, type ContainerTarget, type PodSource } from './containers.js';
import { Limiter } from './limiter.js';
import { formatTime, lineMs } from './log-line.js';
import { firstLineMs, readContainerLog } from './log-reader.js';
import {
  EXPORT_WINDOWS,
  OUT_OF_ORDER_MS,
  QUERY_WINDOWS,
  scanInOrder,
  type ScanIo,
  type ScanLine,
  type WindowTuning,
} from './ordered-scan.js';
import { SkipTracker } from './skipped.js';
import { newestLines, type TailIo } from './tail-query.js';

/** A query ending this close to now reads the containers' tails rather than walking time windows. */
const RECENT_MS = 60_000;

export interface PodLogBackendOptions {
  client: KubeClient;
  /** The watched pods by namespace. */
  pods: PodSource;
  /** Log reads in flight at once, across all requests. */
  concurrency?: number;
  /** Containers one request may read; beyond it the caller is asked to narrow the query. */
  maxContainers?: number;
  /** `limitBytes` of every read. */
  limitBytes?: number;
  readTimeoutMs?: number;
  /** The time windows of queries and of exports: what one of each may hold in memory at most. */
  windows?: { query: WindowTuning; export: WindowTuning };
}

/** OpenSearch's default `search.max_buckets` is larger; a chart of more points than this is not readable anyway. */
export const MAX_BUCKETS = 10_000;

/**
 * The built-in backend: logs read through the Kubernetes pod-log API from the pods in the watched cache, nothing
 * else to install. It reads what the kubelets still hold (the current containers of running pods), with bounded
 * concurrency and memory; a container whose log cannot be read is skipped and counted, never a failed request.
 */
export class PodLogBackend implements LogBackend {
  readonly name = 'pod-log';
  private readonly limiter: Limiter;
  private readonly io: ScanIo;
  private readonly tailIo: TailIo;
  private readonly maxContainers: number;
  private readonly windows: { query: WindowTuning; export: WindowTuning };

  constructor(private readonly options: PodLogBackendOptions) {
    this.limiter = new Limiter(options.concurrency ?? 16);
    this.maxContainers = options.maxContainers ?? 1_000;
    this.windows = options.windows ?? { query: QUERY_WINDOWS, export: EXPORT_WINDOWS };
    const limitBytes = options.limitBytes ?? 64 * 2 ** 20;
    const timeoutMs = options.readTimeoutMs ?? 30_000;
    const { client } = options;
    this.io = {
      read: (target, read, onLine, signal) =>
        readContainerLog(client, target, { ...read, limitBytes, timeoutMs }, onLine, signal),
      firstLineMs: (target, sinceMs, signal) =>
        firstLineMs(client, target, sinceMs === undefined ? { timeoutMs } : { sinceMs, timeoutMs }, signal),
      limit: (task, signal) => this.limiter.run(task, signal),
    };
    this.tailIo = {
      ...this.io,
      tail: (target, lines, sinceMs, onLine, signal) => {
        const read = { tailLines: lines, limitBytes, timeoutMs, ...(sinceMs !== undefined && { sinceMs }) };
        return readContainerLog(client, target, read, onLine, signal);
      },
    };
  }

  async query(search: LogSearch, page: { from: number; size: number; sort: SortOrder }): Promise<Answer<QueryResult>> {
    const skipped = new SkipTracker();
    const plan = this.plan(search, page.sort);
    if (page.sort === 'desc' && plan.endMs >= Date.now() - RECENT_MS) {
      // The newest lines, up to now: each container's tail, read once, is nearly always enough.
      const { lines, matched } = await newestLines(
        this.tailIo,
        { ...plan, wanted: page.from + page.size, countUpTo: MAX_RESULT_WINDOW },
        skipped,
        search.signal,
      );
      const records = lines.slice(page.from, page.from + page.size).map(toRecord);
      return withSkipped({ total: Math.min(matched, MAX_RESULT_WINDOW), records }, skipped.report());
    }
    const records: LogRecord[] = [];
    let seen = 0;
    let complete = true;
    await scanInOrder(
      this.io,
      plan,
      (lines) => {
        for (const line of lines) {
          if (seen >= page.from && seen < page.from + page.size) records.push(toRecord(line));
          seen++;
        }
        // Counted exactly up to the result window, as OpenSearch counts by default; past it, total says "at least".
        if (seen >= MAX_RESULT_WINDOW) complete = false;
        return complete;
      },
      skipped,
      search.signal,
      this.windows.query,
    );
    return withSkipped({ total: complete ? seen : MAX_RESULT_WINDOW, records }, skipped.report());
  }

  async statistics(search: LogSearch): Promise<Answer<Statistics>> {
    let containers = 0;
    let logs = 0;
    const skipped = await this.countAll(
      search,
      () => undefined,
      (count) => {
        if (count > 0) containers++;
        logs += count;
      },
    );
    return withSkipped({ containers, logs }, skipped);
  }

  async histogram(search: LogSearch, interval: Interval): Promise<Answer<Histogram>> {
    const counts = new Map<number, number>();
    let total = 0;
    const skipped = await this.countAll(
      search,
      (ms) => {
        const key = bucketStart(interval, ms);
        counts.set(key, (counts.get(key) ?? 0) + 1);
        total++;
      },
      () => undefined,
    );
    const histograms = fillBuckets(interval, counts, MAX_BUCKETS);
    if (!histograms) {
      throw new BadRequestError(
        `interval ${interval.text} would make more than ${MAX_BUCKETS} buckets over these logs; choose a wider interval or a shorter time range`,
        { causes: [{ reason: 'FieldValueInvalid', field: 'interval', message: 'too many buckets' }] },
      );
    }
    return withSkipped({ total, histograms }, skipped);
  }

  async export(
    search: LogSearch,
    sort: SortOrder,
    write: (text: string) => Promise<void>,
  ): Promise<{ skipped?: SkippedContainers }> {
    const skipped = new SkipTracker();
    await scanInOrder(
      this.io,
      this.plan(search, sort),
      async (lines) => {
        if (lines.length === 0) return true;
        let text = '';
        for (const line of lines) {
          text += `${line.text}\n`;
          // Written in pieces of about 64 KiB: the client's pace (backpressure) governs the reading.
          if (text.length >= 65_536) {
            await write(text);
            text = '';
          }
        }
        if (text) await write(text);
        return true;
      },
      skipped,
      search.signal,
      this.windows.export,
    );
    const report = skipped.report();
    return report ? { skipped: report } : {};
  }

  private targets(search: LogSearch): ContainerTarget[] {
    const targets = selectContainers(this.options.pods, search.filter, search.scope);
    if (targets.length > this.maxContainers) {
      throw new BadRequestError(
        `${targets.length} containers match, more than the ${this.maxContainers} the pod-log backend reads for one ` +
          'request: narrow the query with namespaces, workloads, pods or containers, or use the OpenSearch backend',
      );
    }
    return targets;
  }

  private plan(search: LogSearch, order: SortOrder) {
    const { filter } = search;
    return {
      targets: this.targets(search),
      startMs: filter.startTime === undefined ? undefined : filter.startTime * 1000,
      endMs: filter.endTime * 1000,
      order,
      accept: keywordMatcher(filter.logQuery),
    };
  }

  /** Reads every matching line of every container once (order does not matter): for statistics and histograms. */
  private async countAll(
    search: LogSearch,
    onLine: (ms: number) => void,
    onContainer: (count: number) => void,
  ): Promise<SkippedContainers | undefined> {
    const plan = this.plan(search, 'asc');
    const skipped = new SkipTracker();
    const startMs = plan.startMs ?? -Infinity;
    await Promise.all(
      plan.targets.map((target) =>
        this.io
          .limit(async () => {
            let count = 0;
            const end = await this.io.read(
              target,
              plan.startMs === undefined ? {} : { sinceMs: plan.startMs },
              (line) => {
                const ms = lineMs(line);
                if (ms > plan.endMs + OUT_OF_ORDER_MS) return false;
                if (ms >= startMs && ms <= plan.endMs && plan.accept(line.text)) {
                  count++;
                  onLine(ms);
                }
                return true;
              },
              search.signal,
            );
            if (end === 'limit') skipped.skip(target, new Error('the log exceeds the read limit (limitBytes)'));
            onContainer(count);
          }, search.signal)
          .catch((error: unknown) => {
            if (search.signal.aborted) throw error;
            skipped.skip(target, error);
          }),
      ),
    );
    return skipped.report();
  }
}

function toRecord(line: ScanLine): LogRecord {
  return {
    log: line.text,
    time: formatTime(line.sec, line.nano),
    namespace: line.target.namespace,
    pod: line.target.pod,
    container: line.target.container,
  };
}

function withSkipped<T>(result: T, skipped: SkippedContainers | undefined): Answer<T> {
  return skipped ? { result, skipped } : { result };
}
