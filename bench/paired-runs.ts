import type { LoadResult, Operation } from './jobs.js';
import { cpuNote, cpuPerOperation, errorNote, intervalOf, load, throughput } from './measure.js';
import { detail } from './report.js';
import { formatSummary, ms, rate, summarize } from './stats.js';

/**
 * Each comparison runs this many times (direct, then through kapi, alternating) and the pair with kapi's median CPU
 * per request is reported: on a shared machine one run can be disturbed by others' load.
 */
export const RUNS = Math.max(1, Number(process.env.BENCH_FORWARDING_RUNS ?? 3));

export interface PairedRuns {
  direct: LoadResult;
  through: LoadResult;
  /** The direct GETs again at the rate they went through kapi (when asked for). */
  paced?: LoadResult;
  /** `role`'s CPU per request through kapi in the run reported (the median one). */
  cost: number;
  /** That figure in every run, in order. */
  runs: number[];
  /** Failed requests through kapi, over every run. */
  throughErrors: number;
  /** With `alongside`: each one's figures, in its order, its runs after kapi's in the same rounds (see `pairedRuns`). */
  alongside: AlongsideRuns[];
}

/** Another proxy's runs, each after kapi's in its round: its median CPU per request and kapi's ÷ its own, run by run. */
export interface AlongsideRuns {
  /** The run with the median CPU per request of its role. */
  median: LoadResult;
  cost: number;
  /** Its CPU per request in every run, in order. */
  runs: number[];
  /** kapi's CPU per request ÷ its own in the same round, every round in order, and their median. */
  ratios: number[];
  ratio: number;
  errors: number;
}

/** The middle value (the lower of the two middle ones for an even count): always one of `values`. */
export const medianOf = (values: readonly number[]) =>
  [...values].sort((x, y) => x - y)[Math.floor((values.length - 1) / 2)]!;

/**
 * Direct then through kapi, `RUNS` times; the run whose CPU per request of `role` (the kapi forwarding) is the
 * median. With `paced`, each run also sends the direct GETs again at the rate they went through kapi: kube-apiserver
 * spends more per request when requests come further apart (+9–15 % at c16 for 1–3 ms between them, same client and
 * headers), whoever sends them, and that is not kapi's requests' own cost.
 */
export async function pairedRuns(
  direct: Operation,
  through: Operation,
  concurrency: number,
  options: {
    role: string;
    paced: boolean;
    /**
     * Other proxies (the bare ones) loaded after kapi in every round, in this order, so that kapi's CPU ÷ theirs is
     * taken from nearby windows (the first one's from the neighbouring one): this machine's speed drifts by tens of
     * per cent within a run.
     */
    alongside?: readonly { operation: Operation; role: string }[];
  },
): Promise<PairedRuns> {
  const others = options.alongside ?? [];
  const runs: (Omit<PairedRuns, 'runs' | 'throughErrors' | 'alongside'> & {
    beside: LoadResult[];
    besideCosts: number[];
  })[] = [];
  for (let i = 0; i < RUNS; i++) {
    const d = await load(direct, concurrency);
    const t = await load(through, concurrency);
    const beside: LoadResult[] = [];
    for (const other of others) beside.push(await load(other.operation, concurrency));
    const p = options.paced
      ? await load(direct, concurrency, undefined, undefined, intervalOf(t, concurrency))
      : undefined;
    runs.push({
      direct: d,
      through: t,
      ...(p && { paced: p }),
      cost: cpuPerOperation(t)[options.role] ?? Number.NaN,
      beside,
      besideCosts: beside.map((result, n) => cpuPerOperation(result)[others[n]!.role] ?? Number.NaN),
    });
  }
  const {
    beside: _beside,
    besideCosts: _besideCosts,
    ...median
  } = [...runs].sort((x, y) => x.cost - y.cost)[Math.floor((runs.length - 1) / 2)]!;
  const alongside = others.map((_, n): AlongsideRuns => {
    const costs = runs.map((run) => run.besideCosts[n]!);
    const cost = medianOf(costs);
    const ratios = runs.map((run) => run.cost / run.besideCosts[n]!);
    return {
      median: runs.find((run) => run.besideCosts[n] === cost)!.beside[n]!,
      cost,
      runs: costs,
      ratios,
      ratio: medianOf(ratios),
      errors: runs.reduce((sum, run) => sum + run.beside[n]!.errors, 0),
    };
  });
  return {
    ...median,
    runs: runs.map((run) => run.cost),
    throughErrors: runs.reduce((sum, run) => sum + run.through.errors, 0),
    alongside,
  };
}

/** A page's load at c1 then c16, each printed as a detail line (`unit`: what one operation is). */
export async function pageLoads(operation: Operation, unit = 'page') {
  const c1 = await load(operation, 1);
  const c1s = summarize(c1.latenciesNs);
  detail(`kapi c1 : ${formatSummary(c1s)}, ${rate(throughput(c1))}${cpuNote(c1, unit)}${errorNote(c1)}`);
  const c16 = await load(operation, 16);
  const c16s = summarize(c16.latenciesNs);
  detail(`kapi c16: ${rate(throughput(c16))}, ${formatSummary(c16s)}${cpuNote(c16, unit)}${errorNote(c16)}`);
  return { c1, c1s, c16, c16s };
}

type PageLoads = Awaited<ReturnType<typeof pageLoads>>;

/** A page load's summary cells: p99 at c1 (with p50), the c16 rate (with its errors), kapi's CPU per operation. */
export function loadCells({ c1, c1s, c16 }: PageLoads): { p99: string; throughput: string; cpu: string } {
  const cpu = (result: LoadResult) => Math.round(cpuPerOperation(result).kapi ?? Number.NaN);
  return {
    p99: `${ms(c1s.p99)} (p50 ${ms(c1s.p50)})`,
    throughput: `${rate(throughput(c16))}${c16.errors ? `, ${c16.errors} errors` : ''}`,
    cpu: `kapi ${cpu(c16)} µs (c1 ${cpu(c1)} µs)`,
  };
}

/** A page load's figures for the report file: each concurrency's summary, rate, errors and CPU (under `cpuKey`). */
export function loadFigures({ c1, c1s, c16, c16s }: PageLoads, cpuKey: string) {
  return {
    c1: { ...c1s, rps: throughput(c1), errors: c1.errors, [cpuKey]: cpuPerOperation(c1) },
    c16: { ...c16s, rps: throughput(c16), errors: c16.errors, [cpuKey]: cpuPerOperation(c16) },
  };
}

/** An RSS increase as the rows print it. */
export function rssIncreaseCell(beforeMiB: number, afterMiB: number): string {
  return `${(afterMiB - beforeMiB).toFixed(1)} MiB (${beforeMiB.toFixed(0)} → ${afterMiB.toFixed(0)} MiB, after a full GC)`;
}
