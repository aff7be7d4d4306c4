import { NAMED_METRICS, type Level } from '../../../../src/apis/monitoring/v1alpha3/catalogue.js';
import { queryOf } from '../../../../src/apis/monitoring/v1alpha3/expand.js';
import { namesOf, pairsOf } from '../../../../src/apis/monitoring/v1alpha3/request.js';
import { planOf, type PlanInput, type Target } from '../../../../src/apis/monitoring/v1alpha3/targets.js';
import type { Labels } from './scenario.js';

/**
 * What each template answers for the scenario (scenario.ts), worked out by hand from its series: every named metric
 * of every level, at the route the console asks it through, as kapi expands it. `__name__` where the answer keeps a
 * recorded series' name.
 */
export interface Expectation {
  metric: string;
  target: Target;
  input?: Partial<PlanInput>;
  samples: [Labels, number][];
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const n1 = { node: 'n1', host_ip: '10.0.0.1', role: 'master' };
const n2 = { node: 'n2', host_ip: '10.0.0.2' };
const named = (name: string, labels: Labels): Labels => ({ __name__: name, ...labels });
const perNode = (name: string | undefined, v1: number, v2: number, labels = (n: Labels) => n): [Labels, number][] => [
  [name ? named(name, labels(n1)) : labels(n1), v1],
  [name ? named(name, labels(n2)) : labels(n2), v2],
];
const nodeOnly = (n: Labels) => ({ node: n.node as string });

const cluster: Target = { kind: 'cluster' };
const nodes: Target = { kind: 'nodes' };
const ws1: Target = { kind: 'workspace', workspace: 'ws1' };
const ws1Input = { workspaceNamespaces: ['a', 'b'] };
const nsA: Target = { kind: 'namespace', namespace: 'a' };
const web = { namespace: 'a', owner_kind: 'ReplicaSet', owner_name: 'web-5d8f7c9b4d' };
const abcde = { ...web, pod: 'web-5d8f7c9b4d-abcde', node: 'n1' };
const fghij = { ...web, pod: 'web-5d8f7c9b4d-fghij', node: 'n2' };
const db0 = { namespace: 'a', pod: 'db-0', owner_kind: 'StatefulSet', owner_name: 'db', node: 'n1' };
const agent = { namespace: 'b', pod: 'agent-x1', owner_kind: 'DaemonSet', owner_name: 'agent', node: 'n2' };
const claim = { namespace: 'a', persistentvolumeclaim: 'data-db-0', storageclass: 'fast' };
const wl = (namespace: string, kind: string, name: string) => ({
  namespace,
  owner_kind: kind,
  workload: `${kind}:${name}`,
});

const e = (metric: string, target: Target, samples: [Labels, number][], input?: Partial<PlanInput>): Expectation => ({
  metric,
  target,
  samples,
  ...(input && { input }),
});

export const EXPECTATIONS: Expectation[] = [
  // the cluster overview: 3 CPUs of which 0.85 busy, 12 GiB of which 6 used, 150 GB of disk of which 50 used
  e('cluster_cpu_usage', cluster, [[{}, 0.85]]),
  e('cluster_cpu_total', cluster, [[{}, 3]]),
  e('cluster_memory_total', cluster, [[{}, 12 * GiB]]),
  e('cluster_memory_usage_wo_cache', cluster, [[{}, 6 * GiB]]),
  e('cluster_disk_size_usage', cluster, [[{}, 50e9]]),
  e('cluster_disk_size_capacity', cluster, [[{}, 150e9]]),
  e('cluster_pod_quota', cluster, [[{}, 220]]),
  e('cluster_pod_running_count', cluster, [[named('cluster:pod_running:count', {}), 6]]),
  e('cluster_node_total', cluster, [[{}, 2]]),
  // nodes: n1 2 CPUs at 0.25 and 0.5, n2 one at 0.1
  e('node_cpu_utilisation', nodes, perNode('node:node_cpu_utilisation:avg1m', 0.375, 0.1)),
  e('node_cpu_total', nodes, perNode('node:node_num_cpu:sum', 2, 1)),
  e('node_cpu_usage', nodes, perNode(undefined, 0.75, 0.1)),
  e('node_memory_utilisation', nodes, perNode('node:node_memory_utilisation:', 0.5, 0.5)),
  e('node_memory_usage_wo_cache', nodes, perNode(undefined, 4 * GiB, 2 * GiB)),
  e('node_memory_total', nodes, perNode('node:node_memory_bytes_total:sum', 8 * GiB, 4 * GiB)),
  e('node_net_bytes_transmitted', nodes, perNode('node:node_net_bytes_transmitted:sum_irate', 500, 50)),
  e('node_net_bytes_received', nodes, perNode('node:node_net_bytes_received:sum_irate', 1000, 100)),
  e('node_disk_read_iops', nodes, perNode('node:data_volume_iops_reads:sum', 10, 1)),
  e('node_disk_write_iops', nodes, perNode('node:data_volume_iops_writes:sum', 20, 2)),
  e('node_disk_read_throughput', nodes, perNode('node:data_volume_throughput_bytes_read:sum', 100_000, 1000)),
  e('node_disk_write_throughput', nodes, perNode('node:data_volume_throughput_bytes_written:sum', 200_000, 2000)),
  e('node_disk_size_capacity', nodes, perNode(undefined, 100e9, 50e9, nodeOnly)),
  e('node_disk_size_usage', nodes, perNode(undefined, 40e9, 10e9, nodeOnly)),
  e(
    'node_disk_size_utilisation',
    nodes,
    perNode('node:disk_space_utilization:ratio', 1 - 60e9 / 100e9, 1 - 40e9 / 50e9),
  ),
  e('node_disk_inode_total', nodes, perNode('node:node_inodes_total:', 1_000_000, 500_000)),
  e('node_disk_inode_usage', nodes, perNode(undefined, 250_000, 100_000)),
  e(
    'node_disk_inode_utilisation',
    nodes,
    perNode('node:disk_inode_utilization:ratio', 1 - 750e3 / 1e6, 1 - 400e3 / 500e3),
  ),
  e('node_pod_quota', nodes, perNode(undefined, 110, 110, nodeOnly)),
  e('node_pod_utilisation', nodes, perNode('node:pod_utilization:ratio', 3 / 110, 3 / 110)),
  e('node_pod_running_count', nodes, perNode('node:pod_running:count', 3, 3)),
  e('node_load1', nodes, perNode('node:load1:ratio', 0.75, 0.3)),
  e('node_load5', nodes, perNode('node:load5:ratio', 0.5, 0.2)),
  e('node_load15', nodes, perNode('node:load15:ratio', 0.25, 0.1)),
  e('node_device_size_utilisation', nodes, [
    [{ device: '/dev/sda1', ...n1 }, 1 - 60e9 / 100e9],
    [{ device: '/dev/vda1', ...n2 }, 1 - 40e9 / 50e9],
  ]),
  e('node_cpu_usage', { kind: 'nodes', node: 'n2' }, [[n2, 0.1]]),
  e('node_memory_total', nodes, [[named('node:node_memory_bytes_total:sum', n1), 8 * GiB]], {
    filter: namesOf('resources_filter', 'n1$'),
  }),
  // components: 10 requests a second of 10 ms each (watches left out); 10 scheduling attempts; one etcd, the leader
  e('apiserver_request_rate', { kind: 'component', component: 'apiserver' }, [
    [named('apiserver:apiserver_request_total:sum_irate', {}), 10],
  ]),
  e('apiserver_request_latencies', { kind: 'component', component: 'apiserver' }, [
    [named('apiserver:apiserver_request_duration:avg', {}), 0.01],
  ]),
  e('scheduler_schedule_attempts', { kind: 'component', component: 'scheduler' }, [
    [named('scheduler:scheduler_schedule_attempts:sum', { result: 'scheduled' }), 10],
  ]),
  e('etcd_server_list', { kind: 'component', component: 'etcd' }, [
    [named('up', { job: 'etcd', instance: '10.0.0.1:2379', node_ip: '10.0.0.1' }), 1],
  ]),
  e('etcd_server_total', { kind: 'component', component: 'etcd' }, [[{}, 1]]),
  e('etcd_server_has_leader', { kind: 'component', component: 'etcd' }, [
    [named('etcd_server_has_leader', { job: 'etcd', instance: '10.0.0.1:2379', node_ip: '10.0.0.1' }), 1],
  ]),
  e('etcd_server_is_leader', { kind: 'component', component: 'etcd' }, [
    [named('etcd_server_is_leader', { job: 'etcd', instance: '10.0.0.1:2379', node_ip: '10.0.0.1' }), 1],
  ]),
  // workspace ws1 (namespaces a and b): 0.9 cores, 960 MiB, 4 running pods
  e('workspace_cpu_usage', ws1, [[{ workspace: 'ws1' }, 0.9]], ws1Input),
  e('workspace_memory_usage_wo_cache', ws1, [[{ workspace: 'ws1' }, 960 * MiB]], ws1Input),
  e('workspace_pod_running_count', ws1, [[{ workspace: 'ws1' }, 4]], ws1Input),
  e('workspace_ingresses_extensions_count', ws1, [[{ workspace: 'ws1' }, 1]], ws1Input),
  e('workspace_cronjob_count', ws1, [], ws1Input),
  e('workspace_pvc_count', ws1, [[{ workspace: 'ws1' }, 1]], ws1Input),
  e('workspace_daemonset_count', ws1, [[{ workspace: 'ws1' }, 1]], ws1Input),
  e('workspace_deployment_count', ws1, [[{ workspace: 'ws1' }, 1]], ws1Input),
  e('workspace_job_count', ws1, [], ws1Input),
  e('workspace_statefulset_count', ws1, [[{ workspace: 'ws1' }, 1]], ws1Input),
  e('workspace_service_count', ws1, [[{ workspace: 'ws1' }, 3]], ws1Input),
  // a workspace member who sees project b only: b's series alone
  e('workspace_cpu_usage', ws1, [[{ workspace: 'ws1' }, 0.05]], { workspaceNamespaces: ['b'] }),
  e('workspace_cpu_usage', { kind: 'workspaces' }, [
    [{ workspace: 'ws1' }, 0.9],
    [{ workspace: 'ws2' }, 0],
  ]),
  e('workspace_job_count', { kind: 'workspaces' }, [[{ workspace: 'ws2' }, 1]]),
  e('workspace_pod_running_count', { kind: 'workspaces' }, [
    [{ workspace: 'ws1' }, 4],
    [{ workspace: 'ws2' }, 0],
  ]),
  // namespace a: 0.85 cores, 896 MiB, 3 pods (web ×2, db-0)
  e('namespace_cpu_usage', nsA, [[{ namespace: 'a', workspace: 'ws1' }, 0.85]]),
  e('namespace_memory_usage_wo_cache', nsA, [
    [named('namespace:container_memory_usage_bytes_wo_cache:sum', { namespace: 'a', workspace: 'ws1' }), 896 * MiB],
  ]),
  e('namespace_pod_count', nsA, [[{ namespace: 'a' }, 3]]),
  e('namespace_cronjob_count', nsA, []),
  e('namespace_pvc_count', nsA, [[{ namespace: 'a' }, 1]]),
  e('namespace_daemonset_count', nsA, []),
  e('namespace_deployment_count', nsA, [[{ namespace: 'a' }, 1]]),
  e('namespace_job_count', nsA, []),
  e('namespace_statefulset_count', nsA, [[{ namespace: 'a' }, 1]]),
  e('namespace_service_count', nsA, [[{ namespace: 'a' }, 2]]),
  e('namespace_secret_count', nsA, [[{ namespace: 'a' }, 3]]),
  e('namespace_configmap_count', nsA, [[{ namespace: 'a' }, 1]]),
  e('namespace_ingresses_extensions_count', nsA, [[{ namespace: 'a' }, 1]]),
  // every namespace's pods, as the objects are (job-1's has finished; kapi-monitoring's two exporters)
  e('namespace_pod_count', { kind: 'namespaces' }, [
    [{ namespace: 'a' }, 3],
    [{ namespace: 'b' }, 1],
    [{ namespace: 'c' }, 0],
    [{ namespace: 'kapi-monitoring' }, 2],
  ]),
  e(
    'namespace_cpu_usage',
    { kind: 'workspace-namespaces', workspace: 'ws1' },
    [
      [{ namespace: 'a', workspace: 'ws1' }, 0.85],
      [{ namespace: 'b', workspace: 'ws1' }, 0.05],
    ],
    ws1Input,
  ),
  // workloads: web's two pods (0.25 + 0.5 cores, 256 + 128 MiB), db's one
  e('workload_cpu_usage', { kind: 'workloads', namespace: 'a' }, [
    [{ namespace: 'a', workload: 'Deployment:web', owner_kind: 'Deployment' }, 0.75],
    [{ namespace: 'a', workload: 'StatefulSet:db', owner_kind: 'StatefulSet' }, 0.1],
  ]),
  e(
    'workload_cpu_usage',
    { kind: 'workloads', namespace: 'a', workloadKind: 'deployment' },
    [[{ namespace: 'a', workload: 'Deployment:web', owner_kind: 'Deployment' }, 0.75]],
    { filter: namesOf('resources_filter', 'web$') },
  ),
  e('workload_cpu_usage', { kind: 'workloads', namespace: 'a', workloadKind: 'statefulset' }, [
    [{ namespace: 'a', workload: 'StatefulSet:db', owner_kind: 'StatefulSet' }, 0.1],
  ]),
  e('workload_memory_usage_wo_cache', { kind: 'workloads', namespace: 'a' }, [
    [
      named('namespace:workload_memory_usage_wo_cache:sum', {
        namespace: 'a',
        workload: 'Deployment:web',
        owner_kind: 'Deployment',
      }),
      384 * MiB,
    ],
    [
      named('namespace:workload_memory_usage_wo_cache:sum', {
        namespace: 'a',
        workload: 'StatefulSet:db',
        owner_kind: 'StatefulSet',
      }),
      512 * MiB,
    ],
  ]),
  e('workload_net_bytes_transmitted', { kind: 'workloads', namespace: 'a' }, [
    [
      named('namespace:workload_net_bytes_transmitted:sum_irate', {
        namespace: 'a',
        workload: 'Deployment:web',
        owner_kind: 'Deployment',
      }),
      100,
    ],
  ]),
  e('workload_net_bytes_received', { kind: 'workloads', namespace: 'a' }, [
    [
      named('namespace:workload_net_bytes_received:sum_irate', {
        namespace: 'a',
        workload: 'Deployment:web',
        owner_kind: 'Deployment',
      }),
      200,
    ],
  ]),
  e('workload_deployment_replica', { kind: 'workloads', namespace: 'a' }, [[wl('a', 'Deployment', 'web'), 2]]),
  e('workload_deployment_replica_available', { kind: 'workloads', namespace: 'a' }, [
    [wl('a', 'Deployment', 'web'), 2],
  ]),
  e('workload_statefulset_replica', { kind: 'workloads', namespace: 'a' }, [[wl('a', 'StatefulSet', 'db'), 1]]),
  e('workload_statefulset_replica_available', { kind: 'workloads', namespace: 'a' }, [
    [wl('a', 'StatefulSet', 'db'), 1],
  ]),
  e('workload_daemonset_replica', { kind: 'workloads', namespace: 'a' }, []),
  e('workload_daemonset_replica', { kind: 'workloads', namespace: 'b', workloadKind: 'daemonset' }, [
    [wl('b', 'DaemonSet', 'agent'), 2],
  ]),
  e('workload_daemonset_replica_available', { kind: 'workloads', namespace: 'b', workloadKind: 'daemonset' }, [
    [wl('b', 'DaemonSet', 'agent'), 1],
  ]),
  // a route's kind empties the other kinds' metrics, as in KubeSphere
  e('workload_statefulset_replica', { kind: 'workloads', namespace: 'a', workloadKind: 'deployment' }, []),
  // pods: a pod loading 0.25 cores reads 0.25
  ...(['deployment'] as const).flatMap((kind) => {
    const target: Target = { kind: 'workload-pods', namespace: 'a', workloadKind: kind, workload: 'web' };
    return [
      e('pod_cpu_usage', target, [
        [abcde, 0.25],
        [fghij, 0.5],
      ]),
      e('pod_memory_usage_wo_cache', target, [
        [abcde, 256 * MiB],
        [fghij, 128 * MiB],
      ]),
      e('pod_net_bytes_transmitted', target, [[abcde, 100]]),
      e('pod_net_bytes_received', target, [[abcde, 200]]),
    ];
  }),
  e('pod_cpu_usage', { kind: 'workload-pods', namespace: 'a', workloadKind: 'statefulset', workload: 'db' }, [
    [db0, 0.1],
  ]),
  e('pod_cpu_usage', { kind: 'workload-pods', namespace: 'b', workloadKind: 'daemonset', workload: 'agent' }, [
    [agent, 0.05],
  ]),
  e('pod_cpu_usage', { kind: 'namespace-pods', namespace: 'a' }, [
    [db0, 0.1],
    [abcde, 0.25],
    [fghij, 0.5],
  ]),
  e('pod_cpu_usage', { kind: 'namespace-pods', namespace: 'a', pod: 'db-0' }, [[db0, 0.1]]),
  e('pod_memory_usage_wo_cache', { kind: 'namespace-pods', namespace: 'a' }, [[abcde, 256 * MiB]], {
    filter: namesOf('resources_filter', 'web-5d8f7c9b4d-abcde$'),
  }),
  e('pod_cpu_usage', { kind: 'node-pods', node: 'n1' }, [
    [db0, 0.1],
    [abcde, 0.25],
  ]),
  e('pod_cpu_usage', { kind: 'node-pods', node: 'n2', pod: 'agent-x1' }, [[agent, 0.05]]),
  e(
    'pod_cpu_usage',
    { kind: 'pods' },
    [
      [db0, 0.1],
      [agent, 0.05],
    ],
    { pairs: pairsOf('a/db-0|b/agent-x1$') as never },
  ),
  // containers
  e('container_cpu_usage', { kind: 'containers', namespace: 'a', pod: 'web-5d8f7c9b4d-abcde' }, [
    [{ namespace: 'a', pod: 'web-5d8f7c9b4d-abcde', container: 'app' }, 0.25],
  ]),
  e('container_memory_usage_wo_cache', { kind: 'containers', namespace: 'a', pod: 'db-0', container: 'db' }, [
    [{ namespace: 'a', pod: 'db-0', container: 'db' }, 512 * MiB],
  ]),
  // persistent volume claims: 25 GB of 100 used, 100 inodes of 1000
  ...(
    [
      ['pvc_bytes_available', 75e9],
      ['pvc_bytes_used', 25e9],
      ['pvc_bytes_total', 100e9],
      ['pvc_bytes_utilisation', 0.25],
      ['pvc_inodes_available', 900],
      ['pvc_inodes_used', 100],
      ['pvc_inodes_total', 1000],
      ['pvc_inodes_utilisation', 0.1],
    ] as const
  ).map(([metric, value]) => e(metric, { kind: 'pvcs', namespace: 'a' }, [[claim, value]])),
  e('pvc_bytes_used', { kind: 'pvcs', namespace: 'a', pvc: 'data-db-0' }, [[claim, 25e9]]),
  e('pvc_bytes_used', { kind: 'storageclass-pvcs', storageClass: 'fast' }, [[claim, 25e9]]),
  e('pvc_bytes_used', { kind: 'storageclass-pvcs', storageClass: 'slow' }, []),
];

/** The PromQL kapi sends for an expectation. */
export function expectedQuery(expectation: Expectation): { level: Level; query: string } {
  const plan = planOf(expectation.target, { filter: { all: true }, ...expectation.input });
  return { level: plan.level, query: queryOf(expectation.metric, plan.slotsFor(expectation.metric)) };
}

/** Named metrics no expectation covers (none may be left). */
export function uncovered(): string[] {
  const covered = new Set(EXPECTATIONS.map((x) => x.metric));
  return Object.values(NAMED_METRICS)
    .flat()
    .filter((metric) => !covered.has(metric));
}
