import type { SortOrder } from '../query.js';
import type { ContainerTarget } from './containers.js';
import { lineMs, type TimedLine } from './log-line.js';
import type { ReadEnd, ReadOptions } from './log-reader.js';
import type { SkipTracker } from './skipped.js';

/** A line placed in the merged order: time, then container, then position in its container. */
export interface ScanLine extends TimedLine {
  readonly target: ContainerTarget;
  readonly seq: number;
}

export interface ScanIo {
  read(
    target: ContainerTarget,
    options: Omit<ReadOptions, 'limitBytes' | 'timeoutMs'>,
    onLine: (line: TimedLine) => boolean,
    signal: AbortSignal,
  ): Promise<ReadEnd>;
  firstLineMs(target: ContainerTarget, sinceMs: number | undefined, signal: AbortSignal): Promise<number | undefined>;
  /** Runs a read under the shared concurrency bound. */
  limit<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T>;
}

export interface ScanPlan {
  readonly targets: readonly ContainerTarget[];
  /** Epoch ms, inclusive. */
  readonly startMs: number | undefined;
  readonly endMs: number;
  readonly order: SortOrder;
  /** The keyword filter on a line's text. */
  readonly accept: (text: string) => boolean;
}

export interface WindowTuning {
  /** Lines a window aims at; the next window's width follows the last one's rate. */
  targetLines: number;
  /** Lines a window may hold: beyond it the window is read again, narrower (bounded memory). */
  maxLines: number;
  /** Memory a window may hold (see LINE_COST_BYTES): long lines reach it before maxLines does. */
  maxBytes: number;
  firstWidthMs: number;
}

/**
 * What a held line costs beyond its text: the line object, its string's header and the timestamp before the text in
 * the chunk it was cut from (measured at about 105 bytes with V8's sliced strings; rounded up).
 */
export const LINE_COST_BYTES = 128;

/**
 * How far past a window's end a read goes on: a container's stdout and stderr lines reach the log slightly out of
 * time order, so the first line past the end does not mean every later line is.
 */
export const OUT_OF_ORDER_MS = 1000;

/**
 * A query's windows: it needs at most 10,000 lines in order (the result window), so a window of 10,000 is enough and
 * one holds about 4 MiB at most. A window aims at 250 lines per container it reads (within the budget), so a wide
 * query costs few reads per container rather than many small ones.
 */
export const QUERY_WINDOWS: WindowTuning = {
  targetLines: 5_000,
  maxLines: 20_000,
  maxBytes: 4 * 2 ** 20,
  firstWidthMs: 10_000,
};

/**
 * An export's windows: it holds one window while its client reads it, whatever the client does (the next one is read
 * only once this one is written), so this is what one export costs in memory at most: about 8 MiB.
 */
export const EXPORT_WINDOWS: WindowTuning = {
  targetLines: 5_000,
  maxLines: 50_000,
  maxBytes: 8 * 2 ** 20,
  firstWidthMs: 10_000,
};
const LINES_PER_READER = 250;

/**
 * Reads the matching lines of many containers merged by time, in `order`, without holding more than one time window
 * of them. The pod-log API reads forward only, from a `sinceTime`; so the range is cut into windows (walked forward
 * for asc, backward for desc), each window's lines are read from every container that can have some, sorted and
 * handed to `onWindow`, which returns false once it has what it needs. Window widths adapt to the log rate.
 */
export async function scanInOrder(
  io: ScanIo,
  plan: ScanPlan,
  onWindow: (lines: readonly ScanLine[]) => Promise<boolean> | boolean,
  skipped: SkipTracker,
  signal: AbortSignal,
  tuning: WindowTuning = QUERY_WINDOWS,
): Promise<void> {
  const firsts = await firstLines(io, plan, skipped, signal);
  if (firsts.size === 0) return;
  let earliest = Infinity;
  for (const first of firsts.values()) earliest = Math.min(earliest, first);
  const low = Math.max(plan.startMs ?? earliest, earliest);
  // Windows are [a, b); the last one must hold lines written exactly at endMs.
  const high = plan.endMs + 0.001;
  // Ascending: the earliest a container's next line can be (its first line, then what the last read saw past its
  // window). A container whose log ended is dropped.
  const next = new Map(firsts);
  const live = (t: ContainerTarget) => next.has(t) && !skipped.has(t);
  let width = tuning.firstWidthMs;
  let edge = plan.order === 'asc' ? low : high;

  while (plan.order === 'asc' ? edge < high : edge > low) {
    if (plan.order === 'asc') {
      // A gap (between containers, or inside one) is jumped to the next line anywhere, never taken as the end.
      let soonest = Infinity;
      for (const t of plan.targets) if (live(t)) soonest = Math.min(soonest, next.get(t)!);
      if (soonest >= high) break;
      edge = Math.max(edge, soonest);
    }
    const a = plan.order === 'asc' ? edge : Math.max(low, edge - width);
    const b = plan.order === 'asc' ? Math.min(high, edge + width) : edge;
    const readers = plan.targets.filter((t) => live(t) && next.get(t)! < b);
    // Descending, no container has a line before b: everything earlier has been read. (Ascending, the container
    // at `soonest` always reads.)
    if (readers.length === 0) break;
    const window = await readWindow(io, plan, readers, a, b, tuning, skipped, signal);
    if (window === 'too-many') {
      if (width <= 1) throw new Error('more log lines in one millisecond than a window may hold');
      width = Math.max(1, width / 4);
      continue;
    }
    if (plan.order === 'asc') {
      for (const target of window.ended) next.delete(target);
      for (const [target, ms] of window.later) next.set(target, Math.max(b, ms - OUT_OF_ORDER_MS));
    }
    edge = plan.order === 'asc' ? b : a;
    const rate = window.lines.length / Math.max(1, b - a);
    const target = Math.min(tuning.maxLines / 2, Math.max(tuning.targetLines, readers.length * LINES_PER_READER));
    width = Math.min(width * 4, Math.max(width / 4, rate > 0 ? target / rate : width * 4));
    window.lines.sort(plan.order === 'asc' ? ascending : (x, y) => ascending(y, x));
    if (!(await onWindow(window.lines))) return;
  }
}

function ascending(x: ScanLine, y: ScanLine): number {
  return x.sec - y.sec || x.nano - y.nano || x.target.order - y.target.order || x.seq - y.seq;
}

/** Each container's first line time at or after the start; containers with none (or unreadable) are left out. */
async function firstLines(
  io: ScanIo,
  plan: ScanPlan,
  skipped: SkipTracker,
  signal: AbortSignal,
): Promise<Map<ContainerTarget, number>> {
  const firsts = new Map<ContainerTarget, number>();
  await Promise.all(
    plan.targets.map((target) =>
      io.limit(async () => {
        try {
          // The first line is not always the earliest: lines just after it may be a little older.
          const first = await io.firstLineMs(target, plan.startMs, signal);
          if (first !== undefined && first <= plan.endMs + OUT_OF_ORDER_MS) firsts.set(target, first - OUT_OF_ORDER_MS);
        } catch (error) {
          if (signal.aborted) throw error;
          skipped.skip(target, error);
        }
      }, signal),
    ),
  );
  return firsts;
}

/**
 * The matching lines of [a, b) from every reader; `ended` are those whose log ended inside the window, `later` the
 * time of the earliest line each other reader showed past the window (its later lines are at most OUT_OF_ORDER_MS
 * before it).
 */
async function readWindow(
  io: ScanIo,
  plan: ScanPlan,
  readers: readonly ContainerTarget[],
  a: number,
  b: number,
  budget: Pick<WindowTuning, 'maxLines' | 'maxBytes'>,
  skipped: SkipTracker,
  signal: AbortSignal,
): Promise<{ lines: ScanLine[]; ended: ContainerTarget[]; later: Map<ContainerTarget, number> } | 'too-many'> {
  const lines: ScanLine[] = [];
  const ended: ContainerTarget[] = [];
  const laterAt = new Map<ContainerTarget, number>();
  let bytes = 0;
  const overflow = new AbortController();
  const windowSignal = AbortSignal.any([signal, overflow.signal]);
  const startMs = plan.startMs ?? -Infinity;
  await Promise.all(
    readers.map((target) =>
      io
        .limit(async () => {
          let seq = 0;
          let later = Infinity;
          const end = await io.read(
            target,
            { sinceMs: a },
            (line) => {
              const ms = lineMs(line);
              if (ms >= b) later = Math.min(later, ms);
              if (ms >= b + OUT_OF_ORDER_MS) return false;
              if (ms < a || ms >= b || ms < startMs || !plan.accept(line.text)) return true;
              lines.push({ sec: line.sec, nano: line.nano, text: line.text, target, seq: seq++ });
              bytes += line.text.length + LINE_COST_BYTES;
              if (lines.length > budget.maxLines || bytes > budget.maxBytes) {
                overflow.abort();
                return false;
              }
              return true;
            },
            windowSignal,
          );
          // Only a log that ended before the window's end has nothing for later windows.
          if (end === 'eof' && later === Infinity) ended.push(target);
          else if (later !== Infinity) laterAt.set(target, later);
          if (end === 'limit') skipped.skip(target, new Error('the log exceeds the read limit (limitBytes)'));
        }, windowSignal)
        .catch((error: unknown) => {
          if (windowSignal.aborted) return;
          skipped.skip(target, error);
        }),
    ),
  );
  signal.throwIfAborted();
  if (overflow.signal.aborted) return 'too-many';
  return { lines, ended, later: laterAt };
}
