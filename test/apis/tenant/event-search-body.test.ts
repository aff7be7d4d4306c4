import { describe, expect, it } from '@jest/globals';
import { parseEventQuery } from '../../../src/apis/tenant/events/event-query.js';
import { eventAnswerOf, eventFilterClauses, eventSearchBody } from '../../../src/apis/tenant/events/search-body.js';
import { parseOptions } from '../../../src/config/options.js';

const NOW = Date.parse('2026-11-29T12:00:00Z') / 1000;
const scope = new Map([
  ['shop', Date.parse('2026-11-01T00:00:00Z')],
  ['', 0],
]);

describe('the event search over KubeSphere’s kube-events indices, pure', () => {
  it('when events are searched, then each namespace of the scope since its creation, the filters, the range on lastTimestamp', () => {
    const query = parseEventQuery(
      {
        involved_object_name_filter: 'web-0',
        involved_object_name_search: 'we',
        involved_object_kind_filter: 'Pod',
        reason_filter: 'BackOff',
        reason_search: 'Off*',
        message_search: 'restarting',
        type_filter: 'Warning',
        start_time: String(NOW - 3600),
      },
      NOW,
    );
    expect(eventFilterClauses(query, scope)).toEqual([
      {
        bool: {
          should: [
            {
              bool: {
                filter: [
                  { term: { 'involvedObject.namespace.keyword': 'shop' } },
                  { range: { lastTimestamp: { gte: Date.parse('2026-11-01T00:00:00Z'), format: 'epoch_millis' } } },
                ],
              },
            },
            { bool: { must_not: { exists: { field: 'involvedObject.namespace' } } } },
          ],
          minimum_should_match: 1,
        },
      },
      { terms: { 'involvedObject.name.keyword': ['web-0'] } },
      { match_phrase_prefix: { 'involvedObject.name': 'we' } },
      { match_phrase: { 'involvedObject.kind': 'pod' } },
      { match_phrase: { reason: 'backoff' } },
      { wildcard: { 'reason.keyword': '*Off\\**' } },
      { match_phrase_prefix: { message: 'restarting' } },
      { match_phrase: { type: 'warning' } },
      { range: { lastTimestamp: { lte: NOW * 1000 + 999, gte: (NOW - 3600) * 1000, format: 'epoch_millis' } } },
    ]);
  });

  it('when the caller may read no namespace, then the body matches nothing', () => {
    const query = parseEventQuery({}, NOW);
    expect(eventFilterClauses(query, new Map())).toEqual([{ bool: { must_not: { match_all: {} } } }]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['query', { sort: [{ lastTimestamp: { order: 'desc' } }], from: 5, size: 20, track_total_hits: 10_000 }],
    [
      'statistics',
      {
        size: 0,
        track_total_hits: true,
        aggs: { resources: { cardinality: { field: 'involvedObject.uid.keyword' } } },
      },
    ],
    [
      'histogram',
      {
        size: 0,
        track_total_hits: true,
        aggs: { histogram: { date_histogram: { field: 'lastTimestamp', fixed_interval: '30m' } } },
      },
    ],
  ])('when the operation is %s, then the body asks the store for it', (operation, shape) => {
    const query = parseEventQuery({ operation, from: '5', size: '20', interval: '30m' }, NOW);
    expect(eventSearchBody(query, scope)).toMatchObject(shape);
  });

  it('when the store answers, then KubeSphere’s shapes, never null', () => {
    const parse = (operation: string) => parseEventQuery({ operation }, NOW);
    const event = { kind: 'Event', involvedObject: { name: 'web-0' } };
    expect(eventAnswerOf(parse('query'), { hits: { total: { value: 7 }, hits: [{ _source: event }] } })).toEqual({
      query: { total: 7, records: [event] },
    });
    expect(eventAnswerOf(parse('query'), {})).toEqual({ query: { total: 0, records: [] } });
    expect(
      eventAnswerOf(parse('statistics'), { hits: { total: 12 }, aggregations: { resources: { value: 4 } } }),
    ).toEqual({ statistics: { resources: 4, events: 12 } });
    expect(
      eventAnswerOf(parse('histogram'), {
        hits: { total: { value: 3 } },
        aggregations: { histogram: { buckets: [{ key: 1000, doc_count: 3 }] } },
      }),
    ).toEqual({ histogram: { total: 3, buckets: [{ time: 1000, count: 3 }] } });
    expect(eventAnswerOf(parse('histogram'), {})).toEqual({ histogram: { total: 0, buckets: [] } });
  });

  it('when kapi is started with the opensearch events backend, then it needs the opensearch log backend', () => {
    expect(() => parseOptions(['--events-backend=opensearch'], {})).toThrow(/needs --log-backend=opensearch/);
    const options = parseOptions(
      ['--events-backend=opensearch', '--log-backend=opensearch', '--log-search-url=https://store:9200'],
      {},
    );
    expect(options).not.toBe('help');
    expect(options !== 'help' && options !== 'version' && options.logging).toMatchObject({
      eventsBackend: 'opensearch',
      eventsSearchIndex: 'ks-logstash-events',
    });
    expect(() => parseOptions(['--events-backend=elastic'], {})).toThrow(/events-api or opensearch/);
  });
});
