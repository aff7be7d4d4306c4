import { describe, expect, it } from '@jest/globals';
import type { ContainerTarget } from '../../../../../src/apis/logging/v1alpha2/pod-log/containers.js';
import type { TimedLine } from '../../../../../src/apis/logging/v1alpha2/pod-log/log-line.js';
import type { ReadEnd } from '../../../../../src/apis/logging/v1alpha2/pod-log/log-reader.js';
import {
  LINE_COST_BYTES,
  scanInOrder,
  type ScanIo,
  type ScanLine,
} from '../../../../../src/apis/logging/v1alpha2/pod-log/ordered-scan.js';
import { SkipTracker } from '../../../../../src/apis/logging/v1alpha2/pod-log/skipped.js';

const target = (pod: string, order: number): ContainerTarget => ({ namespace: 'ns', pod, container: 'c', order });

/** In-memory container logs (ms times) read the way the pod-log API reads them: forward from a whole second. */
class FakeLogs implements ScanIo {
  reads = 0;
  constructor(private readonly logs: Map<ContainerTarget, { ms: number; text: string }[] | Error>) {}

  async read(
    t: ContainerTarget,
    options: { sinceMs?: number },
    onLine: (line: TimedLine) => boolean,
    signal: AbortSignal,
  ): Promise<ReadEnd> {
    this.reads++;
    signal.throwIfAborted();
    const log = this.logs.get(t)!;
    if (log instanceof Error) throw log;
    const since = options.sinceMs === undefined ? -Infinity : Math.floor(options.sinceMs / 1000) * 1000;
    for (const line of log) {
      if (line.ms < since) continue;
      if (!onLine({ sec: Math.floor(line.ms / 1000), nano: (line.ms % 1000) * 1e6, text: line.text })) return 'stopped';
    }
    return 'eof';
  }

  async firstLineMs(t: ContainerTarget, sinceMs: number | undefined): Promise<number | undefined> {
    const log = this.logs.get(t)!;
    if (log instanceof Error) throw log;
    const since = sinceMs === undefined ? -Infinity : Math.floor(sinceMs / 1000) * 1000;
    return log.find((line) => line.ms >= since)?.ms;
  }

  limit<T>(task: () => Promise<T>): Promise<T> {
    return task();
  }
}

function lines(prefix: string, times: number[]) {
  return times.map((ms, i) => ({ ms, text: `${prefix}${i}` }));
}

async function collect(
  io: ScanIo,
  targets: ContainerTarget[],
  order: 'asc' | 'desc',
  options: {
    startMs?: number;
    endMs?: number;
    accept?: (t: string) => boolean;
    maxLines?: number;
    maxBytes?: number;
    stopAfter?: number;
  } = {},
) {
  const out: ScanLine[] = [];
  let largest = 0;
  const skipped = new SkipTracker();
  await scanInOrder(
    io,
    {
      targets,
      startMs: options.startMs,
      endMs: options.endMs ?? 1_000_000,
      order,
      accept: options.accept ?? (() => true),
    },
    (window) => {
      largest = Math.max(largest, window.length);
      out.push(...window);
      return options.stopAfter === undefined || out.length < options.stopAfter;
    },
    skipped,
    new AbortController().signal,
    { targetLines: 4, maxLines: options.maxLines ?? 1000, maxBytes: options.maxBytes ?? 1e9, firstWidthMs: 2000 },
  );
  return { texts: out.map((l) => l.text), skipped: skipped.report(), largest };
}

describe('scanInOrder', () => {
  const a = target('a', 0);
  const b = target('b', 1);
  const logs = new Map([
    [a, lines('a', [1000, 5000, 5000, 90_000, 91_000])],
    [b, lines('b', [500, 5000, 60_000, 200_000])],
  ]);

  it('when asked ascending, then every line comes once, by time, ties by container then position', async () => {
    expect((await collect(new FakeLogs(logs), [a, b], 'asc')).texts).toEqual([
      'b0',
      'a0',
      'a1',
      'a2',
      'b1',
      'b2',
      'a3',
      'a4',
      'b3',
    ]);
  });

  it('when asked descending, then the exact reverse comes', async () => {
    expect((await collect(new FakeLogs(logs), [a, b], 'desc')).texts).toEqual([
      'b3',
      'a4',
      'a3',
      'b2',
      'b1',
      'a2',
      'a1',
      'a0',
      'b0',
    ]);
  });

  it('when a time range and a keyword filter apply, then only matching lines inside it come', async () => {
    const result = await collect(new FakeLogs(logs), [a, b], 'asc', {
      startMs: 5000,
      endMs: 90_000,
      accept: (text) => text !== 'b2',
    });
    expect(result.texts).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it('when a window would hold more lines than allowed, then it is read again narrower and nothing is lost', async () => {
    const busy = new Map([
      [
        a,
        lines(
          'a',
          Array.from({ length: 40 }, (_, i) => 10_000 + i * 10),
        ),
      ],
    ]);
    const result = await collect(new FakeLogs(busy), [a], 'asc', { maxLines: 5 });
    expect(result.texts).toEqual(Array.from({ length: 40 }, (_, i) => `a${i}`));
  });

  it('when long lines would make a window hold more bytes than allowed, then it is read again narrower and nothing is lost', async () => {
    const long = new Map([
      [a, Array.from({ length: 40 }, (_, i) => ({ ms: 10_000 + i * 10, text: `a${i}:${'x'.repeat(1000)}` }))],
    ]);
    // room for three such lines (each costs its text and LINE_COST_BYTES)
    const result = await collect(new FakeLogs(long), [a], 'asc', { maxBytes: 3 * (1004 + LINE_COST_BYTES) });
    expect(result.texts.map((text) => text.split(':')[0])).toEqual(Array.from({ length: 40 }, (_, i) => `a${i}`));
    expect(result.largest).toBeLessThanOrEqual(3);
  });

  it('when a container cannot be read, then it is skipped and counted and the others still come', async () => {
    const broken = new Map<ContainerTarget, { ms: number; text: string }[] | Error>([
      [a, lines('a', [1000, 2000])],
      [b, new Error('container "c" in pod "b" is waiting to start')],
    ]);
    const result = await collect(new FakeLogs(broken), [a, b], 'desc');
    expect(result.texts).toEqual(['a1', 'a0']);
    expect(result.skipped).toEqual({
      containers: 1,
      examples: [{ namespace: 'ns', pod: 'b', container: 'c', reason: 'container "c" in pod "b" is waiting to start' }],
    });
  });

  it('when the consumer has enough, then no further windows are read', async () => {
    const many = new Map([
      [
        a,
        lines(
          'a',
          Array.from({ length: 100 }, (_, i) => i * 10_000),
        ),
      ],
    ]);
    const io = new FakeLogs(many);
    const result = await collect(io, [a], 'desc', { stopAfter: 3 });
    expect(result.texts.slice(0, 3)).toEqual(['a99', 'a98', 'a97']);
    const all = new FakeLogs(many);
    await collect(all, [a], 'desc');
    expect(io.reads).toBeLessThan(all.reads);
  });

  it('when lines of one container are slightly out of time order, then none is lost', async () => {
    const shuffled = new Map([[a, lines('a', [3000.7, 3000.2, 3000.9, 3000.1, 7000])]]);
    const result = await collect(new FakeLogs(shuffled), [a], 'asc');
    expect(result.texts).toEqual(['a3', 'a1', 'a0', 'a2', 'a4']);
  });

  describe('when lines are days apart, between containers and inside one', () => {
    const DAY = 86_400_000;
    const c = target('c', 2);
    // a ends before b begins (the gap between containers), then a and c resume days later (gaps inside them)
    const apart = new Map([
      [a, lines('a', [DAY, DAY + 1000, 6 * DAY])],
      [b, lines('b', [3 * DAY, 3 * DAY + 500])],
      [c, lines('c', [9 * DAY])],
    ]);
    const ended = new Map([
      [a, lines('a', [DAY, DAY + 1000])],
      [b, lines('b', [3 * DAY, 3 * DAY + 500])],
    ]);
    const endMs = 10 * DAY;

    it('then asc returns every line, in time order, and desc the same lines reversed', async () => {
      for (const [logs, targets, expected] of [
        [apart, [a, b, c], ['a0', 'a1', 'b0', 'b1', 'a2', 'c0']],
        [ended, [a, b], ['a0', 'a1', 'b0', 'b1']],
      ] as const) {
        const asc = await collect(new FakeLogs(logs), [...targets], 'asc', { endMs });
        const desc = await collect(new FakeLogs(logs), [...targets], 'desc', { endMs });
        expect(asc.texts).toEqual(expected);
        expect(desc.texts).toEqual([...asc.texts].reverse());
      }
    });

    it('then asc jumps each gap to the next line instead of walking the empty days', async () => {
      const io = new FakeLogs(apart);
      await collect(io, [a, b, c], 'asc', { endMs });
      // One read per window that holds lines (a0 | a1 | b0 b1 | a2 | c0; the first window is 2 s wide), each by the
      // one container that can have lines there; walking the empty days reads again at every widening.
      expect(io.reads).toBe(5);
    });

    it('then a start time inside a gap still finds the lines after it', async () => {
      const asc = await collect(new FakeLogs(apart), [a, b, c], 'asc', { startMs: 2 * DAY, endMs });
      const desc = await collect(new FakeLogs(apart), [a, b, c], 'desc', { startMs: 2 * DAY, endMs });
      expect(asc.texts).toEqual(['b0', 'b1', 'a2', 'c0']);
      expect(desc.texts).toEqual([...asc.texts].reverse());
    });
  });
});
