import { TooManyRequestsError } from '../../../server/errors.js';
import { InFlightCounts } from '../../../server/in-flight-counts.js';

/** Exports stream every matching line and may hold a window of lines while the client reads; queries answer once. */
export type LogRequestKind = 'export' | 'query';

export interface ConcurrencyLimit {
  /** Requests of this kind in flight at once in this replica. */
  readonly perProcess: number;
  /** Requests of this kind in flight at once for one user. */
  readonly perUser: number;
}

export interface LogRequestLimitSettings {
  readonly exports: ConcurrencyLimit;
  /** query, statistics and histogram. */
  readonly queries: ConcurrencyLimit;
}

/** About 32 MiB of export windows and 32 MiB of query windows at most (see ordered-scan.ts). */
export const DEFAULT_LOG_REQUEST_LIMITS: LogRequestLimitSettings = {
  exports: { perProcess: 4, perUser: 2 },
  queries: { perProcess: 8, perUser: 4 },
};

/** An answer whose client takes none of it for this long is ended (`--log-write-timeout`). */
export const DEFAULT_LOG_WRITE_TIMEOUT_MS = 60_000;

/** What a refused request is told to wait, as kube-apiserver's own max-in-flight 429 says. */
export const RETRY_AFTER_SECONDS = 1;

/**
 * How many logging requests run at once, per replica and per user, for exports and for queries apart: each one reads
 * container logs and holds lines in memory until its client has taken them, so their number bounds kapi's memory
 * whatever clients do. Beyond a limit the request is refused at once (429 with Retry-After), never queued: a queue
 * would hold requests, and their clients' connections, for as long as the slowest reader.
 */
export class LogRequestLimits {
  private readonly running = { export: new InFlightCounts(), query: new InFlightCounts() };

  constructor(private readonly settings: LogRequestLimitSettings = DEFAULT_LOG_REQUEST_LIMITS) {}

  /** Takes a place for `user`'s request, or throws TooManyRequestsError; the place is given back by `release`. */
  admit(kind: LogRequestKind, user: string): () => void {
    const limit = kind === 'export' ? this.settings.exports : this.settings.queries;
    const counts = this.running[kind];
    const noun = kind === 'export' ? 'log exports' : 'log queries';
    if (counts.of(user) >= limit.perUser) {
      throw new TooManyRequestsError(
        `too many ${noun} of this user at once (at most ${limit.perUser}); try again when one has finished`,
        RETRY_AFTER_SECONDS,
      );
    }
    if (counts.total >= limit.perProcess) {
      throw new TooManyRequestsError(
        `too many ${noun} at once on this server (at most ${limit.perProcess}); try again shortly`,
        RETRY_AFTER_SECONDS,
      );
    }
    counts.add(user);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      counts.remove(user);
    };
  }

  /** Requests of `kind` in flight (for tests and the operator). */
  inFlight(kind: LogRequestKind): number {
    return this.running[kind].total;
  }
}
