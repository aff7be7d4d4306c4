import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadJob, LoadResult } from './jobs.js';
import { operationRunner } from './operations.js';
import { cpuSince, cpuSnapshot, type CpuMs } from './process-cpu.js';
import { agentFor } from './tls.js';

const now = (): number => Number(process.hrtime.bigint());
const MS = 1e6;
/** After a failed operation a caller pauses briefly, so a refused connection does not become a busy loop. */
const ERROR_PAUSE_MS = 5;

/**
 * Waits until `deadline` (hrtime ns). Timers wait whole milliseconds, but deadlines on a fixed schedule average out:
 * a caller late by a fraction starts its next request without waiting.
 */
async function until(deadline: number): Promise<void> {
  const left = (deadline - now()) / MS;
  if (left >= 1) await sleep(Math.round(left));
}

/**
 * A closed-loop load generator: `concurrency` callers over one keep-alive agent (one socket each), each timing its
 * own operations with hrtime. Operations that start in the measured window count; the window ends when the last of
 * them finishes, so slow operations are not cut off (or dropped) at the deadline. The CPU of `job.cpuPids` is read
 * when the window opens and when it closes.
 */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const url = job.operation.kind === 'request' ? job.operation.url : job.operation.server;
  const agent = agentFor(url, { keepAlive: true, maxSockets: job.concurrency, maxFreeSockets: job.concurrency });
  const run = operationRunner(job.operation, agent);
  const measureFrom = now() + job.warmupMs * MS;
  const measureUntil = measureFrom + job.durationMs * MS;
  const latenciesNs: number[] = [];
  let errors = 0;
  const errorsByStatus: Record<string, number> = {};
  let firstError: string | undefined;
  let lastEnd = measureUntil;
  const pids = job.cpuPids ?? {};
  let cpuAtStart: CpuMs | undefined;
  const windowOpens = setTimeout(() => (cpuAtStart = cpuSnapshot(pids)), job.warmupMs);

  const caller = async (): Promise<void> => {
    let next = now();
    for (;;) {
      if (job.intervalMs) {
        await until(next);
        next += job.intervalMs * MS;
      }
      const started = now();
      if (started >= measureUntil) return;
      const measured = started >= measureFrom;
      try {
        await run();
        const ended = now();
        if (measured) {
          latenciesNs.push(ended - started);
          if (ended > lastEnd) lastEnd = ended;
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (measured) {
          errors++;
          const status = /^HTTP (\d{3})/.exec(message)?.[1] ?? 'no answer';
          errorsByStatus[status] = (errorsByStatus[status] ?? 0) + 1;
        }
        firstError ??= message;
        await sleep(ERROR_PAUSE_MS);
      }
    }
  };

  await Promise.all(Array.from({ length: job.concurrency }, caller));
  clearTimeout(windowOpens);
  const cpuMs = cpuAtStart ? cpuSince(pids, cpuAtStart) : {};
  agent.destroy();
  // BENCH_LOAD_WINDOWS=<file>: each measured window (CLOCK_MONOTONIC ns, as `perf record -k CLOCK_MONOTONIC` stamps
  // its samples) with its target and count, so a profile of a whole run can be cut into its rounds
  if (process.env.BENCH_LOAD_WINDOWS) {
    const target = new URL(url);
    const window = {
      target: `${target.host}${target.pathname}`,
      concurrency: job.concurrency,
      from: measureFrom,
      to: lastEnd,
      warmupMs: job.warmupMs,
    };
    appendFileSync(
      process.env.BENCH_LOAD_WINDOWS,
      `${JSON.stringify({ ...window, operations: latenciesNs.length })}\n`,
    );
  }
  return { latenciesNs, errors, errorsByStatus, firstError, elapsedMs: (lastEnd - measureFrom) / MS, cpuMs };
}
