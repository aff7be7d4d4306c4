/**
 * The series kube-state-metrics, the kubelets' cAdvisor and the node exporter publish, rendered from a cluster's
 * objects (pure), for a cluster that runs none of them: the sandbox (`--sandbox-monitoring`) and the monitoring tests
 * on a bare kube-apiserver. Names and labels are those exporters' own, as kapi's recording rules and templates read
 * them (charts/kapi-apiserver/files/monitoring-rules.yaml).
 *
 * Nothing runs in such a cluster, so a pod's usage is what its annotations say (`sandbox.kapi.io/cpu` in cores,
 * `sandbox.kapi.io/memory` in bytes, `sandbox.kapi.io/rx` and `/tx` in bytes per second on eth0), else a share of
 * its requests that its name decides, constant in time. Counters grow at those rates from `startedAt` and carry their
 * sample times, so Prometheus's rate functions read the rates exactly.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const CPU_ANNOTATION = 'sandbox.kapi.io/cpu';
export const MEMORY_ANNOTATION = 'sandbox.kapi.io/memory';
export const RX_ANNOTATION = 'sandbox.kapi.io/rx';
export const TX_ANNOTATION = 'sandbox.kapi.io/tx';

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** The namespaced kinds whose objects the counts read: where to list them, the family naming each, its label. */
export const COUNTED_KINDS: readonly { path: string; family: string; label: string }[] = [
  { path: '/apis/apps/v1/deployments', family: 'kube_deployment_labels', label: 'deployment' },
  { path: '/apis/apps/v1/statefulsets', family: 'kube_statefulset_labels', label: 'statefulset' },
  { path: '/apis/apps/v1/daemonsets', family: 'kube_daemonset_labels', label: 'daemonset' },
  { path: '/apis/batch/v1/jobs', family: 'kube_job_labels', label: 'job_name' },
  { path: '/apis/batch/v1/cronjobs', family: 'kube_cronjob_labels', label: 'cronjob' },
  { path: '/api/v1/services', family: 'kube_service_info', label: 'service' },
  { path: '/api/v1/secrets', family: 'kube_secret_info', label: 'secret' },
  { path: '/api/v1/configmaps', family: 'kube_configmap_info', label: 'configmap' },
  { path: '/api/v1/persistentvolumeclaims', family: 'kube_persistentvolumeclaim_info', label: 'persistentvolumeclaim' },
  { path: '/apis/networking.k8s.io/v1/ingresses', family: 'kube_ingress_labels', label: 'ingress' },
];

export interface ClusterObjects {
  nodes: readonly Raw[];
  namespaces: readonly Raw[];
  pods: readonly Raw[];
  /** Objects of each of COUNTED_KINDS, by family. */
  counted: ReadonlyMap<string, readonly Raw[]>;
  deployments?: readonly Raw[];
  statefulsets?: readonly Raw[];
  daemonsets?: readonly Raw[];
}

const escapeValue = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const line = (name: string, labels: Record<string, string>, value: number, timestampMs?: number) =>
  `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${escapeValue(v)}"`)
    .join(',')}} ${value}${timestampMs === undefined ? '' : ` ${timestampMs}`}\n`;
const labelName = (key: string) => `label_${key.replace(/[^A-Za-z0-9_]/g, '_')}`;

/** A Kubernetes quantity in base units (cores, bytes): 250m, 1.5, 512Mi, 1G. */
export function quantity(text: unknown): number {
  const match = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(text ?? ''));
  if (!match) return 0;
  const units: Record<string, number> = {
    '': 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 1024,
    Mi: MiB,
    Gi: GiB,
    Ti: 1024 ** 4,
  };
  return Number(match[1]) * (units[match[2] as string] ?? 0);
}

/** A stable number in [0, 1) from a name (how busy a pod without annotations is). */
function share(name: string): number {
  let hash = 2166136261;
  for (const char of name) hash = Math.imul(hash ^ (char.codePointAt(0) as number), 16777619);
  return (hash >>> 0) / 2 ** 32;
}

export interface PodUsage {
  cpu: number;
  memory: number;
  rx: number;
  tx: number;
}

/** A running pod's usage: its annotations, else 20–90% of its requests (a little when it requests nothing). */
export function usageOf(pod: Raw): PodUsage {
  const annotations = pod.metadata?.annotations ?? {};
  const busy = 0.2 + 0.7 * share(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
  let cpuRequest = 0;
  let memoryRequest = 0;
  for (const container of pod.spec?.containers ?? []) {
    cpuRequest += quantity(container.resources?.requests?.cpu);
    memoryRequest += quantity(container.resources?.requests?.memory);
  }
  const given = (key: string, fallback: number) => (key in annotations ? Number(annotations[key]) || 0 : fallback);
  const cpu = given(CPU_ANNOTATION, Math.round((cpuRequest ? cpuRequest * busy : 0.01 * busy) * 1000) / 1000);
  return {
    cpu,
    memory: given(MEMORY_ANNOTATION, Math.round(memoryRequest ? memoryRequest * busy : 32 * MiB * (1 + busy))),
    rx: given(RX_ANNOTATION, Math.round(2000 * busy)),
    tx: given(TX_ANNOTATION, Math.round(1000 * busy)),
  };
}

const running = (pod: Raw) => pod.status?.phase === 'Running';
const internalIpOf = (node: Raw): string =>
  (node.status?.addresses ?? []).find((a: Raw) => a.type === 'InternalIP')?.address ?? '';

/** kube-state-metrics' families (the `job` is the scrape's). */
export function kubeStateMetrics(objects: ClusterObjects): string {
  let out = '';
  const internalIp = new Map<string, string>();
  for (const node of objects.nodes) {
    const name = node.metadata.name as string;
    internalIp.set(name, internalIpOf(node));
    out += line('kube_node_info', { node: name, internal_ip: internalIpOf(node) }, 1);
    const pods = node.status?.capacity?.pods;
    if (pods) out += line('kube_node_status_capacity', { node: name, resource: 'pods', unit: 'integer' }, Number(pods));
    const ready = (node.status?.conditions ?? []).find((c: Raw) => c.type === 'Ready');
    if (ready)
      for (const status of ['true', 'false', 'unknown'])
        out += line(
          'kube_node_status_condition',
          { node: name, condition: 'Ready', status },
          String(ready.status).toLowerCase() === status ? 1 : 0,
        );
    for (const key of Object.keys(node.metadata.labels ?? {}))
      if (key.startsWith('node-role.kubernetes.io/'))
        out += line('kube_node_role', { node: name, role: key.slice('node-role.kubernetes.io/'.length) }, 1);
  }
  const namespaces = new Set<string>();
  for (const ns of objects.namespaces) {
    namespaces.add(ns.metadata.name);
    const labels: Record<string, string> = { namespace: ns.metadata.name };
    for (const [key, value] of Object.entries(ns.metadata.labels ?? {})) labels[labelName(key)] = String(value);
    out += line('kube_namespace_labels', labels, 1);
  }
  for (const pod of objects.pods) {
    if (!namespaces.has(pod.metadata.namespace)) continue;
    const id = { namespace: pod.metadata.namespace, pod: pod.metadata.name, uid: pod.metadata.uid ?? '' };
    const node = pod.spec?.nodeName ?? '';
    out += line(
      'kube_pod_info',
      { ...id, node, host_ip: pod.status?.hostIP ?? internalIp.get(node) ?? '', pod_ip: pod.status?.podIP ?? '' },
      1,
    );
    const owners = pod.metadata.ownerReferences ?? [];
    for (const owner of owners)
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
    if (owners.length === 0)
      out += line(
        'kube_pod_owner',
        { ...id, owner_kind: '<none>', owner_name: '<none>', owner_is_controller: '<none>' },
        1,
      );
    const phase = pod.status?.phase ?? 'Pending';
    for (const candidate of PHASES)
      out += line('kube_pod_status_phase', { ...id, phase: candidate }, candidate === phase ? 1 : 0);
  }
  for (const { family, label } of COUNTED_KINDS) {
    for (const item of objects.counted.get(family) ?? []) {
      const namespace = item.metadata.namespace;
      if (!namespaces.has(namespace)) continue;
      const labels: Record<string, string> = { namespace, [label]: item.metadata.name };
      if (family === 'kube_persistentvolumeclaim_info') labels.storageclass = item.spec?.storageClassName ?? '';
      out += line(family, labels, 1);
      const replicas = (metric: string, value: unknown) => {
        if (value !== undefined) out += line(metric, { namespace, [label]: item.metadata.name }, Number(value) || 0);
      };
      if (family === 'kube_deployment_labels') {
        replicas('kube_deployment_spec_replicas', item.spec?.replicas ?? 1);
        replicas('kube_deployment_status_replicas_available', item.status?.availableReplicas ?? 0);
      } else if (family === 'kube_statefulset_labels') {
        replicas('kube_statefulset_replicas', item.spec?.replicas ?? 1);
        replicas('kube_statefulset_status_replicas_current', item.status?.currentReplicas ?? 0);
      } else if (family === 'kube_daemonset_labels') {
        replicas('kube_daemonset_status_desired_number_scheduled', item.status?.desiredNumberScheduled ?? 0);
        replicas('kube_daemonset_status_number_available', item.status?.numberAvailable ?? 0);
      }
    }
  }
  return out;
}

/** cAdvisor's container families, at `nowMs`, of the running pods of the namespaces given. */
export function cadvisor(objects: Pick<ClusterObjects, 'pods' | 'namespaces'>, startedAtMs: number, nowMs: number) {
  const seconds = (nowMs - startedAtMs) / 1000;
  const namespaces = new Set(objects.namespaces.map((ns) => ns.metadata.name as string));
  let out = '';
  for (const pod of objects.pods) {
    if (!running(pod) || !namespaces.has(pod.metadata.namespace)) continue;
    const usage = usageOf(pod);
    const containers: Raw[] = pod.spec?.containers ?? [];
    const id = { namespace: pod.metadata.namespace, pod: pod.metadata.name };
    containers.forEach((container, index) => {
      // the pod's usage is its first container's (the others idle)
      const part = index === 0 ? 1 : 0;
      const labels = { ...id, container: container.name, image: container.image ?? '', name: `k8s_${container.name}` };
      out += line('container_cpu_usage_seconds_total', labels, usage.cpu * part * seconds, nowMs);
      out += line('container_memory_working_set_bytes', labels, usage.memory * part, nowMs);
    });
    const eth = { ...id, container: 'POD', image: 'registry.k8s.io/pause:3.9', interface: 'eth0' };
    out += line('container_network_receive_bytes_total', eth, usage.rx * seconds, nowMs);
    out += line('container_network_transmit_bytes_total', eth, usage.tx * seconds, nowMs);
  }
  return out;
}

/** The node exporter pod of a node, as kapi's monitoring namespace runs one per node. */
export const nodeExporterPod = (node: string) => `node-exporter-${node}`;

/**
 * What each node's node exporter would publish (with the `namespace` and `pod` of its pod, and `instance` its node,
 * as kube-prometheus's ServiceMonitor labels them), for nodes no exporter runs on: its CPUs and memory from its
 * capacity, busy with its pods' usage and a little more, a 100 GB root disk.
 */
export function nodeExporter(
  objects: Pick<ClusterObjects, 'nodes' | 'pods'>,
  namespace: string,
  startedAtMs: number,
  nowMs: number,
): string {
  const seconds = (nowMs - startedAtMs) / 1000;
  let out = '';
  for (const node of objects.nodes) {
    const name = node.metadata.name as string;
    const labels = { namespace, pod: nodeExporterPod(name), instance: name };
    const cpus = Math.max(1, Math.round(quantity(node.status?.capacity?.cpu ?? '1')));
    const memory = quantity(node.status?.capacity?.memory ?? '4Gi') || 4 * GiB;
    const pods = objects.pods.filter((pod) => pod.spec?.nodeName === name && running(pod)).map(usageOf);
    const busy = Math.min(0.95, (pods.reduce((sum, u) => sum + u.cpu, 0) + 0.05 * cpus) / cpus);
    for (let cpu = 0; cpu < cpus; cpu++) {
      out += line('node_cpu_seconds_total', { ...labels, cpu: String(cpu), mode: 'user' }, busy * seconds, nowMs);
      out += line('node_cpu_seconds_total', { ...labels, cpu: String(cpu), mode: 'idle' }, (1 - busy) * seconds, nowMs);
    }
    const used = Math.min(memory * 0.95, pods.reduce((sum, u) => sum + u.memory, 0) + 512 * MiB);
    out += line('node_memory_MemTotal_bytes', labels, memory, nowMs);
    out += line('node_memory_MemFree_bytes', labels, Math.round((memory - used) * 0.5), nowMs);
    out += line('node_memory_Cached_bytes', labels, Math.round((memory - used) * 0.4), nowMs);
    out += line('node_memory_Buffers_bytes', labels, Math.round((memory - used) * 0.05), nowMs);
    out += line('node_memory_SReclaimable_bytes', labels, Math.round((memory - used) * 0.05), nowMs);
    const disk = { ...labels, device: '/dev/sda1', fstype: 'ext4', mountpoint: '/' };
    const diskUsed = 20e9 + 1e9 * pods.length;
    out += line('node_filesystem_size_bytes', disk, 100e9, nowMs);
    out += line('node_filesystem_avail_bytes', disk, 100e9 - diskUsed, nowMs);
    out += line('node_filesystem_files', disk, 6_553_600, nowMs);
    out += line('node_filesystem_files_free', disk, 6_553_600 - 200_000 - 10_000 * pods.length, nowMs);
    const sda = { ...labels, device: 'sda' };
    out += line('node_disk_reads_completed_total', sda, 5 * seconds, nowMs);
    out += line('node_disk_writes_completed_total', sda, 20 * seconds, nowMs);
    out += line('node_disk_read_bytes_total', sda, 200_000 * seconds, nowMs);
    out += line('node_disk_written_bytes_total', sda, 800_000 * seconds, nowMs);
    const eth = { ...labels, device: 'eth0' };
    out += line('node_network_receive_bytes_total', eth, (pods.reduce((s, u) => s + u.rx, 0) + 5000) * seconds, nowMs);
    out += line('node_network_transmit_bytes_total', eth, (pods.reduce((s, u) => s + u.tx, 0) + 3000) * seconds, nowMs);
    out += line('node_load1', labels, Math.round(busy * cpus * 100) / 100, nowMs);
    out += line('node_load5', labels, Math.round(busy * cpus * 90) / 100, nowMs);
    out += line('node_load15', labels, Math.round(busy * cpus * 80) / 100, nowMs);
  }
  return out;
}
