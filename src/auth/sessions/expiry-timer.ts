/** setTimeout's longest delay is ~24.8 days; a later expiry is reached in steps (and the clock re-read at each). */
const LONGEST_WAIT_MS = 3_600_000;

interface Due {
  at: number;
  id: string;
}

/**
 * One timer for the earliest of many expiry times, so each session's end is acted on at that moment, not by a
 * periodic sweep. Times may move (a refresh extends a session) or be dropped; stale entries stay in the heap until
 * their time and are skipped then, and the heap is rebuilt when they outnumber the live ones.
 */
export class ExpiryTimer {
  private readonly expiries = new Map<string, number>();
  private heap: Due[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;

  constructor(
    /** Milliseconds since the epoch. */
    private readonly clock: () => number,
    private readonly expired: (id: string) => void,
  ) {}

  get size(): number {
    return this.expiries.size;
  }

  /** `id` expires at `atMs` (replacing its earlier time). */
  set(id: string, atMs: number): void {
    if (this.expiries.get(id) === atMs) return;
    this.expiries.set(id, atMs);
    push(this.heap, { at: atMs, id });
    if (this.heap.length > 2 * this.expiries.size + 1024) this.rebuild();
    this.schedule();
  }

  delete(id: string): void {
    this.expiries.delete(id);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Tells every id whose time has come, once, and waits for the next. */
  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock();
    while (this.heap.length > 0 && this.heap[0]!.at <= now) {
      const { at, id } = pop(this.heap);
      if (this.expiries.get(id) !== at) continue;
      this.expiries.delete(id);
      this.expired(id);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    while (this.heap.length > 0 && this.expiries.get(this.heap[0]!.id) !== this.heap[0]!.at) pop(this.heap);
    const next = this.heap[0]?.at;
    if (next === undefined || (this.timer && this.timerAt <= next)) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    this.timer = setTimeout(() => this.fire(), Math.min(Math.max(0, next - this.clock()), LONGEST_WAIT_MS));
    this.timer.unref();
  }

  private rebuild(): void {
    this.heap = [];
    for (const [id, at] of this.expiries) push(this.heap, { at, id });
  }
}

function push(heap: Due[], due: Due): void {
  heap.push(due);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]!.at <= heap[i]!.at) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

function pop(heap: Due[]): Due {
  const top = heap[0]!;
  const last = heap.pop()!;
  if (heap.length > 0) {
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && heap[left]!.at < heap[least]!.at) least = left;
      if (right < heap.length && heap[right]!.at < heap[least]!.at) least = right;
      if (least === i) break;
      [heap[least], heap[i]] = [heap[i]!, heap[least]!];
      i = least;
    }
  }
  return top;
}
