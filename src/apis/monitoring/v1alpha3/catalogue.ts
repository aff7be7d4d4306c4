/**
 * The named metrics kapi serves (SPEC §19, pure data): KubeSphere 3.4.1's PromQL templates
 * (pkg/simple/client/monitoring/prometheus/promql.go) for what its console draws, and each level's named list in
 * KubeSphere's order (pkg/models/monitoring/named_metrics.go) restricted to them, so `results` keep that order.
 *
 * Slots, filled only by expand.ts from matchers kapi builds (never from text a caller sent):
 * - `$1`, `$2`: KubeSphere's selector slots of each level (the node, the workspace, the namespace, a workload's pods'
 *   owner, the pods, the container, the claim);
 * - `$S`: the scope of a namespaced or workspace route (`namespace="ns"`, or the workspace's namespaces), written in
 *   every selector KubeSphere left unscoped, so no series of another namespace can take part in an answer. A unit test
 *   parses every expanded template and fails if a selector of a scoped route lacks it.
 * Inside `{…}` the parts are joined by commas, empty ones dropped.
 */

export const LEVELS = [
  'cluster',
  'node',
  'workspace',
  'namespace',
  'workload',
  'pod',
  'container',
  'pvc',
  'apiserver',
  'scheduler',
  'etcd',
] as const;
export type Level = (typeof LEVELS)[number];

const T = String.raw;
const FS_DEVICE = T`device=~"/dev/.*", device!~"/dev/loop\\d+", job="node-exporter"`;
const NO_VIRTUAL_INTERFACES = T`interface!~"^(cali.+|tunl.+|dummy.+|kube.+|flannel.+|cni.+|docker.+|veth.+|lo.*)"`;

/** A workspace's or a namespace's count of one kube-state-metrics kind (`$1` the namespace matcher). */
const namespaceCount = (metric: string, extra = '') =>
  `sum by (namespace) (${metric}{namespace!=""${extra}, $1} * on (namespace) group_left(workspace) kube_namespace_labels{$1})`;
const workspaceCount = (metric: string) =>
  `sum by (workspace) (${metric}{namespace!="", $S} * on (namespace) group_left(workspace)(kube_namespace_labels{$1, $S}))`;
/** A pod metric of KubeSphere's: its value per pod, joined to the pod's owner (`$1`) and the pod itself (`$2`). */
const perPod = (inner: string) =>
  `${inner} * on (namespace, pod) group_left(owner_kind, owner_name) kube_pod_owner{$1, $S} * on (namespace, pod) group_left(node) kube_pod_info{$2, $S}`;
const perClaim = (inner: string) =>
  `max by (namespace, persistentvolumeclaim) (${inner}) * on (namespace, persistentvolumeclaim) group_left (storageclass) kube_persistentvolumeclaim_info{$1}`;
const replicas = (metric: string, kind: string, label: string) =>
  T`label_join(sum (label_join(label_replace(${metric}{$2}, "owner_kind", "${kind}", "", ""), "workload", "", "${label}")) by (namespace, owner_kind, workload), "workload", ":", "owner_kind", "workload")`;

export const TEMPLATES: Readonly<Record<string, string>> = {
  // cluster
  cluster_cpu_usage: T`round(:node_cpu_utilisation:avg1m * sum(node:node_num_cpu:sum), 0.001)`,
  cluster_cpu_total: T`sum(node:node_num_cpu:sum)`,
  cluster_memory_usage_wo_cache: T`sum(node:node_memory_bytes_total:sum) - sum(node:node_memory_bytes_available:sum)`,
  cluster_memory_total: T`sum(node:node_memory_bytes_total:sum)`,
  cluster_disk_size_usage: `sum(max(node_filesystem_size_bytes{${FS_DEVICE}} - node_filesystem_avail_bytes{${FS_DEVICE}}) by (device, instance))`,
  cluster_disk_size_capacity: `sum(max(node_filesystem_size_bytes{${FS_DEVICE}}) by (device, instance))`,
  cluster_pod_running_count: T`cluster:pod_running:count`,
  cluster_pod_quota: T`sum(max(kube_node_status_capacity{resource="pods"}) by (node) unless on (node) (kube_node_status_condition{condition="Ready",status=~"unknown|false"} > 0))`,
  cluster_node_total: T`sum(kube_node_status_condition{condition="Ready"})`,
  // components
  apiserver_request_latencies: T`apiserver:apiserver_request_duration:avg`,
  apiserver_request_rate: T`apiserver:apiserver_request_total:sum_irate`,
  scheduler_schedule_attempts: T`scheduler:scheduler_schedule_attempts:sum`,
  etcd_server_list: T`label_replace(up{job="etcd"}, "node_ip", "$1", "instance", "(.*):.*")`,
  etcd_server_total: T`count(up{job="etcd"})`,
  etcd_server_has_leader: T`label_replace(etcd_server_has_leader, "node_ip", "$1", "instance", "(.*):.*")`,
  etcd_server_is_leader: T`label_replace(etcd_server_is_leader, "node_ip", "$1", "instance", "(.*):.*")`,
  // node
  node_cpu_usage: T`round(node:node_cpu_utilisation:avg1m{$1} * node:node_num_cpu:sum{$1}, 0.001)`,
  node_cpu_total: T`node:node_num_cpu:sum{$1}`,
  node_cpu_utilisation: T`node:node_cpu_utilisation:avg1m{$1}`,
  node_memory_usage_wo_cache: T`node:node_memory_bytes_total:sum{$1} - node:node_memory_bytes_available:sum{$1}`,
  node_memory_total: T`node:node_memory_bytes_total:sum{$1}`,
  node_memory_utilisation: T`node:node_memory_utilisation:{$1}`,
  node_pod_running_count: T`node:pod_running:count{$1}`,
  node_pod_quota: T`max(kube_node_status_capacity{resource="pods",$1}) by (node) unless on (node) (kube_node_status_condition{condition="Ready",status=~"unknown|false"} > 0)`,
  node_pod_utilisation: T`node:pod_utilization:ratio{$1}`,
  node_load1: T`node:load1:ratio{$1}`,
  node_load5: T`node:load5:ratio{$1}`,
  node_load15: T`node:load15:ratio{$1}`,
  node_disk_size_usage: `sum(max((node_filesystem_size_bytes{${FS_DEVICE}} - node_filesystem_avail_bytes{${FS_DEVICE}}) * on (namespace, pod) group_left(node) node_namespace_pod:kube_pod_info:{$1}) by (device, node)) by (node)`,
  node_disk_size_capacity: `sum(max(node_filesystem_size_bytes{${FS_DEVICE}} * on (namespace, pod) group_left(node) node_namespace_pod:kube_pod_info:{$1}) by (device, node)) by (node)`,
  node_disk_size_utilisation: T`node:disk_space_utilization:ratio{$1}`,
  node_disk_inode_total: T`node:node_inodes_total:{$1}`,
  node_disk_inode_usage: T`node:node_inodes_total:{$1} - node:node_inodes_free:{$1}`,
  node_disk_inode_utilisation: T`node:disk_inode_utilization:ratio{$1}`,
  node_device_size_utilisation: T`1 - sum by(device, node, host_ip, role) (node_filesystem_avail_bytes{device!~"/dev/loop\\d+",device=~"/dev/.*",job="node-exporter"} * on(namespace, pod) group_left(node, host_ip, role) node_namespace_pod:kube_pod_info:{$1}) / sum by(device, node, host_ip, role) (node_filesystem_size_bytes{device!~"/dev/loop\\d+",device=~"/dev/.*",job="node-exporter"} * on(namespace, pod) group_left(node, host_ip, role) node_namespace_pod:kube_pod_info:{$1})`,
  node_disk_read_iops: T`node:data_volume_iops_reads:sum{$1}`,
  node_disk_write_iops: T`node:data_volume_iops_writes:sum{$1}`,
  node_disk_read_throughput: T`node:data_volume_throughput_bytes_read:sum{$1}`,
  node_disk_write_throughput: T`node:data_volume_throughput_bytes_written:sum{$1}`,
  node_net_bytes_transmitted: T`node:node_net_bytes_transmitted:sum_irate{$1}`,
  node_net_bytes_received: T`node:node_net_bytes_received:sum_irate{$1}`,
  // workspace (`$1` the workspace, `$S` its namespaces as kapi has them)
  workspace_cpu_usage: T`round(sum by (workspace) (namespace:container_cpu_usage_seconds_total:sum_rate{namespace!="", $1, $S}), 0.001)`,
  workspace_memory_usage_wo_cache: T`sum by (workspace) (namespace:container_memory_usage_bytes_wo_cache:sum{namespace!="", $1, $S})`,
  workspace_pod_running_count: T`sum by (workspace) (kube_pod_status_phase{phase="Running", namespace!="", $S} * on (namespace) group_left(workspace)(kube_namespace_labels{$1, $S})) or on(workspace) max by(workspace) (kube_namespace_labels{$1, $S} * 0)`,
  workspace_deployment_count: workspaceCount('kube_deployment_labels'),
  workspace_statefulset_count: workspaceCount('kube_statefulset_labels'),
  workspace_daemonset_count: workspaceCount('kube_daemonset_labels'),
  workspace_job_count: workspaceCount('kube_job_labels'),
  workspace_cronjob_count: workspaceCount('kube_cronjob_labels'),
  workspace_pvc_count: workspaceCount('kube_persistentvolumeclaim_info'),
  workspace_service_count: workspaceCount('kube_service_info'),
  workspace_ingresses_extensions_count: workspaceCount('kube_ingress_labels'),
  // namespace (`$1` the namespace, or the namespaces, always)
  namespace_cpu_usage: T`round(namespace:container_cpu_usage_seconds_total:sum_rate{namespace!="", $1}, 0.001)`,
  namespace_memory_usage_wo_cache: T`namespace:container_memory_usage_bytes_wo_cache:sum{namespace!="", $1}`,
  namespace_pod_count: T`sum by (namespace) (kube_pod_status_phase{phase!~"Failed|Succeeded", namespace!="", $1} * on (namespace) group_left(workspace) kube_namespace_labels{$1}) or on(namespace) max by(namespace) (kube_namespace_labels{$1} * 0)`,
  namespace_deployment_count: namespaceCount('kube_deployment_labels'),
  namespace_statefulset_count: namespaceCount('kube_statefulset_labels'),
  namespace_daemonset_count: namespaceCount('kube_daemonset_labels'),
  namespace_job_count: namespaceCount('kube_job_labels'),
  namespace_cronjob_count: namespaceCount('kube_cronjob_labels'),
  namespace_pvc_count: namespaceCount('kube_persistentvolumeclaim_info'),
  namespace_service_count: namespaceCount('kube_service_info'),
  namespace_secret_count: namespaceCount('kube_secret_info'),
  namespace_configmap_count: namespaceCount('kube_configmap_info'),
  namespace_ingresses_extensions_count: namespaceCount('kube_ingress_labels'),
  // workload (`$1` the namespace and the workloads, `Kind:name`; `$2` the namespace and the workloads of the kind)
  workload_cpu_usage: T`round(namespace:workload_cpu_usage:sum{$1}, 0.001)`,
  workload_memory_usage_wo_cache: T`namespace:workload_memory_usage_wo_cache:sum{$1}`,
  workload_net_bytes_transmitted: T`namespace:workload_net_bytes_transmitted:sum_irate{$1}`,
  workload_net_bytes_received: T`namespace:workload_net_bytes_received:sum_irate{$1}`,
  workload_deployment_replica: replicas('kube_deployment_spec_replicas', 'Deployment', 'deployment'),
  workload_deployment_replica_available: replicas(
    'kube_deployment_status_replicas_available',
    'Deployment',
    'deployment',
  ),
  workload_statefulset_replica: replicas('kube_statefulset_replicas', 'StatefulSet', 'statefulset'),
  workload_statefulset_replica_available: replicas(
    'kube_statefulset_status_replicas_current',
    'StatefulSet',
    'statefulset',
  ),
  workload_daemonset_replica: replicas('kube_daemonset_status_desired_number_scheduled', 'DaemonSet', 'daemonset'),
  workload_daemonset_replica_available: replicas('kube_daemonset_status_number_available', 'DaemonSet', 'daemonset'),
  // pod
  pod_cpu_usage: `round(${perPod(T`sum by (namespace, pod) (irate(container_cpu_usage_seconds_total{job="kubelet", pod!="", image!="", $S}[5m]))`)}, 0.001)`,
  pod_memory_usage_wo_cache: perPod(
    T`sum by (namespace, pod) (container_memory_working_set_bytes{job="kubelet", pod!="", image!="", $S})`,
  ),
  pod_net_bytes_transmitted: perPod(
    `sum by (namespace, pod) (irate(container_network_transmit_bytes_total{pod!="", ${NO_VIRTUAL_INTERFACES}, job="kubelet", $S}[5m]))`,
  ),
  pod_net_bytes_received: perPod(
    `sum by (namespace, pod) (irate(container_network_receive_bytes_total{pod!="", ${NO_VIRTUAL_INTERFACES}, job="kubelet", $S}[5m]))`,
  ),
  // container (`$1` the pod, its namespace and the containers)
  container_cpu_usage: T`round(sum by (namespace, pod, container) (irate(container_cpu_usage_seconds_total{job="kubelet", container!="POD", container!="", image!="", $1}[5m])), 0.001)`,
  container_memory_usage_wo_cache: T`sum by (namespace, pod, container) (container_memory_working_set_bytes{job="kubelet", container!="POD", container!="", image!="", $1})`,
  // persistent volume claims (`$1` the namespace or storage class and the claims)
  pvc_inodes_available: perClaim(T`kubelet_volume_stats_inodes_free{$S}`),
  pvc_inodes_used: perClaim(T`kubelet_volume_stats_inodes_used{$S}`),
  pvc_inodes_total: perClaim(T`kubelet_volume_stats_inodes{$S}`),
  pvc_inodes_utilisation: perClaim(T`kubelet_volume_stats_inodes_used{$S} / kubelet_volume_stats_inodes{$S}`),
  pvc_bytes_available: perClaim(T`kubelet_volume_stats_available_bytes{$S}`),
  pvc_bytes_used: perClaim(T`kubelet_volume_stats_used_bytes{$S}`),
  pvc_bytes_total: perClaim(T`kubelet_volume_stats_capacity_bytes{$S}`),
  pvc_bytes_utilisation: perClaim(T`kubelet_volume_stats_used_bytes{$S} / kubelet_volume_stats_capacity_bytes{$S}`),
};

/** KubeSphere 3.4.1's named list of each level, in its order (named_metrics.go), of the metrics kapi has templates for. */
const KUBESPHERE_ORDER: Record<Level, readonly string[]> = {
  cluster: [
    'cluster_cpu_usage',
    'cluster_cpu_total',
    'cluster_memory_total',
    'cluster_memory_usage_wo_cache',
    'cluster_disk_size_usage',
    'cluster_disk_size_capacity',
    'cluster_pod_quota',
    'cluster_pod_running_count',
    'cluster_node_total',
  ],
  node: [
    'node_cpu_utilisation',
    'node_cpu_total',
    'node_cpu_usage',
    'node_memory_utilisation',
    'node_memory_usage_wo_cache',
    'node_memory_total',
    'node_net_bytes_transmitted',
    'node_net_bytes_received',
    'node_disk_read_iops',
    'node_disk_write_iops',
    'node_disk_read_throughput',
    'node_disk_write_throughput',
    'node_disk_size_capacity',
    'node_disk_size_usage',
    'node_disk_size_utilisation',
    'node_disk_inode_total',
    'node_disk_inode_usage',
    'node_disk_inode_utilisation',
    'node_pod_quota',
    'node_pod_utilisation',
    'node_pod_running_count',
    'node_load1',
    'node_load5',
    'node_load15',
    'node_device_size_utilisation',
  ],
  workspace: [
    'workspace_cpu_usage',
    'workspace_memory_usage_wo_cache',
    'workspace_pod_running_count',
    'workspace_ingresses_extensions_count',
    'workspace_cronjob_count',
    'workspace_pvc_count',
    'workspace_daemonset_count',
    'workspace_deployment_count',
    'workspace_job_count',
    'workspace_statefulset_count',
    'workspace_service_count',
  ],
  namespace: [
    'namespace_cpu_usage',
    'namespace_memory_usage_wo_cache',
    'namespace_pod_count',
    'namespace_cronjob_count',
    'namespace_pvc_count',
    'namespace_daemonset_count',
    'namespace_deployment_count',
    'namespace_job_count',
    'namespace_statefulset_count',
    'namespace_service_count',
    'namespace_secret_count',
    'namespace_configmap_count',
    'namespace_ingresses_extensions_count',
  ],
  workload: [
    'workload_cpu_usage',
    'workload_memory_usage_wo_cache',
    'workload_net_bytes_transmitted',
    'workload_net_bytes_received',
    'workload_deployment_replica',
    'workload_deployment_replica_available',
    'workload_statefulset_replica',
    'workload_statefulset_replica_available',
    'workload_daemonset_replica',
    'workload_daemonset_replica_available',
  ],
  pod: ['pod_cpu_usage', 'pod_memory_usage_wo_cache', 'pod_net_bytes_transmitted', 'pod_net_bytes_received'],
  container: ['container_cpu_usage', 'container_memory_usage_wo_cache'],
  pvc: [
    'pvc_inodes_available',
    'pvc_inodes_used',
    'pvc_inodes_total',
    'pvc_inodes_utilisation',
    'pvc_bytes_available',
    'pvc_bytes_used',
    'pvc_bytes_total',
    'pvc_bytes_utilisation',
  ],
  apiserver: ['apiserver_request_rate', 'apiserver_request_latencies'],
  scheduler: ['scheduler_schedule_attempts'],
  etcd: ['etcd_server_list', 'etcd_server_total', 'etcd_server_has_leader', 'etcd_server_is_leader'],
};

export const NAMED_METRICS: Readonly<Record<Level, readonly string[]>> = KUBESPHERE_ORDER;
