import { describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { systemBinary } from '../../../support/system-binaries.js';
import { EXPECTATIONS, expectedQuery, uncovered, type Expectation } from './expectations.js';
import { scenarioSeries, seriesText, type Labels } from './scenario.js';

/**
 * SPEC §19's first real part: Debian's `promtool test rules` evaluates every template, as kapi expands it, over the
 * scenario's exact series with the chart's own recording rules (files/monitoring-rules.yaml), and each answer must be
 * the scenario's values and labels exactly.
 */
const RULES = join(process.cwd(), 'charts', 'kapi-apiserver', 'files', 'monitoring-rules.yaml');
const EVAL_TIME = '10m';
const POINTS = 30;

function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      systemBinary('promtool'),
      args,
      { cwd, timeout: 120_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** `{a="b", …}` or `name{…}` as promtool's exp_samples take it. */
function sampleLabels(labels: Labels): string {
  const { __name__: name, ...rest } = labels;
  return seriesText({ name: name ?? '', labels: rest });
}

function unitTests(expectations: readonly Expectation[]) {
  return {
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: scenarioSeries().map((series) => ({
          series: seriesText(series),
          values: series.counter ? `0+${series.value}x${POINTS}` : `${series.value}x${POINTS}`,
        })),
        promql_expr_test: expectations.map((expectation) => ({
          expr: expectedQuery(expectation).query,
          eval_time: EVAL_TIME,
          exp_samples: expectation.samples.map(([labels, value]) => ({ labels: sampleLabels(labels), value })),
        })),
      },
    ],
  };
}

async function runUnitTests(expectations: readonly Expectation[]): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-monitoring-promtool-'));
  try {
    copyFileSync(RULES, join(dir, 'rules.yaml'));
    writeFileSync(join(dir, 'tests.yaml'), stringify(unitTests(expectations), { lineWidth: 0 }));
    return await promtool(['test', 'rules', 'tests.yaml'], dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('every template under promtool, with the chart’s recording rules', () => {
  test('when the scenario’s series are evaluated, then every named metric answers exactly the scenario', async () => {
    expect(uncovered()).toEqual([]);
    const result = await runUnitTests(EXPECTATIONS);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  }, 120_000);

  test('when an expected value is off, then promtool fails on it (so a pass means the values)', async () => {
    const off = EXPECTATIONS.filter((x) => x.metric === 'pod_cpu_usage').slice(0, 1);
    const changed = off.map((x) => ({ ...x, samples: x.samples.map(([l, v]) => [l, v + 0.001] as [Labels, number]) }));
    const result = await runUnitTests(changed);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('exp: {namespace="a", node="n1", owner_kind="ReplicaSet"');
    expect(result.output).toContain('2.51E-01');
  }, 120_000);
});
