import { DurationError, parseDuration } from '../../src/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['2h', 7200],
    ['90m', 5400],
    ['2h30m', 9000],
    ['1h0m30s', 3630],
    ['10s', 10],
    ['1.5h', 5400],
    ['.5m', 30],
    ['5.s', 5],
    ['+1m', 60],
    ['0', 0],
    ['0s', 0],
    ['1500ms', 1.5],
    ['250us', 0.00025],
    ['250µs', 0.00025],
    ['250μs', 0.00025],
    ['1ns', 1e-9],
    ['1h1h', 7200],
    ['2562047h', 2562047 * 3600],
  ])('when given %p, then it is %p seconds', (text, seconds) => {
    expect(parseDuration(text)).toBeCloseTo(seconds, 9);
  });

  it.each([
    ['-1h', 'must not be negative'],
    ['-0', 'must not be negative'],
    ['', 'is empty'],
    ['+', 'is empty'],
    ['10', 'has a number without a unit'],
    ['1h30', 'has a number without a unit'],
    ['10d', 'has an unknown unit "d"'],
    ['10 m', 'has an unknown unit " m"'],
    ['1h-30m', 'has an unknown unit "h-"'],
    ['h', 'is not a duration'],
    ['.h', 'is not a duration'],
    [' 1h', 'is not a duration'],
    ['2562048h', 'is too long'],
    ['abc', 'is not a duration'],
  ])('when given %p, then it fails saying it %s', (text, message) => {
    expect(() => parseDuration(text)).toThrow(DurationError);
    expect(() => parseDuration(text)).toThrow(message);
  });
});
