import { builtinTypes } from '../../src/sandbox/builtin-types.js';
import { parseRequestInfo } from '../../src/sandbox/request-info.js';

const types = builtinTypes();
const find = (group: string, resource: string) => types.find((t) => t.group === group && t.resource === resource);

describe('request info', () => {
  test.each([
    ['GET', '/api/v1/nodes', '', { verb: 'list', resource: 'nodes', namespace: '', name: '' }],
    ['GET', '/api/v1/nodes', 'watch=1', { verb: 'watch', resource: 'nodes' }],
    ['GET', '/api/v1/nodes', 'watch=false', { verb: 'list' }],
    ['GET', '/api/v1/nodes/node-1', '', { verb: 'get', resource: 'nodes', name: 'node-1' }],
    ['GET', '/api/v1/namespaces', '', { verb: 'list', resource: 'namespaces', namespace: '' }],
    ['GET', '/api/v1/namespaces/demo', '', { verb: 'get', resource: 'namespaces', name: 'demo', namespace: 'demo' }],
    [
      'PUT',
      '/api/v1/namespaces/demo/status',
      '',
      { verb: 'update', resource: 'namespaces', name: 'demo', subresource: 'status' },
    ],
    ['GET', '/api/v1/namespaces/demo/pods', '', { verb: 'list', resource: 'pods', namespace: 'demo' }],
    ['POST', '/api/v1/namespaces/demo/pods', '', { verb: 'create', resource: 'pods', namespace: 'demo' }],
    ['GET', '/api/v1/namespaces/demo/pods/p/log', '', { verb: 'get', resource: 'pods', name: 'p', subresource: 'log' }],
    ['PATCH', '/api/v1/namespaces/demo/pods/p/status', '', { verb: 'patch', subresource: 'status' }],
    ['DELETE', '/api/v1/namespaces/demo/pods/p', '', { verb: 'delete', name: 'p' }],
    ['DELETE', '/api/v1/namespaces/demo/pods', '', { verb: 'deletecollection', name: '' }],
    ['GET', '/api/v1/watch/namespaces/demo/pods', '', { verb: 'watch', resource: 'pods', namespace: 'demo' }],
    [
      'GET',
      '/apis/iam.kapi.io/v1beta1/users/admin',
      '',
      { verb: 'get', apiGroup: 'iam.kapi.io', apiVersion: 'v1beta1', resource: 'users', name: 'admin' },
    ],
    [
      'GET',
      '/api/v1/namespaces/kapi-system/secrets',
      'fieldSelector=metadata.name%3Dk',
      { verb: 'list', resource: 'secrets', name: 'k' },
    ],
    ['GET', '/api/v1/namespaces/kapi-system/secrets', 'fieldSelector=metadata.name%21%3Dk', { verb: 'list', name: '' }],
    ['GET', '/api/v1/pods', 'fieldSelector=bogus', { verb: 'list', name: '' }],
  ])('when %s %s?%s, then the request is %o', (method, path, query, expected) => {
    const info = parseRequestInfo(method, path, new URLSearchParams(query), find);
    expect(info.isResourceRequest).toBe(true);
    expect(info).toMatchObject(expected);
  });

  test.each([
    ['GET', '/api', 'get'],
    ['GET', '/api/v1', 'get'],
    ['GET', '/apis/iam.kapi.io/v1beta1', 'get'],
    ['POST', '/version', 'post'],
    ['GET', '/healthz', 'get'],
  ])('when %s %s, then it is a non-resource request with verb %s', (method, path, verb) => {
    const info = parseRequestInfo(method, path, new URLSearchParams(), find);
    expect(info).toMatchObject({ isResourceRequest: false, verb, path });
  });
});
