import { describe, expect, it } from '@jest/globals';
import { parseLogQuery } from '../../../../src/apis/logging/v1alpha2/query.js';
import { InvalidParameterError } from '../../../../src/server/errors.js';

const NOW = 1_700_000_000;

function problem(query: Record<string, unknown>): { parameter: string; message: string } {
  try {
    parseLogQuery(query, NOW);
  } catch (error) {
    if (error instanceof InvalidParameterError) return { parameter: error.parameter, message: error.message };
    throw error;
  }
  throw new Error('no error');
}

describe('parseLogQuery', () => {
  it('when nothing is given, then KubeSphere 3.4 defaults apply (no lower time bound, now, 15m, desc, 0, 10)', () => {
    expect(parseLogQuery({}, NOW)).toEqual({
      operation: 'query',
      interval: { text: '15m', kind: 'fixed', ms: 900_000 },
      sort: 'desc',
      from: 0,
      size: 10,
      startTime: undefined,
      endTime: NOW,
    });
  });

  it.each([
    ['operation', 'histogram', { operation: 'histogram' }],
    ['operation', 'statistics', { operation: 'statistics' }],
    ['operation', 'export', { operation: 'export' }],
    ['namespaces', 'a,b', { namespaces: ['a', 'b'] }],
    ['namespaces', 'a,,b,', { namespaces: ['a', 'b'] }],
    ['namespace_query', 'Dem,KUBE', { namespaceQuery: ['dem', 'kube'] }],
    ['workloads', 'web', { workloads: ['web'] }],
    ['workload_query', 'We', { workloadQuery: ['we'] }],
    ['pods', 'web-1,web-2', { pods: ['web-1', 'web-2'] }],
    ['pod_query', 'WEB', { podQuery: ['web'] }],
    ['containers', 'App', { containers: ['App'] }],
    ['container_query', 'App', { containerQuery: ['app'] }],
    ['log_query', 'Error,TIMEOUT', { logQuery: ['error', 'timeout'] }],
    ['interval', '1h', { interval: { text: '1h', kind: 'fixed', ms: 3_600_000 } }],
    ['interval', '30s', { interval: { text: '30s', kind: 'fixed', ms: 30_000 } }],
    ['interval', '2w', { interval: { text: '2w', kind: 'fixed', ms: 1_209_600_000 } }],
    ['interval', '1M', { interval: { text: '1M', kind: 'calendar', unit: 'month' } }],
    ['interval', '1q', { interval: { text: '1q', kind: 'calendar', unit: 'quarter' } }],
    ['interval', '1y', { interval: { text: '1y', kind: 'calendar', unit: 'year' } }],
    ['start_time', '1699990000', { startTime: 1_699_990_000 }],
    ['start_time', '0', { startTime: 0 }],
    ['end_time', '1699999999', { endTime: 1_699_999_999 }],
    ['end_time', '1800000000', { endTime: 1_800_000_000 }],
    ['sort', 'asc', { sort: 'asc' }],
    ['from', '20', { from: 20 }],
    ['size', '0', { size: 0 }],
    ['size', '10000', { size: 10_000 }],
  ])('when %s=%s, then it is read', (parameter, value, expected) => {
    expect(parseLogQuery({ [parameter]: value }, NOW)).toMatchObject(expected);
  });

  it('when a parameter is empty, then it counts as absent, as in KubeSphere', () => {
    expect(parseLogQuery({ operation: '', start_time: '', namespaces: '', size: '' }, NOW)).toEqual(
      parseLogQuery({}, NOW),
    );
  });

  it('when an unknown parameter is given, then it is ignored', () => {
    expect(parseLogQuery({ level: 'cluster', workspaces: 'w' }, NOW)).toEqual(parseLogQuery({}, NOW));
  });

  it('when a parameter is repeated with one value, then it is read; with two values, then it is refused', () => {
    expect(parseLogQuery({ sort: ['asc', 'asc'] }, NOW).sort).toBe('asc');
    expect(problem({ sort: ['asc', 'desc'] })).toMatchObject({ parameter: 'sort' });
    expect(problem({ pods: { a: 'b' } })).toMatchObject({ parameter: 'pods' });
  });

  it.each([
    [
      'start_time',
      '1700000000000',
      /13 digits: it looks like milliseconds; whole Unix seconds are required \(1700000000\)/,
    ],
    ['end_time', '1699999999999', /milliseconds/],
    ['start_time', '1699999999.5', /has a fraction; whole Unix seconds are required/],
    ['start_time', '.5', /fraction/],
    ['end_time', '-1', /negative; whole Unix seconds are required/],
    ['end_time', '2023-11-14T22:13:20Z', /not a number; whole Unix seconds are required/],
    ['start_time', '1e9', /not a number/],
    ['start_time', '170000000000000', /too large/],
    ['operation', 'tail', /"tail" is not one of query, statistics, histogram, export/],
    ['sort', 'ascending', /not one of asc, desc/],
    ['interval', '15', /not an interval/],
    ['interval', '0m', /not an interval/],
    ['interval', '2M', /not an interval/],
    ['interval', '1.5h', /not an interval/],
    ['from', '-1', /integer/],
    ['from', 'x', /integer/],
    ['from', '10001', /integer from 0 to 10000/],
    ['size', '1.5', /integer/],
    ['size', '20000', /integer from 0 to 10000/],
  ])('when %s=%s, then a 400 names the parameter', (parameter, value, message) => {
    const found = problem({ [parameter]: value });
    expect(found.parameter).toBe(parameter);
    expect(found.message).toContain(`"${parameter}"`);
    expect(found.message).toMatch(message);
  });

  it('when end_time is before start_time, then end_time is refused', () => {
    expect(problem({ start_time: '1699999000', end_time: '1699998000' })).toMatchObject({
      parameter: 'end_time',
      message: expect.stringContaining('before start_time 1699999000'),
    });
  });

  it('when start_time is after now and no end_time is given, then start_time is refused', () => {
    expect(problem({ start_time: String(NOW + 60) })).toMatchObject({
      parameter: 'start_time',
      message: expect.stringContaining('in the future'),
    });
  });

  it('when from + size exceeds the result window, then size is refused', () => {
    expect(parseLogQuery({ from: '9990', size: '10' }, NOW)).toMatchObject({ from: 9990, size: 10 });
    expect(problem({ from: '9991', size: '10' })).toMatchObject({ parameter: 'size' });
  });
});
