import type { Scenario } from '../context.js';
import { inWorker } from '../in-worker.js';
import type { ProcessMemory } from '../kapi-process.js';
import type { WatchFanoutJob, WatchRelayJob } from '../jobs.js';
import { cpuSince, cpuSnapshot, formatCpu, perOperationUs } from '../process-cpu.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, ms, summarize } from '../stats.js';

const PATCHES = 1_000;
const WATCHES = 1_000;
const TIMEOUT_MS = 15_000;

export const watchMetrics = {
  added: { metric: 'watch relay added p99', target: '≤ 1 ms', reference: '+0.13 ms p50, +0.9 ms max' },
  held: { metric: `watches held through kapi`, target: `${WATCHES.toLocaleString('en-US')}, all get the event` },
  fanoutMemory: { metric: `kapi RSS, ${WATCHES.toLocaleString('en-US')} watches open`, target: '(info)' },
};

/**
 * SPEC §11 watch row. Relay: one node watch through kapi and one straight to the backend, both from the same
 * resourceVersion; a node label is patched one change at a time and each event's arrival on both streams is timed
 * on one clock, so the difference is what kapi adds. Then 1,000 watches are held through kapi and one change is
 * sent to all of them.
 */
export const watchScenario: Scenario = {
  title: 'Watch relay: /api/v1/nodes?watch=1 through kapi vs direct; then 1,000 watches',
  planned: Object.values(watchMetrics),
  async run(ctx) {
    if (!ctx.env.sandbox && !ctx.env.writable)
      throw new Error('patches nodes: the sandbox or the bench’s own kit only');
    // Over the relay run: kapi relays one event per patch; the backend serves the patch and both watches.
    const pids = { kapi: ctx.kapi.pid, ...ctx.env.backendPids };
    const cpuBefore = cpuSnapshot(pids);
    const relay = await inWorker<WatchRelayJob>({
      kind: 'watch-relay',
      kapiUrl: ctx.kapi.url,
      kapiToken: ctx.kapiToken,
      sandboxUrl: ctx.sandboxUrl,
      directHeaders: ctx.env.directHeaders,
      patchHeaders: ctx.env.adminHeaders,
      nodeName: ctx.nodeName,
      patches: PATCHES,
      timeoutMs: TIMEOUT_MS,
    });
    const relayCpu = perOperationUs(cpuSince(pids, cpuBefore), PATCHES);
    const added = summarize(relay.addedNs);
    const direct = summarize(relay.directNs);
    detail(`${PATCHES} label patches, one at a time; events missed on either stream: ${relay.missed}`);
    detail(`patch → direct watch: ${formatSummary(direct)}`);
    detail(`added by kapi (kapi arrival − direct arrival): ${formatSummary(added)}`);
    detail(
      `${formatCpu(relayCpu, 'event')} (kapi's includes its own node cache taking in the same change; the backend's, the patch)`,
    );

    let withWatches: ProcessMemory | undefined;
    const before = ctx.kapi.memory();
    const fanout = await inWorker<WatchFanoutJob>(
      {
        kind: 'watch-fanout',
        kapiUrl: ctx.kapi.url,
        kapiToken: ctx.kapiToken,
        sandboxUrl: ctx.sandboxUrl,
        patchHeaders: ctx.env.adminHeaders,
        nodeName: ctx.nodeName,
        watches: WATCHES,
        timeoutMs: TIMEOUT_MS,
      },
      async () => {
        withWatches = ctx.kapi.memory();
      },
    );
    const delivery = summarize(fanout.deliveryNs);
    detail(
      `opened ${fanout.opened}/${WATCHES} watches through kapi in ${ms(fanout.openMs)}` +
        (fanout.openFailures ? `; ${fanout.openFailures} failed (first: ${fanout.firstOpenError})` : ''),
    );
    detail(
      `one patch: delivered to ${fanout.delivered}/${fanout.opened}; all in ${ms(fanout.allDeliveredMs ?? Number.NaN)}`,
    );
    detail(`patch → each watch: ${formatSummary(delivery)} (includes parsing 1,000 events in one client thread)`);
    if (withWatches) {
      detail(
        `kapi RSS ${before.rssMiB.toFixed(0)} MiB before, ${withWatches.rssMiB.toFixed(0)} MiB with the watches open`,
      );
    }

    const allHeld = fanout.opened === WATCHES && fanout.delivered === WATCHES;
    const rows: Row[] = [
      {
        ...watchMetrics.added,
        value: `+${ms(added.p99)} (p50 +${ms(added.p50)}, max +${ms(added.max)}${relay.missed ? `, ${relay.missed} missed` : ''}; kapi ${Math.round(relayCpu.kapi ?? Number.NaN)} µs CPU/event)`,
        verdict: verdict(added.p99 <= 1 && relay.missed === 0),
      },
      {
        ...watchMetrics.held,
        value: `${fanout.delivered}/${WATCHES} delivered in ${ms(fanout.allDeliveredMs ?? Number.NaN)}`,
        verdict: verdict(allHeld),
      },
      {
        ...watchMetrics.fanoutMemory,
        value: withWatches ? `${withWatches.rssMiB.toFixed(0)} MiB (${before.rssMiB.toFixed(0)} MiB before)` : 'n/a',
        verdict: 'info',
      },
    ];
    return {
      rows,
      figures: {
        relay: {
          patches: PATCHES,
          missed: relay.missed,
          addedMs: added,
          patchToDirectMs: direct,
          cpuUsPerEvent: relayCpu,
        },
        fanout: {
          watches: WATCHES,
          opened: fanout.opened,
          openFailures: fanout.openFailures,
          openMs: fanout.openMs,
          delivered: fanout.delivered,
          allDeliveredMs: fanout.allDeliveredMs,
          deliveryMs: delivery,
          streamFailures: fanout.streamFailures,
          rssBeforeMiB: before.rssMiB,
          rssWithWatchesMiB: withWatches?.rssMiB,
        },
      },
    };
  },
};
