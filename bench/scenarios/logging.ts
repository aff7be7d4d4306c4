import http from 'node:http';
import type { BenchContext, Scenario } from '../context.js';
import { bearer, send, sendJson } from '../http.js';
import { readMemory, resetPeakMemory } from '../kapi-process.js';
import { processCpuMs } from '../process-cpu.js';
import { runningPodStatus } from '../../src/sandbox/pod-status.js';
import { detail, verdict, type Row } from '../report.js';

/**
 * SPEC §11 logging rows: 200 pods × 10,000 lines (the sandbox gives every container 10,000 lines of history), read
 * through kapi's pod-log backend. A `size=100` query and a whole export: time to the first byte, total time, kapi's
 * CPU per request and its peak RSS (VmHWM) over the runs.
 */
const NAMESPACE = 'bench-logs';
const PODS = 200;
const QUERY_RUNS = 5;
const FIRST_BYTE_MS = 200;
const RSS_LIMIT_MIB = 256;

const metrics = {
  queryFirstByte: {
    metric: 'logging query (200 pods × 10k lines, size=100): first byte',
    target: `≤ ${FIRST_BYTE_MS} ms`,
  },
  queryTotal: { metric: 'logging query: total time', target: '(info)' },
  exportFirstByte: { metric: 'logging export (2M lines): first byte', target: `≤ ${FIRST_BYTE_MS} ms` },
  exportTotal: { metric: 'logging export: total time', target: '(info)' },
  peak: { metric: 'kapi peak RSS during logging (VmHWM)', target: `≤ ${RSS_LIMIT_MIB} MiB` },
};

interface Timed {
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  cpuMs: number;
}

/** One GET through kapi as a plain HTTP client: first body byte, end, bytes, and kapi's CPU meanwhile. */
function timedGet(url: string, token: string, pid: number): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const cpuBefore = processCpuMs(pid);
    const started = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
    let firstByteMs = -1;
    let bytes = 0;
    const req = http.get(url, { headers: bearer(token) }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${new URL(url).pathname}: HTTP ${res.statusCode}`));
        return;
      }
      res.on('data', (chunk: Buffer) => {
        if (firstByteMs < 0) firstByteMs = ms();
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ firstByteMs, totalMs: ms(), bytes, cpuMs: processCpuMs(pid) - cpuBefore }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * 200 running single-container pods in their own namespace, on one node; made once (the hostile-load row reads them
 * too). Resolves with the namespace.
 */
export async function ensureLogPods(ctx: BenchContext): Promise<string> {
  const base = ctx.env.backendUrl;
  const existing = await send(`${base}/api/v1/namespaces/${NAMESPACE}`, { headers: ctx.env.adminHeaders });
  if (existing.status === 200) return NAMESPACE;
  const json = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
  await sendJson(`${base}/api/v1/namespaces`, {
    method: 'POST',
    expect: 201,
    headers: json,
    body: JSON.stringify({ metadata: { name: NAMESPACE } }),
  });
  const startedAt = new Date(Date.now() - 4 * 3600_000);
  for (let i = 0; i < PODS; i++) {
    const name = `app-${i}`;
    const pod = await sendJson<Record<string, unknown>>(`${base}/api/v1/namespaces/${NAMESPACE}/pods`, {
      method: 'POST',
      expect: 201,
      headers: json,
      body: JSON.stringify({
        metadata: { name, labels: { app: 'bench-logs' } },
        spec: { nodeName: ctx.nodeName, containers: [{ name: 'app', image: 'example/app:1' }] },
      }),
    });
    // No kubelet in the sandbox: the status says the container runs, so its log is served.
    await sendJson(`${base}/api/v1/namespaces/${NAMESPACE}/pods/${name}/status`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({
        ...pod,
        status: runningPodStatus([{ name: 'app', image: 'example/app:1' }], startedAt),
      }),
    });
  }
  return NAMESPACE;
}

export const loggingScenario: Scenario = {
  title: `Logging: ${PODS} pods × 10,000 lines through the pod-log backend`,
  planned: Object.values(metrics),
  async run(ctx) {
    await ensureLogPods(ctx);
    const peakSince = resetPeakMemory(ctx.kapi.pid) ? 'since this row began' : 'since start';
    const startMiB = readMemory(ctx.kapi.pid).rssMiB;
    const base = `${ctx.kapi.url}/kapis/logging.kapi.io/v1alpha2/logs?namespaces=${NAMESPACE}`;
    // kapi's pod cache sees the pods within a moment; the statistics also prove every container is readable.
    const deadline = Date.now() + 60_000;
    let stats = { containers: 0, logs: 0 };
    while (stats.containers < PODS) {
      if (Date.now() > deadline) throw new Error(`kapi sees ${stats.containers} of ${PODS} containers`);
      stats = (
        await sendJson<{ statistics: typeof stats }>(`${base}&operation=statistics`, { headers: bearer(ctx.kapiToken) })
      ).statistics;
    }
    detail(`kapi reads ${stats.containers} containers holding ${stats.logs.toLocaleString('en-US')} lines`);

    const queries: Timed[] = [];
    for (let run = 0; run < QUERY_RUNS; run++)
      queries.push(await timedGet(`${base}&size=100`, ctx.kapiToken, ctx.kapi.pid));
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const q = {
      firstByteMs: median(queries.map((t) => t.firstByteMs)),
      totalMs: median(queries.map((t) => t.totalMs)),
      cpuMs: median(queries.map((t) => t.cpuMs)),
    };
    detail(
      `query size=100 (median of ${QUERY_RUNS}): first byte ${q.firstByteMs.toFixed(0)} ms, total ${q.totalMs.toFixed(0)} ms; CPU/req: kapi ${q.cpuMs.toFixed(0)} ms`,
    );

    const exported = await timedGet(`${base}&operation=export`, ctx.kapiToken, ctx.kapi.pid);
    const mib = exported.bytes / 2 ** 20;
    detail(
      `export: first byte ${exported.firstByteMs.toFixed(0)} ms, ${mib.toFixed(0)} MiB in ${(exported.totalMs / 1000).toFixed(1)} s (${(mib / (exported.totalMs / 1000)).toFixed(1)} MiB/s); CPU: kapi ${(exported.cpuMs / 1000).toFixed(1)} s`,
    );
    const peak = readMemory(ctx.kapi.pid).peakMiB;
    detail(
      `kapi peak RSS (VmHWM, ${peakSince}): ${peak.toFixed(0)} MiB (RSS ${startMiB.toFixed(0)} MiB when the row began)`,
    );

    const rows: Row[] = [
      {
        ...metrics.queryFirstByte,
        value: `${q.firstByteMs.toFixed(0)} ms (CPU/req ${q.cpuMs.toFixed(0)} ms)`,
        verdict: verdict(q.firstByteMs <= FIRST_BYTE_MS),
      },
      { ...metrics.queryTotal, value: `${q.totalMs.toFixed(0)} ms`, verdict: 'info' },
      {
        ...metrics.exportFirstByte,
        value: `${exported.firstByteMs.toFixed(0)} ms`,
        verdict: verdict(exported.firstByteMs <= FIRST_BYTE_MS),
      },
      {
        ...metrics.exportTotal,
        value: `${(exported.totalMs / 1000).toFixed(1)} s for ${mib.toFixed(0)} MiB (CPU ${(exported.cpuMs / 1000).toFixed(1)} s)`,
        verdict: 'info',
      },
      { ...metrics.peak, value: `${peak.toFixed(0)} MiB`, verdict: verdict(peak <= RSS_LIMIT_MIB) },
    ];
    return {
      rows,
      figures: { containers: stats.containers, lines: stats.logs, queries, export: exported, peakMiB: peak },
    };
  },
};
