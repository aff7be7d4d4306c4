import { describe, expect, test } from '@jest/globals';
import { projectWatchOf, watchEvent } from '../../../src/apis/tenant/project-watch.js';

describe('projectWatchOf', () => {
  test.each([
    ['the console’s watch', '/api/v1/watch/namespaces?labelSelector=kapi.io/workspace=ws-a', 'ws-a'],
    ['a list with watch=true', '/api/v1/namespaces?watch=true&labelSelector=kapi.io%2Fworkspace%3Dws-a', 'ws-a'],
    ['the == form', '/api/v1/watch/namespaces?labelSelector=kapi.io/workspace==ws-a', 'ws-a'],
    ['a watch of every namespace', '/api/v1/watch/namespaces', undefined],
    ['another selector beside it', '/api/v1/watch/namespaces?labelSelector=kapi.io/workspace=ws-a,env=prod', undefined],
    ['a set selector', '/api/v1/watch/namespaces?labelSelector=kapi.io/workspace in (a,b)', undefined],
    [
      'a field selector too',
      '/api/v1/watch/namespaces?labelSelector=kapi.io/workspace=a&fieldSelector=metadata.name=x',
      undefined,
    ],
    ['a list without watch', '/api/v1/namespaces?labelSelector=kapi.io/workspace=ws-a', undefined],
    [
      'a workspace name that is no name',
      '/api/v1/watch/namespaces?labelSelector=kapi.io/workspace=Not_A_Name',
      undefined,
    ],
    ['one namespace', '/api/v1/watch/namespaces/x?labelSelector=kapi.io/workspace=ws-a', undefined],
  ])('when the request is %s, then the workspace is as read', (_case, url, workspace) => {
    expect(projectWatchOf(url)).toBe(workspace);
  });

  test('when an event is sent, then it is kube-apiserver’s watch event', () => {
    expect(JSON.parse(watchEvent('ADDED', { kind: 'Namespace' }))).toEqual({
      type: 'ADDED',
      object: { kind: 'Namespace' },
    });
  });
});
