import { createServer, type Server } from 'node:http';
import type { KubeClient } from '../../src/kube/client.js';
import { RUN_LABEL } from './harness.js';

/**
 * What a bare cluster cannot publish and a live Prometheus needs for kapi's charts (SPEC §19's test harness): the
 * series kube-state-metrics and the kubelets' cAdvisor would export, rendered at each scrape from the run's real
 * objects (its Nodes, Namespaces, Pods and workloads, as the cluster answers for them), named and labelled exactly as
 * those exporters do. A bare kit has no kubelet, so containers have no real usage: a pod's annotations set it
 * (`test.kapi.io/cpu` in cores, `test.kapi.io/memory` in bytes, `test.kapi.io/rx` and `/tx` in bytes per second on
 * eth0), and the counters grow at those rates with explicit sample times, so Prometheus's `irate` reads them exactly.
 *
 * - `GET /ksm`: kube_node_*, kube_namespace_labels (with the `kapi.io/workspace` label as
 *   `label_kapi_io_workspace`; Prometheus's relabel makes it `workspace`), kube_pod_info, _owner, _status_phase, and
 *   the workload and object families the counts read.
 * - `GET /metrics/cadvisor`: container_cpu_usage_seconds_total, container_memory_working_set_bytes,
 *   container_network_{receive,transmit}_bytes_total.
 */
export const CPU_ANNOTATION = 'test.kapi.io/cpu';
export const MEMORY_ANNOTATION = 'test.kapi.io/memory';
export const RX_ANNOTATION = 'test.kapi.io/rx';
export const TX_ANNOTATION = 'test.kapi.io/tx';

export interface ClusterExporter {
  readonly url: string;
  /** host:port, for a scrape target. */
  readonly address: string;
  /** How many scrapes failed to read the cluster (a test asserts none). */
  readonly failures: number;
  stop(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
/** The namespaced kinds whose objects the counts read: the family kube-state-metrics names each by, its label. */
const COUNTED: [string, string, string][] = [
  ['/apis/apps/v1/namespaces/{ns}/deployments', 'kube_deployment_labels', 'deployment'],
  ['/apis/apps/v1/namespaces/{ns}/statefulsets', 'kube_statefulset_labels', 'statefulset'],
  ['/apis/apps/v1/namespaces/{ns}/daemonsets', 'kube_daemonset_labels', 'daemonset'],
  ['/apis/batch/v1/namespaces/{ns}/jobs', 'kube_job_labels', 'job_name'],
  ['/apis/batch/v1/namespaces/{ns}/cronjobs', 'kube_cronjob_labels', 'cronjob'],
  ['/api/v1/namespaces/{ns}/services', 'kube_service_info', 'service'],
  ['/api/v1/namespaces/{ns}/secrets', 'kube_secret_info', 'secret'],
  ['/api/v1/namespaces/{ns}/configmaps', 'kube_configmap_info', 'configmap'],
  ['/api/v1/namespaces/{ns}/persistentvolumeclaims', 'kube_persistentvolumeclaim_info', 'persistentvolumeclaim'],
  ['/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses', 'kube_ingress_labels', 'ingress'],
];

const escapeValue = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const line = (name: string, labels: Record<string, string>, value: number, timestampMs?: number) =>
  `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${escapeValue(v)}"`)
    .join(',')}} ${value}${timestampMs === undefined ? '' : ` ${timestampMs}`}\n`;
const labelName = (key: string) => `label_${key.replace(/[^A-Za-z0-9_]/g, '_')}`;

export async function startClusterExporter(admin: KubeClient, runId: string): Promise<ClusterExporter> {
  const startedAt = Date.now();
  let failures = 0;
  const list = async (path: string, query: Record<string, string> = {}): Promise<Raw[]> =>
    (await admin.request<{ items: Raw[] }>({ path, query })).items;
  const run = { labelSelector: `${RUN_LABEL}=${runId}` };

  const objects = async () => {
    const [nodes, namespaces, pods] = await Promise.all([
      list('/api/v1/nodes', run),
      list('/api/v1/namespaces', run),
      list('/api/v1/pods', run),
    ]);
    return { nodes, namespaces, pods };
  };

  const ksm = async (): Promise<string> => {
    const { nodes, namespaces, pods } = await objects();
    let out = '';
    const internalIp = new Map<string, string>();
    for (const node of nodes) {
      const name = node.metadata.name as string;
      const ip = (node.status?.addresses ?? []).find((a: Raw) => a.type === 'InternalIP')?.address ?? '';
      internalIp.set(name, ip);
      out += line('kube_node_info', { node: name, internal_ip: ip }, 1);
      const pods = node.status?.capacity?.pods;
      if (pods)
        out += line('kube_node_status_capacity', { node: name, resource: 'pods', unit: 'integer' }, Number(pods));
      const ready = (node.status?.conditions ?? []).find((c: Raw) => c.type === 'Ready');
      if (ready)
        for (const status of ['true', 'false', 'unknown'])
          out += line(
            'kube_node_status_condition',
            { node: name, condition: 'Ready', status },
            ready.status.toLowerCase() === status ? 1 : 0,
          );
      for (const key of Object.keys(node.metadata.labels ?? {}))
        if (key.startsWith('node-role.kubernetes.io/'))
          out += line('kube_node_role', { node: name, role: key.slice('node-role.kubernetes.io/'.length) }, 1);
    }
    for (const ns of namespaces) {
      const labels: Record<string, string> = { namespace: ns.metadata.name };
      for (const [key, value] of Object.entries(ns.metadata.labels ?? {})) labels[labelName(key)] = String(value);
      out += line('kube_namespace_labels', labels, 1);
    }
    for (const pod of pods) {
      const id = { namespace: pod.metadata.namespace, pod: pod.metadata.name, uid: pod.metadata.uid };
      const node = pod.spec?.nodeName ?? '';
      out += line(
        'kube_pod_info',
        { ...id, node, host_ip: pod.status?.hostIP ?? internalIp.get(node) ?? '', pod_ip: pod.status?.podIP ?? '' },
        1,
      );
      for (const owner of pod.metadata.ownerReferences ?? [])
        out += line(
          'kube_pod_owner',
          {
            ...id,
            owner_kind: owner.kind,
            owner_name: owner.name,
            owner_is_controller: String(owner.controller === true),
          },
          1,
        );
      if (!pod.metadata.ownerReferences?.length)
        out += line(
          'kube_pod_owner',
          { ...id, owner_kind: '<none>', owner_name: '<none>', owner_is_controller: '<none>' },
          1,
        );
      const phase = pod.status?.phase ?? 'Pending';
      for (const candidate of PHASES)
        out += line('kube_pod_status_phase', { ...id, phase: candidate }, candidate === phase ? 1 : 0);
    }
    const counted = await Promise.all(
      namespaces.flatMap((ns: Raw) =>
        COUNTED.map(async ([path, family, label]) => {
          const items = await list(path.replace('{ns}', ns.metadata.name));
          return items.map((item: Raw) => {
            const extra: Record<string, string> =
              family === 'kube_persistentvolumeclaim_info' ? { storageclass: item.spec?.storageClassName ?? '' } : {};
            return line(family, { namespace: ns.metadata.name, [label]: item.metadata.name, ...extra }, 1);
          });
        }),
      ),
    );
    return out + counted.flat().join('');
  };

  const cadvisor = async (): Promise<string> => {
    const { pods } = await objects();
    const now = Date.now();
    const seconds = (now - startedAt) / 1000;
    let out = '';
    for (const pod of pods) {
      if (pod.status?.phase !== 'Running') continue;
      const annotations = pod.metadata.annotations ?? {};
      const container = pod.spec.containers[0];
      const id = { namespace: pod.metadata.namespace, pod: pod.metadata.name };
      const labels = { ...id, container: container.name, image: container.image ?? '', name: `k8s_${container.name}` };
      const cpu = Number(annotations[CPU_ANNOTATION] ?? 0);
      out += line('container_cpu_usage_seconds_total', labels, cpu * seconds, now);
      out += line('container_memory_working_set_bytes', labels, Number(annotations[MEMORY_ANNOTATION] ?? 0), now);
      const eth = { ...id, container: 'POD', image: 'registry.k8s.io/pause:3.9', interface: 'eth0' };
      out += line('container_network_receive_bytes_total', eth, Number(annotations[RX_ANNOTATION] ?? 0) * seconds, now);
      out += line(
        'container_network_transmit_bytes_total',
        eth,
        Number(annotations[TX_ANNOTATION] ?? 0) * seconds,
        now,
      );
    }
    return out;
  };

  const server: Server = createServer((req, res) => {
    const render = req.url === '/ksm' ? ksm : req.url === '/metrics/cadvisor' ? cadvisor : undefined;
    if (!render) {
      res.writeHead(404).end();
      return;
    }
    render().then(
      (text) => res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(text),
      (error: unknown) => {
        failures++;
        res.writeHead(500).end(String(error));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    address: `127.0.0.1:${port}`,
    get failures() {
      return failures;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
