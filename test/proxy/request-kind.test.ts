import {
  hasRequestBody,
  isLongRunning,
  isRelayedUpgrade,
  originFormTarget,
  streamKind,
} from '../../src/proxy/request-kind.js';

describe('isLongRunning', () => {
  it.each([
    ['a get', '/api/v1/nodes/n1', false],
    ['a list', '/api/v1/pods', false],
    ['a list with watch=false', '/api/v1/pods?watch=false', false],
    ['a watch by parameter', '/api/v1/pods?watch=true', true],
    ['a watch with watch=1', '/api/v1/nodes?resourceVersion=5&watch=1', true],
    ['a watch with watch=True', '/apis/apps/v1/deployments?watch=True', true],
    ['a namespaced watch', '/apis/apps/v1/namespaces/ns/deployments?watch=true&labelSelector=a', true],
    ['a legacy /watch/ path', '/api/v1/watch/namespaces/ns/pods', true],
    ['a legacy /watch/ path in a group', '/apis/apps/v1/watch/deployments', true],
    ['exec', '/api/v1/namespaces/ns/pods/p/exec?command=sh&stdin=true', true],
    ['attach', '/api/v1/namespaces/ns/pods/p/attach', true],
    ['port-forward', '/api/v1/namespaces/ns/pods/p/portforward', true],
    ['logs', '/api/v1/namespaces/ns/pods/p/log?follow=true', true],
    ['a service proxy', '/api/v1/namespaces/ns/services/s:80/proxy/metrics', true],
    ['a node proxy', '/api/v1/nodes/n1/proxy/stats', true],
    ['a pod status', '/api/v1/namespaces/ns/pods/p/status', false],
    ['a namespace status', '/api/v1/namespaces/ns/status', false],
    ['a namespace called exec', '/api/v1/namespaces/exec', false],
    ['a pod called log', '/api/v1/namespaces/ns/pods/log', false],
    ['a resource named watch in a list', '/api/v1/namespaces/watch/pods', false],
    ['discovery', '/apis', false],
    ['version', '/version', false],
    ['a parameter that only contains watch', '/api/v1/pods?watchdog=true', false],
  ])('when the request is %s (GET %s), then long-running is %s', (_case, url, expected) => {
    expect(isLongRunning('GET', url)).toBe(expected);
  });

  it.each([
    ['a create with watch=true', 'POST', '/api/v1/namespaces/x/configmaps?watch=true', false],
    ['an update with watch=1', 'PUT', '/api/v1/namespaces/x/configmaps/c?watch=1', false],
    ['a patch on a legacy /watch/ path', 'PATCH', '/api/v1/watch/namespaces/x/configmaps/c', false],
    ['a post to log', 'POST', '/api/v1/namespaces/ns/pods/p/log?follow=true', false],
    ['an exec by POST', 'POST', '/api/v1/namespaces/ns/pods/p/exec?command=sh&stdin=true', true],
    ['an attach by POST', 'POST', '/api/v1/namespaces/ns/pods/p/attach', true],
    ['a port-forward by POST', 'POST', '/api/v1/namespaces/ns/pods/p/portforward', true],
    ['a service proxy by POST', 'POST', '/api/v1/namespaces/ns/services/s:80/proxy/upload', true],
    ['a legacy /proxy/ path by PUT', 'PUT', '/api/v1/proxy/namespaces/ns/services/s/x', true],
  ])('when the request is %s (%s %s), then long-running is %s', (_case, method, url, expected) => {
    expect(isLongRunning(method, url)).toBe(expected);
  });
});

describe('isLongRunning, asked again (answers are remembered per path and kind of method)', () => {
  it('when one path is asked with GET and other methods in turn, then each answer is its method’s', () => {
    const answers = ['GET', 'POST', 'GET', 'DELETE', 'GET'].map((method) =>
      isLongRunning(method, '/api/v1/watch/namespaces/a/pods'),
    );
    expect(answers).toEqual([true, false, true, false, true]);
    expect(['GET', 'GET'].map((method) => isLongRunning(method, '/api/v1/namespaces/a/pods/p/log?follow=1'))).toEqual([
      true,
      true,
    ]);
    expect(isLongRunning('GET', '/api/v1/namespaces/a/pods?watch=true')).toBe(true);
    expect(isLongRunning('GET', '/api/v1/namespaces/a/pods')).toBe(false);
  });
});

describe('isRelayedUpgrade', () => {
  it.each([
    ['a WebSocket exec', '/api/v1/namespaces/ns/pods/p/exec?command=sh', 'websocket', true],
    ['a WebSocket in another case', '/api/v1/namespaces/ns/pods/p/attach', 'WebSocket', true],
    ['SPDY/3.1 port-forward', '/api/v1/namespaces/ns/pods/p/portforward', 'SPDY/3.1', true],
    ['a group path', '/apis/kubevirt.io/v1/namespaces/ns/vmis/v/console', 'websocket', true],
    ['h2c', '/api/v1/pods', 'h2c', false],
    ['no Upgrade header', '/api/v1/pods', undefined, false],
    ['a WebSocket to /kapis', '/kapis/resources.kapi.io/v1alpha3/nodes', 'websocket', false],
    ['a WebSocket to a look-alike path', '/apisx/v1', 'websocket', false],
    ['a WebSocket to /version', '/version', 'websocket', false],
  ])('when the upgrade is %s, then relayed is %s', (_case, url, upgrade, expected) => {
    expect(isRelayedUpgrade(url, upgrade)).toBe(expected);
  });
});

describe('originFormTarget', () => {
  it.each([
    ['/api/v1/nodes?limit=1', '/api/v1/nodes?limit=1'],
    ['http://evil.example/api/v1/nodes', undefined],
    ['//evil.example/api', undefined],
    ['*', undefined],
    ['/api/../../healthz', undefined],
    ['/api/v1/namespaces/%2e%2e/pods', undefined],
    ['/api/v1/./nodes', undefined],
    ['/api/v1/namespaces/a%2Fb', undefined],
    ['/api/v1/namespaces/a%5cb', undefined],
    ['/api/v1/nodes?fieldSelector=metadata.name%3D..%2Fx', '/api/v1/nodes?fieldSelector=metadata.name%3D..%2Fx'],
    ['/api/v1/nodes/node.1..2', '/api/v1/nodes/node.1..2'],
  ])('when the target is %s, then it is forwarded as %s', (url, expected) => {
    expect(originFormTarget(url)).toBe(expected);
  });
});

describe('hasRequestBody', () => {
  it.each([
    ['no framing headers', {}, false],
    ['Content-Length: 0', { 'content-length': '0' }, false],
    ['Content-Length: 12', { 'content-length': '12' }, true],
    ['Transfer-Encoding: chunked', { 'transfer-encoding': 'chunked' }, true],
  ])('when the request has %s, then it has a body: %s', (_case, headers, expected) => {
    expect(hasRequestBody(headers)).toBe(expected);
  });
});

describe('streamKind', () => {
  test.each([
    ['/api/v1/nodes?watch=1', 'watch'],
    ['/apis/apps/v1/namespaces/a/deployments?watch=true&labelSelector=x', 'watch'],
    ['/api/v1/watch/namespaces/a/pods', 'watch'],
    ['/api/v1/namespaces/a/pods/p/log?follow=true', 'log'],
    ['/api/v1/namespaces/a/pods/p/exec?command=sh', 'exec'],
    ['/api/v1/namespaces/a/pods/p/attach', 'attach'],
    ['/api/v1/namespaces/a/pods/p/portforward?ports=80', 'portforward'],
    ['/api/v1/namespaces/a/services/s/proxy/x', 'proxy'],
    ['/api/v1/nodes/n', 'other'],
  ])('when the long-running request is %s, then its stream kind is %s', (url, kind) => {
    expect(streamKind(url)).toBe(kind);
  });
});
