/**
 * Ad-hoc PromQL (SPEC §19) over a live Prometheus holding several namespaces' series (monitoring-scenario.ts), on the
 * sandbox and on real kube-apiservers: a project viewer's queries in its namespace, among them every trick a tenant
 * would try, are each refused with a 400 naming why or answered confined to the namespace — no answer carries a
 * series of another namespace, every query Prometheus ran (its query log) has the namespace on every selector, and
 * nothing refused reaches it. The cluster-wide forms need the cluster-wide right.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { selectorsOf } from '../../src/apis/monitoring/promql/ast.js';
import { confineToNamespace } from '../../src/apis/monitoring/promql/enforce.js';
import { parsePromQL } from '../../src/apis/monitoring/promql/parse.js';
import { printPromQL } from '../../src/apis/monitoring/promql/print.js';
import { deleteIgnoringMissing, startE2E, type E2E } from './harness.js';
import {
  kapiGet,
  MONITORING,
  projectViewer,
  startMonitoringScenario,
  type MonitoringScenario,
} from './monitoring-scenario.js';

const PASSWORD = 'e2e-Adhoc-Passw0rd';
let e2e: E2E;
let scenario: MonitoringScenario;
let viewerToken: string;
const made: string[] = [];

type Series = { metric?: Record<string, string>; value?: [number, string]; values?: [number, string][] };
type Answer = {
  status: number;
  body: { data?: { resultType?: string; result?: Series[] }; error?: string } & Record<string, unknown>;
};

beforeAll(async () => {
  e2e = await startE2E();
  scenario = await startMonitoringScenario(e2e, PASSWORD);
  const viewer = await projectViewer(e2e, scenario, 'adhoc-viewer', PASSWORD);
  made.push(viewer.binding);
  viewerToken = viewer.token;
}, 240_000);

afterAll(async () => {
  for (const path of made) await deleteIgnoringMissing(e2e.admin, path);
  await scenario?.stop();
  await e2e?.stop();
});

const now = () => Math.floor(Date.now() / 1000) - 1;
const ask = (token: string, path: string, params: Record<string, string>): Promise<Answer> =>
  kapiGet(e2e, token, `${MONITORING}${path}?${new URLSearchParams(params)}`);
/** A POST of JSON to kapi: its status and body (whatever the status). */
async function post(token: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const inProject = (expr: string, params: Record<string, string> = {}) =>
  ask(viewerToken, `/namespaces/${scenario.projectA}/targets/query`, { expr, time: String(now()), ...params });

/** The queries Prometheus ran while `work` ran (its query log is written as each ends; kapi answers after). */
async function queriesDuring(work: () => Promise<void>): Promise<string[]> {
  const before = scenario.prometheus.apiQueries().length;
  await work();
  return scenario.prometheus
    .apiQueries()
    .slice(before)
    .map(({ query }) => query);
}

/** A tenant's tricks: each answered confined to its namespace (`ok`) or refused, the refusal naming why. */
const tricks = (a: string, b: string): [string, 'ok' | RegExp][] => [
  ['{__name__=~".+"}', 'ok'],
  ['{__name__=~".*", pod!=""}', 'ok'],
  ['container_cpu_usage_seconds_total', 'ok'],
  ['sum by (namespace) (container_memory_working_set_bytes)', 'ok'],
  ['count({__name__=~".+"}) by (namespace)', 'ok'],
  ['container_cpu_usage_seconds_total or on() vector(1)', 'ok'],
  ['kube_pod_info or on(pod) kube_pod_info', 'ok'],
  ['up', 'ok'],
  ['rate(container_cpu_usage_seconds_total[5m])', 'ok'],
  ['max_over_time(container_cpu_usage_seconds_total[10m:1m])', 'ok'],
  ['container_cpu_usage_seconds_total offset 1m', 'ok'],
  ['container_cpu_usage_seconds_total @ end()', 'ok'],
  ['container_cpu_usage_seconds_total @ 1000', 'ok'],
  ['label_replace(kube_pod_info, "ns2", "$1", "namespace", "(.*)")', 'ok'],
  ['absent(no_such_metric)', 'ok'],
  [`kube_pod_info{namespace="${a}"}`, 'ok'],
  [`kube_pod_info{namespace='${a}'}`, 'ok'],
  ['# a comment\nkube_pod_info # and another', 'ok'],
  ['kube_pod_info{pod=~"web.*|db-0"}', 'ok'],
  ['kube_pod_info{pod=~"\\x77eb.*"}', 'ok'],
  ['kube_pod_info{pod=~"\\u0077eb.*"}', 'ok'],
  ['kube_pod_info{pod=~"\\167eb.*"}', 'ok'],
  ['kube_pod_info{pod=~"\\U00000077eb.*"}', 'ok'],
  ['kube_pod_info{pod=~"web\\\\-.*", container!="\\a\\b\\f\\n\\r\\t\\v\\\\\\""}', 'ok'],
  ['kube_pod_info{pod=~`web.*`}', 'ok'],
  [`kube_pod_info{pod="a\\"} or kube_pod_info{namespace=\\"${b}"}`, 'ok'],
  ['container_memory_working_set_bytes * on(pod) group_left(node) kube_pod_info', 'ok'],
  ['kube_pod_info * ignoring(namespace) group_left(namespace) kube_pod_info', 'ok'],
  ['sort_desc(topk(5, container_memory_working_set_bytes))', 'ok'],
  ['-container_cpu_usage_seconds_total', 'ok'],
  ['container_cpu_usage_seconds_total[5m]', 'ok'],
  ['(((((kube_pod_info)))))', 'ok'],
  ['vector(1)', 'ok'],
  ['count_values("value", kube_pod_info)', 'ok'],
  ['sum without (namespace) (kube_pod_info)', 'ok'],
  [`kube_pod_info{namespace="${b}"}`, /conflicts with the namespace/],
  ['kube_pod_info{namespace=~".*"}', /conflicts with the namespace/],
  [`kube_pod_info{namespace!="${a}"}`, /conflicts with the namespace/],
  [`kube_pod_info{namespace=~"${a}|${b}"}`, /conflicts with the namespace/],
  [`{__name__="kube_pod_info", namespace="${b}"}`, /conflicts with the namespace/],
  [`kube_pod_info or kube_pod_info{namespace="${b}"}`, /conflicts with the namespace/],
  [`kube_pod_info{namespace="${a}", namespace="${b}"}`, /conflicts with the namespace/],
  [`label_replace(kube_pod_info, "namespace", "${b}", "", "")`, /may not write the namespace label/],
  ['label_join(kube_pod_info, "namespace", ",", "pod")', /may not write the namespace label/],
  ['label_replace(kube_pod_info, ("namespace"), "x", "", "")', /may not write the namespace label/],
  ['count_values("namespace", kube_pod_info)', /may not write the namespace label/],
  ['x"} or up{', /unexpected/],
  ['kube_pod_info{pod="x"} or', /ends too soon|unexpected/],
  [`${'('.repeat(100)}kube_pod_info${')'.repeat(100)}`, /nests \d+ deep; at most 50/],
  [`kube_pod_info{pod=~"${'a'.repeat(10 * 1024)}"}`, /bytes; at most 4096/],
  ['info(kube_pod_info)', /info\(\) is not supported/],
  ['double_exponential_smoothing(kube_pod_info[5m], 0.5, 0.5)', /is not supported/],
  ['sort_by_label(kube_pod_info, "pod")', /is not supported/],
  ['rate(kube_pod_info[5m] anchored)', /not supported|unexpected/],
  ['kube_pod_info offset 5m offset 1m', /offset may not be set multiple times/],
  ['{"kube_pod_info"}', /quoted label names are not supported/],
  ['rate(kube_pod_info[2d])', /window of 172800 s is longer than the 86400 s allowed/],
  ['max_over_time(kube_pod_info[1d:1s])', /86400 points per series is more than the 11000 allowed/],
  ['kube_pod_info @ 1e300', /timestamp out of bounds/],
  ['kube_pod_info[5m:1m] ^ 2', /binary expression must contain only scalar and instant vector types/],
  [Array.from({ length: 21 }, (_, i) => `m${i}`).join(' + '), /21 selectors; at most 20/],
  ['rate(kube_pod_info[5m + 1m])', /a duration must be a literal/],
  ['kube_pod_info{pod="\\q"}', /unknown escape sequence/],
  ['"\\xff"', /not valid UTF-8/],
  ['{}', /at least one non-empty matcher/],
  ['sum(kube_pod_info) by (pod) by (node)', /unexpected/],
];

describe('a project viewer’s ad-hoc queries in its namespace', () => {
  it('when it sends each trick, then each is refused naming why or answered with its namespace’s series alone, and Prometheus ran each answered one confined', async () => {
    const a = scenario.projectA;
    const list = tricks(a, scenario.projectB);
    expect(list.length).toBeGreaterThanOrEqual(40);
    const outcomes: string[] = [];
    let withSeries = 0;
    const sent = await queriesDuring(async () => {
      for (const [expr, expected] of list) {
        const answer = await inProject(expr);
        if (expected === 'ok') {
          if (answer.status !== 200 || answer.body.error)
            outcomes.push(`${expr}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
          const result = answer.body.data?.result ?? [];
          const foreign = result.filter((s) => s.metric?.namespace !== undefined && s.metric.namespace !== a);
          if (foreign.length > 0) outcomes.push(`${expr}: answered ${JSON.stringify(foreign[0])}`);
          if (result.length > 0) withSeries++;
        } else {
          const cause = (answer.body.details as { causes?: { field?: string; message?: string }[] } | undefined)
            ?.causes?.[0];
          if (
            answer.status !== 400 ||
            answer.body.kind !== 'Status' ||
            cause?.field !== 'expr' ||
            !expected.test(String(answer.body.message))
          )
            outcomes.push(`${expr.slice(0, 80)}: ${answer.status} ${String(answer.body.message).slice(0, 200)}`);
        }
      }
    });
    expect(outcomes).toEqual([]);
    // the tricks found series (their answers would have shown another namespace's, had kapi let them)
    expect(withSeries).toBeGreaterThan(15);
    // Prometheus ran one query per answered trick at most (the cache shares equal prints), each confined
    expect(sent.length).toBeGreaterThan(15);
    expect(sent.length).toBeLessThanOrEqual(list.filter(([, e]) => e === 'ok').length);
    // and nothing else: each is the print of a trick kapi answered (none of a refused one reached it)
    const answeredPrints = new Set(
      list
        .filter(([, expected]) => expected === 'ok')
        .map(([expr]) => printPromQL(confineToNamespace(parsePromQL(expr), a))),
    );
    expect(sent.filter((query) => !answeredPrints.has(query))).toEqual([]);
    for (const query of sent) {
      const unconfined = [...selectorsOf(parsePromQL(query))].filter(
        (s) => !s.matchers.some((m) => m.name === 'namespace' && m.op === '=' && m.value === a),
      );
      expect({ query, unconfined: unconfined.length }).toEqual({ query, unconfined: 0 });
    }
  }, 180_000);

  it('when it asks every series, then its namespace’s, where the platform admin’s cluster-wide query also has the other project’s', async () => {
    const mine = await inProject(
      'count by (namespace) ({__name__=~"kube_pod_info|container_cpu_usage_seconds_total"})',
    );
    expect(mine.status).toBe(200);
    expect(mine.body.data?.result?.map((s) => s.metric?.namespace)).toEqual([scenario.projectA]);
    const all = await ask(scenario.rootToken, '/targets/query', {
      expr: 'count by (namespace) ({__name__=~"kube_pod_info|container_cpu_usage_seconds_total"})',
      time: String(now()),
    });
    expect(all.status).toBe(200);
    expect(all.body.data?.result?.map((s) => s.metric?.namespace)).toEqual(
      expect.arrayContaining([scenario.projectA, scenario.projectB]),
    );
  });

  it('when it asks a range, then points at start + k·step of its pods, as KubeSphere answers', async () => {
    const end = now();
    const answer = await ask(viewerToken, `/namespaces/${scenario.projectA}/targets/query`, {
      expr: 'sum(kube_pod_info)',
      start: String(end - 120),
      end: String(end),
      step: '60s',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.data?.resultType).toBe('matrix');
    const series = answer.body.data?.result?.[0];
    const times = series?.values?.map(([t]) => t) ?? [];
    // Prometheus has points since the scenario began: those it has are on the grid, the last at end
    expect(times.every((t) => (t - (end - 120)) % 60 === 0)).toBe(true);
    expect(times.at(-1)).toBe(end);
    expect(Number(series?.values?.at(-1)?.[1])).toBe(2);
    expect(series).toMatchObject({ min_value: '', fee: '', currency_unit: '' });
    // a range vector is no range query's answer (Prometheus's own rule)
    const matrix = await ask(viewerToken, `/namespaces/${scenario.projectA}/targets/query`, {
      expr: 'kube_pod_info[5m]',
      start: String(end - 60),
      end: String(end),
    });
    expect(matrix.status).toBe(400);
  });

  it('when the console’s panel editor asks label sets and metadata, then its namespace’s only', async () => {
    const end = now();
    const sets = await ask(viewerToken, `/namespaces/${scenario.projectA}/targets/labelsets`, {
      metric: 'kube_pod_info',
      start: String(end - 600),
      end: String(end),
    });
    expect(sets.status).toBe(200);
    const labelSets = sets.body.data as unknown as Record<string, string>[];
    expect(labelSets.map((set) => set.pod).sort()).toEqual(['web-5d8f7c9b4d-abcde', 'web-5d8f7c9b4d-fghij']);
    expect(labelSets.every((set) => set.namespace === scenario.projectA && !('__name__' in set))).toBe(true);
    const conflicting = await ask(viewerToken, `/namespaces/${scenario.projectA}/targets/labelsets`, {
      metric: `kube_pod_info{namespace="${scenario.projectB}"}`,
      start: String(end - 600),
      end: String(end),
    });
    expect(conflicting.status).toBe(400);
    const missing = await ask(viewerToken, `/namespaces/${scenario.projectA}/targets/labelsets`, { metric: 'up' });
    expect(missing.status).toBe(400);
    expect(String(missing.body.message)).toContain('required fields are missing: [start, end]');
    const metadata = await ask(viewerToken, `/namespaces/${scenario.projectA}/targets/metadata`, {});
    expect(metadata.status).toBe(200);
    // no target of the scenario is labelled with a project: nothing (the cluster's targets, kube-apiserver's among
    // them, are the platform's)
    expect(metadata.body).toEqual({ data: null });
    const cluster = await ask(scenario.rootToken, '/targets/metadata', {});
    expect(cluster.body.error).toBeUndefined();
    expect((cluster.body.data as unknown as { metric: string }[]).map((m) => m.metric)).toEqual(
      expect.arrayContaining(['apiserver_request_total']),
    );
  });

  it('when it asks another namespace’s, or the cluster-wide forms, then 403, and nothing reaches Prometheus', async () => {
    const sent = await queriesDuring(async () => {
      for (const path of [
        `/namespaces/${scenario.projectB}/targets/query`,
        `/namespaces/${scenario.projectB}/targets/labelsets`,
        `/namespaces/${scenario.projectB}/targets/metadata`,
        '/targets/query',
        '/targets/labelsets',
        '/targets/metadata',
      ])
        expect({ path, status: (await ask(viewerToken, path, { expr: 'up', time: String(now()) })).status }).toEqual({
          path,
          status: 403,
        });
      // a control, answered: the log shows it, so an empty log above means something
      expect((await inProject('kube_pod_info unless kube_pod_info')).status).toBe(200);
    });
    expect(sent).toEqual([
      `kube_pod_info{namespace="${scenario.projectA}"} unless kube_pod_info{namespace="${scenario.projectA}"}`,
    ]);
  });

  it('when a Grafana dashboard is imported, then made as the caller from its content only: a URL is refused and never fetched', async () => {
    const hits: string[] = [];
    const lure = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('{}');
    });
    await new Promise<void>((resolve) => lure.listen(0, '127.0.0.1', resolve));
    const port = (lure.address() as AddressInfo).port;
    const base = `${MONITORING}/namespaces/${scenario.projectA}/dashboards`;
    const grafana = JSON.stringify({
      title: 'Pods',
      panels: [
        { type: 'timeseries', title: 'Pods', targets: [{ expr: 'sum(kube_pod_info{namespace="$namespace"})' }] },
      ],
    });
    try {
      const url = await post(scenario.rootToken, 'POST', `${base}/lured/template`, {
        grafanaDashboardUrl: `http://127.0.0.1:${port}/dashboard.json`,
      });
      expect(url.status).toBe(400);
      // the viewer reads dashboards, and may not make one
      const refused = await post(viewerToken, 'POST', `${base}/viewers/template`, {
        grafanaDashboardContent: grafana,
      });
      expect(refused.status).toBe(403);
      const made = await post(scenario.rootToken, 'POST', `${base}/imported/template`, {
        grafanaDashboardContent: grafana,
        description: 'from Grafana',
      });
      expect(made.status).toBe(200);
      expect(made.body).toMatchObject({
        kind: 'Dashboard',
        metadata: {
          name: 'imported',
          namespace: scenario.projectA,
          annotations: { 'kapi.io/description': 'from Grafana' },
        },
        spec: { title: 'Pods', panels: [{ type: 'graph', targets: [{ expr: 'sum(kube_pod_info)', step: '1m' }] }] },
      });
      const listed = await kapiGet(
        e2e,
        viewerToken,
        `/kapis/resources.kapi.io/v1alpha3/namespaces/${scenario.projectA}/dashboards?sortBy=createTime&limit=10`,
      );
      expect(listed.status).toBe(200);
      expect((listed.body.items as unknown as { metadata: { name: string } }[]).map((d) => d.metadata.name)).toContain(
        'imported',
      );
      // its panel, drawn as the console draws it, is the project's
      const drawn = await inProject('sum(kube_pod_info)');
      expect(Number(drawn.body.data?.result?.[0]?.value?.[1])).toBe(2);
    } finally {
      lure.close();
      await deleteIgnoringMissing(
        e2e.admin,
        `/apis/monitoring.kapi.io/v1alpha2/namespaces/${scenario.projectA}/dashboards/imported`,
      );
    }
    expect(hits).toEqual([]);
  });
});
