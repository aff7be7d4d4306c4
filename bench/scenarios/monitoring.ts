import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageRoot } from '../../src/apidocs/documents.js';
import { startSandboxMonitoring } from '../../src/sandbox/monitoring/index.js';
import type { BenchContext, Scenario } from '../context.js';
import { bearer, send } from '../http.js';
import type { Operation } from '../jobs.js';
import { cpuNote, cpuPerOperation, errorNote, load, throughput } from '../measure.js';
import { processCpuMs } from '../process-cpu.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, ms, rate, summarize } from '../stats.js';

/**
 * SPEC §19's monitoring row: the console's node Monitoring tab, a 16-metric range request (30 minutes at 60 s), from a
 * live Debian Prometheus (the sandbox's, `--sandbox-monitoring`, over one node's series) through kapi.
 *
 * - kapi's own time: each request asked at a start of its own, so every one of its 16 queries goes to Prometheus
 *   (none from the cache); its time less the slowest of its backend queries (kapi's Server-Timing header says which),
 *   p99 at c1; kapi's CPU per request (utime+stime around the run) and the backend queries per request;
 * - the same request again and again (a page many people have open): answered from the shared cache, p99 at c1,
 *   pages/s and CPU at c4 (one user may have 4 in flight), and the backend queries per request;
 * - kapi's RSS increase for serving it (after a full GC), against the same kapi before a backend was named.
 */
const REQUESTS = Number(process.env.BENCH_MONITORING_REQUESTS ?? 300);
const METRICS = [
  'node_cpu_utilisation',
  'node_load1',
  'node_load5',
  'node_load15',
  'node_memory_utilisation',
  'node_disk_size_utilisation',
  'node_disk_inode_utilisation',
  'node_device_size_utilisation',
  'node_disk_inode_usage',
  'node_disk_inode_total',
  'node_disk_read_iops',
  'node_disk_write_iops',
  'node_disk_read_throughput',
  'node_disk_write_throughput',
  'node_net_bytes_transmitted',
  'node_net_bytes_received',
];

export const monitoringMetrics = {
  own: { metric: 'node Monitoring tab (16 metrics × 31 points), kapi’s own time p99 @c1, uncached', target: '≤ 10 ms' },
  cached: {
    metric: 'the same tab inside the cache window @c1 / @c4',
    target: '1 backend query per metric and window',
  },
  rss: { metric: 'kapi RSS increase for serving monitoring', target: '≤ 16 MiB' },
};

const nodePage = (node: string, start: number, end: number) =>
  `/kapis/monitoring.kapi.io/v1alpha3/nodes?start=${start}&end=${end}&step=60s&times=30&resources_filter=${encodeURIComponent(`${node}$`)}&metrics_filter=${encodeURIComponent(`${METRICS.join('|')}$`)}`;

export const monitoringScenario: Scenario = {
  title: 'Monitoring: the console’s node Monitoring tab over a live Prometheus',
  planned: Object.values(monitoringMetrics),
  async run(ctx: BenchContext) {
    const sandbox = ctx.env.sandbox;
    if (!sandbox) throw new Error('the sandbox backend is needed (its monitoring series)');
    await ctx.kapi.collectGarbage();
    await sleep(1_000);
    const before = ctx.kapi.memory();
    const monitoring = await startSandboxMonitoring({
      sandboxUrl: sandbox.url,
      adminToken: sandbox.adminToken,
      ...(sandbox.caPem && { caPem: sandbox.caPem }),
      rulesFile: join(packageRoot(), 'charts', 'kapi-apiserver', 'files', 'monitoring-rules.yaml'),
      configuration: { namespace: 'kapi-system', name: 'kapi' },
      node: ctx.nodeName,
      queryLog: true,
    });
    try {
      const headers = bearer(ctx.kapiToken);
      // ready: kapi names the backend, Prometheus has the node's recorded series for a whole cache window
      const ask = (path: string) => send(`${ctx.kapi.url}${path}`, { headers });
      const hasData = async (end: number) => {
        const answer = await ask(nodePage(ctx.nodeName, end - 1800, end));
        if (answer.status !== 200) return false;
        const body = JSON.parse(answer.body.toString('utf8')) as { results: { data?: { result: unknown[] } }[] };
        return body.results.length === METRICS.length && body.results.every((r) => (r.data?.result.length ?? 0) > 0);
      };
      const deadline = Date.now() + 120_000;
      while (!(await hasData(Math.floor(Date.now() / 1000) - 10))) {
        if (Date.now() > deadline)
          throw new Error('kapi answered no node series from the sandbox’s Prometheus in 2 min');
        await sleep(1_000);
      }

      // uncached: every request at a start of its own
      const end = Math.floor(Date.now() / 1000);
      const own: number[] = [];
      const totals: number[] = [];
      const queriesBefore = monitoring.apiQueries();
      const cpuBefore = processCpuMs(ctx.kapi.pid);
      for (let i = 1; i <= REQUESTS; i++) {
        const started = process.hrtime.bigint();
        const answer = await ask(nodePage(ctx.nodeName, end - 1800 - i, end));
        const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
        if (answer.status !== 200) throw new Error(`the node page was answered HTTP ${answer.status}`);
        const upstream = /upstream;dur=([0-9.]+)/.exec(String(answer.headers?.['server-timing'] ?? ''));
        if (!upstream) throw new Error('kapi answered without its Server-Timing (the request was not sent upstream)');
        totals.push(totalMs * 1e6);
        own.push(Math.max(0, totalMs - Number(upstream[1])) * 1e6);
      }
      const cpuUs = ((processCpuMs(ctx.kapi.pid) - cpuBefore) * 1000) / REQUESTS;
      const uncachedQueries = (monitoring.apiQueries() - queriesBefore) / REQUESTS;
      const ownSummary = summarize(own);
      const totalSummary = summarize(totals);
      detail(
        `uncached: ${REQUESTS} requests, kapi's own time p50 ${ms(ownSummary.p50)} p99 ${ms(ownSummary.p99)} (total p99 ${ms(totalSummary.p99)}), kapi ${Math.round(cpuUs)} µs CPU per request, ${uncachedQueries.toFixed(1)} backend queries per request`,
      );

      // cached: the same page again and again
      const operation: Operation = {
        kind: 'request',
        url: `${ctx.kapi.url}${nodePage(ctx.nodeName, end - 1800, end)}`,
        headers,
        expect: 200,
      };
      const cachedBefore = monitoring.apiQueries();
      const c1 = await load(operation, 1);
      const c1s = summarize(c1.latenciesNs);
      detail(`cached c1: ${formatSummary(c1s)}, ${rate(throughput(c1))}${cpuNote(c1)}${errorNote(c1)}`);
      const c4 = await load(operation, 4);
      const c4s = summarize(c4.latenciesNs);
      detail(`cached c4: ${rate(throughput(c4))}, ${formatSummary(c4s)}${cpuNote(c4)}${errorNote(c4)}`);
      const cachedRequests = c1.latenciesNs.length + c4.latenciesNs.length;
      const cachedQueries = monitoring.apiQueries() - cachedBefore;

      await ctx.kapi.collectGarbage();
      await sleep(1_000);
      const after = ctx.kapi.memory();
      const increase = after.rssMiB - before.rssMiB;
      const rows: Row[] = [
        {
          ...monitoringMetrics.own,
          value: `${ms(ownSummary.p99)} (p50 ${ms(ownSummary.p50)}; total p99 ${ms(totalSummary.p99)}), ${Math.round(cpuUs)} µs CPU/req, ${uncachedQueries.toFixed(1)} backend queries/req`,
          verdict: verdict(ownSummary.p99 <= 10 && Math.round(uncachedQueries) === METRICS.length),
        },
        {
          ...monitoringMetrics.cached,
          value: `p99 ${ms(c1s.p99)} @c1; ${rate(throughput(c4))} @c4 (p99 ${ms(c4s.p99)}), ${Math.round(cpuPerOperation(c4).kapi ?? Number.NaN)} µs CPU/req; ${cachedQueries} backend queries for ${cachedRequests.toLocaleString('en-US')} requests over ${Math.ceil((c1.elapsedMs + c4.elapsedMs) / 10_000)}+ windows`,
          verdict: verdict(
            c1.errors + c4.errors === 0 &&
              cachedQueries <= METRICS.length * (Math.ceil((c1.elapsedMs + c4.elapsedMs + 2 * 1_000) / 10_000) + 2),
          ),
        },
        {
          ...monitoringMetrics.rss,
          value: `${increase.toFixed(1)} MiB (${before.rssMiB.toFixed(0)} → ${after.rssMiB.toFixed(0)} MiB, after a full GC)`,
          verdict: verdict(increase <= 16),
        },
      ];
      return {
        rows,
        figures: {
          uncached: {
            own: ownSummary,
            total: totalSummary,
            cpuUsPerRequest: cpuUs,
            backendQueriesPerRequest: uncachedQueries,
          },
          cached: {
            c1: { ...c1s, rps: throughput(c1), errors: c1.errors, cpuUsPerRequest: cpuPerOperation(c1) },
            c4: { ...c4s, rps: throughput(c4), errors: c4.errors, cpuUsPerRequest: cpuPerOperation(c4) },
            backendQueries: cachedQueries,
            requests: cachedRequests,
          },
          rssBeforeMiB: before.rssMiB,
          rssAfterMiB: after.rssMiB,
        },
      };
    } finally {
      await monitoring.stop();
      // kapi answers empty again, as before the row
      await send(`${sandbox.url}/apis/installer.kapi.io/v1alpha1/namespaces/kapi-system/clusterconfigurations/kapi`, {
        method: 'PATCH',
        headers: { ...ctx.env.adminHeaders, 'Content-Type': 'application/json-patch+json' },
        body: JSON.stringify([{ op: 'remove', path: '/spec/monitoring' }]),
      });
    }
  },
};
