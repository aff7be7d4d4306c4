import { describe, expect, test } from '@jest/globals';
import { leaseAction, type ObservedLease } from '../../src/controllers/leader-election.js';

const seen = (holder: string, observedAt: number, leaseDurationSeconds = 15): ObservedLease => ({
  record: { holder, leaseDurationSeconds, transitions: 0 },
  observedAt,
});

describe('leaseAction', () => {
  test.each<[string, ObservedLease | undefined, number, string]>([
    ['no lease yet', undefined, 0, 'create'],
    ['the lease is ours', seen('me', 0), 60_000, 'renew'],
    ['another holds it, seen 14 s ago unchanged', seen('other', 0), 14_000, 'follow'],
    ['another held it, unchanged for its whole duration', seen('other', 0), 15_000, 'acquire'],
    ['it was released (no holder)', seen('', 10_000), 10_001, 'acquire'],
  ])('when %s, then %s', (_case, observed, now, action) => {
    expect(leaseAction(observed, 'me', now)).toBe(action);
  });
});
