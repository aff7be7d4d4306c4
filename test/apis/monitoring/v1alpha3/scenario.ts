/**
 * A small cluster's series as its exporters publish them (node-exporter, kube-state-metrics with kapi's workspace
 * relabel, cAdvisor, kube-apiserver, kube-scheduler, etcd), with values chosen so every chart has an exact answer:
 * shared by the `promtool test rules` suite (as input series) and the live Prometheus suite (as what its exporter
 * serves).
 *
 * Nodes n1 (2 CPUs, master, 10.0.0.1) and n2 (1 CPU, 10.0.0.2), each with a node-exporter pod in kapi-monitoring.
 * Workspace ws1 holds namespaces a and b, ws2 holds c. In a: the deployment web (pods web-5d8f7c9b4d-abcde on n1 at
 * 0.25 cores and -fghij on n2 at 0.5), the statefulset db (db-0 on n1, 0.1 cores, its claim data-db-0 of class fast);
 * in b: the daemonset agent (agent-x1 on n2, 0.05 cores); in c: job-1's finished pod.
 */

export type Labels = Record<string, string>;

export interface Series {
  name: string;
  labels: Labels;
  /** A constant, or a counter's increase per minute from 0. */
  value: number;
  counter?: boolean;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

const ksm = (name: string, labels: Labels, value = 1): Series => ({
  name,
  labels: { job: 'kube-state-metrics', ...labels },
  value,
});
const kubelet = (name: string, labels: Labels, value: number, counter = false): Series => ({
  name,
  labels: { job: 'kubelet', ...labels },
  value,
  counter,
});

export interface ScenarioNode {
  name: string;
  ip: string;
  role?: string;
  /** Busy seconds per second of each CPU (user or system); the rest idle. */
  cpus: number[];
  memory: { total: number; free: number; cached: number; buffers: number; reclaimable: number };
  disk: { device: string; size: number; avail: number; files: number; filesFree: number };
  io: { reads: number; writes: number; readBytes: number; writtenBytes: number };
  net: { rx: number; tx: number };
  load: [number, number, number];
}

export const NODES: ScenarioNode[] = [
  {
    name: 'n1',
    ip: '10.0.0.1',
    role: 'master',
    cpus: [0.25, 0.5],
    memory: { total: 8 * GiB, free: 2 * GiB, cached: 1 * GiB, buffers: 0.5 * GiB, reclaimable: 0.5 * GiB },
    disk: { device: '/dev/sda1', size: 100e9, avail: 60e9, files: 1_000_000, filesFree: 750_000 },
    io: { reads: 10, writes: 20, readBytes: 100_000, writtenBytes: 200_000 },
    net: { rx: 1000, tx: 500 },
    load: [1.5, 1, 0.5],
  },
  {
    name: 'n2',
    ip: '10.0.0.2',
    cpus: [0.1],
    memory: { total: 4 * GiB, free: 1 * GiB, cached: 1 * GiB, buffers: 0, reclaimable: 0 },
    disk: { device: '/dev/vda1', size: 50e9, avail: 40e9, files: 500_000, filesFree: 400_000 },
    io: { reads: 1, writes: 2, readBytes: 1000, writtenBytes: 2000 },
    net: { rx: 100, tx: 50 },
    load: [0.3, 0.2, 0.1],
  },
];

export const MONITORING_NAMESPACE = 'kapi-monitoring';

export interface ScenarioPod {
  namespace: string;
  name: string;
  node: string;
  phase: 'Running' | 'Succeeded';
  owner: { kind: string; name: string };
  container: string;
  /** Cores. */
  cpu: number;
  memory: number;
  /** Bytes per second on eth0. */
  net?: { rx: number; tx: number };
}

export const PODS: ScenarioPod[] = [
  ...NODES.map((node): ScenarioPod => ({
    namespace: MONITORING_NAMESPACE,
    name: `node-exporter-${node.name}`,
    node: node.name,
    phase: 'Running',
    owner: { kind: 'DaemonSet', name: 'node-exporter' },
    container: 'node-exporter',
    cpu: 0,
    memory: 0,
  })),
  {
    namespace: 'a',
    name: 'web-5d8f7c9b4d-abcde',
    node: 'n1',
    phase: 'Running',
    owner: { kind: 'ReplicaSet', name: 'web-5d8f7c9b4d' },
    container: 'app',
    cpu: 0.25,
    memory: 256 * MiB,
    net: { rx: 200, tx: 100 },
  },
  {
    namespace: 'a',
    name: 'web-5d8f7c9b4d-fghij',
    node: 'n2',
    phase: 'Running',
    owner: { kind: 'ReplicaSet', name: 'web-5d8f7c9b4d' },
    container: 'app',
    cpu: 0.5,
    memory: 128 * MiB,
  },
  {
    namespace: 'a',
    name: 'db-0',
    node: 'n1',
    phase: 'Running',
    owner: { kind: 'StatefulSet', name: 'db' },
    container: 'db',
    cpu: 0.1,
    memory: 512 * MiB,
  },
  {
    namespace: 'b',
    name: 'agent-x1',
    node: 'n2',
    phase: 'Running',
    owner: { kind: 'DaemonSet', name: 'agent' },
    container: 'agent',
    cpu: 0.05,
    memory: 64 * MiB,
  },
  {
    namespace: 'c',
    name: 'job-1-xyz',
    node: 'n2',
    phase: 'Succeeded',
    owner: { kind: 'Job', name: 'job-1' },
    container: 'job',
    cpu: 0,
    memory: 0,
  },
];

export const NAMESPACES: { name: string; workspace?: string }[] = [
  { name: 'a', workspace: 'ws1' },
  { name: 'b', workspace: 'ws1' },
  { name: 'c', workspace: 'ws2' },
  { name: MONITORING_NAMESPACE },
];

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

/** Every series of the scenario. */
export function scenarioSeries(): Series[] {
  const series: Series[] = [];
  for (const node of NODES) {
    const exporter = {
      job: 'node-exporter',
      namespace: MONITORING_NAMESPACE,
      pod: `node-exporter-${node.name}`,
      instance: node.name,
    };
    const ne = (name: string, labels: Labels, value: number, counter = false) =>
      series.push({ name, labels: { ...exporter, ...labels }, value, counter });
    node.cpus.forEach((busy, cpu) => {
      ne('node_cpu_seconds_total', { cpu: String(cpu), mode: cpu % 2 === 0 ? 'user' : 'system' }, busy * 60, true);
      ne('node_cpu_seconds_total', { cpu: String(cpu), mode: 'idle' }, (1 - busy) * 60, true);
    });
    ne('node_memory_MemTotal_bytes', {}, node.memory.total);
    ne('node_memory_MemFree_bytes', {}, node.memory.free);
    ne('node_memory_Cached_bytes', {}, node.memory.cached);
    ne('node_memory_Buffers_bytes', {}, node.memory.buffers);
    ne('node_memory_SReclaimable_bytes', {}, node.memory.reclaimable);
    const fs = { device: node.disk.device, fstype: 'ext4', mountpoint: '/' };
    ne('node_filesystem_size_bytes', fs, node.disk.size);
    ne('node_filesystem_avail_bytes', fs, node.disk.avail);
    ne('node_filesystem_files', fs, node.disk.files);
    ne('node_filesystem_files_free', fs, node.disk.filesFree);
    // a loop device and a tmpfs, which every disk chart leaves out
    const loop = { device: '/dev/loop0', fstype: 'squashfs', mountpoint: '/snap/x' };
    ne('node_filesystem_size_bytes', loop, 1e9);
    ne('node_filesystem_avail_bytes', loop, 0);
    ne('node_filesystem_size_bytes', { device: 'tmpfs', fstype: 'tmpfs', mountpoint: '/run' }, 1e9);
    ne('node_filesystem_avail_bytes', { device: 'tmpfs', fstype: 'tmpfs', mountpoint: '/run' }, 1e9);
    const disk = { device: node.disk.device.replace('/dev/', '').replace(/\d+$/, '') };
    ne('node_disk_reads_completed_total', disk, node.io.reads * 60, true);
    ne('node_disk_writes_completed_total', disk, node.io.writes * 60, true);
    ne('node_disk_read_bytes_total', disk, node.io.readBytes * 60, true);
    ne('node_disk_written_bytes_total', disk, node.io.writtenBytes * 60, true);
    ne('node_network_receive_bytes_total', { device: 'eth0' }, node.net.rx * 60, true);
    ne('node_network_transmit_bytes_total', { device: 'eth0' }, node.net.tx * 60, true);
    // a pod's veth, which the node charts leave out
    ne('node_network_receive_bytes_total', { device: 'veth1234' }, 1e6 * 60, true);
    ne('node_network_transmit_bytes_total', { device: 'veth1234' }, 1e6 * 60, true);
    ne('node_load1', {}, node.load[0]);
    ne('node_load5', {}, node.load[1]);
    ne('node_load15', {}, node.load[2]);
    series.push(ksm('kube_node_status_capacity', { node: node.name, resource: 'pods', unit: 'integer' }, 110));
    for (const status of ['true', 'false', 'unknown'])
      series.push(
        ksm('kube_node_status_condition', { node: node.name, condition: 'Ready', status }, status === 'true' ? 1 : 0),
      );
    if (node.role) series.push(ksm('kube_node_role', { node: node.name, role: node.role }));
  }
  for (const ns of NAMESPACES)
    series.push(
      ksm('kube_namespace_labels', {
        namespace: ns.name,
        ...(ns.workspace && { label_kapi_io_workspace: ns.workspace, workspace: ns.workspace }),
      }),
    );
  for (const pod of PODS) {
    const node = NODES.find((n) => n.name === pod.node) as ScenarioNode;
    const id = { namespace: pod.namespace, pod: pod.name };
    series.push(
      ksm('kube_pod_info', {
        ...id,
        node: pod.node,
        host_ip: node.ip,
        pod_ip: '10.1.0.1',
        created_by_kind: pod.owner.kind,
        created_by_name: pod.owner.name,
        uid: `uid-${pod.name}`,
      }),
    );
    series.push(
      ksm('kube_pod_owner', {
        ...id,
        owner_kind: pod.owner.kind,
        owner_name: pod.owner.name,
        owner_is_controller: 'true',
        uid: `uid-${pod.name}`,
      }),
    );
    for (const phase of PHASES)
      series.push(ksm('kube_pod_status_phase', { ...id, phase, uid: `uid-${pod.name}` }, phase === pod.phase ? 1 : 0));
    if (pod.phase !== 'Running' || pod.namespace === MONITORING_NAMESPACE) continue;
    const container = {
      ...id,
      container: pod.container,
      image: `example/${pod.container}:1`,
      name: `k8s_${pod.container}`,
      metrics_path: '/metrics/cadvisor',
    };
    series.push(kubelet('container_cpu_usage_seconds_total', container, pod.cpu * 60, true));
    series.push(kubelet('container_memory_working_set_bytes', container, pod.memory));
    // the pod's own cgroup (no container, no image), the sum of its containers': never counted twice
    series.push(
      kubelet(
        'container_cpu_usage_seconds_total',
        { ...id, container: '', image: '', metrics_path: '/metrics/cadvisor' },
        pod.cpu * 60,
        true,
      ),
    );
    series.push(
      kubelet(
        'container_memory_working_set_bytes',
        { ...id, container: '', image: '', metrics_path: '/metrics/cadvisor' },
        pod.memory + 4 * MiB,
      ),
    );
    if (pod.net) {
      const eth = { ...id, container: 'POD', image: 'pause:3.9', interface: 'eth0', metrics_path: '/metrics/cadvisor' };
      series.push(kubelet('container_network_receive_bytes_total', eth, pod.net.rx * 60, true));
      series.push(kubelet('container_network_transmit_bytes_total', eth, pod.net.tx * 60, true));
      const cali = { ...eth, interface: 'cali12345' };
      series.push(kubelet('container_network_receive_bytes_total', cali, 1e6 * 60, true));
      series.push(kubelet('container_network_transmit_bytes_total', cali, 1e6 * 60, true));
    }
  }
  const ns = (namespace: string, labels: Labels) => ({ namespace, ...labels });
  series.push(
    ksm('kube_deployment_labels', ns('a', { deployment: 'web' })),
    ksm('kube_deployment_spec_replicas', ns('a', { deployment: 'web' }), 2),
    ksm('kube_deployment_status_replicas_available', ns('a', { deployment: 'web' }), 2),
    ksm('kube_statefulset_labels', ns('a', { statefulset: 'db' })),
    ksm('kube_statefulset_replicas', ns('a', { statefulset: 'db' }), 1),
    ksm('kube_statefulset_status_replicas_current', ns('a', { statefulset: 'db' }), 1),
    ksm('kube_daemonset_labels', ns('b', { daemonset: 'agent' })),
    ksm('kube_daemonset_status_desired_number_scheduled', ns('b', { daemonset: 'agent' }), 2),
    ksm('kube_daemonset_status_number_available', ns('b', { daemonset: 'agent' }), 1),
    ksm('kube_daemonset_labels', ns(MONITORING_NAMESPACE, { daemonset: 'node-exporter' })),
    ksm('kube_job_labels', ns('c', { job_name: 'job-1' })),
    ksm('kube_cronjob_labels', ns('c', { cronjob: 'nightly' })),
    ksm(
      'kube_persistentvolumeclaim_info',
      ns('a', { persistentvolumeclaim: 'data-db-0', storageclass: 'fast', volumename: 'pv-1' }),
    ),
    ksm('kube_service_info', ns('a', { service: 'web' })),
    ksm('kube_service_info', ns('a', { service: 'db' })),
    ksm('kube_service_info', ns('b', { service: 'agent' })),
    ksm('kube_secret_info', ns('a', { secret: 's1' })),
    ksm('kube_secret_info', ns('a', { secret: 's2' })),
    ksm('kube_secret_info', ns('a', { secret: 's3' })),
    ksm('kube_configmap_info', ns('a', { configmap: 'cm1' })),
    ksm('kube_configmap_info', ns('b', { configmap: 'cm2' })),
    ksm('kube_ingress_labels', ns('a', { ingress: 'web' })),
  );
  const claim = { namespace: 'a', persistentvolumeclaim: 'data-db-0', metrics_path: '/metrics' };
  series.push(
    kubelet('kubelet_volume_stats_available_bytes', claim, 75e9),
    kubelet('kubelet_volume_stats_used_bytes', claim, 25e9),
    kubelet('kubelet_volume_stats_capacity_bytes', claim, 100e9),
    kubelet('kubelet_volume_stats_inodes_free', claim, 900),
    kubelet('kubelet_volume_stats_inodes_used', claim, 100),
    kubelet('kubelet_volume_stats_inodes', claim, 1000),
  );
  series.push(
    {
      name: 'apiserver_request_total',
      labels: { job: 'apiserver', verb: 'GET', code: '200', resource: 'pods' },
      value: 600,
      counter: true,
    },
    {
      name: 'apiserver_request_duration_seconds_sum',
      labels: { job: 'apiserver', verb: 'GET', resource: 'pods' },
      value: 6,
      counter: true,
    },
    {
      name: 'apiserver_request_duration_seconds_count',
      labels: { job: 'apiserver', verb: 'GET', resource: 'pods' },
      value: 600,
      counter: true,
    },
    // a watch, which the latency leaves out
    {
      name: 'apiserver_request_duration_seconds_sum',
      labels: { job: 'apiserver', verb: 'WATCH', resource: 'pods' },
      value: 6000,
      counter: true,
    },
    {
      name: 'apiserver_request_duration_seconds_count',
      labels: { job: 'apiserver', verb: 'WATCH', resource: 'pods' },
      value: 1,
      counter: true,
    },
    {
      name: 'scheduler_schedule_attempts_total',
      labels: { job: 'kube-scheduler', result: 'scheduled', profile: 'default-scheduler' },
      value: 1,
      counter: true,
    },
    { name: 'up', labels: { job: 'etcd', instance: '10.0.0.1:2379' }, value: 1 },
    { name: 'etcd_server_has_leader', labels: { job: 'etcd', instance: '10.0.0.1:2379' }, value: 1 },
    { name: 'etcd_server_is_leader', labels: { job: 'etcd', instance: '10.0.0.1:2379' }, value: 1 },
  );
  return series;
}

/** A series as PromQL's text names it: `name{a="b", …}` (values are plain: no quotes or backslashes here). */
export function seriesText(series: Pick<Series, 'name' | 'labels'>): string {
  const labels = Object.entries(series.labels).map(([k, v]) => `${k}="${v}"`);
  return `${series.name}{${labels.join(', ')}}`;
}
