/**
 * A real Prometheus (Debian's package) on loopback scrapes a running kapi: the operator series come back through
 * its query API with the values the test caused, the chart's alert rules load, and every query of the chart's
 * Grafana dashboard runs and uses only series kapi exports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startE2E, type E2E } from '../e2e/harness.js';
import { systemBinary } from '../support/system-binaries.js';

const PASSWORD = 'Scrape-pw-1';
const NODES = '/kapis/resources.kapi.io/v1alpha3/nodes';
const DASHBOARD = 'charts/kapi-apiserver/files/grafana-dashboard.json';
const RULES = 'charts/kapi-apiserver/files/prometheus-rules.yaml';

let e2e: E2E;
let prometheus: ChildProcess | undefined;
let prometheusUrl: string;
let dataDir: string;
let watch: ClientRequest | undefined;
let startedAt: number;
let prometheusLog = '';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${prometheusLog.slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(expr: string): Promise<Sample[]> {
  const res = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; error?: string; data?: { result: Sample[] } };
  if (body.status !== 'success') throw new Error(`query ${expr} failed: ${body.error}`);
  return body.data!.result;
}

/** The value of a single-series query once Prometheus has it (and `accept` agrees). */
function valueOf(expr: string, accept: (value: number) => boolean = () => true): Promise<number> {
  return until(expr, async () => {
    const result = await query(expr);
    const value = result.length === 1 ? Number(result[0]!.value[1]) : undefined;
    return value !== undefined && accept(value) ? value : undefined;
  });
}

const tokenForm = (username: string) => ({
  grant_type: 'password',
  username,
  password: PASSWORD,
  client_id: 'kapi',
  client_secret: 'kapi',
});

beforeAll(async () => {
  startedAt = Date.now();
  e2e = await startE2E({ metrics: true });
  const reader = await e2e.createUser('scrape-reader', PASSWORD);
  await e2e.grant(reader, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }]);
  const kapi = request(e2e.kapiUrl);

  // what the series should show: a login, two listings (a review, then the cached decision), a rotation and a
  // replay of the refresh token, a logout and a revocation, and a watch held open
  const login = (await kapi.post('/oauth/token').type('form').send(tokenForm(reader))).body as {
    access_token: string;
    refresh_token: string;
  };
  for (let i = 0; i < 2; i++) {
    expect((await kapi.get(NODES).set('Authorization', `Bearer ${login.access_token}`)).status).toBe(200);
  }
  const refresh = {
    grant_type: 'refresh_token',
    refresh_token: login.refresh_token,
    client_id: 'kapi',
    client_secret: 'kapi',
  };
  expect((await kapi.post('/oauth/token').type('form').send(refresh)).status).toBe(200);
  expect((await kapi.post('/oauth/token').type('form').send(refresh)).status).toBe(200);
  const second = (await kapi.post('/oauth/token').type('form').send(tokenForm(reader))).body as {
    access_token: string;
    refresh_token: string;
  };
  expect((await kapi.post('/oauth/logout').set('Authorization', `Bearer ${login.access_token}`)).status).toBe(200);
  const third = (await kapi.post('/oauth/token').type('form').send(tokenForm(reader))).body as {
    refresh_token: string;
  };
  const revoke = { token: third.refresh_token, client_id: 'kapi', client_secret: 'kapi' };
  expect((await kapi.post('/oauth/revoke').type('form').send(revoke)).status).toBe(200);

  await new Promise<void>((resolve, reject) => {
    watch = httpRequest(`${e2e.kapiUrl}/api/v1/nodes?watch=1`, {
      headers: { Authorization: `Bearer ${second.access_token}` },
    });
    watch.on('response', (res) => {
      res.resume();
      resolve();
    });
    watch.on('error', reject);
    watch.end();
  });

  dataDir = mkdtempSync(join(tmpdir(), 'kapi-prometheus-'));
  writeFileSync(join(dataDir, 'rules.yaml'), readFileSync(RULES));
  writeFileSync(
    join(dataDir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      'rule_files: [rules.yaml]',
      'scrape_configs:',
      '  - job_name: kapi-apiserver',
      `    static_configs: [{ targets: ['127.0.0.1:${e2e.kapi.metricsPort}'] }]`,
      '',
    ].join('\n'),
  );
  // Prometheus binds a port it is given: one freed for it may be taken by another process first, and then it exits
  // at once saying so; another port is tried then.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const started = spawn(
      systemBinary('prometheus'),
      [
        `--config.file=${join(dataDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dataDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.console.templates=',
        '--web.console.libraries=',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus = started;
    started.stdout!.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
    started.stderr!.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
    const ready = await until('Prometheus ready', async () => {
      if (started.exitCode !== null) return 'exited';
      return (await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined))?.ok ? 'ready' : undefined;
    });
    if (ready === 'ready') break;
    if (attempt >= 3 || !/address already in use/.test(prometheusLog)) {
      throw new Error(`Prometheus exited (${started.exitCode}):\n${prometheusLog.slice(-2000)}`);
    }
  }
}, 120_000);

afterAll(async () => {
  watch?.destroy();
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await e2e?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('when Prometheus scrapes kapi, then the target is up and ready', async () => {
  expect(await valueOf('up{job="kapi-apiserver"}', (v) => v === 1)).toBe(1);
  expect(await valueOf('kapi_ready{job="kapi-apiserver"}', (v) => v === 1)).toBe(1);
}, 90_000);

test('when caches have synced, then each reports it and when it last heard from kube-apiserver', async () => {
  const synced = await until('the caches', async () => {
    const result = await query('kapi_cache_synced');
    return result.length >= 4 ? result : undefined;
  });
  const caches = synced.map((s) => s.metric['cache']);
  expect(caches).toEqual(expect.arrayContaining(['nodes', 'pods', 'users', 'loginsessions']));
  expect(synced.every((s) => s.value[1] === '1')).toBe(true);
  const lastEvent = await valueOf('kapi_cache_last_event_timestamp_seconds{cache="nodes"}');
  expect(lastEvent * 1000).toBeGreaterThanOrEqual(startedAt - 1000);
}, 90_000);

test.each([
  ['kapi_configuration_reloads_total{result="applied"}', 1],
  ['kapi_token_refreshes_total{result="rotated"}', 1],
  ['kapi_token_refreshes_total{result="replayed"}', 1],
  ['kapi_session_revocations_total{via="logout"}', 1],
  ['kapi_session_revocations_total{via="revoke"}', 1],
  ['kapi_authorization_cache_lookups_total{result="miss"}', 1],
  ['kapi_authorization_cache_lookups_total{result="hit"}', 1],
  ['kapi_forwarded_streams{kind="watch"}', 1],
  ['kapi_login_attempts_total{grant="password",result="success"}', 3],
])(
  'when the test has caused it, then %s reads at least %d',
  async (expr, atLeast) => {
    expect(await valueOf(expr, (v) => v >= atLeast)).toBeGreaterThanOrEqual(atLeast);
  },
  90_000,
);

test('when the chart rules are loaded into Prometheus, then they are healthy and none fires', async () => {
  const groups = await until('rules', async () => {
    const body = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string; health: string; state: string }[] }[] };
    };
    const rules = body.data.groups.flatMap((g) => g.rules);
    return rules.length > 0 && rules.every((r) => r.health === 'ok') ? rules : undefined;
  });
  expect(groups.map((r) => r.name).sort()).toEqual([
    'KapiApiserverCacheStale',
    'KapiApiserverDown',
    'KapiApiserverErrors',
    'KapiApiserverLoginFailureSurge',
    'KapiApiserverUnready',
  ]);
  expect(groups.filter((r) => r.state === 'firing')).toEqual([]);
}, 90_000);

test('when the dashboard queries run, then each is valid and uses only series kapi exports', async () => {
  const exposition = await (await fetch(`http://127.0.0.1:${e2e.kapi.metricsPort}/metrics`)).text();
  const exported = new Set(
    exposition
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => line.split(/[{ ]/)[0]!),
  );
  exported.add('up'); // Prometheus's own series for the scrape of kapi
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  const expressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
  expect(expressions.length).toBeGreaterThan(10);
  for (const expr of expressions) {
    const names = metricNames(expr);
    expect(names.length).toBeGreaterThan(0);
    expect({ expr, unknown: names.filter((name) => !exported.has(name)) }).toEqual({ expr, unknown: [] });
    await expect(query(expr)).resolves.toBeDefined();
  }
}, 90_000);

test('when a query names a series kapi does not export, then the name check finds it', () => {
  expect(
    metricNames('sum by (route) (rate(kapi_http_requests_total{code=~"5.."}[5m])) / ignoring(x) kapi_nope'),
  ).toEqual(['kapi_http_requests_total', 'kapi_nope']);
});

/** The metric names a PromQL expression selects: identifiers that are not functions, keywords or label names. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const keywords = new Set([
    'by',
    'without',
    'on',
    'ignoring',
    'group_left',
    'group_right',
    'bool',
    'and',
    'or',
    'unless',
    'offset',
  ]);
  const names = [...stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .filter((match) => !/^\s*\(/.test(stripped.slice(match.index + match[0].length)))
    .map((match) => match[0])
    .filter((name) => !keywords.has(name));
  return [...new Set(names)];
}
