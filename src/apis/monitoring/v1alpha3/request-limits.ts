import { TooManyRequestsError } from '../../../server/errors.js';
import { InFlightCounts } from '../../../server/in-flight-counts.js';

/** A user's monitoring requests in flight at once: a console page sends a handful; more are refused (SPEC §19). */
export const MAX_REQUESTS_PER_USER = 4;
/**
 * A replica's, whoever sends them: each may hold its metrics' answers (at most 4 MiB of text each) until it is
 * written, so their number bounds the memory monitoring takes.
 */
export const MAX_REQUESTS_PER_REPLICA = 32;
const RETRY_AFTER_SECONDS = 1;

/**
 * How many monitoring requests run at once, of one user and on the replica. Each may hold upstream queries (a `.*`
 * filter is dozens) and their answers, so one user cannot fill the replica's upstream queue and all of them cannot
 * fill its memory; beyond a limit a request is refused at once (429 with Retry-After), never queued.
 */
export class MonitoringRequestLimits {
  private readonly running = new InFlightCounts();

  constructor(
    private readonly perUser = MAX_REQUESTS_PER_USER,
    private readonly perReplica = MAX_REQUESTS_PER_REPLICA,
  ) {}

  /** Takes a place for `user`'s request, or throws TooManyRequestsError; `release` gives it back (once). */
  admit(user: string): () => void {
    if (this.running.of(user) >= this.perUser)
      throw new TooManyRequestsError(
        `too many monitoring requests of this user at once (at most ${this.perUser}); try again when one has finished`,
        RETRY_AFTER_SECONDS,
      );
    if (this.running.total >= this.perReplica)
      throw new TooManyRequestsError(
        `too many monitoring requests at once on this server (at most ${this.perReplica}); try again shortly`,
        RETRY_AFTER_SECONDS,
      );
    this.running.add(user);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running.remove(user);
    };
  }
}
