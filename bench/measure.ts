import { MEASURE_MS, WARMUP_MS } from './context.js';
import { inWorker } from './in-worker.js';
import type { LoadJob, LoadResult, Operation } from './jobs.js';
import { formatCpu, perOperationUs, type CpuMs, type CpuPids } from './process-cpu.js';

/** The processes every load run accounts CPU for (kapi, and the backend when it runs here); set once by run.ts. */
let accounted: CpuPids = {};

export function accountCpuOf(pids: CpuPids): void {
  accounted = { ...pids };
}

/** The processes accounted now (a scenario with processes of its own puts them back when done). */
export function accountedCpu(): CpuPids {
  return { ...accounted };
}

/** A closed-loop load run on a worker thread, with the CPU each accounted process spent in its measured window. */
export function load(
  operation: Operation,
  concurrency: number,
  warmupMs = WARMUP_MS,
  durationMs = MEASURE_MS,
  intervalMs = 0,
): Promise<LoadResult> {
  return inWorker<LoadJob>({
    kind: 'load',
    operation,
    concurrency,
    warmupMs,
    durationMs,
    cpuPids: accounted,
    ...(intervalMs > 0 && { intervalMs }),
  });
}

/** Operations per second over the measured window. */
export function throughput(result: LoadResult): number {
  return result.latenciesNs.length / (result.elapsedMs / 1000);
}

/** Each of `concurrency` callers' interval between request starts (ms) for the rate `result` had. */
export function intervalOf(result: LoadResult, concurrency: number): number {
  return (concurrency * 1000) / throughput(result);
}

/** CPU microseconds per operation of each accounted process. */
export function cpuPerOperation(result: LoadResult): CpuMs {
  return perOperationUs(result.cpuMs, result.latenciesNs.length);
}

/** "; CPU/req: kapi 412 µs, backend 180 µs" for a detail line. */
export function cpuNote(result: LoadResult, unit = 'req'): string {
  return `; ${formatCpu(cpuPerOperation(result), unit)}`;
}

export function errorNote(result: LoadResult): string {
  return result.errors ? `; ${result.errors} errors (first: ${result.firstError})` : '';
}
