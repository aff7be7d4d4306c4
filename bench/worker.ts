/** Worker-thread entry: runs one job (load or watches) away from the thread that hosts the sandbox. */
import { parentPort, workerData } from 'node:worker_threads';
import type { Job, MainMessage, WorkerMessage } from './jobs.js';
import { runLoad } from './load.js';
import { setBackendTrust, type BackendTrust } from './tls.js';
import { runWatchFanout, runWatchRelay } from './watch.js';

const port = parentPort;
if (!port) throw new Error('bench/worker.js runs as a worker thread only');

const post = (message: WorkerMessage) => port.postMessage(message);

/** `ready` to the main thread, then wait for its `go`. */
const handshake = () =>
  new Promise<void>((resolve) => {
    port.once('message', (message: MainMessage) => {
      if (message.type === 'go') resolve();
    });
    post({ type: 'ready' });
  });

async function run(job: Job): Promise<unknown> {
  switch (job.kind) {
    case 'load':
      return runLoad(job);
    case 'watch-relay':
      return runWatchRelay(job);
    case 'watch-fanout':
      return runWatchFanout(job, handshake);
  }
}

const { job, trust } = workerData as { job: Job; trust: BackendTrust };
setBackendTrust(trust);
run(job).then(
  (result) => post({ type: 'result', result }),
  (error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
);
