import {
  FailureWindow,
  budgetDecision,
  statusAfterFailure,
  statusAfterSuccess,
  userLockRemaining,
  type BudgetDecision,
  type LoginLimit,
} from './login-limits.js';
import { LruMap } from '../lru-map.js';
import type { UserRecord } from './user-record.js';
import type { UserStore } from './users.js';

/** A login attempt the limiter let through; it must be settled once the password was checked. */
export interface AdmittedLogin {
  /** The user the login names, as the limiter found it (undefined: nobody by that name or e-mail). */
  readonly user: UserRecord | undefined;
  failed(nowMs: number): Promise<void>;
  succeeded(nowMs: number): Promise<void>;
  /** The password could not be checked (checks saturated): the attempt no longer counts, and nothing is recorded. */
  withdrawn(): void;
}

export type Admission =
  | { admitted: AdmittedLogin }
  /** Recorded failures reached a limit: 429. */
  | { retryAfterSeconds: number; limitedBy: 'address' | 'user or name' }
  /** The checks in flight did not settle within the wait: nothing was decided about this attempt (503). */
  | { busy: true };

export interface LoginAttempt {
  sourceIp: string;
  login: string;
  /** The user a login names, from the watched cache (no cluster read): asked only once the address is admitted. */
  lookup: (login: string) => Promise<UserRecord | undefined>;
}

/** How long an attempt beyond the failure budget waits for the checks in flight before it is answered 503. */
export const ADMISSION_WAIT_MS = 5_000;
/** Attempts waiting on one key beyond this are answered 503 at once: a flood must not hold memory. */
export const MAX_WAITING_PER_KEY = 1_000;

/**
 * Brute-force limits on the password grant, per client address and per user:
 * - a user's failures and lock live in the User's status (only there, so an operator who clears the status unlocks
 *   the user at once), and every replica reads them from its watch: the lock holds on all of them;
 * - addresses, and login names that match no user, are counted in this process (a name that matches nobody has no
 *   status to write; counting it keeps an unknown name answering like a known one);
 * - the address is admitted before the user is looked up, so a limited address costs nothing beyond the refusal;
 * - only recorded failures refuse. A check in flight may still fail, so no more checks run at once than the failure
 *   budget left; an attempt beyond it waits (bounded) for one to settle, and a burst of parallel guesses gets no more
 *   checks than the limit, while parallel logins that succeed all get through.
 */
export class LoginLimiter {
  private readonly failures = new FailureWindow();
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Set<() => void>>();
  /** Per user name: failures recorded here against the User version the cache held then (see `accountDecision`). */
  private readonly unseenFailures = new LruMap<string, { resourceVersion: string; times: number[] }>(50_000);

  constructor(
    private readonly users: UserStore,
    private readonly maxWaitMs = ADMISSION_WAIT_MS,
  ) {}

  async admit(attempt: LoginAttempt, clock: () => number, limit: () => LoginLimit): Promise<Admission> {
    const address = `address:${attempt.sourceIp}`;
    const giveUpAt = Date.now() + this.maxWaitMs;
    for (;;) {
      const now = clock();
      const current = limit();
      const byAddress = this.addressDecision(address, now, current);
      if (!('go' in byAddress)) {
        if ('wait' in byAddress && (await this.settled(address, giveUpAt))) continue;
        return 'wait' in byAddress ? { busy: true } : { ...byAddress, limitedBy: 'address' };
      }

      const user = await attempt.lookup(attempt.login);
      const account = user ? `user:${user.name}` : `login:${attempt.login.toLowerCase()}`;
      const byAccount = this.accountDecision(account, user, now, current);
      if (!('go' in byAccount)) {
        if ('wait' in byAccount && (await this.settled(account, giveUpAt))) continue;
        return 'wait' in byAccount ? { busy: true } : { ...byAccount, limitedBy: 'user or name' };
      }
      // other attempts may have passed the address while the user was looked up
      if (!('go' in this.addressDecision(address, now, current))) continue;
      return { admitted: this.track(attempt, address, account, user, current) };
    }
  }

  private addressDecision(address: string, nowMs: number, limit: LoginLimit): BudgetDecision {
    return budgetDecision(this.failures.times(address, nowMs, limit), this.inFlight.get(address) ?? 0, nowMs, limit);
  }

  /**
   * A user's failures are those in its status (every replica's), plus ours the watch has not shown yet: those
   * recorded while the cache still held the version they were recorded against. Any newer version of the User —
   * our own write, another replica's, an operator clearing the status — is the whole truth again.
   */
  private accountDecision(
    account: string,
    user: UserRecord | undefined,
    nowMs: number,
    limit: LoginLimit,
  ): BudgetDecision {
    const inFlight = this.inFlight.get(account) ?? 0;
    if (!user) return budgetDecision(this.failures.times(account, nowMs, limit), inFlight, nowMs, limit);
    const lock = userLockRemaining(user, nowMs);
    if (lock !== undefined) return { retryAfterSeconds: lock };
    const windowStart = nowMs - limit.windowSeconds * 1000;
    const unseen = this.unseenFailures.get(user.name);
    const failures = [
      ...user.failedLogins.map((f) => f.time),
      ...(unseen?.resourceVersion === user.resourceVersion ? unseen.times : []),
    ]
      .filter((t) => t > windowStart)
      .sort((a, b) => a - b);
    return budgetDecision(failures, inFlight, nowMs, limit);
  }

  private async recordUserFailure(attempt: LoginAttempt, user: UserRecord, at: number): Promise<void> {
    const current = (await attempt.lookup(attempt.login).catch(() => undefined)) ?? user;
    const unseen = this.unseenFailures.get(user.name);
    const times = unseen?.resourceVersion === current.resourceVersion ? unseen.times : [];
    this.unseenFailures.set(user.name, { resourceVersion: current.resourceVersion, times: [...times, at] });
  }

  private track(
    attempt: LoginAttempt,
    address: string,
    account: string,
    user: UserRecord | undefined,
    limit: LoginLimit,
  ): AdmittedLogin {
    const keys = [address, account];
    for (const key of keys) this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let settled = false;
    // Failures are recorded before the waiting attempts are woken, so they decide on the new count.
    const settle = () => {
      if (settled) return false;
      settled = true;
      for (const key of keys) {
        const left = (this.inFlight.get(key) ?? 1) - 1;
        if (left > 0) this.inFlight.set(key, left);
        else this.inFlight.delete(key);
        this.wake(key);
      }
      return true;
    };
    return {
      user,
      failed: async (at) => {
        if (settled) return;
        this.failures.record(address, at, limit);
        if (user) await this.recordUserFailure(attempt, user, at);
        else this.failures.record(account, at, limit);
        if (!settle()) return;
        if (user) {
          const { sourceIp } = attempt;
          await this.users.updateStatus(user.name, (fresh) => statusAfterFailure(fresh, sourceIp, at, limit));
        }
      },
      succeeded: async (at) => {
        if (!settle()) return;
        if (!user) return;
        this.unseenFailures.delete(user.name);
        await this.users.updateStatus(user.name, (fresh) => statusAfterSuccess(fresh, at));
      },
      withdrawn: () => void settle(),
    };
  }

  /** Resolves true once a check in flight on `key` settles, false when `giveUpAt` passed or too many wait already. */
  private settled(key: string, giveUpAt: number): Promise<boolean> {
    const remaining = giveUpAt - Date.now();
    let waiters = this.waiting.get(key);
    if (remaining <= 0 || (waiters?.size ?? 0) >= MAX_WAITING_PER_KEY) return Promise.resolve(false);
    if (!waiters) this.waiting.set(key, (waiters = new Set()));
    const set = waiters;
    return new Promise((resolve) => {
      const done = (result: boolean) => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
        resolve(result);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), remaining);
      timer.unref();
      set.add(wake);
    });
  }

  private wake(key: string): void {
    const waiters = this.waiting.get(key);
    if (!waiters) return;
    this.waiting.delete(key);
    for (const wake of waiters) wake();
  }
}
