import { afterEach, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../src/kube/client.js';
import { NodeAllocationIndex, createPodAllocations } from '../../src/kube/pod-allocations.js';
import { packFormats, type PodAllocation } from '../../src/kube/pod-resources.js';
import type { QuantityFormat } from '../../src/kube/quantity.js';
import { createLogger } from '../../src/observability/logger.js';
import { FakeKubeApiserver, connectTo, eventually } from './fake-kube-apiserver.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const record = (nodeName: string | undefined, cpu: number, memory = 0): PodAllocation => ({
  nodeName,
  cpuRequestsMilli: cpu,
  cpuLimitsMilli: cpu * 2,
  memoryRequestsBytes: memory,
  memoryLimitsBytes: memory * 2,
  formats: 0,
});

const zero = { cpuRequestsMilli: 0, cpuLimitsMilli: 0, memoryRequestsBytes: 0, memoryLimitsBytes: 0 };

describe('NodeAllocationIndex', () => {
  it('when pods are added to nodes, then each node sums its own pods', () => {
    const index = new NodeAllocationIndex();
    index.add(record('n1', 100, 10));
    index.add(record('n1', 50, 5));
    index.add(record('n2', 7));
    index.add(record(undefined, 1000));
    expect(index.allocatedOn('n1')).toMatchObject({
      cpuRequestsMilli: 150,
      cpuLimitsMilli: 300,
      memoryRequestsBytes: 15,
      memoryLimitsBytes: 30,
    });
    expect(index.allocatedOn('n2')).toMatchObject({
      cpuRequestsMilli: 7,
      cpuLimitsMilli: 14,
      memoryRequestsBytes: 0,
      memoryLimitsBytes: 0,
    });
    expect(index.allocatedOn('unknown')).toEqual(zero);
  });

  it('when the last pod of a node is removed, then the node is forgotten and reads as zeros', () => {
    const index = new NodeAllocationIndex();
    const pod = record('n1', 100, 10);
    index.add(pod);
    index.remove(pod);
    expect(index.nodes).toBe(0);
    expect(index.allocatedOn('n1')).toEqual(zero);
  });

  it.each<[string, QuantityFormat[], QuantityFormat]>([
    ['every pod writes memory in Mi/Gi', ['BinarySI', 'BinarySI'], 'BinarySI'],
    ['every pod writes memory in M/G', ['DecimalSI', 'DecimalSI'], 'DecimalSI'],
    ['most pods write memory in M/G', ['BinarySI', 'DecimalSI', 'DecimalSI'], 'DecimalSI'],
    ['the pods are split evenly', ['DecimalSI', 'BinarySI'], 'BinarySI'],
  ])('when %s, then the node sum prints in %s', (_case, podFormats, expected) => {
    const index = new NodeAllocationIndex();
    const pods = podFormats.map((format) => ({
      ...record('n1', 100, 2 ** 20),
      formats: packFormats(['DecimalSI', 'DecimalSI', format, format]),
    }));
    for (const pod of pods) index.add(pod);
    expect(index.allocatedOn('n1').formats).toEqual({
      cpuRequests: 'DecimalSI',
      cpuLimits: 'DecimalSI',
      memoryRequests: expected,
      memoryLimits: expected,
    });
    // Removing pods takes their formats out of the count too.
    index.remove(pods[pods.length - 1]!);
    index.add({ ...record('n1', 0, 2 ** 20), formats: packFormats(['BinarySI', 'BinarySI', 'BinarySI', 'BinarySI']) });
    index.add({ ...record('n1', 0, 2 ** 20), formats: packFormats(['BinarySI', 'BinarySI', 'BinarySI', 'BinarySI']) });
    expect(index.allocatedOn('n1').formats).toMatchObject({ cpuRequests: 'DecimalSI', memoryRequests: 'BinarySI' });
  });

  it('when a caller changes a returned allocation, then the index is unaffected', () => {
    const index = new NodeAllocationIndex();
    index.add(record('n1', 100));
    index.allocatedOn('n1').cpuRequestsMilli = 1;
    expect(index.allocatedOn('n1').cpuRequestsMilli).toBe(100);
  });
});

function podObject(name: string, nodeName: string | undefined, cpu: string, phase = 'Running'): any {
  return {
    kind: 'Pod',
    metadata: { name, namespace: 'ns' },
    spec: { nodeName, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu, memory: '1Mi' } } }] },
    status: { phase },
  };
}

describe('PodAllocations over a watched pod list', () => {
  let stop: () => Promise<void> = async () => undefined;
  afterEach(() => stop());

  it('when pods are created, moved, finished and deleted, then per-node totals follow each change', async () => {
    const fake = await FakeKubeApiserver.start('/api/v1/pods');
    const connection = await connectTo(fake);
    const allocations = createPodAllocations(new KubeClient(connection), createLogger('error', { silent: true }));
    stop = async () => {
      await allocations.stop();
      await fake.stop();
      connection.close();
    };
    fake.put(podObject('a', 'n1', '100m'));
    fake.put(podObject('b', 'n1', '200m'));
    fake.put(podObject('pending', undefined, '1'));

    allocations.start();
    await allocations.waitForSync();
    const cpuOn = (node: string) => allocations.allocatedOn(node).cpuRequestsMilli;
    expect([cpuOn('n1'), cpuOn('n2'), allocations.size]).toEqual([300, 0, 3]);
    // every pod is watched (the pod listing shares this watch); finished ones count for no node
    expect(fake.requests[0]!.query.get('fieldSelector')).toBeNull();
    expect(allocations.readiness.notReadyReason()).toBeUndefined();

    fake.put(podObject('pending', 'n2', '1')); // scheduled
    await eventually(() => expect(cpuOn('n2')).toBe(1000));
    fake.put(podObject('b', 'n2', '200m')); // moved (as after a delete and re-create under the same name)
    await eventually(() => expect([cpuOn('n1'), cpuOn('n2')]).toEqual([100, 1200]));
    fake.put(podObject('a', 'n1', '100m', 'Succeeded'));
    await eventually(() => expect(cpuOn('n1')).toBe(0));
    fake.remove('ns/pending');
    await eventually(() => expect(cpuOn('n2')).toBe(200));
    expect(allocations.allocatedOn('n2').memoryRequestsBytes).toBe(2 ** 20);
  });
});
