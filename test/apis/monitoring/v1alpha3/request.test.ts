import { describe, expect, test } from '@jest/globals';
import { MetricsQuerySchema } from '../../../../src/apis/monitoring/v1alpha3/operations.js';
import { alignedTiming, answerOf, shifted } from '../../../../src/apis/monitoring/v1alpha3/prometheus.js';
import {
  MAX_POINTS,
  metricsFilter,
  metricsQueryOf,
  namesOf,
  pairsOf,
  parseGoDuration,
} from '../../../../src/apis/monitoring/v1alpha3/request.js';
import { metricValue, sortAndPage, type MetricsAnswer } from '../../../../src/apis/monitoring/v1alpha3/results.js';
import { clamped } from '../../../../src/apis/monitoring/v1alpha3/routes.js';
import { accessOf } from '../../../../src/apis/monitoring/v1alpha3/targets.js';
import { parseQuery } from '../../../../src/openapi/query-parameters.js';
import { InvalidParameterError } from '../../../../src/server/errors.js';
import { parsePromql } from './promql-tree.js';

const NOW = 1_700_000_000;
const read = (query: Record<string, string>) => metricsQueryOf(parseQuery(MetricsQuerySchema, query), NOW);
const refused = (query: Record<string, string>): string => {
  try {
    read(query);
  } catch (error) {
    if (error instanceof InvalidParameterError) return error.parameter;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
};

describe('the parameters, as KubeSphere 3.4.1 reads them', () => {
  test('when there are no times, then an instant query at now', () => {
    expect(read({}).timing).toEqual({ instant: NOW });
    expect(read({ time: '1699990000' }).timing).toEqual({ instant: 1_699_990_000 });
  });

  test('when start and end are given, then a range with the default step of 600 s, or the one given', () => {
    expect(read({ start: '1699000000', end: '1699012000' }).timing).toEqual({
      start: 1_699_000_000,
      end: 1_699_012_000,
      step: 600,
    });
    expect(read({ start: '1699000000', end: '1699012000', step: '1m30s' }).timing).toMatchObject({ step: 90 });
    // the console's `times` is ignored, as KubeSphere ignores it
    expect(read({ start: '1', end: '2', times: 'x' }).timing).toMatchObject({ start: 1, end: 2 });
  });

  test.each([
    [{ time: '1700000000.5' }, 'time'],
    [{ time: 'now' }, 'time'],
    [{ time: '1700000000000' }, 'time'],
    [{ start: '10' }, 'end'],
    [{ end: '10' }, 'start'],
    [{ start: '20', end: '10' }, 'start'],
    [{ time: '5', start: '1', end: '10' }, 'time'],
    [{ start: '1', end: '10', step: '1d' }, 'step'],
    [{ start: '1', end: '10', step: '0s' }, 'step'],
    [{ start: '1', end: '10', step: '600' }, 'step'],
    [{ start: '0', end: String(MAX_POINTS * 60), step: '1m' }, 'step'],
    [{ page: '0', sort_metric: 'x' }, 'page'],
    [{ limit: '0' }, 'limit'],
    [{ limit: 'five' }, 'limit'],
    [{ sort_type: 'up' }, 'sort_type'],
    [{ resources_filter: 'x"} or up{' }, 'resources_filter'],
    [{ resources_filter: 'a.*' }, 'resources_filter'],
    [{ resources_filter: 'a|(b)' }, 'resources_filter'],
    [{ namespaced_resources_filter: 'a/b/c' }, 'namespaced_resources_filter'],
    [{ metrics_filter: 'node_(cpu|load)' }, 'metrics_filter'],
    [{ metrics_filter: 'a{1,100000}' }, 'metrics_filter'],
  ])('when %j is sent, then a 400 naming %s', (query, parameter) => {
    expect(refused(query)).toBe(parameter);
  });

  test('when start to end has exactly the most points, then it is accepted', () => {
    expect(read({ start: '0', end: String((MAX_POINTS - 1) * 60), step: '1m' }).timing).toMatchObject({ step: 60 });
  });

  test('when sort_metric comes with an instant query, then sorting with KubeSphere’s defaults; with a range, none', () => {
    expect(read({ sort_metric: 'node_cpu_utilisation' }).sorting).toEqual({
      metric: 'node_cpu_utilisation',
      order: 'desc',
      page: 1,
      limit: 5,
    });
    expect(read({ sort_metric: 'm', sort_type: 'asc', page: '2', limit: '3' }).sorting).toEqual({
      metric: 'm',
      order: 'asc',
      page: 2,
      limit: 3,
    });
    expect(read({ sort_metric: 'm', start: '1', end: '2' }).sorting).toBeUndefined();
  });

  test('when Go durations are read, then as time.ParseDuration reads them', () => {
    expect(parseGoDuration('600s')).toBe(600);
    expect(parseGoDuration('1h30m')).toBe(5400);
    expect(parseGoDuration('1.5h')).toBe(5400);
    expect(parseGoDuration('1d')).toBeUndefined();
    expect(parseGoDuration('10')).toBeUndefined();
  });
});

describe('metrics_filter', () => {
  test('when the console’s `a|b|c$` is sent, then only the last name is anchored, as KubeSphere’s regexp reads it', () => {
    const wants = metricsFilter('node_load1|node_cpu_usage$');
    expect(wants('node_load1')).toBe(true);
    expect(wants('node_load15')).toBe(true);
    expect(wants('node_cpu_usage')).toBe(true);
    expect(wants('node_cpu_usage_x')).toBe(false);
    expect(wants('x_node_cpu_usage')).toBe(true);
    expect(metricsFilter('^node_.*_total$')('node_cpu_total')).toBe(true);
    expect(metricsFilter('^node_.*_total$')('cluster_cpu_total')).toBe(false);
    expect(metricsFilter(undefined)('anything')).toBe(true);
  });
});

describe('a metrics filter matched in one pass', () => {
  test.each([
    ['node_.*_total', 'x_node_cpu_total_y', true],
    ['^node_.*_total$', 'node_cpu_total', true],
    ['^node_.*_total$', 'node_cpu_total_x', false],
    ['^node_.*_total$', 'node_total', false],
    ['a.*b.*c', 'xaxbxcx', true],
    ['a.*b.*c', 'xcxbxax', false],
    ['^a.*a$', 'a', false],
    ['^a.*a$', 'aa', true],
    ['cpu$', 'node_cpu', true],
    ['^cpu', 'node_cpu', false],
  ])('when %j is matched against %j, then %p (as RE2 reads it)', (filter, name, expected) => {
    expect(metricsFilter(filter)(name)).toBe(expected);
    expect(new RegExp(filter).test(name)).toBe(expected);
  });

  test('when a filter would make a backtracking engine run for ever, then it is answered at once', () => {
    const hostile = `${'.*'.repeat(400)}Z`;
    expect(metricsFilter(hostile)('node_cpu_utilisation_node_cpu_utilisation_node_cpu_utilisation')).toBe(false);
    expect(metricsFilter(`^${'.*a'.repeat(300)}$`)('a'.repeat(299))).toBe(false);
  });
});

describe('resources_filter', () => {
  test('when names come as the console sends them, then exactly those names', () => {
    expect(namesOf('resources_filter', 'a|b.c|d_e$')).toEqual({ names: ['a', 'b.c', 'd_e'] });
    expect(namesOf('resources_filter', '^only$')).toEqual({ names: ['only'] });
    expect(namesOf('resources_filter', '.*')).toEqual({ all: true });
    expect(pairsOf('a/web-1|web-2$')).toEqual([{ namespace: 'a', pod: 'web-1' }, { pod: 'web-2' }]);
  });
});

describe('the namespace clamp', () => {
  test('when a query ends before the namespace was made, then nothing is asked; a range starting before it starts on a step after', () => {
    expect(clamped({ instant: 99 }, 100)).toBeUndefined();
    expect(clamped({ instant: 100 }, 100)).toEqual({ instant: 100 });
    expect(clamped({ start: 0, end: 99, step: 10 }, 100)).toBeUndefined();
    expect(clamped({ start: 0, end: 200, step: 30 }, 100)).toEqual({ start: 120, end: 200, step: 30 });
    expect(clamped({ start: 100, end: 200, step: 30 }, 100)).toEqual({ start: 100, end: 200, step: 30 });
    // a step past the end: no point is after the namespace was made
    expect(clamped({ start: 0, end: 110, step: 60 }, 100)).toBeUndefined();
  });
});

describe('the shared cache’s times', () => {
  test('when requests differ by seconds, then they are asked at one aligned time and answered at their own', () => {
    const a = alignedTiming({ start: 1_699_988_003, end: 1_700_000_003, step: 600 }, 10);
    const b = alignedTiming({ start: 1_699_988_007, end: 1_700_000_007, step: 600 }, 10);
    expect(a.upstream).toEqual(b.upstream);
    expect(a.upstream).toEqual({ start: 1_699_988_000, end: 1_700_000_000, step: 600 });
    const upstream = {
      data: { resultType: 'matrix', result: [{ metric: { node: 'n' }, values: [[1_699_988_000, '1']] }] },
    };
    expect(shifted(upstream as never, b.shift)).toEqual({
      data: { resultType: 'matrix', result: [{ metric: { node: 'n' }, values: [[1_699_988_007, '1']] }] },
    });
    // the cached answer is left as it was
    expect(upstream.data.result[0]?.values[0]).toEqual([1_699_988_000, '1']);
    expect(alignedTiming({ instant: 1_700_000_009 }, 10)).toEqual({ upstream: { instant: 1_700_000_000 }, shift: 9 });
    // a step shorter than the window moves by less than a step
    expect(alignedTiming({ start: 5, end: 17, step: 3 }, 10)).toEqual({
      upstream: { start: 3, end: 15, step: 3 },
      shift: 2,
    });
  });
});

describe('an upstream answer', () => {
  test('when Prometheus answers, then its data; an error, its message; too many series, an error', () => {
    expect(answerOf(200, '{"status":"success","data":{"resultType":"vector","result":[]}}', 10)).toEqual({
      data: { resultType: 'vector', result: [] },
    });
    expect(
      answerOf(
        422,
        '{"status":"error","errorType":"execution","error":"query processing would load too many samples"}',
        10,
      ),
    ).toEqual({ error: 'execution: query processing would load too many samples' });
    expect(answerOf(502, '<html>bad gateway</html>', 10)).toEqual({
      error: 'the monitoring backend answered 502 without a Prometheus API body',
    });
    const many = JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{}, {}, {}] } });
    expect(answerOf(200, many, 2)).toEqual({ error: 'too many series (3; at most 2): name fewer resources' });
  });
});

describe('sorting and paging, as KubeSphere’s sort_page.go', () => {
  const vector = (metric: string, samples: [string, string | undefined][]) => ({
    metric_name: metric,
    data: {
      resultType: 'vector',
      result: samples.map(([node, value]) =>
        metricValue({ metric: { node }, ...(value !== undefined && { value: [NOW, value] as [number, string] }) }),
      ),
    },
  });

  test('when nodes are sorted by one metric, then every metric follows that order, with placeholders, and is paged', () => {
    const answer: MetricsAnswer = {
      results: [
        vector('node_cpu_utilisation', [
          ['n1', '0.2'],
          ['n2', '0.9'],
          ['n3', 'NaN'],
          ['n4', '0.9'],
        ]),
        vector('node_cpu_total', [
          ['n1', '4'],
          ['n3', '8'],
          ['n5', '2'],
        ]),
        { metric_name: 'node_load1', error: 'down' },
      ],
    };
    const first = sortAndPage(answer, { metric: 'node_cpu_utilisation', order: 'desc', page: 1, limit: 2 }, 'node');
    expect(first).toMatchObject({ page: 1, total_page: 3, total_item: 5 });
    const nodes = (i: number, a: MetricsAnswer) => a.results[i]?.data?.result.map((v) => v.metric?.node ?? '-');
    // ties by name, NaN after numbers, resources the sorted metric lacks after, by name
    expect(nodes(0, first)).toEqual(['n2', 'n4']);
    expect(nodes(1, first)).toEqual(['-', '-']);
    const second = sortAndPage(answer, { metric: 'node_cpu_utilisation', order: 'desc', page: 2, limit: 2 }, 'node');
    expect(nodes(0, second)).toEqual(['n1', 'n3']);
    expect(nodes(1, second)).toEqual(['n1', 'n3']);
    const third = sortAndPage(answer, { metric: 'node_cpu_utilisation', order: 'asc', page: 3, limit: 2 }, 'node');
    expect(nodes(1, third)).toEqual(['n5']);
    expect(third.results[2]).toEqual({ metric_name: 'node_load1', error: 'down' });
    expect(
      sortAndPage(answer, { metric: 'x', order: 'desc', page: 9, limit: 2 }, 'node').results[0]?.data?.result,
    ).toEqual([]);
  });

  test('when nothing is sorted, then the totals are left out, as KubeSphere omits zeros; infinities sort as numbers', () => {
    const none = sortAndPage({ results: [vector('m', [])] }, { metric: 'm', order: 'desc', page: 1, limit: 5 }, 'node');
    expect(none).toEqual({ results: [vector('m', [])], page: 1 });
    const infinite = sortAndPage(
      {
        results: [
          vector('m', [
            ['a', '1'],
            ['b', '+Inf'],
            ['c', '-Inf'],
          ]),
        ],
      },
      { metric: 'm', order: 'desc', page: 1, limit: 5 },
      'node',
    );
    expect(infinite.results[0]?.data?.result.map((v) => v.metric?.node)).toEqual(['b', 'a', 'c']);
  });
});

describe('the PromQL reader of these tests', () => {
  test('when a query is broken, then it reports an error (so a clean parse means something)', () => {
    expect(parsePromql('up{namespace="a"').errors).not.toEqual([]);
    expect(parsePromql('sum(up{a="b"}) by (').errors).not.toEqual([]);
    expect(parsePromql('up{namespace="a"} or x{"b"="c"}').errors).toEqual(['a quoted label name in x{"b"="c"}']);
  });
});

describe('the right each route asks, as a SubjectAccessReview on monitoring.kapi.io', () => {
  const m = (verb: string, resource: string, extra: Record<string, string> = {}) => ({
    verb,
    group: 'monitoring.kapi.io',
    resource,
    ...extra,
  });
  test.each([
    [{ kind: 'cluster' }, m('get', 'cluster')],
    [{ kind: 'component', component: 'etcd' }, m('get', 'components', { name: 'etcd' })],
    [{ kind: 'nodes' }, m('list', 'nodes')],
    [{ kind: 'nodes', node: 'n1' }, m('get', 'nodes', { name: 'n1' })],
    // a node's pods are of every namespace: a right of their own
    [{ kind: 'node-pods', node: 'n1' }, m('get', 'nodes', { name: 'n1', subresource: 'pods' })],
    [{ kind: 'workspaces' }, m('list', 'workspaces')],
    [{ kind: 'workspace', workspace: 'w' }, m('get', 'workspaces', { name: 'w' })],
    [{ kind: 'workspace-namespaces', workspace: 'w' }, m('get', 'workspaces', { name: 'w' })],
    [{ kind: 'namespaces' }, m('list', 'namespaces')],
    [{ kind: 'namespace', namespace: 'a' }, m('get', 'namespaces', { name: 'a', namespace: 'a' })],
    [{ kind: 'workloads', namespace: 'a' }, m('list', 'workloads', { namespace: 'a' })],
    [
      { kind: 'workload-pods', namespace: 'a', workloadKind: 'deployment', workload: 'web' },
      m('get', 'workloads', { name: 'web', namespace: 'a' }),
    ],
    [{ kind: 'pods' }, m('list', 'pods')],
    [{ kind: 'namespace-pods', namespace: 'a' }, m('list', 'pods', { namespace: 'a' })],
    [{ kind: 'namespace-pods', namespace: 'a', pod: 'p' }, m('get', 'pods', { name: 'p', namespace: 'a' })],
    [{ kind: 'containers', namespace: 'a', pod: 'p' }, m('get', 'pods', { name: 'p', namespace: 'a' })],
    [{ kind: 'pvcs', namespace: 'a' }, m('list', 'persistentvolumeclaims', { namespace: 'a' })],
    [{ kind: 'pvcs', namespace: 'a', pvc: 'c' }, m('get', 'persistentvolumeclaims', { name: 'c', namespace: 'a' })],
    [
      { kind: 'storageclass-pvcs', storageClass: 'fast' },
      m('get', 'storageclasses', { name: 'fast', subresource: 'persistentvolumeclaims' }),
    ],
  ] as const)('when %j is asked for, then %j', (target, expected) => {
    expect(accessOf(target as never)).toEqual(expected);
  });
});
