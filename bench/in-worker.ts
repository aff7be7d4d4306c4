import { Worker } from 'node:worker_threads';
import type { Job, ResultOf, WorkerMessage } from './jobs.js';
import { backendTrust } from './tls.js';

/**
 * Runs a job on a fresh worker thread and resolves with its result. `onReady` runs when the worker reports its
 * set-up done (jobs that hand-shake); the worker continues once it resolves.
 */
export function inWorker<J extends Job>(job: J, onReady?: () => Promise<void>): Promise<ResultOf<J>> {
  return new Promise((resolve, reject) => {
    // The worker reaches the backend with this thread's trust (CA, client certificate).
    const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { job, trust: backendTrust() } });
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      outcome();
    };
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        (onReady ?? (async () => undefined))().then(
          () => worker.postMessage({ type: 'go' }),
          (error: unknown) => finish(() => reject(error)),
        );
      } else if (message.type === 'result') finish(() => resolve(message.result as ResultOf<J>));
      else finish(() => reject(new Error(message.message)));
    });
    worker.on('error', (error) => finish(() => reject(error)));
    worker.on('exit', (code) => finish(() => reject(new Error(`bench worker exited (${code}) without a result`))));
  });
}
