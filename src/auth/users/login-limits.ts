import type { FailedLogin, UserRecord } from './user-record.js';
import { LruMap } from '../lru-map.js';

/**
 * Brute-force limits, pure. Per user, the failures live in the User's status so every replica sees the lock; per
 * client address (and per unknown login name) they live in a local sliding window.
 */
export interface LoginLimit {
  maxFailures: number;
  windowSeconds: number;
}

/** The User status fields a login changes, as a JSON merge patch: `null` removes a field. */
export interface UserStatusPatch {
  state?: 'Active' | 'AuthLimitExceeded';
  reason?: string | null;
  lastTransitionTime?: string | null;
  lockedUntil?: string | null;
  failedLogins?: Array<{ time: string; sourceIP: string }> | null;
  lastLoginTime?: string;
}

/** The CRD keeps at most this many entries. */
const MAX_RECORDED_FAILURES = 200;

/** Seconds until a locked user may try again, or `undefined` when not locked (a passed lock no longer counts). */
export function userLockRemaining(user: UserRecord, nowMs: number): number | undefined {
  if (user.state !== 'AuthLimitExceeded' || user.lockedUntil === undefined || user.lockedUntil <= nowMs)
    return undefined;
  return Math.ceil((user.lockedUntil - nowMs) / 1000);
}

/**
 * The status after one more failed login: failures inside the window plus this one; reaching the limit locks the
 * user for one window. A disabled user's status is left alone.
 */
export function statusAfterFailure(
  user: UserRecord,
  sourceIP: string,
  nowMs: number,
  limit: LoginLimit,
): UserStatusPatch | undefined {
  if (user.state === 'Disabled') return undefined;
  const windowStart = nowMs - limit.windowSeconds * 1000;
  const failures: FailedLogin[] = [...user.failedLogins.filter((f) => f.time > windowStart), { time: nowMs, sourceIP }];
  const kept = failures.slice(-Math.min(limit.maxFailures, MAX_RECORDED_FAILURES));
  const patch: UserStatusPatch = { failedLogins: kept.map((f) => ({ time: timestamp(f.time), sourceIP: f.sourceIP })) };
  if (failures.length >= limit.maxFailures) {
    patch.state = 'AuthLimitExceeded';
    patch.reason = `${failures.length} failed logins within ${limit.windowSeconds} s`;
    patch.lockedUntil = timestamp(nowMs + limit.windowSeconds * 1000);
    if (user.state !== 'AuthLimitExceeded') patch.lastTransitionTime = timestamp(nowMs);
  } else if (user.state === 'AuthLimitExceeded') {
    // the earlier lock has passed: below the limit again
    Object.assign(patch, { state: 'Active', reason: null, lockedUntil: null, lastTransitionTime: timestamp(nowMs) });
  }
  return patch;
}

/** After a successful login: failures forgotten, a passed lock lifted, the login time recorded. */
export function statusAfterSuccess(user: UserRecord, nowMs: number): UserStatusPatch | undefined {
  if (user.state === 'Disabled') return undefined;
  const patch: UserStatusPatch = { lastLoginTime: timestamp(nowMs) };
  // A lock another replica wrote a moment ago (this one had not seen it yet) stands until it runs out.
  const lockStands = user.state === 'AuthLimitExceeded' && (user.lockedUntil ?? 0) > nowMs;
  if (lockStands) return patch;
  if (user.failedLogins.length > 0) patch.failedLogins = null;
  if (user.state === 'AuthLimitExceeded') {
    Object.assign(patch, { state: 'Active', reason: null, lockedUntil: null, lastTransitionTime: timestamp(nowMs) });
  }
  return patch;
}

/**
 * Seconds until a key with these failures (times inside the window, oldest first) may try again: until the oldest
 * failure that still counts leaves the window. `undefined` when under the limit.
 */
export function retryAfterSeconds(failures: readonly number[], nowMs: number, limit: LoginLimit): number | undefined {
  if (failures.length < limit.maxFailures) return undefined;
  const freedAt = failures[failures.length - limit.maxFailures]! + limit.windowSeconds * 1000;
  return Math.max(1, Math.ceil((freedAt - nowMs) / 1000));
}

/** What one limited key allows an attempt right now. */
export type BudgetDecision = { go: true } | { wait: true } | { retryAfterSeconds: number };

/**
 * The failure budget of one key (an address, a user, a login name): recorded failures within the window reaching the
 * limit refuse; otherwise the budget left is what the checks in flight may use up if every one of them fails. An
 * attempt beyond it waits for one of them to settle — refusing it would count checks as failures before they are.
 */
export function budgetDecision(
  failures: readonly number[],
  inFlight: number,
  nowMs: number,
  limit: LoginLimit,
): BudgetDecision {
  const retryAfter = retryAfterSeconds(failures, nowMs, limit);
  if (retryAfter !== undefined) return { retryAfterSeconds: retryAfter };
  return inFlight < limit.maxFailures - failures.length ? { go: true } : { wait: true };
}

/** RFC 3339 in whole seconds, as Kubernetes writes times. */
export function timestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Failures per key within a sliding window, kept in this process. Bounded: the least recently used keys are
 * forgotten first, so a flood of distinct addresses costs memory only up to `capacity`.
 */
export class FailureWindow {
  private readonly failures: LruMap<string, number[]>;

  constructor(capacity = 50_000) {
    this.failures = new LruMap(capacity);
  }

  /** Seconds until `key` may try again, or `undefined` when under the limit. */
  retryAfter(key: string, nowMs: number, limit: LoginLimit): number | undefined {
    return retryAfterSeconds(this.recent(key, nowMs, limit), nowMs, limit);
  }

  /** Failure times counted now, inside the window, oldest first. */
  times(key: string, nowMs: number, limit: LoginLimit): readonly number[] {
    return this.recent(key, nowMs, limit);
  }

  record(key: string, nowMs: number, limit: LoginLimit): void {
    const recent = this.recent(key, nowMs, limit);
    recent.push(nowMs);
    // more than the limit never changes a decision: keep the newest ones only
    this.failures.set(key, recent.slice(-limit.maxFailures));
  }

  private recent(key: string, nowMs: number, limit: LoginLimit): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const windowStart = nowMs - limit.windowSeconds * 1000;
    const kept = times.filter((t) => t > windowStart);
    if (kept.length === 0) this.failures.delete(key);
    else if (kept.length !== times.length) this.failures.set(key, kept);
    return kept;
  }
}
