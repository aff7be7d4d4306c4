import type { BenchContext, Scenario } from '../context.js';
import { bearer, sendJson } from '../http.js';
import type { DirectNodePageOperation, Operation } from '../jobs.js';
import { cpuNote, cpuPerOperation, errorNote, load, throughput } from '../measure.js';
import { directNodePage } from '../operations.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, ms, rate, summarize } from '../stats.js';

export const WORKER_LABEL = 'node-role.kubernetes.io/worker';
export const NODE_PAGE_PATH = `/kapis/resources.kapi.io/v1alpha3/nodes?limit=10&sortBy=name&labelSelector=${WORKER_LABEL}`;
const PAGE_SIZE = 10;
/** client-go's and kubectl's chunk size. */
const DIRECT_CHUNK = 500;

export const nodePageMetrics = {
  p99: { metric: 'node page p99 @c1', target: '≤ 5 ms', reference: '~20 ms' },
  throughput: { metric: 'node page @c16', target: '≥ 2,000 req/s', reference: '~230 req/s' },
  direct: { metric: 'direct path (list+sort) @c16', target: '(baseline)', reference: '~6 req/s' },
  cpu: { metric: 'kapi CPU per node page @c16', target: '(info)' },
};

interface NodePage {
  items: { metadata: { name: string; annotations?: Record<string, string> } }[];
  totalItems: number;
}

export function nodePageOperation(ctx: BenchContext): Operation {
  return { kind: 'request', url: `${ctx.kapi.url}${NODE_PAGE_PATH}`, headers: bearer(ctx.kapiToken), expect: 200 };
}

/**
 * SPEC §11 row 1: the node page from kapi's cache, against the direct path a user has without kapi (list the nodes
 * from kube-apiserver, sort, take 10). Both are checked to give the same page before anything is timed.
 */
export const nodePageScenario: Scenario = {
  title: 'Node page: GET /kapis/resources.kapi.io/v1alpha3/nodes?limit=10&sortBy=name&labelSelector=…worker',
  planned: Object.values(nodePageMetrics),
  async run(ctx) {
    const page = await sendJson<NodePage>(`${ctx.kapi.url}${NODE_PAGE_PATH}`, { headers: bearer(ctx.kapiToken) });
    const direct: DirectNodePageOperation = {
      kind: 'direct-node-page',
      server: ctx.sandboxUrl,
      headers: ctx.env.adminHeaders,
      labelSelector: WORKER_LABEL,
      pageSize: DIRECT_CHUNK,
      take: PAGE_SIZE,
      descending: true,
    };
    const kapiNames = page.items.map((item) => item.metadata.name);
    const directNames = await directNodePage(direct);
    if (kapiNames.join() !== directNames.join()) {
      throw new Error(
        `kapi's page (${kapiNames.join(', ')}) differs from the direct path's (${directNames.join(', ')})`,
      );
    }
    const annotated = page.items.every(
      (item) => item.metadata.annotations?.['node.kapi.io/cpu-requests'] !== undefined,
    );
    detail(`page checked: ${page.items.length} items of totalItems=${page.totalItems}, same names as the direct path`);
    detail(`first: ${kapiNames.slice(0, 3).join(', ')} …; allocation annotations ${annotated ? 'present' : 'MISSING'}`);

    const kapiOperation = nodePageOperation(ctx);
    const c1 = await load(kapiOperation, 1);
    const c1s = summarize(c1.latenciesNs);
    detail(`kapi   c1 : ${formatSummary(c1s)}, ${rate(throughput(c1))}${cpuNote(c1)}${errorNote(c1)}`);
    const c16 = await load(kapiOperation, 16);
    const c16s = summarize(c16.latenciesNs);
    detail(`kapi   c16: ${rate(throughput(c16))}, ${formatSummary(c16s)}${cpuNote(c16)}${errorNote(c16)}`);

    // The direct path takes hundreds of ms per operation: one warm-up operation, then the same window.
    const d1 = await load(direct, 1, 500);
    const d1s = summarize(d1.latenciesNs);
    detail(`direct c1 : ${formatSummary(d1s)}, ${rate(throughput(d1))}${cpuNote(d1, 'page')}${errorNote(d1)}`);
    const d16 = await load(direct, 16, 1_000);
    const d16s = summarize(d16.latenciesNs);
    detail(`direct c16: ${rate(throughput(d16))}, ${formatSummary(d16s)}${cpuNote(d16, 'page')}${errorNote(d16)}`);
    const speedup = throughput(c16) / throughput(d16);
    detail(
      `kapi vs direct: p50 ${(d1s.p50 / c1s.p50).toFixed(0)}× lower at c1, ${speedup.toFixed(0)}× the throughput at c16`,
    );
    detail(
      `direct path = GET /api/v1/nodes?labelSelector=…&limit=${DIRECT_CHUNK} (+continue) from the backend, parse, sort by name, take ${PAGE_SIZE};`,
    );
    if (ctx.env.sandbox) {
      detail(
        'the sandbox answers lists faster than a real kube-apiserver (no etcd, no conversion): a real direct path is slower.',
      );
    }

    const errors = c1.errors + c16.errors;
    const rows: Row[] = [
      {
        ...nodePageMetrics.p99,
        value: `${ms(c1s.p99)} (p50 ${ms(c1s.p50)}; direct p99 ${ms(d1s.p99)})`,
        verdict: verdict(c1s.p99 <= 5 && errors === 0),
      },
      {
        ...nodePageMetrics.throughput,
        value: `${rate(throughput(c16))} (${speedup.toFixed(0)}× direct)${c16.errors ? `, ${c16.errors} errors` : ''}`,
        verdict: verdict(throughput(c16) >= 2_000 && errors === 0),
      },
      { ...nodePageMetrics.direct, value: `${rate(throughput(d16))} (c1 p50 ${ms(d1s.p50)})`, verdict: 'info' },
      {
        ...nodePageMetrics.cpu,
        value: `${Math.round(cpuPerOperation(c16).kapi ?? Number.NaN)} µs (c1: ${Math.round(cpuPerOperation(c1).kapi ?? Number.NaN)} µs)`,
        verdict: 'info',
      },
    ];
    return {
      rows,
      figures: {
        totalItems: page.totalItems,
        kapi: {
          c1: { ...c1s, rps: throughput(c1), errors: c1.errors },
          c16: { ...c16s, rps: throughput(c16), errors: c16.errors },
          cpuUsPerRequest: { c1: cpuPerOperation(c1), c16: cpuPerOperation(c16) },
        },
        direct: {
          chunk: DIRECT_CHUNK,
          c1: { ...d1s, rps: throughput(d1), errors: d1.errors },
          c16: { ...d16s, rps: throughput(d16), errors: d16.errors },
        },
        throughputRatio: speedup,
      },
    };
  },
};
