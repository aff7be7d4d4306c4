import { CheckSlots } from './check-slots.js';
import {
  FailureWindow,
  retryAfterSeconds,
  statusAfterFailure,
  statusAfterSuccess,
  userLockRemaining,
  type LoginLimit,
} from './login-limits.js';
import { LruMap } from '../lru-map.js';
import type { UserRecord } from './user-record.js';
import type { UserStore } from './users.js';

/** A login attempt the limiter let through; it must be settled once the password was checked. */
export interface AdmittedLogin {
  /** The user the login names, as the limiter found it (undefined: nobody by that name or e-mail). */
  readonly user: UserRecord | undefined;
  /**
   * The password was wrong. `owner`: the User the login turned out to name when that is not `user` (a directory
   * matched a variant of its name, such as ' demo' or 'ＤＥＭＯ'): the failure counts towards its lock too.
   */
  failed(nowMs: number, owner?: UserRecord): Promise<void>;
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

/**
 * How long an attempt beyond the failure budget waits in line for the checks in flight before it is answered 503.
 * In line, first come first served, a correct login waits only for the checks ahead of it.
 */
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
 *   budget left (`CheckSlots`); an attempt beyond it waits in line, first come first served, for one to settle. A
 *   burst of parallel guesses thus gets no more checks than the limit, while parallel logins that succeed all get
 *   through, each after the checks ahead of it (none is overtaken by later arrivals, so none waits out its bound).
 */
export class LoginLimiter {
  private readonly failures = new FailureWindow();
  private readonly slots = new CheckSlots(MAX_WAITING_PER_KEY);
  /** Per user name: failures recorded here against the User version the cache held then (see `accountBudget`). */
  private readonly unseenFailures = new LruMap<string, { resourceVersion: string; times: number[] }>(50_000);
  /** Per user name: the success bookkeeping being written, and whether another success came meanwhile. */
  private readonly successWrites = new Map<string, { again: number | undefined; done: Promise<void> }>();

  constructor(
    private readonly users: UserStore,
    private readonly maxWaitMs = ADMISSION_WAIT_MS,
  ) {}

  async admit(attempt: LoginAttempt, clock: () => number, limit: () => LoginLimit): Promise<Admission> {
    const address = `address:${attempt.sourceIp}`;
    const giveUpAt = Date.now() + this.maxWaitMs;
    for (;;) {
      const current = limit();
      const byAddress = this.addressBudget(address, clock(), current);
      if ('retryAfterSeconds' in byAddress) return { ...byAddress, limitedBy: 'address' };
      const addressSlot = await this.slots.take(address, byAddress.capacity, giveUpAt);
      if (addressSlot === 'timeout') return { busy: true };
      if (addressSlot === 'recheck') continue;

      let user: UserRecord | undefined;
      try {
        user = await attempt.lookup(attempt.login);
      } catch (err) {
        this.slots.release(address, this.addressCapacity(address, clock(), current));
        throw err;
      }
      const account = user ? `user:${user.name}` : `login:${canonicalLogin(attempt.login)}`;
      const byAccount = this.accountBudget(account, user, clock(), current);
      const accountSlot =
        'retryAfterSeconds' in byAccount ? undefined : await this.slots.take(account, byAccount.capacity, giveUpAt);
      if (accountSlot !== 'taken') {
        this.slots.release(address, this.addressCapacity(address, clock(), current));
        if (accountSlot === undefined)
          return { ...(byAccount as { retryAfterSeconds: number }), limitedBy: 'user or name' };
        if (accountSlot === 'timeout') return { busy: true };
        continue;
      }
      return { admitted: this.track(attempt, address, account, user, current, clock) };
    }
  }

  /**
   * Seconds until `user` may try again (its recorded lock or failures, with those of this replica the watch has not
   * shown yet), or `undefined`: asked for a User a login turned out to name after it was admitted under another key.
   */
  lockRemaining(user: UserRecord, nowMs: number, limit: LoginLimit): number | undefined {
    const budget = this.accountBudget(`user:${user.name}`, user, nowMs, limit);
    return 'retryAfterSeconds' in budget ? budget.retryAfterSeconds : undefined;
  }

  private addressBudget(address: string, nowMs: number, limit: LoginLimit): Budget {
    return budgetOf(this.failures.times(address, nowMs, limit), nowMs, limit);
  }

  private addressCapacity(address: string, nowMs: number, limit: LoginLimit): number {
    const budget = this.addressBudget(address, nowMs, limit);
    return 'capacity' in budget ? budget.capacity : 0;
  }

  /**
   * A user's failures are those in its status (every replica's), plus ours the watch has not shown yet: those
   * recorded while the cache still held the version they were recorded against. Any newer version of the User —
   * our own write, another replica's, an operator clearing the status — is the whole truth again.
   */
  private accountBudget(account: string, user: UserRecord | undefined, nowMs: number, limit: LoginLimit): Budget {
    if (!user) return budgetOf(this.failures.times(account, nowMs, limit), nowMs, limit);
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
    return budgetOf(failures, nowMs, limit);
  }

  private async recordUserFailure(attempt: LoginAttempt, user: UserRecord, at: number): Promise<UserRecord> {
    const current = (await this.users.get(user.name).catch(() => undefined)) ?? user;
    const unseen = this.unseenFailures.get(user.name);
    const times = unseen?.resourceVersion === current.resourceVersion ? unseen.times : [];
    this.unseenFailures.set(user.name, { resourceVersion: current.resourceVersion, times: [...times, at] });
    return current;
  }

  private track(
    attempt: LoginAttempt,
    address: string,
    account: string,
    user: UserRecord | undefined,
    limit: LoginLimit,
    clock: () => number,
  ): AdmittedLogin {
    let settled = false;
    // Failures are recorded before the slots are given back, so those in line get them on the new budget.
    const settle = (record: UserRecord | undefined) => {
      if (settled) return false;
      settled = true;
      const now = clock();
      this.slots.release(address, this.addressCapacity(address, now, limit));
      const byAccount = this.accountBudget(account, record, now, limit);
      this.slots.release(account, 'capacity' in byAccount ? byAccount.capacity : 0);
      return true;
    };
    return {
      user,
      failed: async (at, owner) => {
        if (settled) return;
        this.failures.record(address, at, limit);
        let record = user;
        if (user) record = await this.recordUserFailure(attempt, user, at);
        else this.failures.record(account, at, limit);
        const other = owner && owner.name !== user?.name ? owner : undefined;
        if (other) await this.recordUserFailure(attempt, other, at);
        if (!settle(record)) return;
        const { sourceIp } = attempt;
        for (const charged of [user, other]) {
          if (charged)
            await this.users.updateStatus(charged.name, (fresh) => statusAfterFailure(fresh, sourceIp, at, limit));
        }
      },
      succeeded: async (at) => {
        if (!settle(user)) return;
        if (!user) return;
        this.unseenFailures.delete(user.name);
        await this.recordSuccess(user.name, at);
      },
      withdrawn: () => void settle(user),
    };
  }

  /**
   * The User's success bookkeeping (failures cleared, a passed lock lifted, the last login time), one write per user
   * at a time: successes that come while it is written are folded into one more write after it. A storm of correct
   * logins of one user then costs a write or two in flight, not one conditional patch per login racing the others.
   */
  private recordSuccess(name: string, at: number): Promise<void> {
    const writing = this.successWrites.get(name);
    if (writing) {
      writing.again = Math.max(writing.again ?? 0, at);
      return writing.done;
    }
    const entry: { again: number | undefined; done: Promise<void> } = { again: undefined, done: Promise.resolve() };
    this.successWrites.set(name, entry);
    entry.done = (async () => {
      try {
        let time: number | undefined = at;
        while (time !== undefined) {
          const current = time;
          await this.users.updateStatus(name, (fresh) => statusAfterSuccess(fresh, current));
          time = entry.again;
          entry.again = undefined;
        }
      } finally {
        this.successWrites.delete(name);
      }
    })();
    return entry.done;
  }
}

type Budget = { capacity: number } | { retryAfterSeconds: number };

/** Recorded failures at the limit refuse; otherwise the checks that may run at once are the failures left. */
function budgetOf(failures: readonly number[], nowMs: number, limit: LoginLimit): Budget {
  const retryAfter = retryAfterSeconds(failures, nowMs, limit);
  return retryAfter === undefined
    ? { capacity: limit.maxFailures - failures.length }
    : { retryAfterSeconds: retryAfter };
}

/**
 * A login name as a directory compares it (RFC 4518's string preparation, as LDAP's caseIgnoreMatch does it): NFKC,
 * case folded, invisible characters dropped, spaces trimmed and collapsed. ' demo', 'demo  ' and 'ｄｅｍｏ' are one
 * name to a directory, so they are one key to the per-name limits.
 */
export function canonicalLogin(login: string): string {
  return login
    .replace(/[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}]/gu, (c) => (/\s/u.test(c) ? ' ' : ''))
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[\s\p{Z}]+/gu, ' ')
    .trim();
}
