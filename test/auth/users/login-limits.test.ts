import {
  FailureWindow,
  budgetDecision,
  statusAfterFailure,
  statusAfterSuccess,
  timestamp,
  userLockRemaining,
} from '../../../src/auth/users/login-limits.js';
import type { UserRecord } from '../../../src/auth/users/user-record.js';

const NOW = Date.parse('2031-01-01T12:00:00Z');
const LIMIT = { maxFailures: 3, windowSeconds: 600 };
const user = (overrides: Partial<UserRecord> = {}): UserRecord => ({
  name: 'alice',
  resourceVersion: '1',
  groups: [],
  state: 'Active',
  failedLogins: [],
  ...overrides,
});
const failuresAgo = (...secondsAgo: number[]) =>
  secondsAgo.map((s) => ({ time: NOW - s * 1000, sourceIP: '10.0.0.1' }));

describe('statusAfterFailure', () => {
  test('when a first failure happens, then it is recorded with time and address and the user stays active', () => {
    expect(statusAfterFailure(user(), '10.1.1.1', NOW, LIMIT)).toEqual({
      failedLogins: [{ time: '2031-01-01T12:00:00Z', sourceIP: '10.1.1.1' }],
    });
  });

  test('when failures reach the limit within the window, then the user is locked for one window', () => {
    const patch = statusAfterFailure(user({ failedLogins: failuresAgo(100, 50) }), '10.1.1.1', NOW, LIMIT);
    expect(patch).toMatchObject({
      state: 'AuthLimitExceeded',
      lockedUntil: '2031-01-01T12:10:00Z',
      lastTransitionTime: '2031-01-01T12:00:00Z',
    });
    expect(patch?.failedLogins).toHaveLength(3);
  });

  test('when older failures fell out of the window, then they are dropped and do not count', () => {
    const patch = statusAfterFailure(user({ failedLogins: failuresAgo(601, 700) }), '10.1.1.1', NOW, LIMIT);
    expect(patch).toEqual({ failedLogins: [{ time: '2031-01-01T12:00:00Z', sourceIP: '10.1.1.1' }] });
  });

  test('when a passed lock is followed by one failure, then the state returns to Active', () => {
    const patch = statusAfterFailure(
      user({ state: 'AuthLimitExceeded', lockedUntil: NOW - 1000, failedLogins: failuresAgo(900, 800, 700) }),
      '10.1.1.1',
      NOW,
      LIMIT,
    );
    expect(patch).toMatchObject({ state: 'Active', lockedUntil: null, reason: null });
  });

  test('when the user is disabled, then nothing is written', () => {
    expect(statusAfterFailure(user({ state: 'Disabled' }), '10.1.1.1', NOW, LIMIT)).toBeUndefined();
  });

  test('when failures far exceed the limit, then only the newest ones are kept (status stays small)', () => {
    const many = failuresAgo(...Array.from({ length: 50 }, (_, i) => 500 - i));
    expect(statusAfterFailure(user({ failedLogins: many }), 'x', NOW, LIMIT)?.failedLogins).toHaveLength(3);
  });
});

describe('statusAfterSuccess', () => {
  test('when a locked-then-released user logs in, then failures, lock and state are cleared', () => {
    expect(
      statusAfterSuccess(
        user({ state: 'AuthLimitExceeded', lockedUntil: NOW - 1, failedLogins: failuresAgo(700) }),
        NOW,
      ),
    ).toEqual({
      lastLoginTime: '2031-01-01T12:00:00Z',
      failedLogins: null,
      state: 'Active',
      reason: null,
      lockedUntil: null,
      lastTransitionTime: '2031-01-01T12:00:00Z',
    });
  });

  test('when another replica locked the user a moment ago, then a racing success leaves the lock and failures alone', () => {
    expect(
      statusAfterSuccess(
        user({ state: 'AuthLimitExceeded', lockedUntil: NOW + 60_000, failedLogins: failuresAgo(5, 4, 3) }),
        NOW,
      ),
    ).toEqual({ lastLoginTime: '2031-01-01T12:00:00Z' });
  });

  test('when an active user without failures logs in, then only the login time is written', () => {
    expect(statusAfterSuccess(user(), NOW)).toEqual({ lastLoginTime: '2031-01-01T12:00:00Z' });
  });
});

describe('userLockRemaining', () => {
  const cases: Array<[string, Partial<UserRecord>, number | undefined]> = [
    ['when the user is active, then there is no wait', {}, undefined],
    [
      'when the lock ends in 90.2 s, then the wait is 91 s',
      { state: 'AuthLimitExceeded', lockedUntil: NOW + 90_200 },
      91,
    ],
    [
      'when the lock has passed, then there is no wait',
      { state: 'AuthLimitExceeded', lockedUntil: NOW - 1 },
      undefined,
    ],
    [
      'when locked without an end time, then there is no wait (nothing to honour)',
      { state: 'AuthLimitExceeded' },
      undefined,
    ],
  ];
  test.each(cases)('%s', (_name, overrides, expected) => {
    expect(userLockRemaining(user(overrides), NOW)).toBe(expected);
  });
});

describe('FailureWindow', () => {
  test('when failures stay under the limit, then there is no wait', () => {
    const window = new FailureWindow();
    window.record('ip', NOW, LIMIT);
    window.record('ip', NOW, LIMIT);
    expect(window.retryAfter('ip', NOW, LIMIT)).toBeUndefined();
  });

  test('when failures reach the limit, then the wait lasts until the oldest counted one leaves the window', () => {
    const window = new FailureWindow();
    window.record('ip', NOW - 100_000, LIMIT);
    window.record('ip', NOW - 50_000, LIMIT);
    window.record('ip', NOW, LIMIT);
    expect(window.retryAfter('ip', NOW, LIMIT)).toBe(500);
    expect(window.retryAfter('ip', NOW + 500_001, LIMIT)).toBeUndefined();
    expect(window.retryAfter('other', NOW, LIMIT)).toBeUndefined();
  });

  test('when more keys arrive than the capacity, then the oldest keys are forgotten (bounded memory)', () => {
    const window = new FailureWindow(2);
    for (const key of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) window.record(key, NOW, LIMIT);
    expect(window.retryAfter('a', NOW, LIMIT)).toBeUndefined();
    expect(window.retryAfter('c', NOW, LIMIT)).toBe(600);
  });
});

test('when times are written, then they are RFC 3339 in whole seconds', () => {
  expect(timestamp(Date.parse('2031-01-01T00:00:00.999Z'))).toBe('2031-01-01T00:00:00Z');
});

describe('budgetDecision', () => {
  test.each([
    ['no failures, nothing in flight', [], 0, { go: true }],
    ['no failures, two in flight: a third may still fail within the limit', [], 2, { go: true }],
    ['no failures, three in flight: they could use up the budget', [], 3, { wait: true }],
    ['two failures, nothing in flight', [100, 50], 0, { go: true }],
    ['two failures, one in flight', [100, 50], 1, { wait: true }],
    ['three failures: refused until the oldest leaves the window', [100, 50, 10], 0, { retryAfterSeconds: 500 }],
    ['three failures with checks in flight: still refused', [100, 50, 10], 5, { retryAfterSeconds: 500 }],
  ])('when %s, then %j', (_case, secondsAgo, inFlight, expected) => {
    const failures = (secondsAgo as number[]).map((s) => NOW - s * 1000).sort((a, b) => a - b);
    expect(budgetDecision(failures, inFlight as number, NOW, LIMIT)).toEqual(expected);
  });
});
