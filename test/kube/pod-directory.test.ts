import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { PodDirectory, podName, workloadOf, type CachedPod } from '../../src/kube/pod-directory.js';

const raw = (namespace: string, name: string, extra: Partial<V1Pod['metadata']> = {}, containers = ['app']): V1Pod => ({
  metadata: { namespace, name, ...extra },
  spec: { containers: containers.map((c) => ({ name: c })), initContainers: [{ name: 'init' }] },
});

const cached = (directory: PodDirectory, pod: V1Pod): CachedPod => ({
  nodeName: 'n1',
  cpuRequestsMilli: 0,
  cpuLimitsMilli: 0,
  memoryRequestsBytes: 0,
  memoryLimitsBytes: 0,
  formats: 0,
  finished: false,
  ...directory.identify(pod, `${pod.metadata!.namespace}/${pod.metadata!.name}`),
});

describe('workloadOf', () => {
  it.each([
    [
      {
        ownerReferences: [{ kind: 'ReplicaSet', name: 'web-7d9c8b6f5', controller: true }],
        labels: { 'pod-template-hash': '7d9c8b6f5' },
      },
      'web',
    ],
    [{ ownerReferences: [{ kind: 'ReplicaSet', name: 'web-7d9c8b6f5', controller: true }] }, 'web-7d9c8b6f5'],
    [{ ownerReferences: [{ kind: 'StatefulSet', name: 'db', controller: true }] }, 'db'],
    [{ ownerReferences: [{ kind: 'Job', name: 'report-2900', controller: true }] }, 'report-2900'],
    [{}, undefined],
  ])('when the pod metadata is %j, then the workload is %s', (metadata, expected) => {
    expect(workloadOf({ metadata: metadata as V1Pod['metadata'] })).toBe(expected);
  });
});

describe('PodDirectory', () => {
  it('when pods are added and removed, then each namespace lists its own and empty namespaces disappear', () => {
    const directory = new PodDirectory();
    const a = cached(directory, raw('demo', 'a'));
    const b = cached(directory, raw('demo', 'b'));
    const c = cached(directory, raw('ops', 'c'));
    for (const pod of [a, b, c]) directory.add(pod);
    expect([...directory.namespaceNames()].sort()).toEqual(['demo', 'ops']);
    expect([...directory.podsIn('demo')].map(podName)).toEqual(['a', 'b']);
    expect(directory.size).toBe(3);
    directory.remove(c);
    directory.remove(c);
    expect([...directory.namespaceNames()]).toEqual(['demo']);
    expect([...directory.podsIn('ops')]).toEqual([]);
    expect(a.containers).toEqual(['init', 'app']);
  });

  it('when pods share a namespace and a container set, then they share one string and one array', () => {
    const directory = new PodDirectory();
    const a = cached(directory, raw('demo', 'a'));
    const b = cached(directory, raw('demo', 'b'));
    const other = cached(directory, raw('demo', 'c', {}, ['app', 'sidecar']));
    expect(b.containers).toBe(a.containers);
    expect(other.containers).not.toBe(a.containers);
    expect(Object.isFrozen(a.containers)).toBe(true);
  });
});
