import { intervalParameter } from '../../logging/v1alpha2/search/query-body.js';
import { totalOf, type SearchResponse } from '../../logging/v1alpha2/search/search-response.js';
import { MAX_RESULT_WINDOW } from '../../logging/v1alpha2/operations.js';
import type { EventQuery } from './event-query.js';
import type { EventAnswer } from './event-search.js';

/**
 * The event search over a search engine (pure): KubeSphere 3.4.1's kube-events layout (its events exporter indexes
 * each core/v1 Event as it is, in daily `ks-logstash-events-YYYY.MM.DD` indices) and its query
 * (pkg/simple/client/events/elasticsearch): each namespace of the caller's scope with the events since it was created,
 * then the filters, `lastTimestamp` for range, order and histogram. Text fields are matched on their `.keyword`
 * sub-field where KubeSphere matches exactly.
 */

type Clause = Record<string, unknown>;

const MATCH_NOTHING: Clause = { bool: { must_not: { match_all: {} } } };
const TIME = 'lastTimestamp';

function anyOf(clauses: Clause[]): Clause {
  return clauses.length === 1 ? (clauses[0] as Clause) : { bool: { should: clauses, minimum_should_match: 1 } };
}

const escapeWildcard = (text: string) => text.replace(/[*?\\]/g, '\\$&');

/** The query's filter clauses within `scope` (namespace → creation time, epoch ms; `''`: events of no namespace). */
export function eventFilterClauses(query: EventQuery, scope: ReadonlyMap<string, number>): Clause[] {
  if (scope.size === 0) return [MATCH_NOTHING];
  const clauses: Clause[] = [
    anyOf(
      [...scope].map(([namespace, createdMs]) =>
        namespace === ''
          ? { bool: { must_not: { exists: { field: 'involvedObject.namespace' } } } }
          : {
              bool: {
                filter: [
                  { term: { 'involvedObject.namespace.keyword': namespace } },
                  { range: { [TIME]: { gte: createdMs, format: 'epoch_millis' } } },
                ],
              },
            },
      ),
    ),
  ];
  if (query.names) clauses.push({ terms: { 'involvedObject.name.keyword': [...query.names] } });
  if (query.nameSearch)
    clauses.push(anyOf(query.nameSearch.map((text) => ({ match_phrase_prefix: { 'involvedObject.name': text } }))));
  if (query.kinds) clauses.push(anyOf(query.kinds.map((kind) => ({ match_phrase: { 'involvedObject.kind': kind } }))));
  if (query.reasons) clauses.push(anyOf(query.reasons.map((reason) => ({ match_phrase: { reason } }))));
  if (query.reasonSearch)
    clauses.push(
      anyOf(query.reasonSearch.map((text) => ({ wildcard: { 'reason.keyword': `*${escapeWildcard(text)}*` } }))),
    );
  if (query.messageSearch)
    clauses.push(anyOf(query.messageSearch.map((text) => ({ match_phrase_prefix: { message: text } }))));
  if (query.type) clauses.push({ match_phrase: { type: query.type } });
  const range: Clause = { lte: query.endMs, format: 'epoch_millis' };
  if (query.startMs !== undefined) range.gte = query.startMs;
  clauses.push({ range: { [TIME]: range } });
  return clauses;
}

/** The request body of the query's operation. */
export function eventSearchBody(query: EventQuery, scope: ReadonlyMap<string, number>): Clause {
  const filter = { bool: { filter: eventFilterClauses(query, scope) } };
  if (query.operation === 'statistics')
    return {
      query: filter,
      size: 0,
      track_total_hits: true,
      aggs: { resources: { cardinality: { field: 'involvedObject.uid.keyword' } } },
    };
  if (query.operation === 'histogram')
    return {
      query: filter,
      size: 0,
      track_total_hits: true,
      aggs: { histogram: { date_histogram: { field: TIME, ...intervalParameter(query.interval) } } },
    };
  return {
    query: filter,
    sort: [{ [TIME]: { order: query.sort } }],
    from: query.from,
    size: query.size,
    track_total_hits: MAX_RESULT_WINDOW,
  };
}

/** The store's answer as KubeSphere's (pure); `records` and `buckets` are `[]`, never null. */
export function eventAnswerOf(query: EventQuery, response: SearchResponse): EventAnswer {
  const total = totalOf(response);
  if (query.operation === 'statistics')
    return { statistics: { resources: response.aggregations?.resources?.value ?? 0, events: total } };
  if (query.operation === 'histogram')
    return {
      histogram: {
        total,
        buckets: (response.aggregations?.histogram?.buckets ?? []).map((bucket) => ({
          time: bucket.key ?? 0,
          count: bucket.doc_count ?? 0,
        })),
      },
    };
  const records = (response.hits?.hits ?? []).map((hit) => hit._source ?? {});
  return { query: { total, records } };
}
