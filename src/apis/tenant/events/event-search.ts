import { bucketStart, nextBucket } from '../../logging/v1alpha2/interval.js';
import type { EventFilter, EventQuery } from './event-query.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/**
 * Event search over the cluster's own events (pure): KubeSphere 3.4.1's matching (pkg/simple/client/events, there in
 * its search engine), over the records kapi keeps of the Events API.
 */

/** An event as the search keeps it: what it is matched on, and its answer (a core/v1 Event) as JSON. */
export interface EventRecord {
  /** `<namespace>/<name>` of the Event object. */
  readonly key: string;
  /** The namespace the Event object is in. */
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly reason: string;
  /** Lower-cased. */
  readonly type: string;
  readonly message: string;
  /** `lastTimestamp` (epoch ms): what the range, the order and the histogram read. */
  readonly lastMs: number;
  /** The core/v1 Event, JSON. */
  readonly json: string;
}

/** A namespace as scoping reads it. */
export interface ScopedNamespace {
  readonly name: string;
  readonly workspace?: string | undefined;
  /** Epoch ms of its creation (0: unknown): an event older than it was of an earlier namespace of the name. */
  readonly createdMs: number;
}

/**
 * The namespaces a caller's search covers (KubeSphere's tenant rule): those the filters select — a namespace outside
 * workspaces only when no workspace is asked for — that the caller may list events in (`allowed`), with the time
 * each was created; `''` (events of cluster objects) too when nothing narrows by namespace or workspace and the
 * caller may list events cluster-wide.
 */
export function scopeOf(
  filter: EventFilter,
  namespaces: readonly ScopedNamespace[],
  allowed: (namespace: string) => boolean,
  clusterWide: boolean,
): Map<string, number> {
  const byWorkspace = filter.workspaces !== undefined || filter.workspaceSearch !== undefined;
  const narrowed = byWorkspace || filter.namespaces !== undefined || filter.namespaceSearch !== undefined;
  const scope = new Map<string, number>();
  for (const ns of namespaces) {
    if (filter.namespaces && !filter.namespaces.includes(ns.name)) continue;
    if (filter.namespaceSearch && !filter.namespaceSearch.some((text) => ns.name.includes(text))) continue;
    if (byWorkspace && !ns.workspace) continue;
    if (filter.workspaces && !filter.workspaces.includes(ns.workspace as string)) continue;
    if (filter.workspaceSearch && !filter.workspaceSearch.some((text) => (ns.workspace as string).includes(text)))
      continue;
    if (allowed(ns.name)) scope.set(ns.name, ns.createdMs);
  }
  if (!narrowed && clusterWide) scope.set('', 0);
  return scope;
}

/** Whether an event matches the filter, within the scope (pure). */
export function matches(record: EventRecord, filter: EventFilter, scope: ReadonlyMap<string, number>): boolean {
  const created = scope.get(record.namespace);
  if (created === undefined || record.lastMs < created) return false;
  if (filter.startMs !== undefined && record.lastMs < filter.startMs) return false;
  if (record.lastMs > filter.endMs) return false;
  if (filter.names && !filter.names.includes(record.name)) return false;
  if (filter.nameSearch && !filter.nameSearch.some((text) => record.name.toLowerCase().startsWith(text.toLowerCase())))
    return false;
  if (filter.kinds && !filter.kinds.includes(record.kind.toLowerCase())) return false;
  if (filter.reasons && !filter.reasons.includes(record.reason.toLowerCase())) return false;
  if (filter.reasonSearch && !filter.reasonSearch.some((text) => record.reason.includes(text))) return false;
  if (filter.messageSearch) {
    const message = record.message.toLowerCase();
    if (!filter.messageSearch.some((text) => message.includes(text))) return false;
  }
  if (filter.type !== undefined && record.type !== filter.type) return false;
  return true;
}

export interface EventAnswer {
  query?: { total: number; records: Raw[] };
  statistics?: { resources: number; events: number };
  histogram?: { total: number; buckets: { time: number; count: number }[] };
}

/**
 * The answer to one query (pure), KubeSphere's shapes: only the operation's key; `records` and `buckets` are `[]`
 * when nothing matches (KubeSphere's `null` breaks the console's detail view). A page past the end has no records.
 */
export function searchEvents(records: Iterable<EventRecord>, query: EventQuery, scope: ReadonlyMap<string, number>) {
  const matched: EventRecord[] = [];
  for (const record of records) if (matches(record, query, scope)) matched.push(record);
  if (query.operation === 'statistics')
    return {
      statistics: {
        resources: new Set(matched.map((r) => r.uid || `${r.kind}/${r.namespace}/${r.name}`)).size,
        events: matched.length,
      },
    };
  if (query.operation === 'histogram')
    return { histogram: { total: matched.length, buckets: histogram(matched, query) } };
  const direction = query.sort === 'asc' ? 1 : -1;
  // ties (one second holds many events) by key, in code-unit order: localeCompare would be most of the search
  matched.sort((a, b) => direction * (a.lastMs - b.lastMs) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const page = matched.slice(query.from, query.from + query.size);
  return { query: { total: matched.length, records: page.map((record) => JSON.parse(record.json) as Raw) } };
}

/** Counts per bucket from the first matching event's to the last's, empty buckets included, oldest first. */
function histogram(matched: readonly EventRecord[], query: EventQuery): { time: number; count: number }[] {
  if (matched.length === 0) return [];
  const counts = new Map<number, number>();
  let first = Infinity;
  let last = -Infinity;
  for (const record of matched) {
    const start = bucketStart(query.interval, record.lastMs);
    counts.set(start, (counts.get(start) ?? 0) + 1);
    first = Math.min(first, start);
    last = Math.max(last, start);
  }
  const buckets: { time: number; count: number }[] = [];
  for (let at = first; at <= last; at = nextBucket(query.interval, at))
    buckets.push({ time: at, count: counts.get(at) ?? 0 });
  return buckets;
}

/**
 * An event (core/v1, the version whose fields the console reads: `involvedObject`, `reason`, `message`, `type`,
 * `source`, `count`, `firstTimestamp`, `lastTimestamp`) as the record kept of it: scoped by the namespace the Event
 * object is in (what RBAC guards), timed by `lastTimestamp`, else the time of its series or `eventTime` (events
 * written through `events.k8s.io/v1` carry only those), else its creation.
 */
export function eventRecordOf(raw: Raw, key: string): EventRecord {
  const involved = raw?.involvedObject ?? {};
  const last =
    raw?.lastTimestamp ?? raw?.series?.lastObservedTime ?? raw?.eventTime ?? raw?.metadata?.creationTimestamp;
  const lastMs = Date.parse(String(last ?? ''));
  const { managedFields: _managed, ...metadata } = raw?.metadata ?? {};
  return {
    key,
    namespace: String(raw?.metadata?.namespace ?? ''),
    kind: String(involved.kind ?? ''),
    name: String(involved.name ?? ''),
    uid: String(involved.uid ?? ''),
    reason: String(raw?.reason ?? ''),
    type: String(raw?.type ?? 'Normal').toLowerCase(),
    message: String(raw?.message ?? ''),
    lastMs: Number.isNaN(lastMs) ? 0 : lastMs,
    json: JSON.stringify({ ...raw, apiVersion: 'v1', kind: 'Event', metadata }),
  };
}
