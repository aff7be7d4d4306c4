import { describe, expect, it } from '@jest/globals';
import { formatTime, parseLogLine, sinceTime } from '../../../../../src/apis/logging/v1alpha2/pod-log/log-line.js';

describe('pod-log lines', () => {
  it.each([
    ['2024-05-01T10:00:05.123456789Z hello world', 1_714_557_605, 123_456_789, 'hello world'],
    ['2024-05-01T10:00:05.1Z x', 1_714_557_605, 100_000_000, 'x'],
    ['2024-05-01T10:00:05Z ', 1_714_557_605, 0, ''],
    ['2024-05-01T12:00:05.5+02:00 zone', 1_714_557_605, 500_000_000, 'zone'],
  ])('when %j is read, then its time and text are split', (line, sec, nano, text) => {
    expect(parseLogLine(line)).toEqual({ sec, nano, text });
  });

  it.each(['hello', '2024-05-01 10:00:05 x', '2024-05-01T10:00:05Zno-space'])(
    'when %j has no kubelet timestamp, then it is not a log line',
    (line) => {
      expect(parseLogLine(line)).toBeUndefined();
    },
  );

  it('when times are written back, then they carry nine fraction digits in UTC, and sinceTime whole seconds', () => {
    expect(formatTime(1_714_557_605, 1_000)).toBe('2024-05-01T10:00:05.000001000Z');
    expect(sinceTime(1_714_557_605_999)).toBe('2024-05-01T10:00:05Z');
  });
});
