import {
  ALLOCATION_ANNOTATIONS as A,
  allocationAnnotations,
  annotateAllocation,
} from '../../../../src/apis/resources/v1alpha3/allocation-annotations.js';
import { deepFreeze, node, NO_ALLOCATION } from './fixtures.js';

const GiB = 2 ** 30;

describe('allocationAnnotations', () => {
  it('when pods request and limit resources, then the sums and truncated percentages of allocatable are given', () => {
    const worker = node('w', { allocatable: { cpu: '4', memory: '8Gi' } });
    expect(
      allocationAnnotations(worker, {
        cpuRequestsMilli: 1250,
        cpuLimitsMilli: 5000,
        memoryRequestsBytes: 3 * GiB,
        memoryLimitsBytes: 10 * GiB,
      }),
    ).toEqual({
      [A.cpuRequests]: '1250m',
      [A.cpuLimits]: '5',
      [A.memoryRequests]: '3Gi',
      [A.memoryLimits]: '10Gi',
      [A.cpuRequestsFraction]: '31%', // 31.25 truncated
      [A.cpuLimitsFraction]: '125%', // over-committed limits exceed 100%, as in KubeSphere
      [A.memoryRequestsFraction]: '37%', // 37.5 truncated
      [A.memoryLimitsFraction]: '125%',
    });
  });

  it.each([
    ['millicore text', { cpu: '3900m', memory: '7950Mi' }, { cpu: '25%', memory: '25%' }],
    ['decimal text', { cpu: '0.5', memory: '8G' }, { cpu: '199%', memory: '25%' }],
  ])('when allocatable is %s, then it is read as a quantity', (_case, allocatable, expected) => {
    const annotations = allocationAnnotations(node('w', { allocatable }), {
      cpuRequestsMilli: 999,
      cpuLimitsMilli: 0,
      memoryRequestsBytes: allocatable.memory === '8G' ? 2_000_000_000 : 1987.5 * 2 ** 20,
      memoryLimitsBytes: 0,
    });
    expect(annotations[A.cpuRequestsFraction]).toBe(expected.cpu);
    expect(annotations[A.memoryRequestsFraction]).toBe(expected.memory);
  });

  it('when the node reports no allocatable, then every percentage is 0%', () => {
    const bare = node('b', { allocatable: {} });
    const annotations = allocationAnnotations(bare, {
      ...NO_ALLOCATION,
      cpuRequestsMilli: 500,
      memoryLimitsBytes: GiB,
    });
    expect(annotations[A.cpuRequestsFraction]).toBe('0%');
    expect(annotations[A.memoryLimitsFraction]).toBe('0%');
    expect(annotations[A.cpuRequests]).toBe('500m');
  });

  it('when no pod runs on the node, then the annotations are present and zero', () => {
    expect(Object.values(allocationAnnotations(node('idle'), NO_ALLOCATION))).toEqual([
      '0',
      '0',
      '0',
      '0',
      '0%',
      '0%',
      '0%',
      '0%',
    ]);
  });
});

describe('annotateAllocation', () => {
  const allocation = {
    cpuRequestsMilli: 100,
    cpuLimitsMilli: 200,
    memoryRequestsBytes: 2 ** 20,
    memoryLimitsBytes: 2 ** 21,
  };

  it('when a cached (frozen) node is annotated, then a copy carries the annotations and the node is unchanged', () => {
    const cached = deepFreeze(
      node('n', { annotations: { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd.sock' } }),
    );
    const before = structuredClone(cached);
    const annotated = annotateAllocation(cached, allocation);
    expect(cached).toEqual(before);
    expect(annotated).not.toBe(cached);
    expect(annotated.metadata).not.toBe(cached.metadata);
    expect(annotated.metadata?.annotations).not.toBe(cached.metadata?.annotations);
    expect(annotated.metadata?.annotations).toMatchObject({
      'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd.sock',
      [A.cpuRequests]: '100m',
      [A.memoryLimits]: '2Mi',
    });
    expect(annotated.status).toBe(cached.status);
  });

  it('when the node has no annotations, then the copy gets a new map', () => {
    const cached = deepFreeze(node('n'));
    const annotated = annotateAllocation(cached, allocation);
    expect(Object.keys(annotated.metadata?.annotations ?? {})).toHaveLength(8);
    expect(cached.metadata?.annotations).toBeUndefined();
  });

  it('when a stale allocation annotation is on the cached node, then the copy has the current value', () => {
    const cached = deepFreeze(node('n', { annotations: { [A.cpuRequests]: '9' } }));
    expect(annotateAllocation(cached, allocation).metadata?.annotations?.[A.cpuRequests]).toBe('100m');
  });
});
