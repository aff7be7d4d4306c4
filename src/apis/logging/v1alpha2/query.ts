import { parseQuery } from '../../../openapi/query-parameters.js';
import { InvalidParameterError } from '../../../server/errors.js';
import { parseInterval, type Interval } from './interval.js';
import { LogQuerySchema, MAX_RESULT_WINDOW, type Operation, type SortOrder } from './operations.js';

export { MAX_RESULT_WINDOW, type Operation, type SortOrder } from './operations.js';

/** What selects log records, after parsing; the same for every operation and both backends. */
export interface LogFilter {
  readonly namespaces?: readonly string[];
  /** Keyword lists are lower-cased: they match ignoring case. */
  readonly namespaceQuery?: readonly string[];
  readonly workloads?: readonly string[];
  readonly workloadQuery?: readonly string[];
  readonly pods?: readonly string[];
  readonly podQuery?: readonly string[];
  readonly containers?: readonly string[];
  readonly containerQuery?: readonly string[];
  readonly logQuery?: readonly string[];
  /** Unix seconds, inclusive; undefined: no lower bound. */
  readonly startTime: number | undefined;
  /** Unix seconds, inclusive. */
  readonly endTime: number;
}

export interface LogQuery extends LogFilter {
  readonly operation: Operation;
  readonly interval: Interval;
  readonly sort: SortOrder;
  readonly from: number;
  readonly size: number;
}

/**
 * Reads the query string through the operation's schema (a bad value is a 400 naming the parameter, where KubeSphere
 * falls back to a default), then checks what spans parameters. `nowSeconds` is the default `end_time`.
 */
export function parseLogQuery(query: Readonly<Record<string, unknown>>, nowSeconds: number): LogQuery {
  const p = parseQuery(LogQuerySchema, query);
  const endTime = p.end_time ?? nowSeconds;
  if (p.start_time !== undefined && p.start_time > endTime) {
    throw p.end_time === undefined
      ? new InvalidParameterError(
          'start_time',
          `${p.start_time} is in the future (now is ${nowSeconds}); whole Unix seconds are required`,
        )
      : new InvalidParameterError('end_time', `${endTime} is before start_time ${p.start_time}`);
  }
  if (p.from + p.size > MAX_RESULT_WINDOW) {
    throw new InvalidParameterError(
      'size',
      `from + size must be at most ${MAX_RESULT_WINDOW} (got ${p.from + p.size})`,
    );
  }
  return {
    operation: p.operation,
    interval: parseInterval(p.interval),
    sort: p.sort,
    from: p.from,
    size: p.size,
    startTime: p.start_time,
    endTime,
    ...list('namespaces', p.namespaces, false),
    ...list('namespaceQuery', p.namespace_query, true),
    ...list('workloads', p.workloads, false),
    ...list('workloadQuery', p.workload_query, true),
    ...list('pods', p.pods, false),
    ...list('podQuery', p.pod_query, true),
    ...list('containers', p.containers, false),
    ...list('containerQuery', p.container_query, true),
    ...list('logQuery', p.log_query, true),
  };
}

function list<K extends string>(
  key: K,
  items: readonly string[] | undefined,
  lowerCase: boolean,
): Partial<Record<K, readonly string[]>> {
  if (!items?.length) return {};
  return { [key]: lowerCase ? items.map((item) => item.toLowerCase()) : items } as unknown as Record<
    K,
    readonly string[]
  >;
}
