import { STATUS_CODES } from 'node:http';
import {
  codeLabel,
  forwardedRoute,
  methodLabel,
  RouteLabels,
  RouteTable,
} from '../../src/observability/route-labels.js';

describe('RouteTable', () => {
  const table = new RouteTable([
    '/oauth/token',
    '/kapis/resources.kapi.io/v1alpha3/nodes',
    '/kapis/resources.kapi.io/v1alpha3/nodes/{name}',
    '/kapis/resources.kapi.io/v1alpha3/{resources}',
    '/kapis/resources.kapi.io/v1alpha3/namespaces/{namespace}/{resources}',
    '/api-docs/',
  ]);

  test.each([
    ['/oauth/token', '/oauth/token'],
    ['/kapis/resources.kapi.io/v1alpha3/nodes', '/kapis/resources.kapi.io/v1alpha3/nodes'],
    ['/kapis/resources.kapi.io/v1alpha3/nodes/', '/kapis/resources.kapi.io/v1alpha3/nodes'],
    ['/kapis/resources.kapi.io/v1alpha3/nodes/node-7', '/kapis/resources.kapi.io/v1alpha3/nodes/{name}'],
    ['/kapis/resources.kapi.io/v1alpha3/pods', '/kapis/resources.kapi.io/v1alpha3/{resources}'],
    [
      '/kapis/resources.kapi.io/v1alpha3/namespaces/x/pods',
      '/kapis/resources.kapi.io/v1alpha3/namespaces/{namespace}/{resources}',
    ],
    ['/api-docs/', '/api-docs/'],
    ['/api-docs', '/api-docs/'],
  ])('when the path is %s, then its template %s is the label (literal segments first)', (path, template) => {
    expect(table.match(path)).toBe(template);
  });

  test.each([
    '/oauth/token/x',
    '/oauth/anything-else',
    '/kapis/a/b/c',
    '/kapis/resources.kapi.io/v1alpha3/nodes/a/b',
    '/kapis/resources.kapi.io/v1alpha3//',
    '/',
    '',
  ])('when the path %j matches no template, then it has no label of its own', (path) => {
    expect(table.match(path)).toBeUndefined();
  });
});

describe('forwardedRoute', () => {
  test.each([
    ['/api', '/api'],
    ['/api/v1', '/api'],
    ['/apis', '/apis'],
    ['/apis/apps', '/apis'],
    ['/apis/apps/v1', '/apis'],
    ['/version', '/version'],
    ['/openapi/v3/apis/apps/v1', '/openapi'],
    ['/api/v1/nodes', '/api/v1/nodes'],
    ['/api/v1/nodes/node-1', '/api/v1/nodes'],
    ['/api/v1/nodes/node-1/proxy/metrics', '/api/v1/nodes/proxy'],
    ['/api/v1/namespaces', '/api/v1/namespaces'],
    ['/api/v1/namespaces/default', '/api/v1/namespaces'],
    ['/api/v1/namespaces/default/status', '/api/v1/namespaces/status'],
    ['/api/v1/namespaces/default/finalize', '/api/v1/namespaces/finalize'],
    ['/api/v1/namespaces/default/pods', '/api/v1/pods'],
    ['/api/v1/namespaces/default/pods/web-1/log', '/api/v1/pods/log'],
    ['/api/v1/watch/namespaces/default/pods', '/api/v1/pods'],
    ['/apis/apps/v1/namespaces/default/deployments/web/scale', '/apis/apps/v1/deployments/scale'],
    ['/apis/iam.kapi.io/v1beta1/users/admin', '/apis/iam.kapi.io/v1beta1/users'],
  ])('when the forwarded path is %s, then its route is %s (never a namespace or a name)', (path, route) => {
    expect(forwardedRoute(path)).toBe(route);
  });

  test.each(['/oauth/token', '/kapis/x', '/apiary', '/healthz'])(
    'when %s is not forwarded, then it has none',
    (path) => {
      expect(forwardedRoute(path)).toBeUndefined();
    },
  );
});

describe('RouteLabels', () => {
  test('when kube-apiserver has served a resource, then its route is a label; invented ones stay other', () => {
    const labels = new RouteLabels([]);
    expect(labels.label('/api/v1/namespaces/a/pods/x', 401)).toBe('other');
    expect(labels.label('/api/v1/namespaces/a/pods', 200)).toBe('/api/v1/pods');
    // learned: later answers of any code, and unauthenticated requests, use it
    expect(labels.label('/api/v1/namespaces/b/pods/y', 401)).toBe('/api/v1/pods');
    expect(labels.label('/api/v1/namespaces/b/pods/y', 404)).toBe('/api/v1/pods');
    expect(labels.label('/apis/made.up/v1/things', 404)).toBe('other');
    expect(labels.label('/apis/made.up/v1/things', 403)).toBe('other');
    expect(labels.label('/apis', 401)).toBe('/apis');
  });

  test('when more resource routes were served than the cap, then the rest are other', () => {
    const labels = new RouteLabels([], 2);
    expect(labels.label('/apis/a/v1/one', 200)).toBe('/apis/a/v1/one');
    expect(labels.label('/apis/a/v1/two', 200)).toBe('/apis/a/v1/two');
    expect(labels.label('/apis/a/v1/three', 200)).toBe('other');
    expect(labels.label('/apis/a/v1/one', 500)).toBe('/apis/a/v1/one');
  });

  test("when a path is kapi's own, then it is labelled by its template or as other", () => {
    const labels = new RouteLabels(['/oauth/token']);
    expect(labels.label('/oauth/token', 400)).toBe('/oauth/token');
    expect(labels.label('/oauth/x-made-up', 404)).toBe('other');
  });
});

describe('methodLabel and codeLabel', () => {
  test.each([
    ['GET', 'GET'],
    ['PATCH', 'PATCH'],
    ['PROPFIND', 'other'],
    ['M-SEARCH', 'other'],
  ])('when the method is %s, then the label is %s', (method, label) => {
    expect(methodLabel(method)).toBe(label);
  });

  test.each([
    [200, '200'],
    [429, '429'],
    [503, '503'],
    [299, 'other'],
    [999, 'other'],
  ])('when the code is %s, then the label is %s', (code, label) => {
    expect(codeLabel(code)).toBe(label);
  });

  test('when every code Node names is labelled, then the set is bounded by that list', () => {
    const labels = new Set(Array.from({ length: 900 }, (_, i) => codeLabel(100 + i)));
    expect(labels.size).toBe(Object.keys(STATUS_CODES).length + 1);
  });
});
