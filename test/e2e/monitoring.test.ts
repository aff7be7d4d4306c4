/**
 * The console's charts over a live Prometheus (SPEC §19), on the sandbox and on real kube-apiservers: kapi answers
 * KubeSphere's named metrics with the scenario's values (monitoring-scenario.ts) and the machine's own (the real node
 * exporter); a project viewer reads its project's and nothing else; and Prometheus's query log shows every selector
 * of every query a namespaced route sent confined to the namespace, and that bad input never reached it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';
import { deleteIgnoringMissing, kubeAllows, startE2E, waitFor, type E2E } from './harness.js';
import {
  kapiGet,
  login,
  MONITORING,
  projectViewer,
  startMonitoringScenario,
  workspaceProjectMember,
  type MonitoringScenario,
} from './monitoring-scenario.js';
import { parsePromql, type Selector } from '../apis/monitoring/v1alpha3/promql-tree.js';

const PASSWORD = 'e2e-Monitor-Passw0rd';
const MiB = 1024 ** 2;
let e2e: E2E;
let scenario: MonitoringScenario;
let viewerToken: string;
const made: string[] = [];

type Result = {
  metric_name: string;
  data?: {
    resultType: string;
    result: { metric?: Record<string, string>; value?: [number, string]; values?: [number, string][] }[];
  };
  error?: string;
};

const results = (body: { results: Result[] }) => new Map(body.results.map((r) => [r.metric_name, r]));
const valueOf = (result: Result | undefined, match: Record<string, string> = {}): number | undefined => {
  const series = result?.data?.result.find((s) => Object.entries(match).every(([k, v]) => s.metric?.[k] === v));
  return series?.value ? Number(series.value[1]) : undefined;
};

beforeAll(async () => {
  e2e = await startE2E();
  scenario = await startMonitoringScenario(e2e, PASSWORD);
  // a project viewer through the cluster's own `view` role (kapi:monitoring-view is aggregated into it)
  const projectA = await projectViewer(e2e, scenario, 'mon-viewer', PASSWORD);
  made.push(projectA.binding);
  viewerToken = projectA.token;
}, 240_000);

afterAll(async () => {
  for (const path of made) await deleteIgnoringMissing(e2e.admin, path);
  await scenario?.stop();
  await e2e?.stop();
});

describe('the cluster’s pages, as the platform admin', () => {
  it('when the cluster overview is read, then its CPU and memory are this machine’s and its pods the scenario’s', async () => {
    const answer = await kapiGet(
      e2e,
      scenario.rootToken,
      `${MONITORING}/cluster?metrics_filter=cluster_cpu_total|cluster_memory_total|cluster_pod_running_count|cluster_node_total$`,
    );
    expect(answer.status).toBe(200);
    const byName = results(answer.body);
    // the order of KubeSphere's named list, whatever the filter's
    expect([...byName.keys()]).toEqual([
      'cluster_cpu_total',
      'cluster_memory_total',
      'cluster_pod_running_count',
      'cluster_node_total',
    ]);
    // this machine's CPUs and memory (the real node exporter's node) and the other node's capacity
    expect(valueOf(byName.get('cluster_cpu_total'))).toBe(cpus().length + 4);
    const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
    expect(valueOf(byName.get('cluster_memory_total'))).toBe(memTotal + 8 * 1024 ** 3);
    expect(valueOf(byName.get('cluster_pod_running_count'))).toBe(5);
    expect(valueOf(byName.get('cluster_node_total'))).toBe(2);
  });

  it('when the node list asks its columns for its page’s nodes, then the node’s CPUs, pods and quota', async () => {
    const answer = await kapiGet(
      e2e,
      scenario.rootToken,
      `${MONITORING}/nodes?resources_filter=${scenario.node}$&metrics_filter=node_cpu_total|node_pod_running_count|node_pod_quota|node_cpu_utilisation$`,
    );
    const byName = results(answer.body);
    expect(valueOf(byName.get('node_cpu_total'), { node: scenario.node })).toBe(cpus().length);
    expect(valueOf(byName.get('node_pod_running_count'), { node: scenario.node })).toBe(4);
    expect(valueOf(byName.get('node_pod_quota'), { node: scenario.node })).toBe(110);
    // the other node: its capacity's CPUs, its one pod (its node exporter's)
    const other = results(
      (
        await kapiGet(
          e2e,
          scenario.rootToken,
          `${MONITORING}/nodes?resources_filter=${scenario.otherNode}$&metrics_filter=node_cpu_total|node_pod_running_count$`,
        )
      ).body,
    );
    expect(valueOf(other.get('node_cpu_total'), { node: scenario.otherNode })).toBe(4);
    expect(valueOf(other.get('node_pod_running_count'), { node: scenario.otherNode })).toBe(1);
    const utilisation = valueOf(byName.get('node_cpu_utilisation'), { node: scenario.node }) as number;
    expect(utilisation).toBeGreaterThanOrEqual(0);
    expect(utilisation).toBeLessThanOrEqual(1);
  });

  it('when the top nodes are ranked, then sorted and paged as KubeSphere pages them', async () => {
    const answer = await kapiGet(
      e2e,
      scenario.rootToken,
      `${MONITORING}/nodes?type=rank&metrics_filter=node_cpu_utilisation|node_cpu_total$&sort_metric=node_cpu_utilisation&sort_type=desc&page=1&limit=5`,
    );
    expect(answer.body).toMatchObject({ page: 1, total_page: 1, total_item: 2 });
  });

  it('when a pod loading 0.25 cores is charted over a minute, then every point reads 0.25 at start + k·step', async () => {
    const end = Math.floor(Date.now() / 1000);
    const start = end - 60;
    const path = `${MONITORING}/namespaces/${scenario.projectA}/pods/web-5d8f7c9b4d-abcde?metrics_filter=pod_cpu_usage|pod_memory_usage_wo_cache|pod_net_bytes_received|pod_net_bytes_transmitted$&start=${start}&end=${end}&step=10s`;
    const byName = results((await kapiGet(e2e, scenario.rootToken, path)).body);
    const cpu = byName.get('pod_cpu_usage')?.data;
    expect(cpu?.resultType).toBe('matrix');
    const points = cpu?.result[0]?.values ?? [];
    expect(points.length).toBeGreaterThan(0);
    for (const [time, value] of points) {
      expect((time - start) % 10).toBe(0);
      expect(value).toBe('0.25');
    }
    expect(cpu?.result[0]?.metric).toMatchObject({
      owner_kind: 'ReplicaSet',
      owner_name: 'web-5d8f7c9b4d',
      node: scenario.node,
    });
    const last = (name: string) => Number(byName.get(name)?.data?.result[0]?.values?.at(-1)?.[1]);
    expect(last('pod_memory_usage_wo_cache')).toBe(256 * MiB);
    expect(last('pod_net_bytes_received')).toBeCloseTo(200, 6);
    expect(last('pod_net_bytes_transmitted')).toBeCloseTo(100, 6);
  });

  it('when a deployment’s pods are ranked by CPU, then its two pods, the busiest first', async () => {
    const answer = await kapiGet(
      e2e,
      scenario.rootToken,
      `${MONITORING}/namespaces/${scenario.projectA}/workloads/deployment/web/pods?sort_metric=pod_cpu_usage&sort_type=desc&limit=5&page=1&metrics_filter=pod_cpu_usage|pod_memory_usage_wo_cache$`,
    );
    const cpu = results(answer.body).get('pod_cpu_usage');
    expect(cpu?.data?.result.map((s) => [s.metric?.pod, s.value?.[1]])).toEqual([
      ['web-5d8f7c9b4d-fghij', '0.5'],
      ['web-5d8f7c9b4d-abcde', '0.25'],
    ]);
    expect(answer.body.total_item).toBe(2);
  });

  it('when a project’s pods are counted, then as many as kapi lists', async () => {
    const listed = await kapiGet(
      e2e,
      scenario.rootToken,
      `/kapis/resources.kapi.io/v1alpha3/namespaces/${scenario.projectA}/pods`,
    );
    const answer = await kapiGet(
      e2e,
      scenario.rootToken,
      `${MONITORING}/namespaces/${scenario.projectA}?metrics_filter=namespace_pod_count|namespace_cpu_usage|namespace_memory_usage_wo_cache|namespace_deployment_count$`,
    );
    const byName = results(answer.body);
    expect(valueOf(byName.get('namespace_pod_count'))).toBe(listed.body.totalItems);
    expect(listed.body.totalItems).toBe(2);
    expect(valueOf(byName.get('namespace_cpu_usage'))).toBe(0.75);
    expect(valueOf(byName.get('namespace_memory_usage_wo_cache'))).toBe(384 * MiB);
    expect(valueOf(byName.get('namespace_deployment_count'))).toBe(1);
  });

  it('when the workspace overview is read, then its projects’ sum and its counts', async () => {
    const usage = results(
      (
        await kapiGet(
          e2e,
          scenario.rootToken,
          `${MONITORING}/workspaces/${scenario.workspace}?metrics_filter=workspace_cpu_usage|workspace_pod_running_count$`,
        )
      ).body,
    );
    expect(valueOf(usage.get('workspace_cpu_usage'))).toBe(0.85);
    expect(valueOf(usage.get('workspace_pod_running_count'))).toBe(3);
    const statistics = results(
      (await kapiGet(e2e, scenario.rootToken, `${MONITORING}/workspaces/${scenario.workspace}?type=statistics`)).body,
    );
    expect(valueOf(statistics.get('workspace_namespace_count'))).toBe(2);
    expect(valueOf(statistics.get('workspace_member_count'))).toBe(1);
    const projects = results(
      (
        await kapiGet(
          e2e,
          scenario.rootToken,
          `${MONITORING}/workspaces/${scenario.workspace}/namespaces?metrics_filter=namespace_cpu_usage$`,
        )
      ).body,
    );
    expect(valueOf(projects.get('namespace_cpu_usage'), { namespace: scenario.projectB })).toBe(0.1);
  });

  it('when the control plane is read, then kube-apiserver’s own request rate (and, on a kit, its etcd)', async () => {
    const apiserver = results((await kapiGet(e2e, scenario.rootToken, `${MONITORING}/components/apiserver`)).body);
    expect(valueOf(apiserver.get('apiserver_request_rate'))).toBeGreaterThan(0);
    // the latency of the requests it answered (none in a quiet second is NaN, as KubeSphere's chart shows it): some
    // point of the last half minute has one
    const end = Math.floor(Date.now() / 1000);
    const latencies = results(
      (
        await kapiGet(
          e2e,
          scenario.rootToken,
          `${MONITORING}/components/apiserver?metrics_filter=apiserver_request_latencies$&start=${end - 30}&end=${end}&step=1s`,
        )
      ).body,
    ).get('apiserver_request_latencies');
    expect(latencies?.data?.result[0]?.values?.some(([, value]) => Number(value) > 0)).toBe(true);
    if (process.env.E2E_ETCD_METRICS_URL) {
      const etcd = results((await kapiGet(e2e, scenario.rootToken, `${MONITORING}/components/etcd`)).body);
      expect(valueOf(etcd.get('etcd_server_total'))).toBe(1);
      expect(valueOf(etcd.get('etcd_server_is_leader'))).toBe(1);
    }
  });
});

describe('a project viewer', () => {
  /** The selectors of every query kapi sent while `work` ran. */
  async function queriesDuring(
    work: () => Promise<void>,
  ): Promise<{ query: string; selectors: Selector[]; errors: string[] }[]> {
    const before = scenario.prometheus.apiQueries().length;
    await work();
    // the query log is written when a query ends; kapi answered after each ended
    return scenario.prometheus
      .apiQueries()
      .slice(before)
      .map(({ query }) => ({ query, ...parsePromql(query) }));
  }

  it('when it reads its project’s charts, then every selector of every query sent is confined to the project', async () => {
    const ns = scenario.projectA;
    const paths = [
      `/namespaces/${ns}?start=${Math.floor(Date.now() / 1000) - 600}&end=${Math.floor(Date.now() / 1000)}&step=60s`,
      `/namespaces/${ns}/pods`,
      `/namespaces/${ns}/pods/web-5d8f7c9b4d-abcde`,
      `/namespaces/${ns}/pods/web-5d8f7c9b4d-abcde/containers`,
      `/namespaces/${ns}/workloads`,
      `/namespaces/${ns}/workloads/deployment/web/pods`,
      `/namespaces/${ns}/persistentvolumeclaims`,
    ];
    const sent = await queriesDuring(async () => {
      for (const path of paths) {
        // instant ones at an explicit time (a range already has its times)
        const url = path.includes('start=') ? path : `${path}?time=${Math.floor(Date.now() / 1000) - 1}`;
        const answer = await kapiGet(e2e, viewerToken, `${MONITORING}${url}`);
        expect({ path, status: answer.status }).toEqual({ path, status: 200 });
        expect(answer.body.results.filter((r: Result) => r.error)).toEqual([]);
      }
    });
    expect(sent.length).toBeGreaterThan(20);
    for (const { query, selectors, errors } of sent) {
      expect({ query, errors }).toEqual({ query, errors: [] });
      const unconfined = selectors.filter(
        (s) => !s.matchers.some((m) => m.label === 'namespace' && m.op === '=' && m.value === ns),
      );
      expect({ query, unconfined: unconfined.map((s) => s.text) }).toEqual({ query, unconfined: [] });
    }
    const cpu = results(
      (await kapiGet(e2e, viewerToken, `${MONITORING}/namespaces/${ns}?metrics_filter=namespace_cpu_usage$`)).body,
    );
    expect(valueOf(cpu.get('namespace_cpu_usage'))).toBe(0.75);
  });

  /** One allowed chart no case asked before (not from the cache): the query log shows it, so an empty one means something. */
  const control = async (metric: string) => {
    const path = `${MONITORING}/namespaces/${scenario.projectA}?metrics_filter=${metric}$&time=${Math.floor(Date.now() / 1000) - 1}`;
    expect((await kapiGet(e2e, viewerToken, path)).status).toBe(200);
  };

  it('when it asks another project’s, the nodes’ or the cluster’s, then 403, and nothing is asked of Prometheus', async () => {
    const sent = await queriesDuring(async () => {
      await control('namespace_configmap_count');
      for (const path of [
        `/namespaces/${scenario.projectB}`,
        `/namespaces/${scenario.projectB}/pods/db-0`,
        '/nodes',
        `/nodes/${scenario.node}`,
        '/cluster',
        '/namespaces',
        '/pods',
        `/workspaces/${scenario.workspace}`,
        '/components/etcd',
        '/kubesphere',
      ])
        expect({ path, status: (await kapiGet(e2e, viewerToken, `${MONITORING}${path}`)).status }).toEqual({
          path,
          status: 403,
        });
    });
    // the control's one query, and nothing else
    expect(sent.map((q) => q.query)).toEqual([expect.stringContaining('kube_configmap_info')]);
  });

  it('when it sends a filter that would close the quotes, or any bad parameter, then 400 naming it, and nothing reaches Prometheus', async () => {
    const ns = scenario.projectA;
    const bad: [string, string][] = [
      [`resources_filter=${encodeURIComponent('x"} or up{')}`, 'resources_filter'],
      [`resources_filter=${encodeURIComponent('.+')}`, 'resources_filter'],
      [`namespaced_resources_filter=${encodeURIComponent('a/b"}')}`, 'namespaced_resources_filter'],
      [`metrics_filter=${encodeURIComponent('pod_cpu_usage"} or up{')}`, 'metrics_filter'],
      ['time=1700000000.5', 'time'],
      ['start=1700000600&end=1700000000', 'start'],
      ['time=1700000000&start=1&end=2', 'time'],
      ['start=1&end=2&step=1d', 'step'],
      ['start=0&end=1700000000&step=1s', 'step'],
      ['sort_metric=pod_cpu_usage&page=0', 'page'],
      ['limit=-1', 'limit'],
    ];
    const sent = await queriesDuring(async () => {
      await control('namespace_secret_count');
      for (const [query, parameter] of bad) {
        const answer = await kapiGet(e2e, viewerToken, `${MONITORING}/namespaces/${ns}/pods?${query}`);
        expect({ query, status: answer.status, field: answer.body?.details?.causes?.[0]?.field }).toEqual({
          query,
          status: 400,
          field: parameter,
        });
      }
      // a path name that is not one
      expect(
        (await kapiGet(e2e, viewerToken, `${MONITORING}/namespaces/${ns}/pods/${encodeURIComponent('x"}')}`)).status,
      ).toBe(400);
    });
    expect(sent.map((q) => q.query)).toEqual([expect.stringContaining('kube_secret_info')]);
  });
});

describe('a regular member of the workspace', () => {
  it('when it reads the workspace’s charts, then the series of its own project alone', async () => {
    const member = await workspaceProjectMember(e2e, scenario, 'mon-member', PASSWORD, scenario.projectB, 'viewer');
    // its workspace role realized: the workspace's charts
    await waitFor(() =>
      kubeAllows(e2e.admin, member, {
        verb: 'get',
        group: 'monitoring.kapi.io',
        resource: 'workspaces',
        name: scenario.workspace,
      }),
    );
    const token = await login(e2e, member, PASSWORD);
    const time = Math.floor(Date.now() / 1000) - 3;
    // once kapi's cache holds its project membership, the workspace's series are its project's
    let cpu: number | undefined;
    await waitFor(async () => {
      const usage = await kapiGet(
        e2e,
        token,
        `${MONITORING}/workspaces/${scenario.workspace}?metrics_filter=workspace_cpu_usage$&time=${time}`,
      );
      expect(usage.status).toBe(200);
      cpu = valueOf(results(usage.body).get('workspace_cpu_usage'));
      return cpu !== undefined;
    });
    expect(cpu).toBe(0.1);
    const projects = await kapiGet(
      e2e,
      token,
      `${MONITORING}/workspaces/${scenario.workspace}/namespaces?metrics_filter=namespace_cpu_usage$&time=${time}`,
    );
    expect(
      results(projects.body)
        .get('namespace_cpu_usage')
        ?.data?.result.map((s) => s.metric?.namespace),
    ).toEqual([scenario.projectB]);
    // and project A's own charts are refused
    expect((await kapiGet(e2e, token, `${MONITORING}/namespaces/${scenario.projectA}`)).status).toBe(403);
  });
});

describe('the series behind them', () => {
  it('when Prometheus scraped the run’s objects, then the exporter read the cluster every time', () => {
    expect(scenario.exporter.failures).toBe(0);
  });
});

describe('the shared cache and a backend that fails', () => {
  it('when the same chart is asked twice inside the cache window, then Prometheus is asked once', async () => {
    const path = `${MONITORING}/namespaces/${scenario.projectA}?metrics_filter=namespace_pod_count|namespace_cpu_usage$&time=${Math.floor(Date.now() / 1000) - 5}`;
    const before = scenario.prometheus.apiQueries().length;
    const ask = (token: string) => fetch(`${e2e.kapiUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    const first = await ask(scenario.rootToken);
    expect(first.status).toBe(200);
    // kapi says how long Prometheus took of the answer
    expect(first.headers.get('server-timing')).toMatch(
      /^upstream;dur=\d+\.\d;desc="the slowest of 2 backend queries"$/,
    );
    const once = scenario.prometheus.apiQueries().length - before;
    expect(once).toBe(2);
    const second = await ask(viewerToken);
    expect(second.status).toBe(200);
    expect(scenario.prometheus.apiQueries().length - before).toBe(2);
  });

  it('when Prometheus is gone, then each metric carries an error, the answer is 200 and kapi stays ready', async () => {
    await scenario.prometheus.stop();
    const answer = await kapiGet(
      e2e,
      scenario.rootToken,
      `${MONITORING}/nodes?metrics_filter=node_cpu_total|node_memory_total$&time=${Math.floor(Date.now() / 1000) - 30}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([
      { metric_name: 'node_cpu_total', error: 'the monitoring backend could not be reached' },
      { metric_name: 'node_memory_total', error: 'the monitoring backend could not be reached' },
    ]);
    expect(JSON.stringify(answer.body)).not.toContain('127.0.0.1');
    const ready = await fetch(`${e2e.kapiUrl}/readyz`);
    expect(ready.status).toBe(200);
    // and the cause is in kapi's log, not the answer; with no backend named, every metric is empty again
    await e2e.admin.request({
      method: 'PATCH',
      path: `/apis/installer.kapi.io/v1alpha1/namespaces/${e2e.configuration.namespace}/clusterconfigurations/${e2e.configuration.name}`,
      contentType: 'application/json-patch+json',
      body: [{ op: 'remove', path: '/spec/monitoring' }],
    });
    await waitFor(
      async () =>
        (await kapiGet(e2e, scenario.rootToken, '/kapis/config.kapi.io/v1alpha2/configs/configz')).body?.monitoring ===
        false,
    );
    const empty = await kapiGet(e2e, scenario.rootToken, `${MONITORING}/nodes?metrics_filter=node_cpu_total$`);
    expect(empty.body.results).toEqual([{ metric_name: 'node_cpu_total', data: { resultType: 'vector', result: [] } }]);
  });
});
