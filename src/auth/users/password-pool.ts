import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { PasswordChecksBusy } from './passwords.js';

/**
 * bcrypt checks on worker threads that lower their own scheduling priority (nice 19 on Linux). A login storm then
 * uses whatever CPU the event loop leaves idle instead of competing with it: logins stay near the bcrypt bound while
 * the latency of every other request holds (SPEC §11). Elsewhere the priority call is a no-op and the pool still
 * keeps bcrypt off the event loop.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readlinkSync } = require('node:fs');
const { setPriority } = require('node:os');
try { setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 19); } catch {}
const bcrypt = require(workerData.bcrypt);
parentPort.on('message', ({ id, password, hash }) => {
  let matches = false;
  try { matches = bcrypt.compareSync(password, hash); } catch {}
  parentPort.postMessage({ id, matches });
});
`;

interface Pending {
  resolve(matches: boolean): void;
}

/**
 * Checks waiting for a worker beyond this are refused at once: at ~60 ms per check on two cores, 256 waiting is
 * already ~8 s of work, and a longer queue would only let a login storm hold memory and answer after clients gave up.
 */
export const MAX_WAITING_CHECKS = 256;

export class PasswordCheckPool {
  private readonly idle: Worker[] = [];
  private readonly queue: { id: number; password: string; hash: string }[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly busy = new Map<Worker, number>();
  private nextId = 0;

  private closed = false;

  /** `bcryptModule`: what the workers `require` for `compareSync` (the bcrypt package; tests wrap it). */
  constructor(
    threads = availableParallelism(),
    private readonly maxWaiting = MAX_WAITING_CHECKS,
    private readonly bcryptModule = createRequire(import.meta.url).resolve('bcrypt'),
  ) {
    for (let i = 0; i < Math.max(1, threads); i++) this.idle.push(this.startWorker());
  }

  private startWorker(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcrypt: this.bcryptModule } });
    worker.unref();
    worker.on('message', ({ id, matches }: { id: number; matches: boolean }) => {
      this.settle(id, matches);
      this.busy.delete(worker);
      this.idle.push(worker);
      this.dispatch();
    });
    // A worker that dies fails its check (never a hang) and is replaced, so the pool keeps its size.
    worker.once('exit', () => {
      const job = this.busy.get(worker);
      if (job !== undefined) this.settle(job, false);
      this.busy.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      if (!this.closed) {
        this.idle.push(this.startWorker());
        this.dispatch();
      }
    });
    worker.on('error', () => {}); // 'exit' follows and does the clean-up
    return worker;
  }

  private settle(id: number, matches: boolean): void {
    this.pending.get(id)?.resolve(matches);
    this.pending.delete(id);
  }

  /**
   * Resolves false on any failure: a check that cannot run never lets anyone in. Rejects with `PasswordChecksBusy`
   * when `maxWaiting` checks already wait for a worker.
   */
  compare(password: string, hash: string): Promise<boolean> {
    // a check an idle worker takes at once is not waiting (and with one waiting, no worker is idle)
    if (this.idle.length === 0 && this.queue.length >= this.maxWaiting) {
      return Promise.reject(new PasswordChecksBusy(this.queue.length));
    }
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve });
      this.queue.push({ id, password, hash });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const { resolve } of this.pending.values()) resolve(false);
    this.pending.clear();
    this.queue.length = 0;
    await Promise.all([...this.idle, ...this.busy.keys()].map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.busy.set(worker, job.id);
      worker.postMessage(job);
    }
  }
}
