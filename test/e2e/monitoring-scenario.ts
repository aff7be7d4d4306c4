import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { runningPodStatus } from '../../src/sandbox/pod-status.js';
import { startClusterExporter, type ClusterExporter } from '../../src/sandbox/monitoring/cluster-exporter.js';
import {
  CPU_ANNOTATION,
  MEMORY_ANNOTATION,
  nodeExporterPod,
  RX_ANNOTATION,
  TX_ANNOTATION,
} from '../../src/sandbox/monitoring/series.js';
import { bindGlobalRole, ensureDefaultServiceAccount, kubeAllows, RUN_LABEL, waitFor, type E2E } from './harness.js';
import { startNodeExporter, startPrometheus, until, type LivePrometheus } from './live-prometheus.js';

/**
 * One run's monitored cluster (SPEC §19's live tier), on the sandbox or a real kube-apiserver: a workspace with two
 * projects, pods with known usage on a Node whose series come from the real node exporter of this machine, a live
 * Debian Prometheus scraping it, the run's kube-state-metrics and cAdvisor series (cluster-exporter.ts), and the
 * cluster's kube-apiserver (and the kit's etcd, when E2E_ETCD_METRICS_URL names it), loading the chart's recording
 * rules; kapi's ClusterConfiguration names it as the monitoring backend.
 *
 * Project A: pods web-5d8f7c9b4d-abcde (0.25 cores, 256 MiB, 200 B/s in, 100 out) and web-5d8f7c9b4d-fghij (0.5 cores,
 * 128 MiB) of the Deployment web (through its ReplicaSet, as a controller would own them). Project B: db-0 (0.1 cores,
 * 512 MiB). The node exporter's own pod runs in the run's namespace. All on Node n1, a master.
 */
export const RULES_FILE = join(process.cwd(), 'charts', 'kapi-apiserver', 'files', 'monitoring-rules.yaml');
export const MONITORING = '/kapis/monitoring.kapi.io/v1alpha3';
const MiB = 1024 ** 2;

export interface MonitoringScenario {
  prometheus: LivePrometheus;
  exporter: ClusterExporter;
  workspace: string;
  projectA: string;
  projectB: string;
  /** The node the real node exporter of this machine stands for. */
  node: string;
  /** A second node (4 CPUs, 8 GiB), its series the exporter's (as a node exporter would publish them). */
  otherNode: string;
  /** The platform admin who made the workspace (a user name); its token. */
  root: string;
  rootToken: string;
  stop(): Promise<void>;
}

export interface ScenarioPod {
  name: string;
  namespace: string;
  cpu: number;
  memory: number;
  rx?: number;
  tx?: number;
  owner?: { kind: string; name: string };
}

export async function login(e2e: E2E, username: string, password: string): Promise<string> {
  const res = await fetch(`${e2e.kapiUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password, client_id: 'kapi', client_secret: 'kapi' }),
  });
  if (res.status !== 200) throw new Error(`login of ${username}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A kapi call as `token`: its status and JSON body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function kapiGet(e2e: E2E, token: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e2e.kapiUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export async function kapiSend(e2e: E2E, token: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

/** Where Prometheus reaches the cluster's kube-apiserver, and with what: the sandbox's, or KUBECONFIG's. */
function apiserverTarget(e2e: E2E): { url: URL; token: string; ca?: string } {
  if (e2e.sandbox) return { url: new URL(e2e.sandbox.url), token: e2e.sandbox.adminToken };
  const config = parseYaml(readFileSync(process.env.KUBECONFIG as string, 'utf8'));
  const cluster = config.clusters[0].cluster;
  const ca = cluster['certificate-authority']
    ? readFileSync(cluster['certificate-authority'], 'utf8')
    : Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  return { url: new URL(cluster.server), token: config.users[0].user.token, ca };
}

/**
 * A user who views project A through the cluster's own `view` role (kapi:monitoring-view is aggregated into it); its
 * token, and the RoleBinding's path to delete after.
 */
export async function projectViewer(
  e2e: E2E,
  scenario: MonitoringScenario,
  suffix: string,
  password: string,
): Promise<{ token: string; binding: string }> {
  const viewer = await e2e.createUser(suffix, password);
  const bindings = `/apis/rbac.authorization.k8s.io/v1/namespaces/${scenario.projectA}/rolebindings`;
  await e2e.admin.request({
    method: 'POST',
    path: bindings,
    body: {
      metadata: { name: suffix },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: viewer }],
    },
  });
  return { token: await login(e2e, viewer, password), binding: `${bindings}/${suffix}` };
}

/**
 * A member of the scenario's workspace as the console makes one (through kapi, as its platform admin): a regular member
 * of the workspace with `role` in `project`; returned once kube-apiserver's RBAC has the project role realized.
 */
export async function workspaceProjectMember(
  e2e: E2E,
  scenario: MonitoringScenario,
  suffix: string,
  password: string,
  project: string,
  role: 'viewer' | 'operator' | 'admin',
): Promise<string> {
  const member = await e2e.createUser(suffix, password);
  await waitFor(
    async () => (await kapiGet(e2e, scenario.rootToken, `/kapis/iam.kapi.io/v1alpha2/users/${member}`)).status === 200,
  );
  await kapiSend(
    e2e,
    scenario.rootToken,
    'POST',
    `/kapis/iam.kapi.io/v1alpha2/workspaces/${scenario.workspace}/workspacemembers`,
    [{ username: member, roleRef: `${scenario.workspace}-regular` }],
  );
  await kapiSend(e2e, scenario.rootToken, 'POST', `/kapis/iam.kapi.io/v1alpha2/namespaces/${project}/members`, [
    { username: member, roleRef: role },
  ]);
  await waitFor(() => kubeAllows(e2e.admin, member, { verb: 'list', resource: 'pods', namespace: project }));
  return member;
}

export async function createScenarioPod(e2e: E2E, node: string, pod: ScenarioPod): Promise<void> {
  const containers = [{ name: 'app', image: 'registry.invalid/e2e' }];
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${pod.namespace}/pods`,
    body: {
      metadata: {
        name: pod.name,
        labels: { [RUN_LABEL]: e2e.runId, app: pod.name.split('-')[0] },
        annotations: {
          [CPU_ANNOTATION]: String(pod.cpu),
          [MEMORY_ANNOTATION]: String(pod.memory),
          ...(pod.rx !== undefined && { [RX_ANNOTATION]: String(pod.rx) }),
          ...(pod.tx !== undefined && { [TX_ANNOTATION]: String(pod.tx) }),
        },
        ...(pod.owner && {
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: pod.owner.kind, name: pod.owner.name, uid: randomUUID(), controller: true },
          ],
        }),
      },
      spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers },
    },
  });
  await e2e.admin.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${pod.namespace}/pods/${pod.name}/status`,
    contentType: 'application/merge-patch+json',
    // its node's address is its host IP (kube-state-metrics' host_ip), as a kubelet would write it
    body: { status: runningPodStatus(containers, new Date(Date.now() - 600_000)) },
  });
}

export const SCENARIO_PODS = (a: string, b: string): ScenarioPod[] => [
  {
    name: 'web-5d8f7c9b4d-abcde',
    namespace: a,
    cpu: 0.25,
    memory: 256 * MiB,
    rx: 200,
    tx: 100,
    owner: { kind: 'ReplicaSet', name: 'web-5d8f7c9b4d' },
  },
  {
    name: 'web-5d8f7c9b4d-fghij',
    namespace: a,
    cpu: 0.5,
    memory: 128 * MiB,
    owner: { kind: 'ReplicaSet', name: 'web-5d8f7c9b4d' },
  },
  { name: 'db-0', namespace: b, cpu: 0.1, memory: 512 * MiB, owner: { kind: 'StatefulSet', name: 'db' } },
];

export async function startMonitoringScenario(e2e: E2E, password: string): Promise<MonitoringScenario> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
  };
  try {
    const root = await e2e.createUser('mon-root', password);
    const binding = await bindGlobalRole(e2e.admin, root, 'platform-admin');
    stops.push(async () => void (await e2e.admin.request({ method: 'DELETE', path: binding }).catch(() => undefined)));
    await waitFor(async () => {
      const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          spec: {
            user: root,
            groups: ['system:authenticated'],
            resourceAttributes: { verb: 'create', resource: 'namespaces' },
          },
        },
      });
      return review.status.allowed === true;
    });
    const rootToken = await login(e2e, root, password);

    // a workspace with two projects, made through kapi as the console makes them
    const workspace = e2e.name('mon-ws');
    const projectA = e2e.name('mon-a');
    const projectB = e2e.name('mon-b');
    await kapiSend(e2e, rootToken, 'POST', '/kapis/tenant.kapi.io/v1alpha3/workspacetemplates', {
      apiVersion: 'tenant.kapi.io/v1alpha2',
      kind: 'WorkspaceTemplate',
      metadata: { name: workspace },
      spec: { template: { spec: { manager: root } } },
    });
    stops.push(async () => {
      await e2e.admin.request({
        method: 'DELETE',
        path: `/apis/tenant.kapi.io/v1alpha2/workspacetemplates/${workspace}`,
      });
    });
    await waitFor(
      async () =>
        (await kapiGet(e2e, rootToken, `/kapis/tenant.kapi.io/v1alpha3/workspacetemplates/${workspace}`)).status ===
        200,
    );
    for (const project of [projectA, projectB]) {
      await kapiSend(e2e, rootToken, 'POST', `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/namespaces`, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: project, labels: { [RUN_LABEL]: e2e.runId } },
      });
      stops.push(
        async () =>
          void (await e2e.admin
            .request({ method: 'DELETE', path: `/api/v1/namespaces/${project}` })
            .catch(() => undefined)),
      );
      await ensureDefaultServiceAccount(e2e.admin, project);
    }
    // kapi knows both projects are in the workspace (its namespace cache)
    await waitFor(async () => {
      const listed = await kapiGet(e2e, rootToken, `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/namespaces`);
      return listed.body?.items?.length === 2;
    });

    const node = await e2e.createNode('mon-n1', {
      ready: 'True',
      labels: { 'node-role.kubernetes.io/master': '' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] },
    });
    for (const pod of SCENARIO_PODS(projectA, projectB)) await createScenarioPod(e2e, node, pod);
    await createScenarioPod(e2e, node, { name: 'node-exporter', namespace: e2e.runId, cpu: 0, memory: 0 });
    const otherNode = await e2e.createNode('mon-n2', {
      ready: 'True',
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.2' }] },
    });
    await createScenarioPod(e2e, otherNode, {
      name: nodeExporterPod(otherNode),
      namespace: e2e.runId,
      cpu: 0,
      memory: 0,
      owner: { kind: 'DaemonSet', name: 'node-exporter' },
    });
    await e2e.admin.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${projectA}/deployments`,
      body: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'app', image: 'registry.invalid/e2e' }] },
          },
        },
      },
    });

    const exporter = await startClusterExporter({
      client: e2e.admin,
      labelSelector: `${RUN_LABEL}=${e2e.runId}`,
      nodeExporters: { namespace: e2e.runId, except: [node] },
    });
    stops.push(() => exporter.stop());
    const nodeExporter = await startNodeExporter();
    stops.push(() => nodeExporter.stop());
    const apiserver = apiserverTarget(e2e);
    const etcd = process.env.E2E_ETCD_METRICS_URL ? new URL(process.env.E2E_ETCD_METRICS_URL) : undefined;
    const config = [
      'global: { scrape_interval: 1s, evaluation_interval: 1s, query_log_file: {{QUERY_LOG}} }',
      'rule_files: [rules.yaml]',
      'scrape_configs:',
      '  - job_name: node-exporter',
      `    static_configs: [{ targets: ['${nodeExporter.address}'], labels: { namespace: '${e2e.runId}', pod: node-exporter, instance: '${node}' } }]`,
      '  - job_name: node-exporter-synthesized',
      '    honor_labels: true',
      '    metrics_path: /node-exporter',
      `    static_configs: [{ targets: ['${exporter.address}'] }]`,
      '    relabel_configs: [{ target_label: job, replacement: node-exporter }]',
      '  - job_name: kube-state-metrics',
      '    honor_labels: true',
      '    metrics_path: /ksm',
      '    scrape_interval: 2s',
      `    static_configs: [{ targets: ['${exporter.address}'] }]`,
      '    metric_relabel_configs: [{ source_labels: [label_kapi_io_workspace], target_label: workspace }]',
      '  - job_name: kubelet',
      '    honor_labels: true',
      '    metrics_path: /metrics/cadvisor',
      `    static_configs: [{ targets: ['${exporter.address}'] }]`,
      '  - job_name: apiserver',
      `    scheme: ${apiserver.url.protocol.replace(':', '')}`,
      '    authorization: { credentials_file: apiserver.token }',
      ...(apiserver.ca ? ['    tls_config: { ca_file: apiserver-ca.crt }'] : []),
      `    static_configs: [{ targets: ['${apiserver.url.host}'] }]`,
      ...(etcd
        ? [
            '  - job_name: etcd',
            `    scheme: ${etcd.protocol.replace(':', '')}`,
            `    static_configs: [{ targets: ['${etcd.host}'] }]`,
          ]
        : []),
      '',
    ].join('\n');
    const prometheus = await startPrometheus(config, {
      'rules.yaml': readFileSync(RULES_FILE, 'utf8'),
      'apiserver.token': apiserver.token,
      ...(apiserver.ca && { 'apiserver-ca.crt': apiserver.ca }),
    });
    stops.push(() => prometheus.stop());

    // the series the charts read are in: each pod's CPU rate, and the recording rules over the node and the projects
    const direct = async (expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
      const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      return ((await res.json()) as { data: { result: [] } }).data.result;
    };
    await until(
      'the scenario’s series and rules in Prometheus',
      async () => {
        const checks = await Promise.all([
          direct(`irate(container_cpu_usage_seconds_total{namespace=~"${projectA}|${projectB}"}[5m])`),
          direct(`node:node_num_cpu:sum{node=~"${node}|${otherNode}"}`),
          direct(`node:pod_running:count{node="${node}"}`),
          direct(
            `namespace:container_cpu_usage_seconds_total:sum_rate{namespace="${projectB}", workspace="${workspace}"} > 0`,
          ),
          direct('apiserver:apiserver_request_total:sum_irate'),
        ]);
        const [pods, cpus, running, namespaced, apiserverRate] = checks;
        return pods!.length === 3 &&
          cpus!.length === 2 &&
          running![0]?.value[1] === '4' &&
          namespaced!.length === 1 &&
          apiserverRate!.length === 1
          ? true
          : undefined;
      },
      90_000,
    );

    // kapi asks an instant at the start of its 10 s cache window, and the cases ask a few seconds back: the series
    // must be in by the window before the current one
    const inAt = Date.now() / 1000;
    await until('two cache windows after the series came in', async () =>
      Math.floor(Date.now() / 10_000) * 10 - 10 > inAt + 1 ? true : undefined,
    );

    // kapi asks it from now on
    await e2e.admin.request({
      method: 'PATCH',
      path: `/apis/installer.kapi.io/v1alpha1/namespaces/${e2e.configuration.namespace}/clusterconfigurations/${e2e.configuration.name}`,
      contentType: 'application/merge-patch+json',
      body: { spec: { monitoring: { endpoint: prometheus.url } } },
    });
    await waitFor(
      async () =>
        (await kapiGet(e2e, rootToken, '/kapis/config.kapi.io/v1alpha2/configs/configz')).body?.monitoring === true,
    );
    return { prometheus, exporter, workspace, projectA, projectB, node, otherNode, root, rootToken, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
