import type { ReadinessCheck } from '../../../kube/caches.js';
import type { Interval } from './interval.js';
import type { LogFilter, SortOrder } from './query.js';

/** One log line as KubeSphere 3.4 returns it. */
export interface LogRecord {
  log: string;
  /** RFC 3339 with nanoseconds, UTC. */
  time: string;
  namespace: string;
  pod: string;
  container: string;
}

export interface QueryResult {
  /** Matching records; counted exactly up to 10,000, and 10,000 means at least that many (OpenSearch's default). */
  total: number;
  records: LogRecord[];
}

export interface Statistics {
  /** Containers with at least one matching record. */
  containers: number;
  logs: number;
}

export interface Histogram {
  total: number;
  /** `time`: bucket start in epoch milliseconds, ascending. */
  histograms: { time: number; count: number }[];
}

/** Containers whose log could not be read (the answer is then partial, never an error). */
export interface SkippedContainers {
  containers: number;
  /** The first few, for the operator. */
  examples: { namespace: string; pod: string; container: string; reason: string }[];
}

/**
 * Which namespaces the caller may read. `all`: cluster-wide `get pods/log`. `some`: these namespaces, each with its
 * creation time in Unix seconds, so a store that outlives namespaces never shows a recreated namespace the logs of
 * its predecessor (KubeSphere does the same).
 */
export type NamespaceScope =
  { readonly kind: 'all' } | { readonly kind: 'some'; readonly namespaces: ReadonlyMap<string, number> };

export interface LogSearch {
  readonly filter: LogFilter;
  readonly scope: NamespaceScope;
  /** Aborted when the client goes away: every read stops. */
  readonly signal: AbortSignal;
}

export interface Answer<T> {
  result: T;
  skipped?: SkippedContainers;
}

/**
 * Where logs are read from: the Kubernetes pod-log API (built in) or an OpenSearch/Elasticsearch store fed by
 * Fluent Bit. Both answer the same four operations with the same shapes; errors they cannot answer around are
 * `ApiError`s (a store that is down is a 503), never a bare exception.
 */
export interface LogBackend {
  readonly name: 'pod-log' | 'search';
  query(search: LogSearch, page: { from: number; size: number; sort: SortOrder }): Promise<Answer<QueryResult>>;
  statistics(search: LogSearch): Promise<Answer<Statistics>>;
  histogram(search: LogSearch, interval: Interval): Promise<Answer<Histogram>>;
  /**
   * Writes every matching record's text, one per line, in `sort` order, as it is read. `write` resolves when the
   * client can take more (backpressure) and rejects once the client has gone away.
   */
  export(
    search: LogSearch,
    sort: SortOrder,
    write: (text: string) => Promise<void>,
  ): Promise<{ skipped?: SkippedContainers }>;
  readonly readiness?: ReadinessCheck;
  close?(): Promise<void>;
}
