import type { ContainerTarget } from './containers.js';
import { lineMs, type TimedLine } from './log-line.js';
import type { ReadEnd } from './log-reader.js';
import type { ScanIo, ScanLine } from './ordered-scan.js';
import type { SkipTracker } from './skipped.js';

/**
 * The reads a tail query makes: the last `lines` lines of a container (since `sinceMs`), oldest first; `limit` when
 * `limitBytes` cut the tail (its newest lines never came).
 */
export interface TailIo extends ScanIo {
  tail(
    target: ContainerTarget,
    lines: number,
    sinceMs: number | undefined,
    onLine: (line: TimedLine) => boolean,
    signal: AbortSignal,
  ): Promise<ReadEnd>;
}

export interface TailPlan {
  readonly targets: readonly ContainerTarget[];
  readonly startMs: number | undefined;
  readonly endMs: number;
  readonly accept: (text: string) => boolean;
  /** Lines wanted newest first (from + size). */
  readonly wanted: number;
  /** Lines counted at most (the total's cap). */
  readonly countUpTo: number;
}

interface Tail {
  size: number;
  lines: ScanLine[];
  /** The log (since the start) has no line before the ones read. */
  complete: boolean;
  /** The oldest line read, matching or not. */
  oldestMs: number;
}

const newestFirst = (x: ScanLine, y: ScanLine): number =>
  y.sec - x.sec || y.nano - x.nano || y.target.order - x.target.order || y.seq - x.seq;

/**
 * The newest matching lines of many containers, for a query ending now: each container's last lines are read with
 * `tailLines` (one request each, about `countUpTo / containers` lines), and only the containers that could still hide
 * a line of the answer, or lines still to count, are read again with a longer tail. Far fewer reads than walking
 * time windows back from now. Returns the lines newest first, and how many matched (exact when below `countUpTo`).
 */
export async function newestLines(
  io: TailIo,
  plan: TailPlan,
  skipped: SkipTracker,
  signal: AbortSignal,
): Promise<{ lines: ScanLine[]; matched: number }> {
  const first = Math.max(
    50,
    Math.ceil((Math.max(plan.countUpTo, plan.wanted) / Math.max(1, plan.targets.length)) * 1.2),
  );
  const tails = new Map<ContainerTarget, Tail>();
  let pending = [...plan.targets];
  for (const target of pending) tails.set(target, { size: first, lines: [], complete: false, oldestMs: Infinity });
  const startMs = plan.startMs ?? -Infinity;
  for (;;) {
    await Promise.all(
      pending.map((target) =>
        io
          .limit(async () => {
            const tail = tails.get(target)!;
            const lines: ScanLine[] = [];
            let read = 0;
            let oldestMs = Infinity;
            const end = await io.tail(
              target,
              tail.size,
              plan.startMs,
              (line) => {
                read++;
                const ms = lineMs(line);
                if (read === 1) oldestMs = ms;
                if (ms >= startMs && ms <= plan.endMs && plan.accept(line.text)) {
                  lines.push({ sec: line.sec, nano: line.nano, text: line.text, target, seq: read });
                }
                return true;
              },
              signal,
            );
            // Cut by the byte limit, the tail holds its oldest lines, not its newest: fewer lines than asked would
            // wrongly say the log has no more.
            if (end === 'limit') throw new Error('the log exceeds the read limit (limitBytes)');
            tail.lines = lines;
            tail.complete = read < tail.size;
            tail.oldestMs = oldestMs;
          }, signal)
          .catch((error: unknown) => {
            if (signal.aborted) throw error;
            skipped.skip(target, error);
            tails.delete(target);
          }),
      ),
    );
    const all: ScanLine[] = [];
    for (const tail of tails.values()) for (const line of tail.lines) all.push(line);
    all.sort(newestFirst);
    const counted = all.length >= plan.countUpTo;
    const cutoff = all.length >= plan.wanted && plan.wanted > 0 ? all[plan.wanted - 1]! : undefined;
    const cutoffMs = cutoff ? lineMs(cutoff) : Infinity;
    pending = [...tails]
      .filter(([, tail]) => !tail.complete && (!counted || tail.oldestMs >= cutoffMs))
      .map(([target]) => target);
    if (pending.length === 0) return { lines: all, matched: all.length };
    for (const target of pending) tails.get(target)!.size *= 4;
  }
}
