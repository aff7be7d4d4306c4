import { setTimeout as sleep } from 'node:timers/promises';
import { loadCells, loadFigures, pageLoads, rssIncreaseCell } from '../paired-runs.js';
import type { BenchContext, Scenario } from '../context.js';
import { grantBenchUser } from '../grants.js';
import { bearer, send, sendJson } from '../http.js';
import type { Operation } from '../jobs.js';
import { detail, verdict, type Row } from '../report.js';

/**
 * Issue 40's row: the console's Event Search (`tenant.kapi.io/v1alpha2/events`) over 50,000 events of the Events API
 * (BENCH_EVENTS for another count), written straight at the backend in one namespace: a search as the console's
 * detail view sends it (every event since the beginning, a message's text, newest 50 first) — p99 at c1, searches/s
 * at c16, kapi's CPU per search, and kapi's RSS increase for holding the events (after a full GC, before and after).
 * The events are deleted at the end.
 */
const COUNT = Number(process.env.BENCH_EVENTS ?? 50_000);
const NAMESPACE = 'default';
const EVENTS = `/api/v1/namespaces/${NAMESPACE}/events`;
const SEARCH = '/kapis/tenant.kapi.io/v1alpha2/events?operation=query&start_time=0&size=50&message_search=restarting';
const LABEL = 'bench.kapi.io/events-row';
const WRITERS = 16;
const REASONS = ['Scheduled', 'Pulled', 'Created', 'Started', 'BackOff', 'Unhealthy', 'Killing', 'FailedMount'];

export const eventsMetrics = {
  p99: { metric: `event search (${COUNT.toLocaleString('en-US')} events) p99 @c1`, target: '(info)' },
  throughput: { metric: 'event search @c16', target: '(info)' },
  cpu: { metric: 'kapi CPU per event search @c16', target: '(info)' },
  rss: { metric: `kapi RSS increase for ${COUNT.toLocaleString('en-US')} events`, target: '(info)' },
};

async function writeAll(ctx: BenchContext, count: number, write: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (let i = next++; i < count; i = next++) await write(i);
    }),
  );
}

export const eventsScenario: Scenario = {
  title: `Event Search: the console's search over ${COUNT.toLocaleString('en-US')} events`,
  planned: Object.values(eventsMetrics),
  async run(ctx: BenchContext) {
    const revoke = await grantBenchUser(ctx, 'events-row', [
      { apiGroups: [''], resources: ['events'], verbs: ['list'] },
    ]);
    const headers = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
    try {
      const search = (query: string) =>
        sendJson<{ query?: { total: number } }>(`${ctx.kapi.url}${query}`, { headers: bearer(ctx.kapiToken) });
      // the first search starts kapi's watch of the events: memory measured from there
      await search(SEARCH);
      await ctx.kapi.collectGarbage();
      await sleep(1_000);
      const before = ctx.kapi.memory();
      const started = Date.now();
      await writeAll(ctx, COUNT, async (i) => {
        const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        const reason = REASONS[i % REASONS.length] as string;
        const answer = await send(`${ctx.env.backendUrl}${EVENTS}`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            metadata: { name: `bench-event-${String(i).padStart(6, '0')}`, labels: { [LABEL]: 'true' } },
            involvedObject: { kind: 'Pod', name: `web-${i % 500}`, namespace: NAMESPACE, uid: `bench-pod-${i % 500}` },
            reason,
            message:
              reason === 'BackOff'
                ? `Back-off restarting failed container app in pod web-${i % 500}`
                : `${reason} container app of pod web-${i % 500}`,
            type: reason === 'BackOff' || reason === 'Unhealthy' || reason === 'FailedMount' ? 'Warning' : 'Normal',
            source: { component: 'kubelet' },
            firstTimestamp: time,
            lastTimestamp: time,
            count: 1,
          }),
        });
        if (answer.status >= 300) throw new Error(`POST ${EVENTS}: HTTP ${answer.status}`);
      });
      let total = 0;
      for (;;) {
        const counted = await sendJson<{ statistics?: { events: number } }>(
          `${ctx.kapi.url}/kapis/tenant.kapi.io/v1alpha2/events?operation=statistics&start_time=0`,
          { headers: bearer(ctx.kapiToken) },
        );
        total = counted.statistics?.events ?? 0;
        if (total >= COUNT) break;
        await sleep(200);
      }
      detail(
        `${COUNT.toLocaleString('en-US')} events written and seen by kapi in ${((Date.now() - started) / 1000).toFixed(1)} s (${total} counted)`,
      );
      const found = (await search(SEARCH)).query?.total ?? 0;
      detail(`the search matches ${found.toLocaleString('en-US')} events and answers the newest 50`);
      await ctx.kapi.collectGarbage();
      await sleep(1_000);
      const after = ctx.kapi.memory();
      const operation: Operation = {
        kind: 'request',
        url: `${ctx.kapi.url}${SEARCH}`,
        headers: bearer(ctx.kapiToken),
        expect: 200,
      };
      const loads = await pageLoads(operation);
      const { c1, c16 } = loads;
      const cells = loadCells(loads);
      const rows: Row[] = [
        { ...eventsMetrics.p99, value: cells.p99, verdict: c1.errors + c16.errors === 0 ? 'info' : verdict(false) },
        { ...eventsMetrics.throughput, value: cells.throughput, verdict: 'info' },
        { ...eventsMetrics.cpu, value: cells.cpu, verdict: 'info' },
        { ...eventsMetrics.rss, value: rssIncreaseCell(before.rssMiB, after.rssMiB), verdict: 'info' },
      ];
      return {
        rows,
        figures: {
          count: COUNT,
          matched: found,
          rssBeforeMiB: before.rssMiB,
          rssAfterMiB: after.rssMiB,
          ...loadFigures(loads, 'cpuUsPerSearch'),
        },
      };
    } finally {
      // one deletecollection by the row's label
      await send(`${ctx.env.backendUrl}${EVENTS}?labelSelector=${encodeURIComponent(`${LABEL}=true`)}`, {
        method: 'DELETE',
        headers: ctx.env.adminHeaders,
      }).catch((error: unknown) => detail(`events left behind: ${String(error)}`));
      await revoke();
    }
  },
};
