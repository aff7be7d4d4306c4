import type { BenchContext, Scenario } from '../context.js';
import { inWorker } from '../in-worker.js';
import type { ProcessMemory } from '../kapi-process.js';
import type { WatchFanoutJob, WatchRelayJob } from '../jobs.js';
import { cpuSince, cpuSnapshot, formatCpu, perOperationUs, type CpuPids } from '../process-cpu.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, ms, signedMs, summarize } from '../stats.js';
import { BARE_PROXY, startBareProxyFor } from './forwarding.js';

const PATCHES = 1_000;
/** The relay is measured in rounds, kapi's then the bare proxy's, so that both see the machine alike. */
const ROUNDS = 2;
const WATCHES = 1_000;
const TIMEOUT_MS = 15_000;

export const watchMetrics = {
  added: { metric: 'watch relay added p99', target: '≤ 1 ms', reference: '+0.13 ms p50, +0.9 ms max' },
  bareAdded: { metric: 'watch relay added p99 through a bare Node proxy', target: '(info: the floor, same run)' },
  betweenDirect: {
    metric: 'watch relay: p99 between two direct watches (no proxy)',
    target: '(info: the backend’s and the client’s share, same run)',
  },
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
    // Over the relay rounds: kapi relays one event per patch; the backend serves the patch and both watches. The bare
    // Node proxy (bare-proxy-server.ts, relaying the watch chunk by chunk) relays the same in the rounds between.
    const bare = await startBareProxyFor(ctx, '/api/v1/nodes', ctx.env.directHeaders);
    const kapiRelay = new RelayRounds();
    const bareRelay = new RelayRounds();
    // Two direct watches of the same event: what the backend (one writer per watch) and the client add between two
    // streams with no proxy at all, the part of a proxy's added tail that is not the proxy's.
    const twoDirect = new RelayRounds();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        await kapiRelay.add(ctx, ctx.kapi.url, { kapi: ctx.kapi.pid, ...ctx.env.backendPids });
        if (bare) await bareRelay.add(ctx, bare.url, { [BARE_PROXY]: bare.pid, ...ctx.env.backendPids });
        await twoDirect.add(ctx, ctx.sandboxUrl, { ...ctx.env.backendPids }, ctx.env.directHeaders);
      }
    } finally {
      await bare?.stop();
    }
    const relay = kapiRelay.result();
    const relayCpu = relay.cpu;
    const added = summarize(relay.addedNs);
    const direct = summarize(relay.directNs);
    detail(
      `${PATCHES} label patches, one at a time, in ${ROUNDS} rounds; events missed on either stream: ${relay.missed}`,
    );
    detail(`patch → direct watch: ${formatSummary(direct)}`);
    detail(`added by kapi (kapi arrival − direct arrival): ${formatSummary(added)}`);
    detail(
      `${formatCpu(relayCpu, 'event')} (kapi's includes its own node cache taking in the same change; the backend's, the patch)`,
    );
    const bareResult = bare ? bareRelay.result() : undefined;
    const bareAdded = bareResult && summarize(bareResult.addedNs);
    if (bareResult && bareAdded) {
      detail(`added by the bare proxy, in the rounds between kapi's: ${formatSummary(bareAdded)}`);
      detail(`${formatCpu(bareResult.cpu, 'event')}`);
    }

    const directResult = twoDirect.result();
    const betweenDirect = summarize(directResult.addedNs);
    detail(`between two direct watches, in the same rounds: ${formatSummary(betweenDirect)}`);

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
        value: `${signedMs(added.p99)} (p50 ${signedMs(added.p50)}, max ${signedMs(added.max)}${relay.missed ? `, ${relay.missed} missed` : ''}; kapi ${Math.round(relayCpu.kapi ?? Number.NaN)} µs CPU/event)`,
        verdict: verdict(added.p99 <= 1 && relay.missed === 0),
      },
      {
        ...watchMetrics.betweenDirect,
        value: `${signedMs(betweenDirect.p99)} (p50 ${signedMs(betweenDirect.p50)}, max ${signedMs(betweenDirect.max)}${directResult.missed ? `, ${directResult.missed} missed` : ''})`,
        verdict: 'info' as const,
      },
      ...(bareResult && bareAdded
        ? [
            {
              ...watchMetrics.bareAdded,
              value: `${signedMs(bareAdded.p99)} (p50 ${signedMs(bareAdded.p50)}, max ${signedMs(bareAdded.max)}${bareResult.missed ? `, ${bareResult.missed} missed` : ''}; ${Math.round(bareResult.cpu[BARE_PROXY] ?? Number.NaN)} µs CPU/event)`,
              verdict: 'info' as const,
            },
          ]
        : []),
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
          ...(bareResult &&
            bareAdded && {
              bareProxy: { addedMs: bareAdded, missed: bareResult.missed, cpuUsPerEvent: bareResult.cpu },
            }),
          betweenDirectWatchesMs: betweenDirect,
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

/** The relay's figures over its rounds: each round a worker's patches, timed on both streams. */
class RelayRounds {
  private readonly addedNs: number[] = [];
  private readonly directNs: number[] = [];
  private missed = 0;
  private cpuUs: Record<string, number> = {};
  private events = 0;

  /** One round of PATCHES ÷ ROUNDS patches, watched through `url` (as `secondHeaders`, else kapi's token); `pids`' CPU taken over it. */
  async add(ctx: BenchContext, url: string, pids: CpuPids, secondHeaders?: Record<string, string>): Promise<void> {
    const patches = Math.round(PATCHES / ROUNDS);
    const before = cpuSnapshot(pids);
    const round = await inWorker<WatchRelayJob>({
      kind: 'watch-relay',
      kapiUrl: url,
      kapiToken: ctx.kapiToken,
      sandboxUrl: ctx.sandboxUrl,
      directHeaders: ctx.env.directHeaders,
      patchHeaders: ctx.env.adminHeaders,
      nodeName: ctx.nodeName,
      patches,
      timeoutMs: TIMEOUT_MS,
      ...(secondHeaders && { secondHeaders }),
    });
    const used = perOperationUs(cpuSince(pids, before), 1);
    for (const [role, us] of Object.entries(used)) this.cpuUs[role] = (this.cpuUs[role] ?? 0) + (us ?? 0);
    this.events += patches;
    this.addedNs.push(...round.addedNs);
    this.directNs.push(...round.directNs);
    this.missed += round.missed;
  }

  result() {
    const cpu: Record<string, number> = {};
    for (const [role, us] of Object.entries(this.cpuUs)) cpu[role] = us / Math.max(1, this.events);
    return { addedNs: this.addedNs, directNs: this.directNs, missed: this.missed, cpu };
  }
}
