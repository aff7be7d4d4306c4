/**
 * The chart's optional monitoring objects: the ServiceMonitor reaches the pods' metrics port through a Service of
 * its own, and the PrometheusRule's alerts pass their unit tests in a real `promtool test rules`.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { systemBinary } from '../support/system-binaries.js';
import { findObject, objectsOfKind, renderChart, setValues, type KubeObject } from './helm.js';

const UNIT_TESTS = join(process.cwd(), 'test', 'charts', 'alerts', 'kapi-alerts.promtool.yaml');
const ALL_ON = setValues({
  'monitoring.serviceMonitor.enabled': true,
  'monitoring.prometheusRule.enabled': true,
  'monitoring.dashboard.enabled': true,
  'monitoring.recordingRules.enabled': true,
});

function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(systemBinary('promtool'), args, { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** Runs the unit tests against `rules` (the PrometheusRule's spec) in a scratch directory. */
async function testRules(rules: unknown): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-promtool-'));
  try {
    writeFileSync(join(dir, 'rules.yaml'), stringify(rules));
    copyFileSync(UNIT_TESTS, join(dir, 'tests.yaml'));
    const check = await promtool(['check', 'rules', 'rules.yaml'], dir);
    if (check.code !== 0) return check;
    return await promtool(['test', 'rules', 'tests.yaml'], dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('monitoring objects', () => {
  test('when monitoring is left at its defaults, then no monitoring object is rendered', async () => {
    const objects = await renderChart();
    expect(objectsOfKind(objects, 'ServiceMonitor')).toEqual([]);
    expect(objectsOfKind(objects, 'PrometheusRule')).toEqual([]);
    const configuration = findObject<KubeObject & { spec: Record<string, unknown> }>(
      objects,
      'ClusterConfiguration',
      'kapi',
    );
    expect(configuration.spec.monitoring).toBeUndefined();
    expect(objects.filter((o) => o.metadata.name === 'kapi-apiserver-dashboard')).toEqual([]);
  });

  test('when the ServiceMonitor is on, then it selects only the metrics Service, whose port reaches the pods', async () => {
    const objects = await renderChart(ALL_ON);
    type Monitor = KubeObject & {
      spec: { jobLabel: string; selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
    };
    type Service = KubeObject & { spec: { selector: Record<string, string>; ports: { name: string; targetPort: string }[] } };
    const monitor = findObject<Monitor>(objects, 'ServiceMonitor', 'kapi-apiserver');
    const services = objectsOfKind<Service>(objects, 'Service');
    const selected = services.filter((service) =>
      Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => service.metadata.labels?.[k] === v),
    );
    expect(selected.map((s) => s.metadata.name)).toEqual(['kapi-apiserver-metrics']);
    const metricsService = selected[0]!;
    // the job label the alerts and the dashboard select on
    expect(metricsService.metadata.labels?.[monitor.spec.jobLabel]).toBe('kapi-apiserver');
    const port = metricsService.spec.ports.find((p) => p.name === monitor.spec.endpoints[0]!.port);
    expect(port?.targetPort).toBe('metrics');
    const deployment = findObject<KubeObject & { spec: any }>(objects, 'Deployment', 'kapi-apiserver'); // eslint-disable-line @typescript-eslint/no-explicit-any
    const containerPorts = deployment.spec.template.spec.containers[0].ports as { name: string }[];
    expect(containerPorts.map((p) => p.name)).toContain('metrics');
    for (const [k, v] of Object.entries(metricsService.spec.selector)) {
      expect(deployment.spec.template.metadata.labels[k]).toBe(v);
    }
  });

  test('when the dashboard is on, then its ConfigMap carries the sidecar label and a Grafana dashboard', async () => {
    const objects = await renderChart(ALL_ON);
    const configMap = findObject<KubeObject & { data: Record<string, string> }>(
      objects,
      'ConfigMap',
      'kapi-apiserver-dashboard',
    );
    expect(configMap.metadata.labels?.['grafana_dashboard']).toBe('1');
    const dashboard = JSON.parse(configMap.data['kapi-apiserver.json']!) as { uid: string; panels: unknown[] };
    expect(dashboard.uid).toBe('kapi-apiserver');
    expect(dashboard.panels.length).toBeGreaterThan(10);
  });
});

describe('alert rules under promtool', () => {
  let rules: { groups: { rules: { alert: string; expr: string }[] }[] };

  beforeAll(async () => {
    const objects = await renderChart(ALL_ON);
    rules = findObject<KubeObject & { spec: typeof rules }>(objects, 'PrometheusRule', 'kapi-apiserver').spec;
  });

  test('when the rendered rules are unit-tested, then every alert fires when it should and only then', async () => {
    expect(rules.groups[0]!.rules.map((r) => r.alert).sort()).toEqual([
      'KapiApiserverCacheStale',
      'KapiApiserverDown',
      'KapiApiserverErrors',
      'KapiApiserverLoginFailureSurge',
      'KapiApiserverUnready',
    ]);
    const result = await testRules(rules);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  test('when a threshold is changed, then the unit tests catch it', async () => {
    const changed = structuredClone(rules);
    const errors = changed.groups[0]!.rules.find((r) => r.alert === 'KapiApiserverErrors')!;
    errors.expr = errors.expr.replace('> 0.05', '> 0.5');
    const result = await testRules(changed);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('KapiApiserverErrors');
  });
});

describe('the monitoring API’s recording rules', () => {
  test('when they are on, then the PrometheusRule holds exactly the rule file a plain Prometheus loads', async () => {
    const objects = await renderChart(ALL_ON);
    const rule = findObject<KubeObject & { spec: unknown }>(objects, 'PrometheusRule', 'kapi-monitoring');
    const file = parse(readFileSync(join(process.cwd(), 'charts/kapi-apiserver/files/monitoring-rules.yaml'), 'utf8'));
    expect(rule.spec).toEqual(file);
    const records = (file as { groups: { rules: { record: string }[] }[] }).groups.flatMap((g) => g.rules);
    expect(records).toHaveLength(34);
    const dir = mkdtempSync(join(tmpdir(), 'kapi-promtool-'));
    try {
      writeFileSync(join(dir, 'rules.yaml'), stringify(rule.spec));
      const check = await promtool(['check', 'rules', 'rules.yaml'], dir);
      expect(check.output).toContain('SUCCESS: 34 rules found');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('when a backend is named in the values, then the ClusterConfiguration carries it', async () => {
    const objects = await renderChart(
      setValues({
        'clusterConfiguration.monitoring.endpoint': 'http://prometheus-k8s.monitoring.svc:9090',
      }),
    );
    const configuration = findObject<KubeObject & { spec: Record<string, unknown> }>(
      objects,
      'ClusterConfiguration',
      'kapi',
    );
    expect(configuration.spec.monitoring).toEqual({ endpoint: 'http://prometheus-k8s.monitoring.svc:9090' });
  });
});
