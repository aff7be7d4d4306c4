import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { confineToNamespace } from '../../../../src/apis/monitoring/promql/enforce.js';
import { parsePromQL } from '../../../../src/apis/monitoring/promql/parse.js';
import { printPromQL } from '../../../../src/apis/monitoring/promql/print.js';
import { selectorsOf } from '../../../../src/apis/monitoring/promql/ast.js';
import { startPrometheus, type PrometheusProcess } from '../../../../src/sandbox/monitoring/prometheus.js';
import { clusterCases, expanded, scopedCases } from '../v1alpha3/template-cases.js';

/**
 * SPEC §19's proof of kapi's PromQL printer against Prometheus's own (Debian's 2.42, `/api/v1/format_query`, which
 * prints what Go's parser read): over Prometheus's parser test cases (v2.42.0's parse_test.go, printer_test.go and
 * promql/testdata, see prometheus-v2.42.0/README.md) and every template of the named metrics. For each query kapi
 * reads, Prometheus must read kapi's print as the same tree it reads the original as (their formats are equal), and
 * where Prometheus prints on one line, kapi's print is exactly Prometheus's. What kapi refuses of Prometheus's
 * valid cases is listed, each with why; every invalid case is refused.
 */
const CORPUS = join(import.meta.dirname, 'prometheus-v2.42.0');
const read = (name: string): string[] => JSON.parse(readFileSync(join(CORPUS, name), 'utf8'));

/** Prometheus's valid cases kapi refuses, and why (the grammar kapi reads with is Prometheus 3's). */
const REFUSED: Record<string, string> = {
  '5.': 'a number ending in "." (lezer-promql does not read it)',
  '2.': 'a number ending in "." (lezer-promql does not read it)',
  'foo @ 3.': 'a number ending in "." (lezer-promql does not read it)',
  'histogram_quantile(1./6., testhistogram2_bucket)': 'a number ending in "."',
  'histogram_quantile(5./6., testhistogram2_bucket)': 'a number ending in "."',
  'histogram_quantile(1./6., rate(testhistogram2_bucket[15m]))': 'a number ending in "."',
  'histogram_quantile(5./6., rate(testhistogram2_bucket[15m]))': 'a number ending in "."',
  'holt_winters(http_requests[1m], 0.01, 0.1)': 'holt_winters is not in lezer-promql (Prometheus 3 renamed it)',
  '"\\a\\b\\f\\n\\r\\t\\v\\\\\\" - \\xFF\\377\\u1234\\U00010111\\U0001011111☺"': 'bytes that are not UTF-8',
  "'\\a\\b\\f\\n\\r\\t\\v\\\\\\' - \\xFF\\377\\u1234\\U00010111\\U0001011111☺'": 'bytes that are not UTF-8',
};

let prometheus: PrometheusProcess;

beforeAll(async () => {
  prometheus = await startPrometheus('global:\n  scrape_interval: 1m\n');
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
});

/** Prometheus's print of `query`, or its parse error. */
async function format(query: string): Promise<{ ok: string } | { error: string }> {
  const response = await fetch(`${prometheus.url}/api/v1/format_query`, {
    method: 'POST',
    body: new URLSearchParams({ query }),
  });
  const body = (await response.json()) as { status: string; data?: string; error?: string };
  return body.status === 'success' ? { ok: body.data as string } : { error: body.error as string };
}

/** kapi's print of `query`, checked against Prometheus's; the failures, described. */
async function compare(queries: readonly string[]) {
  const failures: string[] = [];
  let compared = 0;
  let exact = 0;
  for (const query of queries) {
    let ours: string;
    try {
      ours = printPromQL(parsePromQL(query));
    } catch (error) {
      if (!(query in REFUSED)) failures.push(`refused ${JSON.stringify(query)}: ${(error as Error).message}`);
      continue;
    }
    if (query in REFUSED) failures.push(`read ${JSON.stringify(query)}, listed as refused`);
    const [theirs, ofOurs] = await Promise.all([format(query), format(ours)]);
    compared++;
    if (!('ok' in theirs) || !('ok' in ofOurs) || theirs.ok !== ofOurs.ok)
      failures.push(
        `${JSON.stringify(query)}: Prometheus ${JSON.stringify(theirs)}, of kapi's print ${JSON.stringify(ofOurs)}`,
      );
    else if (!theirs.ok.includes('\n')) {
      if (theirs.ok === ours) exact++;
      else
        failures.push(
          `${JSON.stringify(query)}: kapi prints ${JSON.stringify(ours)}, Prometheus ${JSON.stringify(theirs.ok)}`,
        );
    }
  }
  return { failures, compared, exact };
}

describe('kapi’s PromQL printer against Prometheus’s format_query', () => {
  test('when Prometheus’s own valid parser cases are read and printed, then Prometheus reads each print as the original, and prints short ones exactly as kapi does', async () => {
    const valid = read('valid.json');
    const { failures, compared, exact } = await compare(valid);
    expect(failures).toEqual([]);
    expect(compared).toBe(valid.length - Object.keys(REFUSED).length);
    expect(compared).toBeGreaterThanOrEqual(500);
    // the rest Prometheus prints on several lines (past 100 characters): compared through its own print
    expect(exact).toBeGreaterThan(compared * 0.9);
  }, 120_000);

  test('when every template of the named metrics is read and printed, then Prometheus reads each print as the original', async () => {
    const queries = [...new Set([...scopedCases(), ...clusterCases()].flatMap((c) => expanded(c).map((e) => e.query)))];
    const { failures, compared } = await compare(queries);
    expect(failures).toEqual([]);
    expect(compared).toBe(queries.length);
    expect(compared).toBeGreaterThan(100);
  }, 120_000);

  test('when Prometheus’s invalid parser cases are read, then kapi refuses every one (as Prometheus does)', async () => {
    const invalid = read('invalid.json');
    const accepted: string[] = [];
    for (const query of invalid) {
      expect('error' in (await format(query))).toBe(true);
      try {
        printPromQL(parsePromQL(query));
        accepted.push(query);
      } catch {
        // refused, as it should be
      }
    }
    expect(accepted).toEqual([]);
    expect(invalid.length).toBeGreaterThan(100);
  }, 120_000);

  test('when each valid case is confined to a namespace, then Prometheus reads kapi’s print with the namespace’s matcher on every selector', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const query of read('valid.json')) {
      if (query in REFUSED) continue;
      let confined;
      try {
        confined = confineToNamespace(parsePromQL(query), 'team-a');
      } catch {
        continue; // a matcher of its own on namespace, or a label written onto it: refused (enforce.test.ts)
      }
      const print = printPromQL(confined);
      const theirs = await format(print);
      if (!('ok' in theirs)) {
        failures.push(`${JSON.stringify(print)}: ${theirs.error}`);
        continue;
      }
      // Prometheus's own print, read again: each of its selectors names the namespace
      const reread = parsePromQL(theirs.ok);
      for (const selector of selectorsOf(reread))
        if (!selector.matchers.some((m) => m.name === 'namespace' && m.op === '=' && m.value === 'team-a'))
          failures.push(`${JSON.stringify(query)}: ${JSON.stringify(theirs.ok)} has a selector without the namespace`);
      checked++;
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(500);
  }, 120_000);
});
