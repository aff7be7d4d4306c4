import { describe, expect, it } from '@jest/globals';
import { parseInterval } from '../../../../../src/apis/logging/v1alpha2/interval.js';
import type { NamespaceScope } from '../../../../../src/apis/logging/v1alpha2/log-backend.js';
import type { LogFilter } from '../../../../../src/apis/logging/v1alpha2/query.js';
import {
  FLUENT_BIT_FIELDS,
  searchFields,
  sourceField,
} from '../../../../../src/apis/logging/v1alpha2/search/fields.js';
import { indexNames } from '../../../../../src/apis/logging/v1alpha2/search/index-names.js';
import {
  exportBody,
  filterClauses,
  histogramBody,
  intervalParameter,
  searchBody,
  statisticsBody,
  workloadPodPattern,
} from '../../../../../src/apis/logging/v1alpha2/search/query-body.js';

const ALL: NamespaceScope = { kind: 'all' };
const BASE: LogFilter = { startTime: undefined, endTime: 1_700_000_000 };
const END = { range: { time: { lte: 1_700_000_000_000, format: 'epoch_millis' } } };
const F = FLUENT_BIT_FIELDS;

describe('filterClauses', () => {
  it('when nothing is filtered, then only the end of the time range applies', () => {
    expect(filterClauses(BASE, ALL, F)).toEqual([END]);
  });

  it.each([
    [
      { startTime: 1_699_990_000 },
      { range: { time: { gte: 1_699_990_000_000, lte: 1_700_000_000_000, format: 'epoch_millis' } } },
    ],
    [{ namespaces: ['a', 'b'] }, { terms: { 'kubernetes.namespace_name.keyword': ['a', 'b'] } }],
    [
      { namespaceQuery: ['dem'] },
      { wildcard: { 'kubernetes.namespace_name.keyword': { value: '*dem*', case_insensitive: true } } },
    ],
    [
      { workloads: ['web'] },
      {
        regexp: {
          'kubernetes.pod_name.keyword':
            'web-[bcdfghjklmnpqrstvwxz2456789]{1,10}-[a-z0-9]{5}|web-[0-9]+|web-[a-z0-9]{5}',
        },
      },
    ],
    [
      { workloadQuery: ['we', 'ap'] },
      {
        bool: {
          should: [
            { wildcard: { 'kubernetes.pod_name.keyword': { value: '*we*', case_insensitive: true } } },
            { wildcard: { 'kubernetes.pod_name.keyword': { value: '*ap*', case_insensitive: true } } },
          ],
          minimum_should_match: 1,
        },
      },
    ],
    [{ pods: ['web-1'] }, { terms: { 'kubernetes.pod_name.keyword': ['web-1'] } }],
    [
      { podQuery: ['a*b'] },
      { wildcard: { 'kubernetes.pod_name.keyword': { value: '*a\\*b*', case_insensitive: true } } },
    ],
    [{ containers: ['app'] }, { terms: { 'kubernetes.container_name.keyword': ['app'] } }],
    [
      { containerQuery: ['sid'] },
      { wildcard: { 'kubernetes.container_name.keyword': { value: '*sid*', case_insensitive: true } } },
    ],
    [{ logQuery: ['error'] }, { match_phrase_prefix: { log: 'error' } }],
  ])('when the filter has %j, then its clause is %j', (extra, clause) => {
    const clauses = filterClauses({ ...BASE, ...extra }, ALL, F);
    if ('startTime' in extra) expect(clauses).toEqual([clause]);
    else expect(clauses).toEqual([clause, END]);
  });

  it('when the caller may read some namespaces, then each counts only from its creation', () => {
    const scope: NamespaceScope = { kind: 'some', namespaces: new Map([['demo', 1_600_000_000]]) };
    expect(filterClauses(BASE, scope, F)[0]).toEqual({
      bool: {
        filter: [
          { term: { 'kubernetes.namespace_name.keyword': 'demo' } },
          { range: { time: { gte: 1_600_000_000_000, format: 'epoch_millis' } } },
        ],
      },
    });
  });

  it('when the caller may read no namespace, then nothing matches', () => {
    expect(filterClauses(BASE, { kind: 'some', namespaces: new Map() }, F)).toEqual([
      { bool: { must_not: { match_all: {} } } },
    ]);
  });

  it('when field names are configured, then the clauses use them', () => {
    const fields = searchFields({ namespace: 'k8s.ns', time: '@timestamp' });
    expect(filterClauses({ ...BASE, namespaces: ['a'] }, ALL, fields)).toEqual([
      { terms: { 'k8s.ns.keyword': ['a'] } },
      { range: { '@timestamp': { lte: 1_700_000_000_000, format: 'epoch_millis' } } },
    ]);
  });
});

describe('workloadPodPattern', () => {
  it.each([
    ['web', ['web-7d9c8b6f5-x2x4p', 'web-0', 'web-12', 'web-x2x4p'], ['web', 'webapp-0', 'web-7d9c8b6f5-x2x4p-1']],
    // a long name: the pod's generated name is cut to 58 characters before its 5 random ones
    ['a'.repeat(50), [`${'a'.repeat(50)}-7d9c8bdx2x4p`, `${'a'.repeat(50)}-3`], [`${'a'.repeat(49)}-3`]],
  ])('when the workload is %s, then its pods match and others do not', (workload, pods, others) => {
    const pattern = new RegExp(`^(?:${workloadPodPattern(workload)})$`);
    for (const pod of pods) expect(pod).toMatch(pattern);
    for (const pod of others) expect(pod).not.toMatch(pattern);
  });
});

describe('bodies', () => {
  it('when a page is asked, then it is sorted by time with from, size, the total capped and the fields read', () => {
    expect(searchBody(BASE, ALL, F, { from: 20, size: 10, sort: 'asc' })).toEqual({
      query: { bool: { filter: [END] } },
      sort: [{ time: { order: 'asc' } }],
      from: 20,
      size: 10,
      track_total_hits: 10_000,
      _source: ['log', 'time', 'kubernetes.namespace_name', 'kubernetes.pod_name', 'kubernetes.container_name'],
    });
  });

  it('when statistics are asked, then containers are the distinct container ids and the total is exact', () => {
    expect(statisticsBody(BASE, ALL, F)).toEqual({
      query: { bool: { filter: [END] } },
      size: 0,
      track_total_hits: true,
      aggs: { containers: { cardinality: { field: 'kubernetes.docker_id.keyword' } } },
    });
  });

  it.each([
    ['15m', { fixed_interval: '15m' }],
    ['90s', { fixed_interval: '90s' }],
    ['2w', { fixed_interval: '14d' }],
    ['24h', { fixed_interval: '1d' }],
    ['1M', { calendar_interval: '1M' }],
    ['1q', { calendar_interval: '1q' }],
    ['1y', { calendar_interval: '1y' }],
  ])('when the interval is %s, then OpenSearch is asked for %j', (text, parameter) => {
    expect(intervalParameter(parseInterval(text))).toEqual(parameter);
    expect(histogramBody(BASE, ALL, F, parseInterval(text)).aggs).toEqual({
      histogram: { date_histogram: { field: 'time', ...parameter, min_doc_count: 0 } },
    });
  });

  it('when an export is asked, then pages carry only the text, in order', () => {
    expect(exportBody(BASE, ALL, F, 'desc', 1000)).toEqual({
      query: { bool: { filter: [END] } },
      sort: [{ time: { order: 'desc' } }],
      size: 1000,
      _source: ['log'],
    });
  });
});

describe('indexNames', () => {
  it.each([
    [undefined, 1_700_000_000, ['ks-logstash-log*']],
    [1_699_990_000, 1_700_000_000, ['ks-logstash-log-2023.11.14']],
    // crossing midnight UTC: both days (KubeSphere lists only the last)
    [1_699_919_000, 1_699_920_000 + 3600, ['ks-logstash-log-2023.11.14', 'ks-logstash-log-2023.11.13']],
    [1_700_000_000 - 86_400 * 40, 1_700_000_000, ['ks-logstash-log*']],
  ])('when the range is %s to %s, then the indices are %j', (start, end, names) => {
    expect(indexNames('ks-logstash-log', start, end)).toEqual(names);
  });
});

describe('sourceField', () => {
  it('when a field is nested or flat, then it is found', () => {
    expect(sourceField({ kubernetes: { pod_name: 'p' } }, 'kubernetes.pod_name')).toBe('p');
    expect(sourceField({ 'kubernetes.pod_name': 'q' }, 'kubernetes.pod_name')).toBe('q');
    expect(sourceField({ kubernetes: {} }, 'kubernetes.pod_name')).toBeUndefined();
    expect(sourceField(null, 'log')).toBeUndefined();
  });
});
