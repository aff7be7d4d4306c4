import http from 'node:http';
import type { BenchContext, Scenario } from '../context.js';
import { bearer, send } from '../http.js';
import { readMemory, resetPeakMemory } from '../kapi-process.js';
import { processCpuMs } from '../process-cpu.js';
import { detail, verdict, type Row } from '../report.js';

/**
 * SPEC §11 "hostile load", with the chart's heap flags (kapi runs with them in every row): what one client without a
 * token can do to kapi's memory. 10,000 requests to unique paths (the shapes of kapi's own and forwarded routes),
 * then a scrape of /metrics: kapi's peak RSS, the series count before and after, and whether kapi still answers.
 */
const UNIQUE_PATHS = Number(process.env.BENCH_HOSTILE_PATHS ?? 10_000);
const CONCURRENCY = 16;
const RSS_LIMIT_MIB = 256;

const metrics = {
  uniquePaths: {
    metric: `hostile: ${UNIQUE_PATHS.toLocaleString('en-US')} unique unauthenticated paths, peak RSS`,
    target: `≤ ${RSS_LIMIT_MIB} MiB, answering`,
  },
  series: { metric: 'hostile: /metrics series before → after the unique paths', target: 'no kapi_* series added' },
};

const SHAPES: ((i: number) => string)[] = [
  (i) => `/oauth/x-${i}`,
  (i) => `/kapis/a${i}/b/c`,
  (i) => `/kapis/resources.kapi.io/v1alpha3/nodes/n-${i}`,
  (i) => `/api/v1/namespaces/ns-${i}/pods/p-${i}`,
  (i) => `/apis/made.up.${i}/v1/things`,
  (i) => `/x-${i}`,
];

/** Every series on /metrics, by name and labels (values left out). */
async function seriesOf(ctx: BenchContext): Promise<Set<string>> {
  const answer = await send(ctx.kapi.metricsUrl);
  return new Set(
    answer.body
      .toString('utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.slice(0, line.lastIndexOf(' '))),
  );
}

/** `count` requests without a token (path numbers from `from`), `CONCURRENCY` at a time; the answers by status. */
async function uniquePaths(base: string, from: number, count: number): Promise<Map<number, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const statuses = new Map<number, number>();
  let next = 0;
  const caller = async () => {
    while (next < count) {
      const i = from + next++;
      const answer = await send(`${base}${SHAPES[i % SHAPES.length]!(i)}`, { agent, timeoutMs: 30_000 }).catch(
        () => undefined,
      );
      const status = answer?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, caller));
  agent.destroy();
  return statuses;
}

/** Whether kapi still answers: /readyz and a node page with the bench user's token. */
async function answering(ctx: BenchContext): Promise<string | undefined> {
  const ready = await send(`${ctx.kapi.url}/readyz`, { timeoutMs: 10_000 }).catch(() => undefined);
  if (ready?.status !== 200) return `/readyz answered ${ready?.status ?? 'nothing'}`;
  const page = await send(`${ctx.kapi.url}/kapis/resources.kapi.io/v1alpha3/nodes?limit=1`, {
    headers: bearer(ctx.kapiToken),
    timeoutMs: 10_000,
  }).catch(() => undefined);
  if (page?.status !== 200) return `a node page answered ${page?.status ?? 'nothing'}`;
  return undefined;
}

export const hostileScenario: Scenario = {
  title: 'Hostile load: unique unauthenticated paths (the chart heap flags)',
  planned: Object.values(metrics),
  async run(ctx) {
    const pid = ctx.kapi.pid;
    // One request of each shape first: the label sets they make (a 401 or 404 on `other`) are the most there may be.
    await uniquePaths(ctx.kapi.url, 0, SHAPES.length);
    const before = await seriesOf(ctx);
    const peakSince = resetPeakMemory(pid) ? 'since this row began' : 'since start';
    const startMiB = readMemory(pid).rssMiB;
    const cpuBefore = processCpuMs(pid);
    const started = Date.now();
    const statuses = await uniquePaths(ctx.kapi.url, SHAPES.length, UNIQUE_PATHS);
    const seconds = (Date.now() - started) / 1000;
    const cpuPerRequestUs = ((processCpuMs(pid) - cpuBefore) * 1000) / UNIQUE_PATHS;
    const after = await seriesOf(ctx);
    const added = [...after].filter((series) => !before.has(series));
    const [seriesBefore, seriesAfter] = [before.size, after.size];
    const trouble = await answering(ctx);
    const peak = readMemory(pid).peakMiB;
    const byStatus = [...statuses].map(([status, n]) => `${status || 'no answer'}: ${n}`).join(', ');
    detail(
      `${UNIQUE_PATHS.toLocaleString('en-US')} requests in ${seconds.toFixed(1)} s (${byStatus}); CPU/req: kapi ${cpuPerRequestUs.toFixed(0)} µs`,
    );
    detail(
      `series on /metrics: ${seriesBefore} before, ${seriesAfter} after${added.length ? `; added: ${added.join(', ')}` : ''}`,
    );
    detail(
      `kapi peak RSS (VmHWM, ${peakSince}): ${peak.toFixed(0)} MiB (RSS ${startMiB.toFixed(0)} MiB when the row began); ${trouble ?? 'still answering'}`,
    );
    const rows: Row[] = [
      {
        ...metrics.uniquePaths,
        value: `${peak.toFixed(0)} MiB, ${trouble ?? 'answering'} (CPU/req ${cpuPerRequestUs.toFixed(0)} µs)`,
        verdict: verdict(peak <= RSS_LIMIT_MIB && trouble === undefined),
      },
      {
        ...metrics.series,
        value: `${seriesBefore} → ${seriesAfter}`,
        verdict: verdict(added.every((series) => !/^kapi_/.test(series))),
      },
    ];
    return {
      rows,
      figures: {
        requests: UNIQUE_PATHS,
        statuses: Object.fromEntries(statuses),
        seriesBefore,
        seriesAfter,
        peakMiB: peak,
        cpuPerRequestUs,
      },
    };
  },
};
