import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { KubeApiError, KubeClient } from '../../kube/client.js';
import { connectionFor, tokenAccess } from '../../kube/connection.js';
import { runningPodStatus } from '../pod-status.js';
import { startClusterExporter } from './cluster-exporter.js';
import { startPrometheus } from './prometheus.js';
import { nodeExporterPod } from './series.js';

/**
 * The sandbox's monitoring backend (`make run ARGS=--sandbox-monitoring`): Debian's Prometheus on loopback, scraping
 * the series a cluster's exporters would publish for the sandbox's nodes and pods (cluster-exporter.ts) and the
 * sandbox's own kube-apiserver metrics, with kapi's recording rules; the ClusterConfiguration names it, so the
 * console's charts are live. A node exporter pod per node runs in `kapi-monitoring`, as a cluster's would.
 */
export const MONITORING_NAMESPACE = 'kapi-monitoring';

export interface SandboxMonitoringOptions {
  sandboxUrl: string;
  adminToken: string;
  /** The sandbox's CA, when it serves HTTPS. */
  caPem?: string;
  /** The chart's recording rules (files/monitoring-rules.yaml). */
  rulesFile: string;
  configuration: { namespace: string; name: string };
  /** Seconds between scrapes; default 5. */
  scrapeIntervalSeconds?: number;
  /** One node's series only (a bench of the node page on a large cluster); every node's when absent. */
  node?: string;
  /** Log every query Prometheus runs (its query_log_file), for counting what kapi asked. */
  queryLog?: boolean;
}

export interface SandboxMonitoring {
  prometheusUrl: string;
  /** With `queryLog`: the queries asked over Prometheus's HTTP API so far. */
  apiQueries(): number;
  stop(): Promise<void>;
}

export async function startSandboxMonitoring(options: SandboxMonitoringOptions): Promise<SandboxMonitoring> {
  const access = tokenAccess(options.sandboxUrl, options.adminToken);
  const connection = connectionFor(options.caPem ? { ...access, ca: Buffer.from(options.caPem) } : access, 'sandbox');
  const client = new KubeClient(connection);
  const stops: (() => Promise<void>)[] = [async () => connection.close()];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch(() => undefined);
  };
  try {
    await createNodeExporterPods(client, options.node);
    const exporter = await startClusterExporter({
      client,
      nodeExporters: { namespace: MONITORING_NAMESPACE },
      ...(options.node && { node: options.node }),
    });
    stops.push(() => exporter.stop());
    const sandbox = new URL(options.sandboxUrl);
    const interval = `${options.scrapeIntervalSeconds ?? 5}s`;
    const job = (name: string, path: string, extra: string[] = []) => [
      `  - job_name: ${name}`,
      '    honor_labels: true',
      `    metrics_path: ${path}`,
      `    static_configs: [{ targets: ['${exporter.address}'] }]`,
      ...extra,
    ];
    const config = [
      `global: { scrape_interval: ${interval}, evaluation_interval: ${interval}${options.queryLog ? ', query_log_file: {{QUERY_LOG}}' : ''} }`,
      'rule_files: [rules.yaml]',
      'scrape_configs:',
      ...job('node-exporter', '/node-exporter'),
      ...job('kube-state-metrics', '/ksm', [
        '    metric_relabel_configs: [{ source_labels: [label_kapi_io_workspace], target_label: workspace }]',
      ]),
      ...job('kubelet', '/metrics/cadvisor'),
      '  - job_name: apiserver',
      `    scheme: ${sandbox.protocol.replace(':', '')}`,
      '    authorization: { credentials_file: apiserver.token }',
      ...(options.caPem ? ['    tls_config: { ca_file: apiserver-ca.crt }'] : []),
      `    static_configs: [{ targets: ['${sandbox.host}'] }]`,
      '',
    ].join('\n');
    const prometheus = await startPrometheus(config, {
      'rules.yaml': readFileSync(options.rulesFile, 'utf8'),
      'apiserver.token': options.adminToken,
      ...(options.caPem && { 'apiserver-ca.crt': options.caPem }),
    });
    stops.push(() => prometheus.stop());
    const { namespace, name } = options.configuration;
    await client.request({
      method: 'PATCH',
      path: `/apis/installer.kapi.io/v1alpha1/namespaces/${namespace}/clusterconfigurations/${name}`,
      contentType: 'application/merge-patch+json',
      body: { spec: { monitoring: { endpoint: prometheus.url } } },
    });
    const apiQueries = () =>
      existsSync(prometheus.queryLog)
        ? readFileSync(prometheus.queryLog, 'utf8')
            .split('\n')
            .filter((line) => line.includes('"httpRequest"')).length
        : 0;
    return { prometheusUrl: prometheus.url, apiQueries, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A running node exporter pod on every node, in MONITORING_NAMESPACE (the node series join their nodes through it). */
async function createNodeExporterPods(client: KubeClient, only?: string): Promise<void> {
  const created = async (path: string, body: unknown) => {
    try {
      await client.request({ method: 'POST', path, body });
    } catch (error) {
      if (!(error instanceof KubeApiError && error.code === 409)) throw error;
    }
  };
  await created('/api/v1/namespaces', { metadata: { name: MONITORING_NAMESPACE } });
  await created(`/api/v1/namespaces/${MONITORING_NAMESPACE}/serviceaccounts`, { metadata: { name: 'default' } });
  const nodes = await client.request<{ items: { metadata: { name: string } }[] }>({
    path: '/api/v1/nodes',
    query: only ? { fieldSelector: `metadata.name=${only}` } : {},
  });
  const owner = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    name: 'node-exporter',
    uid: randomUUID(),
    controller: true,
  };
  for (const node of nodes.items) {
    const name = nodeExporterPod(node.metadata.name);
    const containers = [
      {
        name: 'node-exporter',
        image: 'quay.io/prometheus/node-exporter:v1.5.0',
        resources: { requests: { cpu: '10m', memory: '24Mi' } },
      },
    ];
    await created(`/api/v1/namespaces/${MONITORING_NAMESPACE}/pods`, {
      metadata: { name, labels: { 'app.kubernetes.io/name': 'node-exporter' }, ownerReferences: [owner] },
      spec: { nodeName: node.metadata.name, containers },
    });
    await client.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${MONITORING_NAMESPACE}/pods/${name}/status`,
      contentType: 'application/merge-patch+json',
      body: { status: runningPodStatus(containers, new Date()) },
    });
  }
}
