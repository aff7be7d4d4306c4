import { describe, expect, test } from '@jest/globals';
import {
  cadvisor,
  CPU_ANNOTATION,
  kubeStateMetrics,
  MEMORY_ANNOTATION,
  nodeExporter,
  quantity,
  usageOf,
} from '../../../src/sandbox/monitoring/series.js';

const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { namespace: 'a', name, uid: `uid-${name}`, annotations: {}, ...extra },
  spec: {
    nodeName: 'n1',
    containers: [{ name: 'app', image: 'app:1', resources: { requests: { cpu: '500m', memory: '256Mi' } } }],
  },
  status: { phase: 'Running' },
});

describe('the series of a cluster that runs no exporter', () => {
  test('when quantities are read, then in cores and bytes', () => {
    expect(quantity('250m')).toBe(0.25);
    expect(quantity('2')).toBe(2);
    expect(quantity('512Mi')).toBe(512 * 1024 ** 2);
    expect(quantity('1G')).toBe(1e9);
    expect(quantity(undefined)).toBe(0);
  });

  test('when a pod carries usage annotations, then they are its usage; else a stable share of its requests', () => {
    const annotated = pod('web', { annotations: { [CPU_ANNOTATION]: '0.25', [MEMORY_ANNOTATION]: '1000' } });
    expect(usageOf(annotated)).toMatchObject({ cpu: 0.25, memory: 1000 });
    const plain = usageOf(pod('db'));
    expect(plain.cpu).toBeGreaterThanOrEqual(0.1);
    expect(plain.cpu).toBeLessThanOrEqual(0.45);
    expect(usageOf(pod('db'))).toEqual(plain);
  });

  test('when a pod runs, then kube-state-metrics names it, its owner, node and phase', () => {
    const text = kubeStateMetrics({
      nodes: [
        {
          metadata: { name: 'n1', labels: { 'node-role.kubernetes.io/master': '' } },
          status: {
            capacity: { pods: '110' },
            addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
            conditions: [{ type: 'Ready', status: 'True' }],
          },
        },
      ],
      namespaces: [{ metadata: { name: 'a', labels: { 'kapi.io/workspace': 'ws1' } } }, { metadata: { name: 'b' } }],
      pods: [
        pod('web', { ownerReferences: [{ kind: 'ReplicaSet', name: 'web-1', controller: true }] }),
        { ...pod('other'), metadata: { namespace: 'x', name: 'other' } },
      ],
      counted: new Map([
        [
          'kube_deployment_labels',
          [{ metadata: { namespace: 'a', name: 'web' }, spec: { replicas: 2 }, status: { availableReplicas: 1 } }],
        ],
      ]),
    });
    expect(text).toContain('kube_node_role{node="n1",role="master"} 1\n');
    expect(text).toContain('kube_node_status_condition{node="n1",condition="Ready",status="true"} 1\n');
    expect(text).toContain('kube_namespace_labels{namespace="a",label_kapi_io_workspace="ws1"} 1\n');
    expect(text).toContain(
      'kube_pod_info{namespace="a",pod="web",uid="uid-web",node="n1",host_ip="10.0.0.1",pod_ip=""} 1\n',
    );
    expect(text).toContain(
      'kube_pod_owner{namespace="a",pod="web",uid="uid-web",owner_kind="ReplicaSet",owner_name="web-1",owner_is_controller="true"} 1\n',
    );
    expect(text).toContain('kube_pod_status_phase{namespace="a",pod="web",uid="uid-web",phase="Running"} 1\n');
    expect(text).toContain('kube_deployment_spec_replicas{namespace="a",deployment="web"} 2\n');
    // a namespace not listed is not published
    expect(text).not.toContain('pod="other"');
  });

  test('when cAdvisor is read twice, then the counters grow at the pod’s rate, stamped with their times', () => {
    const objects = {
      pods: [pod('web', { annotations: { [CPU_ANNOTATION]: '0.25' } })],
      namespaces: [{ metadata: { name: 'a' } }],
    };
    const at = (ms: number) =>
      Number(
        /container_cpu_usage_seconds_total\{[^}]*container="app"[^}]*\} (\S+) (\d+)/.exec(
          cadvisor(objects, 0, ms),
        )?.[1],
      );
    expect((at(20_000) - at(10_000)) / 10).toBe(0.25);
    expect(cadvisor(objects, 0, 10_000)).toMatch(/ 10000\n/);
  });

  test('when a node has no exporter, then its CPUs and memory are its capacity, with its pods’ usage', () => {
    const text = nodeExporter(
      { nodes: [{ metadata: { name: 'n1' }, status: { capacity: { cpu: '2', memory: '4Gi' } } }], pods: [pod('web')] },
      'kapi-monitoring',
      0,
      60_000,
    );
    expect(text.match(/node_cpu_seconds_total\{[^}]*mode="idle"/g)).toHaveLength(2);
    expect(text).toContain(
      'node_memory_MemTotal_bytes{namespace="kapi-monitoring",pod="node-exporter-n1",instance="n1"} 4294967296 60000\n',
    );
  });
});
