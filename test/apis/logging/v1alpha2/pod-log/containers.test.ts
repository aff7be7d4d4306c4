import { describe, expect, it } from '@jest/globals';
import type { NamespaceScope } from '../../../../../src/apis/logging/v1alpha2/log-backend.js';
import { selectContainers } from '../../../../../src/apis/logging/v1alpha2/pod-log/containers.js';
import type { LogFilter } from '../../../../../src/apis/logging/v1alpha2/query.js';
import type { CachedPod } from '../../../../../src/kube/pod-directory.js';

const pod = (namespace: string, name: string, workload: string | undefined, containers: string[], bound = true) =>
  ({
    key: `${namespace}/${name}`,
    namespace,
    workload,
    containers,
    nodeName: bound ? 'node-1' : undefined,
    cpuRequestsMilli: 0,
    cpuLimitsMilli: 0,
    memoryRequestsBytes: 0,
    memoryLimitsBytes: 0,
    formats: 0,
    finished: false,
  }) as CachedPod;

const PODS = [
  pod('demo', 'web-abc12', 'web', ['app', 'proxy']),
  pod('demo', 'api-0', 'api', ['api']),
  pod('demo', 'pending-1', 'web', ['app'], false),
  pod('kube-system', 'kube-proxy-x1', 'kube-proxy', ['kube-proxy']),
  pod('team-a', 'job-1-zz', undefined, ['init', 'main']),
];
const SOURCE = {
  namespaceNames: () => new Set(PODS.map((p) => p.namespace)),
  podsIn: (ns: string) => PODS.filter((p) => p.namespace === ns),
};
const ALL: NamespaceScope = { kind: 'all' };
const BASE: LogFilter = { startTime: undefined, endTime: 0 };
const names = (filter: Partial<LogFilter>, scope: NamespaceScope = ALL) =>
  selectContainers(SOURCE, { ...BASE, ...filter }, scope).map((t) => `${t.namespace}/${t.pod}/${t.container}`);

describe('selectContainers', () => {
  it('when nothing filters, then every container of every bound pod is read, sorted and numbered', () => {
    const targets = selectContainers(SOURCE, BASE, ALL);
    expect(targets.map((t) => `${t.namespace}/${t.pod}/${t.container}`)).toEqual([
      'demo/api-0/api',
      'demo/web-abc12/app',
      'demo/web-abc12/proxy',
      'kube-system/kube-proxy-x1/kube-proxy',
      'team-a/job-1-zz/init',
      'team-a/job-1-zz/main',
    ]);
    expect(targets.map((t) => t.order)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it.each([
    [{ namespaces: ['team-a'] }, ['team-a/job-1-zz/init', 'team-a/job-1-zz/main']],
    [{ namespaceQuery: ['kube'] }, ['kube-system/kube-proxy-x1/kube-proxy']],
    [{ workloads: ['web'] }, ['demo/web-abc12/app', 'demo/web-abc12/proxy']],
    [{ workloadQuery: ['prox'] }, ['kube-system/kube-proxy-x1/kube-proxy']],
    [{ pods: ['api-0'] }, ['demo/api-0/api']],
    [{ podQuery: ['abc'] }, ['demo/web-abc12/app', 'demo/web-abc12/proxy']],
    [{ containers: ['proxy', 'main'] }, ['demo/web-abc12/proxy', 'team-a/job-1-zz/main']],
    [{ containerQuery: ['prox'] }, ['demo/web-abc12/proxy', 'kube-system/kube-proxy-x1/kube-proxy']],
    [{ pods: ['api-0'], podQuery: ['web'] }, []],
  ])('when filtered by %j, then only %j are read', (filter, expected) => {
    expect(names(filter)).toEqual(expected);
  });

  it('when the caller may read some namespaces, then pods elsewhere are never read', () => {
    const scope: NamespaceScope = { kind: 'some', namespaces: new Map([['demo', 1]]) };
    expect(names({}, scope)).toEqual(['demo/api-0/api', 'demo/web-abc12/app', 'demo/web-abc12/proxy']);
    expect(names({ namespaces: ['kube-system'] }, scope)).toEqual([]);
  });
});
