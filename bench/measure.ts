import { MEASURE_MS, WARMUP_MS } from './context.js';
import { inWorker } from './in-worker.js';
import type { LoadJob, LoadResult, Operation } from './jobs.js';

/** A closed-loop load run on a worker thread (never on the thread that hosts the sandbox). */
export function load(
  operation: Operation,
  concurrency: number,
  warmupMs = WARMUP_MS,
  durationMs = MEASURE_MS,
): Promise<LoadResult> {
  return inWorker<LoadJob>({ kind: 'load', operation, concurrency, warmupMs, durationMs });
}

/** Operations per second over the measured window. */
export function throughput(result: LoadResult): number {
  return result.latenciesNs.length / (result.elapsedMs / 1000);
}

export function errorNote(result: LoadResult): string {
  return result.errors ? `; ${result.errors} errors (first: ${result.firstError})` : '';
}
