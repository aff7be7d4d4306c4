import { describe, expect, it } from '@jest/globals';
import type { ContainerTarget } from '../../../../../src/apis/logging/v1alpha2/pod-log/containers.js';
import type { TimedLine } from '../../../../../src/apis/logging/v1alpha2/pod-log/log-line.js';
import { SkipTracker } from '../../../../../src/apis/logging/v1alpha2/pod-log/skipped.js';
import { newestLines, type TailIo } from '../../../../../src/apis/logging/v1alpha2/pod-log/tail-query.js';

const target = (pod: string, order: number): ContainerTarget => ({ namespace: 'ns', pod, container: 'c', order });

/** Container logs (ms times, ascending) read as the pod-log API reads a tail: the last n lines since a time. */
function fakeIo(logs: Map<ContainerTarget, number[] | Error>) {
  const reads: number[] = [];
  const io: TailIo = {
    read: () => Promise.reject(new Error('not used')),
    firstLineMs: () => Promise.reject(new Error('not used')),
    limit: (task) => task(),
    async tail(t, lines, sinceMs, onLine: (line: TimedLine) => boolean) {
      reads.push(lines);
      const log = logs.get(t)!;
      if (log instanceof Error) throw log;
      const since = sinceMs === undefined ? -Infinity : Math.floor(sinceMs / 1000) * 1000;
      const kept = log.filter((ms) => ms >= since);
      for (const [i, ms] of kept.slice(Math.max(0, kept.length - lines)).entries()) {
        onLine({ sec: Math.floor(ms / 1000), nano: (ms % 1000) * 1e6, text: `${t.pod}@${ms}#${i}` });
      }
      return 'eof' as const;
    },
  };
  return { io, reads };
}

const plan = (targets: ContainerTarget[], extra: Partial<Parameters<typeof newestLines>[1]> = {}) => ({
  targets,
  startMs: undefined,
  endMs: 1e12,
  accept: () => true,
  wanted: 3,
  countUpTo: 10,
  ...extra,
});

describe('newestLines', () => {
  const a = target('a', 0);
  const b = target('b', 1);

  it('when one tail of each container holds the answer, then each container is read once', async () => {
    const times = (n: number, step: number) => Array.from({ length: n }, (_, i) => 1000 + i * step);
    const { io, reads } = fakeIo(
      new Map([
        [a, times(200, 10)],
        [b, times(200, 7)],
      ]),
    );
    const { lines, matched } = await newestLines(io, plan([a, b]), new SkipTracker(), new AbortController().signal);
    expect(reads).toHaveLength(2);
    expect(matched).toBeGreaterThanOrEqual(10);
    expect(lines.slice(0, 3).map((l) => l.text.split('#')[0])).toEqual(['a@2990', 'a@2980', 'a@2970']);
  });

  it('when one container is quiet and another busy, then the quiet one is read further back until the answer is sure', async () => {
    const busy = Array.from({ length: 500 }, (_, i) => 100_000 + i);
    const quiet = [1000, 2000, 3000, 99_999, 100_600];
    const { io } = fakeIo(
      new Map([
        [a, busy],
        [b, quiet],
      ]),
    );
    const { lines } = await newestLines(
      io,
      plan([a, b], { wanted: 120, countUpTo: 120 }),
      new SkipTracker(),
      new AbortController().signal,
    );
    const expected = [...busy, ...quiet].sort((x, y) => y - x).slice(0, 120);
    expect(lines.slice(0, 120).map((l) => l.sec * 1000 + l.nano / 1e6)).toEqual(expected);
  });

  it('when few lines match a keyword, then longer tails are read until all are counted', async () => {
    const log = Array.from({ length: 1000 }, (_, i) => 1000 + i);
    const { io, reads } = fakeIo(new Map([[a, log]]));
    const { lines, matched } = await newestLines(
      io,
      plan([a], { accept: (text) => text.startsWith('a@1000#') || text.startsWith('a@1500#') }),
      new SkipTracker(),
      new AbortController().signal,
    );
    expect(matched).toBe(2);
    expect(lines.map((l) => l.sec * 1000 + l.nano / 1e6)).toEqual([1500, 1000]);
    expect(reads.length).toBeGreaterThan(1);
  });

  it('when a container cannot be read, then it is skipped and counted', async () => {
    const skipped = new SkipTracker();
    const { io } = fakeIo(
      new Map<ContainerTarget, number[] | Error>([
        [a, [1000]],
        [b, new Error('waiting to start')],
      ]),
    );
    const { matched } = await newestLines(io, plan([a, b]), skipped, new AbortController().signal);
    expect(matched).toBe(1);
    expect(skipped.report()?.containers).toBe(1);
  });

  it('when the byte limit cuts a tail (its newest lines never come), then the container is skipped, not taken as complete', async () => {
    const skipped = new SkipTracker();
    const { io } = fakeIo(new Map([[a, [1000, 2000]]]));
    const cut: TailIo = {
      ...io,
      async tail(t, _lines, _sinceMs, onLine) {
        // what the kubelet sends when the last lines asked for exceed limitBytes: the oldest of them, then the end
        if (t === b) {
          onLine({ sec: 5, nano: 0, text: 'b-oldest-of-the-tail' });
          return 'limit';
        }
        return io.tail(t, _lines, _sinceMs, onLine, new AbortController().signal);
      },
    };
    const { lines } = await newestLines(cut, plan([a, b]), skipped, new AbortController().signal);
    expect(lines.map((l) => l.text)).not.toContain('b-oldest-of-the-tail');
    expect(skipped.report()).toEqual({
      containers: 1,
      examples: [{ namespace: 'ns', pod: 'b', container: 'c', reason: 'the log exceeds the read limit (limitBytes)' }],
    });
  });
});
