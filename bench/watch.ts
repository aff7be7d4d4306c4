import type http from 'node:http';
import { bearer, sendJson } from './http.js';
import type { WatchFanoutJob, WatchFanoutResult, WatchRelayJob, WatchRelayResult } from './jobs.js';
import { agentFor } from './tls.js';
import { openWatch, type WatchEvent, type WatchHandlers, type WatchStream } from './watch-stream.js';

const now = (): number => Number(process.hrtime.bigint());
const MS = 1e6;
const TICK_LABEL = 'bench.kapi.io/tick';
/** Watches are opened this many at a time, as a fleet of clients reconnecting would. */
const OPEN_BATCH = 100;
/** One relayed event that has not come in this long is missed; after a few misses the relay run stops. */
const EVENT_TIMEOUT_MS = 2_000;
const MAX_MISSES = 3;

interface Versioned {
  metadata: { resourceVersion: string };
}

/** The node list's resourceVersion: watches started from it see only the bench's own patches. */
async function currentVersion(sandboxUrl: string, headers: Record<string, string>, agent: http.Agent): Promise<string> {
  const list = await sendJson<Versioned>(`${sandboxUrl}/api/v1/nodes?limit=1`, { headers, agent });
  return list.metadata.resourceVersion;
}

/** A label change on one node; resolves to the resourceVersion the change was written at. */
async function patchLabel(
  sandboxUrl: string,
  headers: Record<string, string>,
  nodeName: string,
  value: string,
  agent: http.Agent,
) {
  const node = await sendJson<Versioned>(`${sandboxUrl}/api/v1/nodes/${nodeName}`, {
    method: 'PATCH',
    headers: { ...headers, 'Content-Type': 'application/merge-patch+json' },
    body: JSON.stringify({ metadata: { labels: { [TICK_LABEL]: value } } }),
    agent,
  });
  return node.metadata.resourceVersion;
}

function watchUrl(base: string, resourceVersion: string): string {
  return `${base}/api/v1/nodes?watch=1&resourceVersion=${encodeURIComponent(resourceVersion)}`;
}

/**
 * Arrival times by resourceVersion and stream, recorded as events come (they may beat the PATCH answer), and a way
 * to wait until one version reached enough streams. An ERROR event or an ended stream is kept as the failure.
 */
class Arrivals {
  private readonly times = new Map<string, number[]>();
  private waiter: (() => void) | undefined;
  /** The first failure; `failures` counts them all. */
  failure: string | undefined;
  failures = 0;

  /** `failFast`: a failure ends a wait at once (two streams compared); else the others are still waited for. */
  constructor(private readonly failFast: boolean) {}

  handlers(stream: number, label: string): WatchHandlers {
    return {
      onEvent: (event, at) => this.record(stream, label, event, at),
      onEnd: (reason) => this.fail(`${label}: ${reason}`),
    };
  }

  private record(stream: number, label: string, event: WatchEvent, at: number): void {
    if (event.type === 'ERROR') return this.fail(`${label}: ERROR event: ${event.object.message ?? 'no message'}`);
    const rv = event.object.metadata?.resourceVersion;
    if (!rv) return;
    let row = this.times.get(rv);
    if (!row) this.times.set(rv, (row = []));
    row[stream] = at;
    this.waiter?.();
  }

  private fail(reason: string): void {
    this.failures++;
    this.failure ??= reason;
    this.waiter?.();
  }

  /** The arrival times (by stream) once `count` streams saw `rv`, or what arrived by the deadline or a failure. */
  wait(rv: string, count: number, timeoutMs: number): Promise<number[]> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiter = undefined;
        resolve(this.times.get(rv) ?? []);
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiter = () => {
        const row = this.times.get(rv);
        if ((this.failFast && this.failure) || (row && row.filter((t) => t !== undefined).length >= count)) done();
      };
      this.waiter();
    });
  }
}

export async function runWatchRelay(job: WatchRelayJob): Promise<WatchRelayResult> {
  // One agent per scheme: kapi's listener is plain http, the backend https.
  const streamAgents = {
    kapi: agentFor(job.kapiUrl, { keepAlive: false }),
    direct: agentFor(job.sandboxUrl, { keepAlive: false }),
  };
  const patchAgent = agentFor(job.sandboxUrl, { keepAlive: true, maxSockets: 1 });
  const arrivals = new Arrivals(true);
  const streams: WatchStream[] = [];
  const DIRECT = 0;
  const KAPI = 1;
  try {
    const rv = await currentVersion(job.sandboxUrl, job.patchHeaders, patchAgent);
    const open = (base: string, headers: Record<string, string>, agent: http.Agent, stream: number, label: string) =>
      openWatch(watchUrl(base, rv), headers, agent, arrivals.handlers(stream, label), job.timeoutMs);
    streams.push(await open(job.sandboxUrl, job.directHeaders, streamAgents.direct, DIRECT, 'direct watch'));
    const secondHeaders = job.secondHeaders ?? bearer(job.kapiToken);
    const secondLabel = job.secondHeaders ? 'second direct watch' : 'watch through kapi';
    streams.push(await open(job.kapiUrl, secondHeaders, streamAgents.kapi, KAPI, secondLabel));

    const result: WatchRelayResult = { addedNs: [], directNs: [], missed: 0 };
    for (let i = 1; i <= job.patches; i++) {
      const sent = now();
      const written = await patchLabel(job.sandboxUrl, job.patchHeaders, job.nodeName, String(i), patchAgent);
      const row = await arrivals.wait(written, 2, EVENT_TIMEOUT_MS);
      if (arrivals.failure) throw new Error(arrivals.failure);
      const direct = row[DIRECT];
      const relayed = row[KAPI];
      if (direct === undefined || relayed === undefined) {
        if (++result.missed >= MAX_MISSES) {
          throw new Error(
            `${result.missed} events not relayed within ${EVENT_TIMEOUT_MS} ms each (after ${i} patches)`,
          );
        }
        continue;
      }
      result.addedNs.push(relayed - direct);
      result.directNs.push(direct - sent);
    }
    return result;
  } finally {
    for (const stream of streams) stream.close();
    patchAgent.destroy();
    streamAgents.kapi.destroy();
    streamAgents.direct.destroy();
  }
}

/** Opens the watches, tells the main thread (`ready`, so it can read kapi's memory), waits for `go`, then patches. */
export async function runWatchFanout(job: WatchFanoutJob, handshake: () => Promise<void>): Promise<WatchFanoutResult> {
  const streamAgent = agentFor(job.kapiUrl, { keepAlive: false, maxSockets: Infinity });
  const patchAgent = agentFor(job.sandboxUrl, { keepAlive: true, maxSockets: 1 });
  const arrivals = new Arrivals(false);
  const streams: WatchStream[] = [];
  const result: WatchFanoutResult = {
    opened: 0,
    openFailures: 0,
    openMs: 0,
    delivered: 0,
    allDeliveredMs: undefined,
    deliveryNs: [],
    streamFailures: 0,
  };
  try {
    const rv = await currentVersion(job.sandboxUrl, job.patchHeaders, patchAgent);
    const openStarted = now();
    for (let first = 0; first < job.watches; first += OPEN_BATCH) {
      const batch = Array.from({ length: Math.min(OPEN_BATCH, job.watches - first) }, (_, i) =>
        openWatch(
          watchUrl(job.kapiUrl, rv),
          bearer(job.kapiToken),
          streamAgent,
          arrivals.handlers(first + i, `watch ${first + i} through kapi`),
          job.timeoutMs,
        ),
      );
      for (const outcome of await Promise.allSettled(batch)) {
        if (outcome.status === 'fulfilled') streams.push(outcome.value);
        else {
          result.openFailures++;
          result.firstOpenError ??= outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
        }
      }
    }
    result.opened = streams.length;
    result.openMs = (now() - openStarted) / MS;
    await handshake();

    const sent = now();
    const written = await patchLabel(job.sandboxUrl, job.patchHeaders, job.nodeName, 'fanout', patchAgent);
    const row = (await arrivals.wait(written, streams.length, job.timeoutMs)).filter((t) => t !== undefined);
    result.streamFailures = arrivals.failures;
    result.firstStreamFailure = arrivals.failure;
    result.delivered = row.length;
    result.deliveryNs = row.map((t) => t - sent);
    result.allDeliveredMs = row.length === streams.length ? (Math.max(...row) - sent) / MS : undefined;
    return result;
  } finally {
    for (const stream of streams) stream.close();
    patchAgent.destroy();
    streamAgent.destroy();
  }
}
