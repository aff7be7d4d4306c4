import { ReadBudget } from '../../../src/auth/users/read-budget.js';

describe('ReadBudget', () => {
  const budget = (perSecond: number, burst: number) => {
    const clock = { now: 0 };
    return { clock, bucket: new ReadBudget(perSecond, burst, () => clock.now) };
  };
  const takeAll = (bucket: ReadBudget, tries: number) => Array.from({ length: tries }, () => bucket.take());

  test.each([
    { perSecond: 5, burst: 10, tries: 12, allowed: 10 },
    { perSecond: 5, burst: 1, tries: 3, allowed: 1 },
    { perSecond: 100, burst: 0, tries: 3, allowed: 0 },
  ])(
    'when the clock stands still, then $allowed of $tries reads are allowed (burst $burst)',
    ({ perSecond, burst, tries, allowed }) => {
      const { bucket } = budget(perSecond, burst);
      expect(takeAll(bucket, tries).filter(Boolean)).toHaveLength(allowed);
    },
  );

  test.each([
    { advanceMs: 199, allowed: 0 },
    { advanceMs: 200, allowed: 1 },
    { advanceMs: 1000, allowed: 5 },
    { advanceMs: 60_000, allowed: 10 },
  ])(
    'when an empty bucket (5/s, burst 10) waits $advanceMs ms, then $allowed reads are allowed',
    ({ advanceMs, allowed }) => {
      const { clock, bucket } = budget(5, 10);
      takeAll(bucket, 10);
      clock.now += advanceMs;
      expect(takeAll(bucket, 20).filter(Boolean)).toHaveLength(allowed);
    },
  );

  test('when refused reads keep coming, then they spend nothing and the refill still arrives', () => {
    const { clock, bucket } = budget(5, 10);
    takeAll(bucket, 10);
    for (let i = 0; i < 3; i++) {
      clock.now += 50;
      expect(bucket.take()).toBe(false);
    }
    clock.now += 50; // 200 ms since the bucket ran dry: one read has refilled, refusals spent none of it
    expect(bucket.take()).toBe(true);
    expect(bucket.take()).toBe(false);
  });

  test('when the clock steps back, then nothing is refilled and nothing breaks', () => {
    const { clock, bucket } = budget(5, 2);
    takeAll(bucket, 2);
    clock.now -= 10_000;
    expect(bucket.take()).toBe(false);
    clock.now += 200;
    expect(bucket.take()).toBe(true);
  });
});
