import {
  FailureWindow,
  statusAfterFailure,
  statusAfterSuccess,
  userLockRemaining,
  type LoginLimit,
} from './login-limits.js';
import type { UserRecord } from './user-record.js';
import type { UserStore } from './users.js';

/** A login attempt the limiter let through; it must be settled once the password was checked. */
export interface AdmittedLogin {
  failed(nowMs: number): Promise<void>;
  succeeded(nowMs: number): Promise<void>;
  /** The password could not be checked (checks saturated): the attempt no longer counts, and nothing is recorded. */
  withdrawn(): void;
}

export type Admission = { admitted: AdmittedLogin } | { retryAfterSeconds: number };

interface Attempt {
  sourceIp: string;
  login: string;
  user: UserRecord | undefined;
}

/**
 * Brute-force limits on the password grant, per client address and per user:
 * - a user's failures and lock live in the User's status (only there, so an operator who clears the status unlocks
 *   the user at once), and every replica reads them from its watch: the lock holds on all of them;
 * - addresses, and login names that match no user, are counted in this process (a name that matches nobody has no
 *   status to write; counting it keeps an unknown name answering like a known one);
 * - attempts still being checked count against the limit, so a burst of parallel guesses cannot slip past it
 *   while the first failures are being written.
 */
export class LoginLimiter {
  private readonly failures = new FailureWindow();
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly users: UserStore) {}

  admit(attempt: Attempt, nowMs: number, limit: LoginLimit): Admission {
    const { user, sourceIp } = attempt;
    const address = `address:${sourceIp}`;
    const account = user ? `user:${user.name}` : `login:${attempt.login.toLowerCase()}`;
    const recordedForAccount = user
      ? user.failedLogins.filter((f) => f.time > nowMs - limit.windowSeconds * 1000).length
      : this.failures.count(account, nowMs, limit);
    const waits = [
      this.failures.retryAfter(address, nowMs, limit),
      user ? userLockRemaining(user, nowMs) : this.failures.retryAfter(account, nowMs, limit),
      this.burst(address, this.failures.count(address, nowMs, limit), limit),
      this.burst(account, recordedForAccount, limit),
    ];
    const retryAfterSeconds = Math.max(0, ...waits.map((w) => w ?? 0));
    if (retryAfterSeconds > 0) return { retryAfterSeconds };

    const keys = [address, account];
    for (const key of keys) this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      for (const key of keys) {
        const left = (this.inFlight.get(key) ?? 1) - 1;
        if (left > 0) this.inFlight.set(key, left);
        else this.inFlight.delete(key);
      }
    };
    return {
      admitted: {
        failed: async (at) => {
          settle();
          this.failures.record(address, at, limit);
          if (user) await this.users.updateStatus(user.name, (fresh) => statusAfterFailure(fresh, sourceIp, at, limit));
          else this.failures.record(account, at, limit);
        },
        succeeded: async (at) => {
          settle();
          if (user) await this.users.updateStatus(user.name, (fresh) => statusAfterSuccess(fresh, at));
        },
        withdrawn: settle,
      },
    };
  }

  /** One second's wait when the failures already counted plus the attempts in flight reach the limit. */
  private burst(key: string, counted: number, limit: LoginLimit): number | undefined {
    const pending = this.inFlight.get(key) ?? 0;
    return pending > 0 && counted + pending >= limit.maxFailures ? 1 : undefined;
  }
}
