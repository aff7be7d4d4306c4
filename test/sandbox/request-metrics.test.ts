import { describe, expect, test } from '@jest/globals';
import { RequestMetrics } from '../../src/sandbox/request-metrics.js';
import type { RequestInfo } from '../../src/sandbox/request-info.js';

function info(verb: string, fields: Partial<RequestInfo> = {}): RequestInfo {
  return {
    isResourceRequest: true,
    path: '/api/v1/pods',
    verb,
    apiPrefix: 'api',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: '',
    resource: 'pods',
    subresource: '',
    name: '',
    parts: [],
    ...fields,
  };
}

describe('RequestMetrics (apiserver_request_total)', () => {
  test.each([
    ['list', {}, 'LIST', 'cluster'],
    ['watch', { namespace: 'demo' }, 'WATCH', 'namespace'],
    ['get', { namespace: 'demo', name: 'p' }, 'GET', 'resource'],
    ['get', { namespace: 'demo', name: 'p', subresource: 'exec' }, 'CONNECT', 'resource'],
    ['create', { namespace: 'demo' }, 'POST', 'namespace'],
    ['update', { namespace: 'demo', name: 'p' }, 'PUT', 'resource'],
    ['patch', { namespace: 'demo', name: 'p', subresource: 'status' }, 'PATCH', 'resource'],
    ['delete', { namespace: 'demo', name: 'p' }, 'DELETE', 'resource'],
    ['deletecollection', { namespace: 'demo' }, 'DELETE', 'namespace'],
  ] as const)('when a %s request is answered, then it counts as kube names it', (verb, fields, metricsVerb, scope) => {
    const metrics = new RequestMetrics();
    metrics.count(info(verb, fields), 200);
    metrics.count(info(verb, fields), 200);
    const subresource = 'subresource' in fields ? fields.subresource : '';
    expect(metrics.text()).toContain(
      `apiserver_request_total{verb="${metricsVerb}",group="",version="v1",resource="pods",subresource="${subresource}",scope="${scope}",component="apiserver",code="200"} 2\n`,
    );
  });

  test('when requests answer with other codes, then each code is its own series, and non-resource paths have empty labels', () => {
    const metrics = new RequestMetrics();
    metrics.count(info('create', { apiGroup: 'iam.kapi.io', apiVersion: 'v1beta1', resource: 'loginhistories' }), 201);
    metrics.count(info('create', { apiGroup: 'iam.kapi.io', apiVersion: 'v1beta1', resource: 'loginhistories' }), 409);
    metrics.count({ ...info('get'), isResourceRequest: false, path: '/version' }, 200);
    const text = metrics.text();
    expect(text).toMatch(/^# HELP apiserver_request_total /);
    expect(text).toContain('# TYPE apiserver_request_total counter\n');
    expect(text).toContain(
      'group="iam.kapi.io",version="v1beta1",resource="loginhistories",subresource="",scope="cluster",component="apiserver",code="201"} 1',
    );
    expect(text).toContain('code="409"} 1');
    expect(text).toContain(
      'apiserver_request_total{verb="GET",group="",version="",resource="",subresource="",scope="",component="apiserver",code="200"} 1',
    );
  });
});

describe('RequestMetrics (apiserver_request_duration_seconds)', () => {
  test('when requests are answered, then their time is summed per verb and resource, whatever the code', () => {
    const metrics = new RequestMetrics();
    metrics.count(info('get', { namespace: 'demo', name: 'p' }), 200, 0.25);
    metrics.count(info('get', { namespace: 'demo', name: 'p' }), 404, 0.5);
    const labels =
      'verb="GET",group="",version="v1",resource="pods",subresource="",scope="resource",component="apiserver"';
    const text = metrics.text();
    expect(text).toContain('# TYPE apiserver_request_duration_seconds histogram\n');
    expect(text).toContain(`apiserver_request_duration_seconds_bucket{${labels},le="+Inf"} 2\n`);
    expect(text).toContain(`apiserver_request_duration_seconds_sum{${labels}} 0.75\n`);
    expect(text).toContain(`apiserver_request_duration_seconds_count{${labels}} 2\n`);
  });
});
