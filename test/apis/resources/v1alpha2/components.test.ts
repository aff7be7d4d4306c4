import { describe, expect, test } from '@jest/globals';
import { componentStatuses } from '../../../../src/apis/resources/v1alpha2/components.js';

const service = (name: string, selector?: Record<string, string>) => ({
  metadata: { name, namespace: 'kube-system', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: selector ? { selector } : {},
});
const pod = (
  name: string,
  labels: Record<string, string>,
  phase: string,
  ready: boolean[],
  namespace = 'kube-system',
) => ({
  metadata: { name, namespace, labels },
  status: { phase, containerStatuses: ready.map((r) => ({ ready: r })) },
});

describe('componentStatuses', () => {
  test('when services select pods, then each counts them and the running ones with every container ready', () => {
    const pods = [
      pod('dns-1', { k8s: 'dns' }, 'Running', [true, true]),
      pod('dns-2', { k8s: 'dns' }, 'Running', [true, false]),
      pod('dns-3', { k8s: 'dns' }, 'Pending', []),
      pod('dns-elsewhere', { k8s: 'dns' }, 'Running', [true], 'other'),
      pod('proxy', { k8s: 'proxy' }, 'Running', [true]),
    ];
    expect(componentStatuses([service('kube-dns', { k8s: 'dns' }), service('headless')], pods)).toEqual([
      {
        name: 'kube-dns',
        namespace: 'kube-system',
        selfLink: '',
        label: { k8s: 'dns' },
        startedAt: '2026-01-01T00:00:00Z',
        totalBackends: 3,
        healthyBackends: 1,
      },
    ]);
  });
});
