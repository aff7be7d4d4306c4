import type { Interval } from '../interval.js';
import type { NamespaceScope } from '../log-backend.js';
import { MAX_RESULT_WINDOW, type LogFilter, type SortOrder } from '../query.js';
import { keyword, type SearchFields } from './fields.js';

/**
 * OpenSearch/Elasticsearch query bodies, built from a parsed filter by pure functions (one clause per parameter),
 * with KubeSphere 3.4's semantics where they are sound: exact lists are `terms` on the keyword field, a workload is
 * matched by its pods' names (KubeSphere's pattern for Deployment, StatefulSet, DaemonSet and Job pods), `log_query`
 * is `match_phrase_prefix` on the text. Name keywords (`*_query`) are case-insensitive substrings, as the pod-log
 * backend matches them.
 */
type Clause = Record<string, unknown>;

const MATCH_NOTHING: Clause = { bool: { must_not: { match_all: {} } } };

function anyOf(clauses: Clause[]): Clause {
  return clauses.length === 1 ? clauses[0]! : { bool: { should: clauses, minimum_should_match: 1 } };
}

function contains(field: string, words: readonly string[]): Clause {
  return anyOf(
    words.map((word) => ({
      wildcard: { [keyword(field)]: { value: `*${word.replace(/[*?\\]/g, '\\$&')}*`, case_insensitive: true } },
    })),
  );
}

const POD_NAME_MAX = 63;
const POD_SUFFIX = 6; // "-" and 5 random characters
const REPLICASET_SUFFIX_MAX = 11; // "-" and up to 10 characters of the template hash

/** KubeSphere's regular expression for the pods of a workload (their names are all Lucene sees). */
export function workloadPodPattern(workload: string): string {
  const name = workload.replace(/[.?+*|{}[\]()"\\#@&<>~]/g, '\\$&');
  if (workload.length <= POD_NAME_MAX - REPLICASET_SUFFIX_MAX - POD_SUFFIX) {
    // <deployment>-<hash>-<5>, <statefulset>-<n>, <daemonset or job>-<5>
    return `${name}-[bcdfghjklmnpqrstvwxz2456789]{1,10}-[a-z0-9]{5}|${name}-[0-9]+|${name}-[a-z0-9]{5}`;
  }
  if (workload.length <= POD_NAME_MAX - POD_SUFFIX) {
    const hash = POD_NAME_MAX - POD_SUFFIX - workload.length;
    return `${name}-[bcdfghjklmnpqrstvwxz2456789]{${hash}}[a-z0-9]{5}|${name}-[0-9]+|${name}-[a-z0-9]{5}`;
  }
  // the generated suffix overwrites the end of a long name
  return `${name.slice(0, POD_NAME_MAX - POD_SUFFIX + 1)}[a-z0-9]{5}|${name}-[0-9]+`;
}

/** The filter clauses of a search: the caller's namespaces first, then each parameter given. */
export function filterClauses(filter: LogFilter, scope: NamespaceScope, fields: SearchFields): Clause[] {
  const clauses: Clause[] = [];
  if (scope.kind === 'some') {
    if (scope.namespaces.size === 0) return [MATCH_NOTHING];
    // A namespace's logs from before it was (re)created belong to someone else.
    clauses.push(
      anyOf(
        [...scope.namespaces].map(([namespace, createdAt]) => ({
          bool: {
            filter: [
              { term: { [keyword(fields.namespace)]: namespace } },
              { range: { [fields.time]: { gte: createdAt * 1000, format: 'epoch_millis' } } },
            ],
          },
        })),
      ),
    );
  }
  if (filter.namespaces) clauses.push({ terms: { [keyword(fields.namespace)]: [...filter.namespaces] } });
  if (filter.namespaceQuery) clauses.push(contains(fields.namespace, filter.namespaceQuery));
  if (filter.workloads) {
    clauses.push(anyOf(filter.workloads.map((w) => ({ regexp: { [keyword(fields.pod)]: workloadPodPattern(w) } }))));
  }
  if (filter.workloadQuery) clauses.push(contains(fields.pod, filter.workloadQuery));
  if (filter.pods) clauses.push({ terms: { [keyword(fields.pod)]: [...filter.pods] } });
  if (filter.podQuery) clauses.push(contains(fields.pod, filter.podQuery));
  if (filter.containers) clauses.push({ terms: { [keyword(fields.container)]: [...filter.containers] } });
  if (filter.containerQuery) clauses.push(contains(fields.container, filter.containerQuery));
  if (filter.logQuery) {
    clauses.push(anyOf(filter.logQuery.map((text) => ({ match_phrase_prefix: { [fields.log]: text } }))));
  }
  const range: Record<string, unknown> = { lte: filter.endTime * 1000, format: 'epoch_millis' };
  if (filter.startTime !== undefined) range.gte = filter.startTime * 1000;
  clauses.push({ range: { [fields.time]: range } });
  return clauses;
}

const query = (filter: LogFilter, scope: NamespaceScope, fields: SearchFields) => ({
  bool: { filter: filterClauses(filter, scope, fields) },
});

const sources = (fields: SearchFields) => [fields.log, fields.time, fields.namespace, fields.pod, fields.container];

/** One page, newest or oldest first; totals counted exactly up to the result window, as by default. */
export function searchBody(
  filter: LogFilter,
  scope: NamespaceScope,
  fields: SearchFields,
  page: { from: number; size: number; sort: SortOrder },
): Clause {
  return {
    query: query(filter, scope, fields),
    sort: [{ [fields.time]: { order: page.sort } }],
    from: page.from,
    size: page.size,
    track_total_hits: MAX_RESULT_WINDOW,
    _source: sources(fields),
  };
}

/** Matching records (exact) and distinct containers. */
export function statisticsBody(filter: LogFilter, scope: NamespaceScope, fields: SearchFields): Clause {
  return {
    query: query(filter, scope, fields),
    size: 0,
    track_total_hits: true,
    aggs: { containers: { cardinality: { field: keyword(fields.containerId) } } },
  };
}

/** OpenSearch takes weeks only as a calendar unit, so fixed weeks are sent as days. */
export function intervalParameter(interval: Interval): Clause {
  if (interval.kind === 'calendar')
    return { calendar_interval: `1${{ month: 'M', quarter: 'q', year: 'y' }[interval.unit]}` };
  const ms = interval.ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return { fixed_interval: `${ms / size}${unit}` };
  }
  return { fixed_interval: `${ms}ms` };
}

/** Counts per interval (empty buckets between the first and the last included), and the exact total. */
export function histogramBody(
  filter: LogFilter,
  scope: NamespaceScope,
  fields: SearchFields,
  interval: Interval,
): Clause {
  return {
    query: query(filter, scope, fields),
    size: 0,
    track_total_hits: true,
    aggs: { histogram: { date_histogram: { field: fields.time, ...intervalParameter(interval), min_doc_count: 0 } } },
  };
}

/** Every record's text, in pages of `size`, for a scroll. */
export function exportBody(
  filter: LogFilter,
  scope: NamespaceScope,
  fields: SearchFields,
  sort: SortOrder,
  size: number,
): Clause {
  return {
    query: query(filter, scope, fields),
    sort: [{ [fields.time]: { order: sort } }],
    size,
    _source: [fields.log],
  };
}
