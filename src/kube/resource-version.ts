/**
 * resourceVersions are opaque to clients in general, but kube-apiserver's (etcd revisions) are decimal integers that
 * grow with every write. Where both are such integers, they are compared as numbers (BigInt: an int64 may not fit a
 * double); anything else is not comparable.
 */
const DECIMAL = /^(0|[1-9]\d*)$/;

/** Whether a cache that has seen `seen` has reached `target`; undefined when either is not a decimal integer. */
export function resourceVersionReached(seen: string, target: string): boolean | undefined {
  if (!DECIMAL.test(seen) || !DECIMAL.test(target)) return undefined;
  return BigInt(seen) >= BigInt(target);
}

/**
 * A collection's current resourceVersion, read from the cluster at most once per `reuseMs`: callers arriving while
 * a read is in flight share it, and a read (or its failure) is reused until `reuseMs` after it started. A flood of
 * callers therefore costs kube-apiserver about one read per `reuseMs`, however many there are.
 */
export class SharedVersionRead {
  private last: { startedAt: number; settled: boolean; version: Promise<string> } | undefined;

  constructor(
    private readonly read: () => Promise<string>,
    private readonly reuseMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  current(): Promise<string> {
    const now = this.now();
    if (this.last && (!this.last.settled || now - this.last.startedAt < this.reuseMs)) return this.last.version;
    const last = { startedAt: now, settled: false, version: this.read() };
    // each caller handles a failure; this also keeps a read nobody awaits from being an unhandled rejection
    last.version.then(
      () => (last.settled = true),
      () => (last.settled = true),
    );
    this.last = last;
    return last.version;
  }
}
