import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadJob, LoadResult } from './jobs.js';
import { operationRunner } from './operations.js';

const now = (): number => Number(process.hrtime.bigint());
const MS = 1e6;
/** After a failed operation a caller pauses briefly, so a refused connection does not become a busy loop. */
const ERROR_PAUSE_MS = 5;

/**
 * A closed-loop load generator: `concurrency` callers over one keep-alive agent (one socket each), each timing its
 * own operations with hrtime. Operations that start in the measured window count; the window ends when the last of
 * them finishes, so slow operations are not cut off (or dropped) at the deadline.
 */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency, maxFreeSockets: job.concurrency });
  const run = operationRunner(job.operation, agent);
  const measureFrom = now() + job.warmupMs * MS;
  const measureUntil = measureFrom + job.durationMs * MS;
  const latenciesNs: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let lastEnd = measureUntil;

  const caller = async (): Promise<void> => {
    for (;;) {
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
        if (measured) errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
        await sleep(ERROR_PAUSE_MS);
      }
    }
  };

  await Promise.all(Array.from({ length: job.concurrency }, caller));
  agent.destroy();
  return { latenciesNs, errors, firstError, elapsedMs: (lastEnd - measureFrom) / MS };
}
