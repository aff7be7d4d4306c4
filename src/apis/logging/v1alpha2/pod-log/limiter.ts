/**
 * At most `limit` log reads at once across all requests, so a burst of queries cannot open thousands of streams to
 * kube-apiserver (or hold their lines in memory). Waiters leave the queue when their request is aborted.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  async run<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener('abort', cancel);
        this.running++;
        resolve();
      };
      const cancel = () => {
        const at = this.waiting.indexOf(grant);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', cancel, { once: true });
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  get active(): number {
    return this.running;
  }
}
