import { createServer, type Server } from 'node:http';
import type { KubeClient } from '../../kube/client.js';
import { cadvisor, COUNTED_KINDS, kubeStateMetrics, nodeExporter, type ClusterObjects } from './series.js';

/**
 * An exporter on loopback for a cluster that runs no kube-state-metrics, kubelet or node exporter (the sandbox, a
 * bare kube-apiserver in tests): at each scrape it reads the cluster's objects through its API and renders what those
 * would publish (series.ts).
 *
 * - `GET /ksm`: kube-state-metrics (Prometheus's relabel makes its `label_kapi_io_workspace` the `workspace`);
 * - `GET /metrics/cadvisor`: the kubelets' cAdvisor;
 * - `GET /node-exporter`: the node exporters of every node, with `nodeExporters` (scraped with honor_labels, as each
 *   series names its node).
 */
export interface ClusterExporter {
  readonly url: string;
  /** host:port, for a scrape target. */
  readonly address: string;
  /** Scrapes that could not read the cluster. */
  readonly failures: number;
  stop(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface ClusterExporterOptions {
  client: KubeClient;
  /** Only the namespaces, pods and nodes with these labels (a test run's); everything when absent. */
  labelSelector?: string;
  /**
   * Render node exporter series for every node (but `except`, whose real exporter is scraped), their pods in this
   * namespace (the sandbox).
   */
  nodeExporters?: { namespace: string; except?: readonly string[] };
  /** One node's series only (its Node and pods; no object counts): a bench of the node page on a large cluster. */
  node?: string;
}

export async function startClusterExporter(options: ClusterExporterOptions): Promise<ClusterExporter> {
  const startedAt = Date.now();
  let failures = 0;
  const { client } = options;
  const list = async (path: string, selected: boolean, fieldSelector?: string): Promise<Raw[]> =>
    (
      await client.request<{ items: Raw[] }>({
        path,
        query: {
          ...(selected && options.labelSelector && { labelSelector: options.labelSelector }),
          ...(fieldSelector && { fieldSelector }),
        },
      })
    ).items;

  const objects = async (counts: boolean): Promise<ClusterObjects> => {
    const withCounted = counts && !options.node;
    const [nodes, namespaces, pods, ...counted] = await Promise.all([
      list('/api/v1/nodes', true, options.node && `metadata.name=${options.node}`),
      list('/api/v1/namespaces', true),
      list('/api/v1/pods', true, options.node && `spec.nodeName=${options.node}`),
      ...(withCounted ? COUNTED_KINDS.map((kind) => list(kind.path, false)) : []),
    ]);
    return {
      nodes: nodes ?? [],
      namespaces: namespaces ?? [],
      pods: pods ?? [],
      counted: new Map(withCounted ? COUNTED_KINDS.map((kind, i) => [kind.family, counted[i] ?? []]) : []),
    };
  };

  const routes: Record<string, () => Promise<string>> = {
    '/ksm': async () => kubeStateMetrics(await objects(true)),
    '/metrics/cadvisor': async () => cadvisor(await objects(false), startedAt, Date.now()),
    ...(options.nodeExporters && {
      '/node-exporter': async () => {
        const { nodes, pods } = await objects(false);
        const except = new Set(options.nodeExporters!.except ?? []);
        const synthesized = nodes.filter((node) => !except.has(node.metadata.name));
        return nodeExporter({ nodes: synthesized, pods }, options.nodeExporters!.namespace, startedAt, Date.now());
      },
    }),
  };
  const server: Server = createServer((req, res) => {
    const render = routes[req.url ?? ''];
    if (!render) {
      res.writeHead(404).end();
      return;
    }
    render().then(
      (text) => res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(text),
      () => {
        failures++;
        res.writeHead(503).end('the cluster could not be read');
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
