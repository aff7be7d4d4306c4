import { jest } from '@jest/globals';
import { ExpiryTimer } from '../../../src/auth/sessions/expiry-timer.js';

const START = Date.parse('2031-01-01T00:00:00Z');

describe('ExpiryTimer', () => {
  let expired: string[];
  let timer: ExpiryTimer;

  beforeEach(() => {
    jest.useFakeTimers({ now: START });
    expired = [];
    timer = new ExpiryTimer(Date.now, (id) => expired.push(id));
  });

  afterEach(() => {
    timer.stop();
    jest.useRealTimers();
  });

  test('when sessions reach their end, then each is told at that moment, in order, once', () => {
    timer.set('b', START + 2_000);
    timer.set('a', START + 1_000);
    timer.set('c', START + 2_000);
    jest.advanceTimersByTime(999);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1_000);
    expect(expired.slice(1).sort()).toEqual(['b', 'c']);
    jest.advanceTimersByTime(60_000);
    expect(expired).toHaveLength(3);
    expect(timer.size).toBe(0);
  });

  test('when a session is extended (a refresh), then it is told at its new end, not the old one', () => {
    timer.set('a', START + 1_000);
    timer.set('a', START + 5_000);
    jest.advanceTimersByTime(4_999);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
  });

  test('when a session is deleted before its end, then nothing is told', () => {
    timer.set('a', START + 1_000);
    timer.set('b', START + 2_000);
    timer.delete('a');
    jest.advanceTimersByTime(2_000);
    expect(expired).toEqual(['b']);
  });

  test('when a session comes with an earlier end than the one waited for, then the wait is shortened', () => {
    timer.set('late', START + 10_000);
    jest.advanceTimersByTime(1_000);
    timer.set('early', START + 2_000);
    jest.advanceTimersByTime(1_000);
    expect(expired).toEqual(['early']);
  });

  test('when an end is weeks away, then it is still told then (waits longer than setTimeout allows)', () => {
    const weeks = 40 * 86_400_000;
    timer.set('a', START + weeks);
    jest.advanceTimersByTime(weeks - 1);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
  });

  test('when an end is already past, then it is told on the next timer turn', () => {
    timer.set('a', START - 1_000);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(0);
    expect(expired).toEqual(['a']);
  });

  test('when sessions are extended many times, then only their last ends count', () => {
    for (let round = 1; round <= 100; round++) {
      for (let i = 0; i < 50; i++) timer.set(`s${i}`, START + 1_000_000 + round * 1_000 + i);
    }
    expect(timer.size).toBe(50);
    // the ends of round 99 are stale: nothing is told then
    jest.advanceTimersByTime(1_099_999);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(50);
    expect(expired).toHaveLength(50);
  });

  test('when stopped, then nothing more is told', () => {
    timer.set('a', START + 1_000);
    timer.stop();
    jest.advanceTimersByTime(5_000);
    expect(expired).toEqual([]);
  });
});
