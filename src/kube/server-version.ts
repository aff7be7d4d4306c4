import type { KubeClient } from './client.js';

/**
 * kube-apiserver's /version, read at most once a minute however often it is asked (a public route answers with it),
 * one read at a time. `undefined` while it cannot be read; the last good answer is kept meanwhile.
 */
export class ServerVersion<T = Record<string, unknown>> {
  private value: T | undefined;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<T | undefined> | undefined;

  constructor(
    private readonly client: Pick<KubeClient, 'request'>,
    private readonly maxAgeMs = 60_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(): Promise<T | undefined> {
    if (this.now() - this.readAt < this.maxAgeMs) return Promise.resolve(this.value);
    this.reading ??= this.client
      .request<T>({ path: '/version', timeoutMs: 5_000 })
      .then(
        (value) => {
          this.value = value;
          this.readAt = this.now();
          return value;
        },
        () => this.value,
      )
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
