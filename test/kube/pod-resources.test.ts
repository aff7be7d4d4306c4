import { describe, expect, it } from '@jest/globals';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { ALLOCATION_AMOUNTS, packFormats, podAllocation, unpackFormat } from '../../src/kube/pod-resources.js';
import type { QuantityFormat } from '../../src/kube/quantity.js';

type Resources = { cpu?: string; memory?: string };

function container(requests?: Resources, limits?: Resources, restartPolicy?: string): V1Container {
  return { name: 'c', resources: { requests, limits }, restartPolicy } as V1Container;
}

function pod(spec: Partial<V1Pod['spec']> & object, phase = 'Running'): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'ns' },
    spec: { nodeName: 'node-1', containers: [], ...spec },
    status: { phase },
  } as V1Pod;
}

const Mi = 2 ** 20;

describe('podAllocation', () => {
  it.each<[string, V1Pod, [number, number, number, number]]>([
    [
      'one container with requests and limits',
      pod({ containers: [container({ cpu: '250m', memory: '64Mi' }, { cpu: '1', memory: '128Mi' })] }),
      [250, 1000, 64 * Mi, 128 * Mi],
    ],
    [
      'two containers',
      pod({
        containers: [
          container({ cpu: '100m', memory: '10Mi' }),
          container({ cpu: '0.2', memory: '20Mi' }, { cpu: '500m' }),
        ],
      }),
      [300, 500, 30 * Mi, 0],
    ],
    ['containers without requests or resources', pod({ containers: [{ name: 'bare' }, container()] }), [0, 0, 0, 0]],
    ['no containers at all', pod({ containers: undefined as unknown as V1Container[] }), [0, 0, 0, 0]],
    [
      'an init container larger than the containers',
      pod({
        containers: [container({ cpu: '100m', memory: '10Mi' }, { cpu: '200m', memory: '20Mi' })],
        initContainers: [container({ cpu: '1', memory: '5Mi' }, { cpu: '2', memory: '5Mi' })],
      }),
      [1000, 2000, 10 * Mi, 20 * Mi],
    ],
    [
      'several init containers: the largest counts, not their sum',
      pod({
        containers: [container({ cpu: '100m' })],
        initContainers: [container({ cpu: '300m' }), container({ cpu: '400m' })],
      }),
      [400, 0, 0, 0],
    ],
    [
      'a sidecar (restartable init container): added to the containers and to later init containers',
      pod({
        containers: [container({ cpu: '100m', memory: '10Mi' })],
        initContainers: [
          container({ cpu: '50m', memory: '1Mi' }, undefined, 'Always'),
          container({ cpu: '500m', memory: '1Mi' }),
        ],
      }),
      [550, 0, 11 * Mi, 0],
    ],
    [
      'pod overhead: added to requests, and only to limits that are set',
      pod({
        containers: [container({ cpu: '100m', memory: '10Mi' }, { memory: '20Mi' })],
        overhead: { cpu: '10m', memory: '1Mi' },
      }),
      [110, 0, 11 * Mi, 21 * Mi],
    ],
    [
      'pod-level resources: they replace the container sums',
      pod({
        containers: [container({ cpu: '100m', memory: '10Mi' }, { cpu: '200m', memory: '20Mi' })],
        resources: { requests: { cpu: '1' }, limits: { memory: '1Gi' } },
      }),
      [1000, 200, 10 * Mi, 1024 * Mi],
    ],
    [
      'sub-millicore and exponent quantities',
      pod({ containers: [container({ cpu: '100u', memory: '1e3' })] }),
      [1, 0, 1000, 0],
    ],
  ])('when the pod has %s, then requests and limits are as kubectl describe node shows', (_case, input, totals) => {
    const allocation = podAllocation(input);
    expect(allocation.nodeName).toBe('node-1');
    expect([
      allocation.cpuRequestsMilli,
      allocation.cpuLimitsMilli,
      allocation.memoryRequestsBytes,
      allocation.memoryLimitsBytes,
    ]).toEqual(totals);
  });

  it.each([
    ['Succeeded', 'Succeeded', 'node-1'],
    ['Failed', 'Failed', 'node-1'],
  ])('when the pod is %s, then it counts for no node', (_case, phase, nodeName) => {
    const allocation = podAllocation(pod({ nodeName, containers: [container({ cpu: '1', memory: '1Gi' })] }, phase));
    expect(allocation).toEqual({
      nodeName: undefined,
      cpuRequestsMilli: 0,
      cpuLimitsMilli: 0,
      memoryRequestsBytes: 0,
      memoryLimitsBytes: 0,
      formats: 0,
    });
  });

  it('when the pod is not yet scheduled, then it counts for no node but keeps its amounts (a workspace quota charges it)', () => {
    const allocation = podAllocation(
      pod({ nodeName: undefined, containers: [container({ cpu: '1', memory: '1Gi' })] }, 'Pending'),
    );
    expect(allocation.nodeName).toBeUndefined();
    expect([allocation.cpuRequestsMilli, allocation.memoryRequestsBytes]).toEqual([1000, 2 ** 30]);
  });

  it('when the record is made, then it holds only the node name, four numbers and their packed formats, frozen', () => {
    const allocation = podAllocation(pod({ containers: [container({ cpu: '1' })] }));
    expect(Object.keys(allocation).sort()).toEqual(
      ['cpuLimitsMilli', 'cpuRequestsMilli', 'formats', 'memoryLimitsBytes', 'memoryRequestsBytes', 'nodeName'].sort(),
    );
    expect(Object.isFrozen(allocation)).toBe(true);
  });

  const formatsOf = (input: V1Pod) => {
    const { formats } = podAllocation(input);
    return ALLOCATION_AMOUNTS.map((_, i) => unpackFormat(formats, i));
  };

  it.each<[string, V1Pod, QuantityFormat[]]>([
    [
      'binary memory and SI CPU',
      pod({ containers: [container({ cpu: '250m', memory: '64Mi' }, { cpu: '1', memory: '128Mi' })] }),
      ['DecimalSI', 'DecimalSI', 'BinarySI', 'BinarySI'],
    ],
    [
      'decimal memory (G, M) and exponent CPU',
      pod({ containers: [container({ cpu: '1e3', memory: '1G' }, { cpu: '2e3', memory: '500M' })] }),
      ['DecimalExponent', 'DecimalExponent', 'DecimalSI', 'DecimalSI'],
    ],
    [
      'a first container without memory: the first non-zero addend sets the format (Quantity.Add)',
      pod({
        containers: [container({ cpu: '1', memory: '0' }), container({ memory: '1Gi' }), container({ memory: '5M' })],
      }),
      ['DecimalSI', 'DecimalSI', 'BinarySI', 'DecimalSI'],
    ],
    [
      'an init container larger than the containers: its format wins with its amount',
      pod({
        containers: [container({ memory: '10Mi' })],
        initContainers: [container({ memory: '1G' })],
      }),
      ['DecimalSI', 'DecimalSI', 'DecimalSI', 'DecimalSI'],
    ],
    [
      'a tiny binary amount, which ParseQuantity keeps as DecimalSI',
      pod({ containers: [container({ memory: '0.0001Ki' }, { memory: '1.5Ki' })] }),
      ['DecimalSI', 'DecimalSI', 'DecimalSI', 'BinarySI'],
    ],
  ])('when the pod has %s, then each amount keeps the format the pod wrote', (_case, input, formats) => {
    expect(formatsOf(input)).toEqual(formats);
  });

  it('when formats are packed, then each of the four unpacks to itself', () => {
    const all: QuantityFormat[] = ['DecimalExponent', 'BinarySI', 'DecimalSI', 'BinarySI'];
    const packed = packFormats(all);
    expect(all.map((_, i) => unpackFormat(packed, i))).toEqual(all);
  });
});
