import { describe, expect, it } from '@jest/globals';
import { backoffDelay } from '../../src/kube/backoff.js';

const policy = { initialMs: 200, maxMs: 30_000 };

describe('backoffDelay', () => {
  it.each([
    ['the first failure, no jitter', 1, 0.5, 200],
    ['the first failure, lowest jitter', 1, 0, 150],
    ['the first failure, highest jitter', 1, 1, 250],
    ['the third failure', 3, 0.5, 800],
    ['the eighth failure (capped)', 8, 0.5, 25_600],
    ['the ninth failure', 9, 0.5, 30_000],
    ['the ninth failure with highest jitter', 9, 1, 30_000],
    ['a huge attempt count', 10_000, 0.5, 30_000],
    ['attempt 0 (treated as the first)', 0, 0.5, 200],
  ])('when it is %s, then the delay is as expected', (_case, attempt, random, delay) => {
    expect(backoffDelay(attempt, policy, () => random)).toBe(delay);
  });
});
