import { describe, expect, it } from '@jest/globals';
import { bucketStart, fillBuckets, nextBucket, parseInterval } from '../../../../src/apis/logging/v1alpha2/interval.js';

const at = (iso: string) => Date.parse(iso);

describe('histogram intervals', () => {
  it.each([
    ['15m', '2024-05-01T10:37:12Z', '2024-05-01T10:30:00Z', '2024-05-01T10:45:00Z'],
    ['1h', '2024-05-01T10:37:12Z', '2024-05-01T10:00:00Z', '2024-05-01T11:00:00Z'],
    ['1d', '2024-05-01T10:37:12Z', '2024-05-01T00:00:00Z', '2024-05-02T00:00:00Z'],
    ['1M', '2024-05-17T10:37:12Z', '2024-05-01T00:00:00Z', '2024-06-01T00:00:00Z'],
    ['1q', '2024-05-17T10:37:12Z', '2024-04-01T00:00:00Z', '2024-07-01T00:00:00Z'],
    ['1y', '2024-05-17T10:37:12Z', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z'],
    ['1M', '2024-12-31T23:59:59Z', '2024-12-01T00:00:00Z', '2025-01-01T00:00:00Z'],
  ])('when %s buckets %s, then it starts at %s and the next at %s', (text, time, start, next) => {
    const interval = parseInterval(text);
    expect(bucketStart(interval, at(time))).toBe(at(start));
    expect(nextBucket(interval, at(start))).toBe(at(next));
  });

  it('when buckets are filled, then empty ones between the first and last are zeros, ascending', () => {
    const interval = parseInterval('1h');
    const counts = new Map([
      [at('2024-05-01T13:00:00Z'), 2],
      [at('2024-05-01T10:00:00Z'), 5],
    ]);
    expect(fillBuckets(interval, counts, 100)).toEqual([
      { time: at('2024-05-01T10:00:00Z'), count: 5 },
      { time: at('2024-05-01T11:00:00Z'), count: 0 },
      { time: at('2024-05-01T12:00:00Z'), count: 0 },
      { time: at('2024-05-01T13:00:00Z'), count: 2 },
    ]);
    expect(fillBuckets(interval, new Map(), 100)).toEqual([]);
  });

  it('when the buckets would exceed the limit, then none are made', () => {
    const counts = new Map([
      [0, 1],
      [3_600_000 * 10, 1],
    ]);
    expect(fillBuckets(parseInterval('1h'), counts, 10)).toBeUndefined();
    expect(fillBuckets(parseInterval('1h'), counts, 11)).toHaveLength(11);
  });
});
