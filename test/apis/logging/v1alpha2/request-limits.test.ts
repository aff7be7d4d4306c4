import { describe, expect, it } from '@jest/globals';
import { LogRequestLimits } from '../../../../src/apis/logging/v1alpha2/request-limits.js';
import { TooManyRequestsError } from '../../../../src/server/errors.js';

const limits = () =>
  new LogRequestLimits({ exports: { perProcess: 3, perUser: 2 }, queries: { perProcess: 4, perUser: 3 } });

function refusal(run: () => unknown): TooManyRequestsError {
  try {
    run();
  } catch (error) {
    if (error instanceof TooManyRequestsError) return error;
    throw error;
  }
  throw new Error('admitted');
}

describe('LogRequestLimits', () => {
  it('when a user has as many exports in flight as allowed, then the next one is a 429 naming the user limit', () => {
    const l = limits();
    l.admit('export', 'alice');
    l.admit('export', 'alice');
    const error = refusal(() => l.admit('export', 'alice'));
    expect(error.toStatus()).toMatchObject({ code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 1 } });
    expect(error.message).toMatch(/too many log exports of this user at once \(at most 2\)/);
  });

  it('when the replica has as many exports in flight as allowed, then anyone’s next one is a 429 naming the server', () => {
    const l = limits();
    l.admit('export', 'alice');
    l.admit('export', 'bob');
    l.admit('export', 'carol');
    expect(refusal(() => l.admit('export', 'dave')).message).toMatch(/on this server \(at most 3\)/);
  });

  it('when one finishes, then its place is free again, once however often it is released', () => {
    const l = limits();
    const first = l.admit('export', 'alice');
    l.admit('export', 'alice');
    first();
    first();
    expect(l.inFlight('export')).toBe(1);
    l.admit('export', 'alice');
    expect(() => l.admit('export', 'alice')).toThrow(TooManyRequestsError);
  });

  it('when exports are at their limit, then queries are counted apart and still admitted', () => {
    const l = limits();
    l.admit('export', 'alice');
    l.admit('export', 'alice');
    expect(() => l.admit('query', 'alice')).not.toThrow();
    expect(l.inFlight('query')).toBe(1);
    l.admit('query', 'alice');
    l.admit('query', 'alice');
    expect(refusal(() => l.admit('query', 'alice')).message).toMatch(/too many log queries of this user/);
    l.admit('query', 'bob');
    expect(refusal(() => l.admit('query', 'bob')).message).toMatch(/log queries at once on this server \(at most 4\)/);
  });
});
