import type { Logger } from '../observability/logger.js';
import { KubeApiError } from './client.js';

/**
 * Whether a cache is being kept current, for `/readyz` and the log. A failure starts the clock; a successful list or
 * an established watch stops it. Readiness fails before the first sync, and once the clock has run past
 * `staleAfterMs`. Outages are logged at their start (then at 2, 4, 8… failures), when they turn stale, and at
 * their end, so a long one does not flood the log.
 */
export class CacheHealth {
  private brokenSince: number | undefined;
  private staleReported = false;
  private error: string | undefined;

  constructor(
    private readonly log: Logger,
    private readonly staleAfterMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get lastError(): string | undefined {
    return this.error;
  }

  failed(error: unknown, failures: number, retryInMs: number): void {
    this.error = describeError(error);
    const now = this.now();
    this.brokenSince ??= now;
    const fields = { failures, retryInMs, error: this.error };
    if ((failures & (failures - 1)) === 0) this.log.warn('list/watch failed; retrying', fields);
    else this.log.debug('list/watch failed; retrying', fields);
    if (!this.staleReported && now - this.brokenSince > this.staleAfterMs) {
      this.staleReported = true;
      this.log.error('cache is stale: not ready until the watch recovers', { brokenForMs: now - this.brokenSince });
    }
  }

  current(): void {
    if (this.brokenSince === undefined) return;
    this.log.info('cache is current again', { brokenForMs: this.now() - this.brokenSince });
    this.brokenSince = undefined;
    this.staleReported = false;
    this.error = undefined;
  }

  notReadyReason(state: { synced: boolean; stopped: boolean }): string | undefined {
    if (state.stopped) return 'stopped';
    if (!state.synced) return `not synced yet${this.error ? ` (last error: ${this.error})` : ''}`;
    if (this.brokenSince === undefined) return undefined;
    const brokenFor = this.now() - this.brokenSince;
    if (brokenFor <= this.staleAfterMs) return undefined;
    return `not kept current for ${Math.round(brokenFor / 1000)} s (last error: ${this.error ?? 'unknown'})`;
  }
}

/** Error text for logs and /readyz: short, and never more than the error's own message. */
export function describeError(error: unknown): string {
  const text =
    error instanceof KubeApiError ? `HTTP ${error.code}: ${error.message}` : String((error as Error)?.message ?? error);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
