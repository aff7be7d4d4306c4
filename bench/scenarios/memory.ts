import { setTimeout as sleep } from 'node:timers/promises';
import type { Scenario } from '../context.js';
import { send } from '../http.js';
import { detail, verdict } from '../report.js';

const SETTLE_MS = 3_000;
const LIMIT_MIB = 256;

export const memoryMetrics = {
  current: { metric: 'kapi RSS, caches synced', target: `≤ ${LIMIT_MIB} MiB`, reference: '907 MiB (20k pods)' },
  // A container memory limit applies to the peak too: above it, the pod is OOM-killed while it syncs.
  peak: { metric: 'kapi peak RSS (VmHWM)', target: `≤ ${LIMIT_MIB} MiB` },
};

/** kapi's `kapi_cache_objects{cache=…}` gauges, to show what the measured memory holds. */
async function cachedObjects(metricsUrl: string): Promise<Record<string, number>> {
  const answer = await send(metricsUrl, { timeoutMs: 5_000 });
  const counts: Record<string, number> = {};
  for (const match of answer.body.toString('utf8').matchAll(/^kapi_cache_objects\{[^}]*="(\w+)"\} (\d+)/gm)) {
    counts[match[1] as string] = Number(match[2]);
  }
  return counts;
}

/** SPEC §11 memory row: kapi's resident memory once every cache has synced, and again after it settled. */
export const memoryScenario: Scenario = {
  title: `Memory: kapi RSS with the backend's nodes and pods cached`,
  planned: Object.values(memoryMetrics),
  async run(ctx) {
    const atReady = ctx.kapi.memory();
    detail(`at /readyz 200: RSS ${atReady.rssMiB.toFixed(0)} MiB, peak (VmHWM) ${atReady.peakMiB.toFixed(0)} MiB`);
    // Forced settle: a full GC, then a few idle seconds, so the figure is what kapi holds, not garbage not yet collected.
    const heap = await ctx.kapi.collectGarbage().catch((error: unknown) => {
      detail(`no forced GC (${error instanceof Error ? error.message : String(error)}); idle settle only`);
      return undefined;
    });
    await sleep(SETTLE_MS);
    const settled = ctx.kapi.memory();
    detail(
      `after a full GC and ${SETTLE_MS / 1000} s idle: RSS ${settled.rssMiB.toFixed(0)} MiB, peak ${settled.peakMiB.toFixed(0)} MiB`,
    );
    if (heap) {
      const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
      detail(
        `V8 after GC: heap used ${mib(heap.heapUsed)} of ${mib(heap.heapTotal)}, external ${mib(heap.external)} (array buffers ${mib(heap.arrayBuffers)})`,
      );
    }
    const cached = await cachedObjects(ctx.kapi.metricsUrl).catch(() => ({}) as Record<string, number>);
    const held = Object.entries(cached)
      .map(([cache, n]) => `${n.toLocaleString('en-US')} ${cache}`)
      .join(', ');
    detail(`kapi caches hold: ${held || 'unknown (no kapi_cache_objects metric)'}`);
    detail(
      `(of the backend's ${ctx.env.nodeCount.toLocaleString('en-US')} nodes and ${ctx.env.podCount.toLocaleString('en-US')} pods; kapi indexes only pods not yet Succeeded/Failed)`,
    );
    if (held && cached.nodes !== ctx.env.nodeCount) detail('WARNING: kapi does not hold every node');
    return {
      rows: [
        {
          ...memoryMetrics.current,
          value: `${settled.rssMiB.toFixed(0)} MiB (${atReady.rssMiB.toFixed(0)} MiB at ready)`,
          verdict: verdict(settled.rssMiB <= LIMIT_MIB),
        },
        {
          ...memoryMetrics.peak,
          value: `${settled.peakMiB.toFixed(0)} MiB`,
          verdict: verdict(settled.peakMiB <= LIMIT_MIB),
        },
      ],
      figures: { atReady, settled, settleMs: SETTLE_MS, heapAfterGc: heap, cached },
    };
  },
};
