import type { BenchContext, Scenario, ScenarioResult } from '../context.js';
import { bearer, sendJson } from '../http.js';
import type { Operation } from '../jobs.js';
import { accountCpuOf, accountedCpu, cpuNote, cpuPerOperation, errorNote, load, throughput } from '../measure.js';
import { startBareProxy } from '../bare-proxy.js';
import type { BareProxyOptions } from '../bare-proxy-server.js';
import { backendTrust } from '../tls.js';
import { forwardingOnKubeRows, kapiOverBareProxyRow } from '../forwarding-targets.js';
import { passThroughRows } from './pass-through.js';
import { RUNS, medianOf, pairedRuns, type AlongsideRuns } from '../paired-runs.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, ms, rate, signedMs, summarize } from '../stats.js';

export const forwardingMetrics = {
  added: { metric: 'forwarding added p50 @c1', target: '≤ 0.3 ms', reference: '+0.35 ms' },
  ratio: { metric: 'forwarding throughput @c16', target: '≥ 0.8× direct', reference: '0.6–0.7×' },
  cpu: { metric: 'kapi CPU per forwarded GET (c1, c16)', target: '≤ 150 µs at both', reference: '≈ 450 µs' },
  backendCpu: { metric: 'backend CPU per GET @c16', target: '(info: through kapi vs direct)' },
};

/**
 * kube-apiserver's and etcd's CPU per `GET /api/v1/nodes/<name>` served directly, measured on these 2-core machines
 * against a real v1.32 (issue 10: 490–525 µs and 200–220 µs): for the ceiling a kapi cost allows against one.
 */
const KUBE_APISERVER_GET_US = 715;

/** Forwarding through kapi before anything is measured. */
const WARMUP_FORWARDING_MS = 3_000;

const us = (value: number | undefined) =>
  value !== undefined && Number.isFinite(value) ? `${Math.round(value)} µs` : 'n/a';

/**
 * SPEC §11 forwarding row: `GET /api/v1/nodes/<name>` through kapi (the user's token; kapi impersonates them with
 * its service-account credentials) against the same request sent straight to the sandbox with a service-account
 * token.
 */
export const forwardingScenario: Scenario = {
  title: 'Forwarding: GET /api/v1/nodes/<name> through kapi vs direct',
  planned: Object.values(forwardingMetrics),
  async run(ctx) {
    const path = `/api/v1/nodes/${ctx.nodeName}`;
    const kapiRequest = { url: `${ctx.kapi.url}${path}`, headers: bearer(ctx.kapiToken) };
    // Over the backend's TLS, as kapi reaches it (the thread's backend trust).
    const directRequest = { url: `${ctx.sandboxUrl}${path}`, headers: ctx.env.directHeaders };
    // The same object both ways, before anything is timed.
    const [a, b] = await Promise.all(
      [kapiRequest, directRequest].map(({ url, headers }) => sendJson<{ metadata: { uid: string } }>(url, { headers })),
    );
    if (a?.metadata.uid !== b?.metadata.uid) throw new Error('kapi and the backend answered with different nodes');
    const through: Operation = { kind: 'request', ...kapiRequest, expect: 200 };
    const direct: Operation = { kind: 'request', ...directRequest, expect: 200 };
    // The bare proxy's runs come right after kapi's in every round (pairedRuns), so their ratio is a neighbour's.
    const bareProxy = await startBareProxyFor(ctx, path, directRequest.headers);
    const coreHttps = await startCoreHttpsProxyFor(ctx, path, directRequest.headers);
    const insideKapi = await startBareProxyInsideKapiFor(ctx, path, directRequest.headers);
    try {
      // kapi serves for days: its first seconds of forwarding (V8 compiling the path) are not what it costs.
      const warmup = await load(through, 16, 0, WARMUP_FORWARDING_MS);
      detail(
        `warm-up: ${warmup.latenciesNs.length.toLocaleString('en-US')} GETs through kapi in ${WARMUP_FORWARDING_MS / 1000} s at c16, not measured`,
      );
      for (const proxy of [bareProxy, coreHttps, insideKapi])
        if (proxy) await load(proxy.operation, 16, 0, WARMUP_FORWARDING_MS);
      return await measureForwarding(ctx, { path, direct, through, directRequest, bareProxy, coreHttps, insideKapi });
    } finally {
      await insideKapi?.stop();
      await coreHttps?.stop();
      await bareProxy?.stop();
    }
  },
};

/** The forwarding rows, kapi warmed up (and the bare proxy, when it started). */
async function measureForwarding(
  ctx: BenchContext,
  input: {
    path: string;
    direct: Operation;
    through: Operation;
    directRequest: { url: string; headers: Record<string, string> };
    bareProxy: BareProxy | undefined;
    coreHttps: BareProxy | undefined;
    insideKapi: BareProxy | undefined;
  },
): Promise<ScenarioResult> {
  const { path, direct, through, directRequest, bareProxy, coreHttps, insideKapi } = input;
  {
    // on a real kube-apiserver, also direct GETs paced as kapi paces them (see pairedRuns)
    const onRealKube = ctx.env.target === 'cluster';
    const pairing = {
      role: 'kapi',
      paced: onRealKube,
      alongside: [bareProxy, insideKapi, coreHttps].filter((proxy) => proxy !== undefined),
    };
    // the alongside runs in that order
    const split = (runs: AlongsideRuns[]) => {
      const [bare, inside, core] = [bareProxy, insideKapi, coreHttps].map((proxy) =>
        proxy ? runs.shift() : undefined,
      );
      return { bare, inside, core };
    };
    const {
      direct: d1,
      through: k1,
      paced: p1,
      runs: runs1,
      alongside: beside1,
    } = await pairedRuns(direct, through, 1, pairing);
    const { bare: bare1, core: core1, inside: inside1 } = split([...beside1]);
    const d1s = summarize(d1.latenciesNs);
    const k1s = summarize(k1.latenciesNs);
    detail(`direct c1 : ${formatSummary(d1s)}${cpuNote(d1)}${errorNote(d1)}`);
    detail(`kapi   c1 : ${formatSummary(k1s)}${cpuNote(k1)}${errorNote(k1)}`);
    const added = k1s.p50 - d1s.p50;
    detail(`added by kapi: p50 ${signedMs(added)}, p99 ${signedMs(k1s.p99 - d1s.p99)}`);

    const {
      direct: d16,
      through: k16,
      paced: p16,
      runs: runs16,
      alongside: beside16,
    } = await pairedRuns(direct, through, 16, pairing);
    const { bare: bare16, core: core16, inside: inside16 } = split([...beside16]);
    for (const [c, paced] of [
      [1, p1],
      [16, p16],
    ] as const) {
      if (paced)
        detail(
          `direct c${c} paced as through kapi: ${rate(throughput(paced))}, ${formatSummary(summarize(paced.latenciesNs))}${cpuNote(paced)}`,
        );
    }
    const ratio = throughput(k16) / throughput(d16);
    detail(
      `direct c16: ${rate(throughput(d16))}, ${formatSummary(summarize(d16.latenciesNs))}${cpuNote(d16)}${errorNote(d16)}`,
    );
    detail(
      `kapi   c16: ${rate(throughput(k16))}, ${formatSummary(summarize(k16.latenciesNs))}${cpuNote(k16)}${errorNote(k16)}`,
    );
    const cpu1 = cpuPerOperation(k1);
    const cpu16 = cpuPerOperation(k16);
    // Against the sandbox's fast answers, 16 callers let kapi serve several requests per event-loop turn (one wake-up,
    // one read, several writes); a real kube-apiserver answers in about a millisecond, so kapi mostly serves its
    // requests one by one, as at c1. The target holds for both.
    detail(`kapi CPU per forwarded GET: ${us(cpu1.kapi)} one at a time (c1), ${us(cpu16.kapi)} at c16`);
    const list = (runs: number[]) => runs.map((value) => Math.round(value)).join(', ');
    detail(`(median of ${RUNS} runs each; kapi µs/req by run: c1 ${list(runs1)}; c16 ${list(runs16)})`);
    const direct16 = cpuPerOperation(d16);
    const backend = Object.keys(direct16).find((role) => role !== 'kapi');
    if (ctx.env.sandbox) {
      detail(
        `throughput ratio ${ratio.toFixed(2)}×: kapi, the sandbox and the load share 2 cores, and the direct side is`,
      );
      detail('the sandbox, far faster than a real kube-apiserver: against one, the same kapi cost is a smaller share.');
    }
    if (ctx.env.target === 'sandbox' && cpu16.kapi !== undefined) {
      // When CPU is the bound, throughput goes as 1 ÷ the CPU a request costs on the whole path.
      const ceiling = KUBE_APISERVER_GET_US / (KUBE_APISERVER_GET_US + cpu16.kapi);
      detail(
        `against a kube-apiserver + etcd spending ${KUBE_APISERVER_GET_US} µs a GET (issue 10's measurement), kapi's ` +
          `${us(cpu16.kapi)} allows at most ${ceiling.toFixed(2)}×: arithmetic, not a measurement (BENCH_KUBECONFIG measures it)`,
      );
    }

    const bare = bare1 && bare16 && bareProxyCost(bare1, bare16, d1s.p50);
    const insideRows = inside1 && inside16 ? insideKapiRows(inside1, inside16, bare1, bare16) : [];
    const coreHttpsRows = core1 && core16 ? coreHttpsProxyRows(core1, core16, bare !== undefined) : [];
    const errors = k1.errors + k16.errors;
    // kube-apiserver trusting a kapi as its OpenID issuer (the bench's kit): the same GET with the caller's own token
    // BENCH_PASS_THROUGH=0 leaves the pass-through rows out (a quicker look at the impersonating rows alone).
    const passThrough =
      ctx.env.issuer && process.env.BENCH_PASS_THROUGH !== '0'
        ? await passThroughRows(ctx, { path, direct, bare }).catch((error: unknown): Row[] => {
            const why = error instanceof Error ? error.message : String(error);
            detail(`token pass-through: not measured (${why})`);
            return [
              {
                metric: 'forwarding, token pass-through: kube-apiserver CPU per GET through kapi vs direct',
                value: `not measured: ${why}`,
                target: '≤ +5 % at both',
                verdict: 'not measured',
              },
            ];
          })
        : [];
    const onKube: { rows: Row[]; figures?: Record<string, unknown> } = { rows: [] };
    const KAS = 'kube-apiserver';
    if (cpu16[KAS] !== undefined) {
      const direct1 = cpuPerOperation(d1);
      onKube.rows = forwardingOnKubeRows({
        c1: {
          kapi: cpu1.kapi ?? NaN,
          kubeApiserverDirect: direct1[KAS] ?? NaN,
          kubeApiserverThroughKapi: cpu1[KAS]!,
          ...(p1 && { kubeApiserverPaced: cpuPerOperation(p1)[KAS] ?? NaN }),
        },
        c16: {
          kapi: cpu16.kapi ?? NaN,
          kubeApiserverDirect: direct16[KAS] ?? NaN,
          kubeApiserverThroughKapi: cpu16[KAS],
          ...(p16 && { kubeApiserverPaced: cpuPerOperation(p16)[KAS] ?? NaN }),
        },
        addedP50Ms: added,
        errors,
      });
      for (const row of onKube.rows) detail(`${row.metric}: ${row.value} (target ${row.target}: ${row.verdict})`);
      // What impersonation alone costs kube-apiserver: the GET as kapi's identity with the Impersonate-* headers kapi
      // sends for the bench user (user, uid, its two groups), straight from the bench.
      const impersonated: Operation = {
        kind: 'request',
        url: directRequest.url,
        headers: ctx.env.impersonatingHeaders ?? {
          ...directRequest.headers,
          'Impersonate-User': ctx.env.kapiUser.name,
        },
        expect: 200,
      };
      const i16 = await load(impersonated, 16);
      const impersonatedCpu = cpuPerOperation(i16);
      detail(
        `direct c16 impersonating the bench user (what impersonation alone costs kube-apiserver): ${formatSummary(summarize(i16.latenciesNs))}${cpuNote(i16)}${errorNote(i16)}`,
      );
      onKube.rows.push({
        metric: 'forwarding: kube-apiserver CPU per GET @c16, direct vs impersonating vs through kapi',
        value: `${us(direct16[KAS])} direct, ${us(impersonatedCpu[KAS])} impersonating, ${us(cpu16[KAS])} through kapi`,
        target: '(info)',
        verdict: 'info',
      });
      if (direct16.etcd !== undefined) {
        onKube.rows.push({
          metric: 'forwarding: etcd CPU per GET @c16, direct vs through kapi',
          value: `${us(direct16.etcd)} direct, ${us(cpu16.etcd)} through kapi`,
          target: '(info)',
          verdict: 'info',
        });
      }
      onKube.figures = { impersonatedC16: { cpuUsPerRequest: impersonatedCpu, errors: i16.errors } };
    }
    return {
      rows: [
        {
          ...forwardingMetrics.added,
          value: `${signedMs(added)} (${ms(k1s.p50)} vs ${ms(d1s.p50)} direct)`,
          verdict: verdict(added <= 0.3 && errors === 0),
        },
        {
          ...forwardingMetrics.ratio,
          value: `${ratio.toFixed(2)}× (${rate(throughput(k16))} vs ${rate(throughput(d16))})`,
          verdict: verdict(ratio >= 0.8 && errors === 0),
        },
        {
          ...forwardingMetrics.cpu,
          value: `${us(cpu1.kapi)} at c1, ${us(cpu16.kapi)} at c16`,
          ...(cpu16[KAS] !== undefined && { target: '(info: judged as shares of kube-apiserver’s below)' }),
          verdict:
            cpu16[KAS] !== undefined
              ? 'info'
              : verdict(Math.max(cpu1.kapi ?? Infinity, cpu16.kapi ?? Infinity) <= 150 && errors === 0),
        },
        {
          ...forwardingMetrics.backendCpu,
          value: backend
            ? `${backend}: ${us(cpu16[backend])} through kapi, ${us(direct16[backend])} direct`
            : 'n/a (the backend runs elsewhere)',
          verdict: 'info',
        },
        ...bareProxyRows(
          bare,
          { c1: cpu1.kapi, c16: cpu16.kapi },
          { c1: cpuPerOperation(d1)[KAS], c16: direct16[KAS] },
          errors,
        ),
        ...coreHttpsRows,
        ...insideRows,
        ...onKube.rows,
        ...passThrough,
      ],
      figures: {
        ...onKube.figures,
        bareProxy: bare && {
          cpuUsPerRequest: { c1: bare.c1, c16: bare.c16 },
          kapiOverBare: bare.ratios,
          errors: bare.errors,
        },
        coreHttpsProxy: core1 &&
          core16 && {
            cpuUsPerRequest: { c1: core1.cost, c16: core16.cost },
            runsUsPerRequest: { c1: core1.runs, c16: core16.runs },
            kapiOverIt: { c1: core1.ratio, c16: core16.ratio },
            errors: core1.errors + core16.errors,
          },
        path,
        direct: { c1: d1s, c16: { rps: throughput(d16), errors: d16.errors } },
        kapi: { c1: { ...k1s, errors: k1.errors }, c16: { rps: throughput(k16), errors: k16.errors } },
        cpuUsPerRequest: {
          direct: { c1: cpuPerOperation(d1), c16: direct16 },
          kapi: { c1: cpu1, c16: cpu16, runsC1: runs1, runsC16: runs16 },
        },
        addedP50Ms: added,
        throughputRatio: ratio,
      },
    };
  }
}

export const BARE_PROXY = 'bare proxy';
const BARE_PROXY_INSIDE_KAPI = 'bare proxy inside kapi';
const CORE_HTTPS_PROXY = 'core https proxy';

/** A bare Node proxy's CPU per forwarded GET (median of `RUNS` runs), and kapi's ÷ its own (median of the rounds). */
interface BareProxyCost {
  c1: number;
  c16: number;
  /** Its p50 at c1 over the direct GET's (ms): what any Node proxy adds to a GET's latency here. */
  addedP50Ms: number;
  ratios: { c1: number; c16: number };
  errors: number;
}

/** The bare proxy, for the forwarding rounds: what to load it with, and how to stop it. */
export interface BareProxy {
  /** The GET through it. */
  operation: Operation;
  /** Whose CPU it is in the figures. */
  role: string;
  /** Its address, for other requests through it (a watch). */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * bare-proxy-main.ts for the same GET (kapi's client library, pool settings and identity headers, nothing else):
 * what this machine charges any Node proxy on the path, so that kapi's own share of its cost shows in the same run.
 * Undefined, with a detail line, when it does not start (kapi's own rows stand without it).
 */
export async function startBareProxyFor(
  ctx: BenchContext,
  path: string,
  directHeaders: Record<string, string>,
): Promise<BareProxy | undefined> {
  return bareProxyFor(ctx, path, directHeaders, BARE_PROXY);
}

/**
 * The same GET through a plain Node proxy (core `https` with a keep-alive agent, the answer piped): the yardstick
 * issue 27 measured kapi against from outside, beside the bench's own bare proxy, which uses kapi's client library and
 * holds the answer as kapi does. BENCH_CORE_HTTPS_PROXY=0 leaves it out.
 */
async function startCoreHttpsProxyFor(
  ctx: BenchContext,
  path: string,
  directHeaders: Record<string, string>,
): Promise<BareProxy | undefined> {
  if (process.env.BENCH_CORE_HTTPS_PROXY === '0') return undefined;
  return bareProxyFor(ctx, path, directHeaders, CORE_HTTPS_PROXY, undefined, 'https');
}

/**
 * BENCH_BARE_PROXY_IN_KAPI=1: the same bare proxy served from inside kapi's own process (bench/bare-proxy-in-kapi.ts),
 * its CPU being kapi's process's: kapi ÷ it is what kapi's per-request work costs, and it ÷ the bare proxy alone what
 * being kapi's process costs the same requests (its heap of caches, its collections, its other code).
 */
async function startBareProxyInsideKapiFor(
  ctx: BenchContext,
  path: string,
  directHeaders: Record<string, string>,
): Promise<BareProxy | undefined> {
  const directory = ctx.kapi.bareProxyDirectory;
  if (!directory) return undefined;
  return bareProxyFor(ctx, path, directHeaders, BARE_PROXY_INSIDE_KAPI, { directory, pid: ctx.kapi.pid });
}

async function bareProxyFor(
  ctx: BenchContext,
  path: string,
  directHeaders: Record<string, string>,
  role: string,
  insideKapi?: { directory: string; pid: number },
  client?: BareProxyOptions['client'],
): Promise<BareProxy | undefined> {
  const trust = backendTrust();
  const proxy = await startBareProxy(
    {
      backendUrl: ctx.sandboxUrl,
      ca: trust.ca,
      servername: trust.servername,
      headers: ctx.env.impersonatingHeaders ?? { ...directHeaders, 'Impersonate-User': ctx.env.kapiUser.name },
      ...(client && { client }),
    },
    insideKapi,
  ).catch((error: unknown) => {
    detail(`${role}: not measured (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  });
  if (!proxy) return undefined;
  const before = accountedCpu();
  accountCpuOf({ ...before, [role]: proxy.pid });
  return {
    operation: { kind: 'request', url: `${proxy.url}${path}`, headers: bearer(ctx.kapiToken), expect: 200 },
    role,
    url: proxy.url,
    pid: proxy.pid,
    stop: async () => {
      accountCpuOf(before);
      await proxy.stop();
    },
  };
}

/** "233, 196, 204" or, with `digits`, "1.41, 1.56": figures by round for a detail line. */
function byRoundList(values: number[], digits = 0): string {
  return values.map((value) => value.toFixed(digits)).join(', ');
}

/** The bare proxy's figures from the rounds at c1 and c16, with a detail line each. */
function bareProxyCost(c1: AlongsideRuns, c16: AlongsideRuns, directP50Ms: number): BareProxyCost {
  const list = byRoundList;
  for (const [concurrency, runs] of [
    [1, c1],
    [16, c16],
  ] as const) {
    detail(
      `bare proxy c${concurrency}: ${formatSummary(summarize(runs.median.latenciesNs))}${cpuNote(runs.median)}${errorNote(runs.median)}`,
    );
    detail(
      `  (right after kapi in each round; bare proxy µs/req by round: ${list(runs.runs)}; kapi ÷ bare by round: ${list(runs.ratios, 2)})`,
    );
  }
  const addedP50Ms = summarize(c1.median.latenciesNs).p50 - directP50Ms;
  return {
    c1: c1.cost,
    c16: c16.cost,
    addedP50Ms,
    ratios: { c1: c1.ratio, c16: c16.ratio },
    errors: c1.errors + c16.errors,
  };
}

function bareProxyRows(
  bare: BareProxyCost | undefined,
  kapi: { c1?: number; c16?: number },
  kubeApiserver: { c1?: number; c16?: number },
  errors: number,
): Row[] {
  const times = (x: number | undefined, y: number | undefined) =>
    x !== undefined && y !== undefined && y > 0 ? `${(x / y).toFixed(2)}×` : 'n/a';
  if (!bare) return [];
  const rows: Row[] = [
    {
      metric: 'forwarding: a bare Node proxy’s CPU per GET (c1, c16)',
      value: `${us(bare.c1)} at c1, ${us(bare.c16)} at c16${bare.errors ? `; ${bare.errors} errors` : ''}`,
      target: '(info: a Node proxy with nothing of kapi’s)',
      verdict: 'info',
    },
    // SPEC §11: what kapi adds over the least any Node proxy pays, judged in the same run
    kapiOverBareProxyRow(bare.ratios, errors + bare.errors),
    {
      metric: 'forwarding: a bare Node proxy’s added p50 @c1',
      value: `${signedMs(bare.addedP50Ms)}`,
      target: '(info: the floor of the added p50 row, same run)',
      verdict: 'info',
    },
  ];
  if (kubeApiserver.c16 !== undefined) {
    rows.push({
      metric: 'forwarding: bare proxy CPU ÷ kube-apiserver CPU per direct GET',
      value: `${times(bare.c1, kubeApiserver.c1)} at c1, ${times(bare.c16, kubeApiserver.c16)} at c16`,
      target: '(info)',
      verdict: 'info',
    });
  }
  return rows;
}

/**
 * The bare proxy inside kapi's process, run by run beside kapi and the bare proxy alone: a detail line each, and a row
 * splitting kapi ÷ the bare proxy into kapi's per-request work (kapi ÷ the one inside) and its process (the one inside
 * ÷ the one alone).
 */
function insideKapiRows(
  c1: AlongsideRuns,
  c16: AlongsideRuns,
  bare1: AlongsideRuns | undefined,
  bare16: AlongsideRuns | undefined,
): Row[] {
  const list = byRoundList;
  const byRound = (inside: AlongsideRuns, alone: AlongsideRuns | undefined) =>
    alone ? inside.runs.map((cost, round) => cost / alone.runs[round]!) : [];
  const split: string[] = [];
  for (const [concurrency, inside, alone] of [
    [1, c1, bare1],
    [16, c16, bare16],
  ] as const) {
    const overAlone = byRound(inside, alone);
    detail(
      `bare proxy inside kapi c${concurrency}: ${formatSummary(summarize(inside.median.latenciesNs))}${cpuNote(inside.median)}${errorNote(inside.median)}`,
    );
    detail(
      `  (${alone ? 'right after the bare proxy' : 'right after kapi'} in each round; µs/req by round: ${list(inside.runs)}; kapi ÷ it by round: ${list(inside.ratios, 2)}` +
        (alone ? `; it ÷ the bare proxy alone by round: ${list(overAlone, 2)})` : ')'),
    );
    const median = overAlone.length ? medianOf(overAlone) : NaN;
    split.push(
      `c${concurrency}: kapi ÷ it ${inside.ratio.toFixed(2)}×` +
        (Number.isNaN(median) ? '' : `, it ÷ the bare proxy alone ${median.toFixed(2)}×`),
    );
  }
  return [
    {
      metric: 'forwarding: the bare proxy inside kapi’s process (kapi’s per-request work; kapi’s process)',
      value: split.join('; ') + ` (${us(c1.cost)} at c1, ${us(c16.cost)} at c16)`,
      target: '(info: medians of the rounds)',
      verdict: 'info',
    },
  ];
}

/** kapi against the core-https proxy, round by round: a detail line each, and an info row. */
function coreHttpsProxyRows(c1: AlongsideRuns, c16: AlongsideRuns, judged: boolean): Row[] {
  for (const [concurrency, runs] of [
    [1, c1],
    [16, c16],
  ] as const) {
    detail(
      `core https proxy c${concurrency}: ${formatSummary(summarize(runs.median.latenciesNs))}${cpuNote(runs.median)}${errorNote(runs.median)}`,
    );
    detail(
      `  (loaded last in each round; µs/req by round: ${byRoundList(runs.runs)}; kapi ÷ it by round: ${byRoundList(runs.ratios, 2)})`,
    );
  }
  return [
    {
      metric: 'forwarding: kapi CPU ÷ a core-https Node proxy’s (issue 27’s outside yardstick)',
      value:
        `${c1.ratio.toFixed(2)}× at c1, ${c16.ratio.toFixed(2)}× at c16 (it: ${us(c1.cost)} at c1, ${us(c16.cost)} at c16` +
        `${c1.errors + c16.errors ? `; ${c1.errors + c16.errors} errors` : ''})`,
      target: judged ? '(info: judged against the bench’s bare proxy)' : '(info)',
      verdict: 'info',
    },
  ];
}
