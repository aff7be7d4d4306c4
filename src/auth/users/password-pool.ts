import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { PasswordChecksBusy } from './passwords.js';

/**
 * bcrypt checks on worker threads, at two priorities.
 *
 * A check first goes to a worker that lowered its own scheduling priority (nice 19 on Linux): a login storm then uses
 * whatever CPU the event loop leaves idle instead of competing with it, so logins stay near the bcrypt bound while the
 * latency of every other request holds (SPEC §11). But when other requests keep both cores busy, such a worker gets
 * almost nothing and logins wait for seconds (16 parallel logins beside 16 parallel reads: p99 2.1 s at nice 19,
 * 1.7 s at nice 10). So logins that pile up run on normal-priority workers, started for them and stopped once idle:
 * - a check that has waited `escalateAfterMs` in the queue goes to one, as does the oldest whenever more checks wait
 *   than twice the low-priority workers (a pile-up: 16 parallel logins of one user, not a storm of 4);
 * - while one is busy, the low-priority workers take no new check (they would starve behind it), and a check that has
 *   run `hedgeAfterMs` on one of them runs once more at normal priority; the first answer counts;
 * - so does a check that has run `hedgeAfterMs` on a low-priority worker that got under a tenth of that time in CPU
 *   (Linux: its thread's utime+stime): other processes keep the cores busy (a neighbour, `stress-ng`), and at nice 19
 *   a 60 ms check would take seconds (measured: 4 s each, beside two busy processes).
 * Logins that pile up get their fair share of the CPU, and only then. (A thread may lower its priority but not raise
 * it again, so the two kinds are separate threads; a check cannot be taken back from a worker, hence the copy.)
 * Elsewhere than Linux the priority call is a no-op and the pool still keeps bcrypt off the event loop.
 *
 * No worker is ever terminated: one inside `compareSync` would abort the whole process (bcrypt's native code throws
 * into the dying environment and node-addon-api calls std::terminate; reproduced 1 in ~150 terminations during a
 * check). A worker is asked to stop instead, a message queued behind any check it has, and ends after it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readlinkSync } = require('node:fs');
const { setPriority } = require('node:os');
if (workerData.lowPriority) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(tid, 19);
    parentPort.postMessage({ tid }); // the pool reads this thread's CPU time to tell a starved check
  } catch {}
}
const bcrypt = require(workerData.bcrypt);
parentPort.on('message', ({ id, password, hash, stop }) => {
  if (stop) return parentPort.close(); // nothing else keeps the thread alive: it ends
  let matches = false;
  try { matches = bcrypt.compareSync(password, hash); } catch {}
  parentPort.postMessage({ id, matches });
});
`;

interface Pending {
  resolve(matches: boolean): void;
}

interface Job {
  id: number;
  password: string;
  hash: string;
  /** When it was queued (ms, Date.now). */
  queuedAt: number;
}

/** A check on a low-priority worker, since when; and its thread's CPU time (ms) at a moment, where it can be read. */
interface LowRun {
  job: Job;
  startedAt: number;
  worker: Worker;
  cpu?: { ms: number; at: number };
}

/** CPU time (utime+stime, ms) of one of this process's threads, from /proc; undefined where it cannot be read. */
function threadCpuMs(tid: number | undefined): number | undefined {
  if (tid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    // the fields after the command name: state is the first; utime and stime the 12th and 13th (clock ticks of 10 ms)
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Checks waiting for a worker beyond this are refused at once: at ~60 ms per check on two cores, 256 waiting is
 * already ~8 s of work, and a longer queue would only let a login storm hold memory and answer after clients gave up.
 */
export const MAX_WAITING_CHECKS = 256;

export interface EscalationOptions {
  /** A check that has waited this long in the queue goes to a normal-priority worker (default 500 ms). */
  escalateAfterMs?: number;
  /**
   * A check that has run this long on a low-priority worker while normal-priority ones are busy also runs on a
   * normal-priority one (default 250 ms).
   */
  hedgeAfterMs?: number;
  /** Normal-priority workers at most (default: twice the low-priority ones). */
  threads?: number;
  /** A normal-priority worker idle this long is stopped (default 30 s). */
  idleMs?: number;
}

const ESCALATE_AFTER_MS = 400;
const HEDGE_AFTER_MS = 250;
/**
 * A low-priority thread getting less than this share of a core is starved by other processes: beside two busy ones a
 * nice-19 thread gets ~1.5%; in a login storm beside kapi's own busy event loop, 25-50% (which is the point of it).
 */
const STARVED_CPU_SHARE = 0.1;
const ESCALATED_IDLE_MS = 30_000;

export class PasswordCheckPool {
  /** Idle low-priority workers (kept for the pool's life). */
  private readonly idle: Worker[] = [];
  /** Idle normal-priority workers, each stopped if it stays idle. */
  private readonly idleEscalated: Worker[] = [];
  private readonly escalated = new Set<Worker>();
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();
  private readonly queue: Job[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly busy = new Map<Worker, number>();
  /** Low-priority workers' thread ids (Linux), for their CPU time. */
  private readonly threadIds = new Map<Worker, number>();
  /** Checks running on low-priority workers, by id; and those also given to a normal-priority worker. */
  private readonly runningLow = new Map<number, LowRun>();
  private readonly hedged = new Set<number>();
  /** Workers running each check (two for a check also run at normal priority). */
  private readonly copies = new Map<number, number>();
  private nextId = 0;
  private agingTimer: NodeJS.Timeout | undefined;
  private readonly escalateAfterMs: number;
  /** More checks waiting than this is a pile-up: the oldest goes to a normal-priority worker at once. */
  private readonly pileUp: number;
  private readonly hedgeAfterMs: number;
  private readonly escalationThreads: number;
  private readonly escalatedIdleMs: number;

  private closed = false;

  /** `bcryptModule`: what the workers `require` for `compareSync` (the bcrypt package; tests wrap it). */
  constructor(
    threads = availableParallelism(),
    private readonly maxWaiting = MAX_WAITING_CHECKS,
    private readonly bcryptModule = createRequire(import.meta.url).resolve('bcrypt'),
    escalation: EscalationOptions = {},
  ) {
    const lowPriority = Math.max(1, threads);
    this.pileUp = 2 * lowPriority;
    for (let i = 0; i < lowPriority; i++) this.idle.push(this.startWorker(true));
    this.escalateAfterMs = escalation.escalateAfterMs ?? ESCALATE_AFTER_MS;
    this.hedgeAfterMs = escalation.hedgeAfterMs ?? HEDGE_AFTER_MS;
    this.escalationThreads = escalation.threads ?? 2 * lowPriority;
    this.escalatedIdleMs = escalation.idleMs ?? ESCALATED_IDLE_MS;
  }

  /** Normal-priority workers running now (started for checks that waited). */
  get escalatedWorkers(): number {
    return this.escalated.size;
  }

  private startWorker(lowPriority: boolean): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcrypt: this.bcryptModule, lowPriority } });
    worker.unref();
    if (!lowPriority) this.escalated.add(worker);
    worker.on('message', ({ id, matches, tid }: { id: number; matches: boolean; tid?: number }) => {
      if (tid !== undefined) {
        this.threadIds.set(worker, tid);
        if (!this.closed) this.dispatch(); // a check it already runs can now be watched for starvation
        return;
      }
      // the first answer of a check counts; a second copy's is the same and is dropped
      this.settle(id, matches);
      this.done(worker, id);
      if (lowPriority) this.idle.push(worker);
      else this.restEscalated(worker);
      this.dispatch();
    });
    // A worker that dies fails its check unless another copy runs (never a hang); a low-priority one is replaced, so
    // the pool keeps its size.
    worker.once('exit', () => {
      const id = this.busy.get(worker);
      if (id !== undefined && this.done(worker, id) === 0) this.settle(id, false);
      this.forget(worker);
      if (lowPriority && !this.closed) this.idle.push(this.startWorker(true));
      if (!this.closed) this.dispatch();
    });
    worker.on('error', () => {}); // 'exit' follows and does the clean-up
    return worker;
  }

  /** An escalated worker with nothing to do: idle, and stopped if nothing comes within `escalatedIdleMs`. */
  private restEscalated(worker: Worker): void {
    this.idleEscalated.push(worker);
    const timer = setTimeout(() => {
      this.idleTimers.delete(worker);
      const at = this.idleEscalated.indexOf(worker);
      if (at < 0) return;
      this.idleEscalated.splice(at, 1);
      this.escalated.delete(worker);
      void this.stopWorker(worker);
    }, this.escalatedIdleMs);
    timer.unref();
    this.idleTimers.set(worker, timer);
  }

  /** Asks a worker to end once through with what it was given; resolves when it has. */
  private stopWorker(worker: Worker): Promise<void> {
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // a process ending while a check runs would end its thread as a termination does: such a worker holds it open (an
    // idle one does not: ending it is harmless, and a starved nice-19 thread may take seconds to see the message)
    if (this.busy.has(worker)) worker.ref();
    worker.postMessage({ stop: true });
    return exited;
  }

  private forget(worker: Worker): void {
    for (const list of [this.idle, this.idleEscalated]) {
      const at = list.indexOf(worker);
      if (at >= 0) list.splice(at, 1);
    }
    clearTimeout(this.idleTimers.get(worker));
    this.idleTimers.delete(worker);
    this.escalated.delete(worker);
    this.threadIds.delete(worker);
  }

  /** A worker is through with check `id`: how many copies of it still run. */
  private done(worker: Worker, id: number): number {
    this.busy.delete(worker);
    if (this.runningLow.get(id) && !this.escalated.has(worker)) {
      this.runningLow.delete(id);
      this.hedged.delete(id);
    }
    const left = (this.copies.get(id) ?? 1) - 1;
    if (left > 0) this.copies.set(id, left);
    else this.copies.delete(id);
    return left;
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
      this.queue.push({ id, password, hash, queuedAt: Date.now() });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.agingTimer);
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    for (const { resolve } of this.pending.values()) resolve(false);
    this.pending.clear();
    this.queue.length = 0;
    this.runningLow.clear();
    this.hedged.clear();
    this.copies.clear();
    const workers = new Set([...this.idle, ...this.idleEscalated, ...this.busy.keys(), ...this.escalated]);
    await Promise.all([...workers].map((worker) => this.stopWorker(worker)));
  }

  /**
   * A young check goes to an idle low-priority worker while no normal-priority one is busy. The oldest check of a
   * pile-up, one that has waited `escalateAfterMs` in the queue, and one that has run `hedgeAfterMs` on a low-priority
   * worker while normal-priority ones are busy go to a normal-priority worker (idle, or started for it), oldest first.
   */
  private dispatch(): void {
    if (this.closed) return;
    const now = Date.now();
    for (;;) {
      const head = this.queue[0];
      const headAged =
        head !== undefined && (this.queue.length > this.pileUp || now - head.queuedAt >= this.escalateAfterMs);
      if (head && !headAged && this.idle.length > 0 && !this.escalating()) {
        this.run(this.idle.pop()!, this.queue.shift()!, now);
        continue;
      }
      const starved = this.oldestStarved(now);
      const next = headAged && (!starved || head.queuedAt <= starved.queuedAt) ? head : starved;
      if (!next) break;
      const worker = this.escalatedWorker();
      if (!worker) break;
      if (next === head) this.queue.shift();
      else this.hedged.add(next.id);
      this.run(worker, next, now);
    }
    this.watchAging(now);
  }

  /** Whether a normal-priority worker is running a check (low-priority ones then get next to no CPU). */
  private escalating(): boolean {
    for (const worker of this.busy.keys()) if (this.escalated.has(worker)) return true;
    return false;
  }

  private run(worker: Worker, job: Job, now: number): void {
    this.busy.set(worker, job.id);
    this.copies.set(job.id, (this.copies.get(job.id) ?? 0) + 1);
    if (!this.escalated.has(worker)) {
      const run: LowRun = { job, startedAt: now, worker };
      this.sampleCpu(run, now);
      this.runningLow.set(job.id, run);
    }
    worker.postMessage({ id: job.id, password: job.password, hash: job.hash });
  }

  /**
   * The oldest check run `hedgeAfterMs` on a low-priority worker, unanswered and not run twice yet, while a
   * normal-priority worker is busy or its own thread got less than half that time in CPU.
   */
  private oldestStarved(now: number): Job | undefined {
    let oldest: Job | undefined;
    const escalating = this.escalating();
    for (const run of this.runningLow.values()) {
      const { job, startedAt } = run;
      if (this.hedged.has(job.id) || !this.pending.has(job.id)) continue;
      if (now - startedAt < this.hedgeAfterMs) continue;
      if (!escalating && !this.starvedOfCpu(run, now)) continue;
      if (!oldest || job.queuedAt < oldest.queuedAt) oldest = job;
    }
    return oldest;
  }

  /** Notes the thread's CPU time now, unless it is noted already or cannot be read (no thread id yet, not Linux). */
  private sampleCpu(run: LowRun, now: number): void {
    if (run.cpu) return;
    const ms = threadCpuMs(this.threadIds.get(run.worker));
    if (ms !== undefined) run.cpu = { ms, at: now };
  }

  /** Whether the check's thread got less than `STARVED_CPU_SHARE` of the last `hedgeAfterMs` or more in CPU. */
  private starvedOfCpu(run: LowRun, now: number): boolean {
    this.sampleCpu(run, now);
    if (!run.cpu || now - run.cpu.at < this.hedgeAfterMs) return false;
    const ms = threadCpuMs(this.threadIds.get(run.worker));
    return ms !== undefined && ms - run.cpu.ms < (now - run.cpu.at) * STARVED_CPU_SHARE;
  }

  private escalatedWorker(): Worker | undefined {
    const idle = this.idleEscalated.pop();
    if (idle) {
      clearTimeout(this.idleTimers.get(idle));
      this.idleTimers.delete(idle);
      return idle;
    }
    return this.escalated.size < this.escalationThreads ? this.startWorker(false) : undefined;
  }

  /** Checks still young (queued, or on a low-priority worker) age without any event: dispatch again when one does. */
  private watchAging(now: number): void {
    clearTimeout(this.agingTimer);
    this.agingTimer = undefined;
    let soonest = Infinity;
    const head = this.queue[0];
    if (head) {
      const ageMs = now - head.queuedAt;
      if (ageMs < this.escalateAfterMs) soonest = this.escalateAfterMs - ageMs;
    }
    for (const { job, startedAt, worker } of this.runningLow.values()) {
      if (this.hedged.has(job.id) || !this.pending.has(job.id)) continue;
      const ranMs = now - startedAt;
      if (ranMs < this.hedgeAfterMs) soonest = Math.min(soonest, this.hedgeAfterMs - ranMs);
      // past it and not starved so far: it may starve later (a neighbour starts), so look again
      else if (this.threadIds.has(worker)) soonest = Math.min(soonest, this.hedgeAfterMs);
    }
    if (soonest === Infinity) return; // nothing young: what has aged waits for a normal-priority worker to free up
    this.agingTimer = setTimeout(() => this.dispatch(), soonest);
    this.agingTimer.unref();
  }
}
