import { describe, expect, it } from '@jest/globals';
import { removedRouteMessage, replacementQuery } from '../../../../src/apis/logging/v1alpha2/removed-routes.js';

describe('replacementQuery', () => {
  it.each([
    [{ namespace: 'demo' }, {}, '/kapis/logging.kapi.io/v1alpha2/logs?namespaces=demo'],
    [{ namespace: 'demo', workload: 'web' }, {}, '/kapis/logging.kapi.io/v1alpha2/logs?namespaces=demo&workloads=web'],
    [{ namespace: 'demo', pod: 'web-1' }, {}, '/kapis/logging.kapi.io/v1alpha2/logs?namespaces=demo&pods=web-1'],
    [
      { namespace: 'demo', pod: 'web-1', container: 'app' },
      {},
      '/kapis/logging.kapi.io/v1alpha2/logs?namespaces=demo&pods=web-1&containers=app',
    ],
    [
      { namespace: 'demo' },
      { operation: 'histogram', interval: '1h', level: 'x', namespaces: 'other' },
      '/kapis/logging.kapi.io/v1alpha2/logs?namespaces=demo&operation=histogram&interval=1h',
    ],
    [
      { workspace: 'team' },
      { log_query: 'err' },
      '/kapis/logging.kapi.io/v1alpha2/logs?namespaces=<the namespaces of workspace team>&log_query=err',
    ],
  ])('when %j was asked with %j, then the replacement is %s', (params, query, expected) => {
    expect(replacementQuery(params, query)).toBe(expected);
  });

  it('when a workspace route is named, then the message says kapi has no workspaces', () => {
    expect(removedRouteMessage({ workspace: 'team' }, {})).toMatch(/kapi has no workspaces/);
    expect(removedRouteMessage({ namespace: 'demo' }, {})).toMatch(/removed in KubeSphere 3\.3: use GET \/kapis/);
  });
});
