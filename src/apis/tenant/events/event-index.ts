import type { KubeClient } from '../../../kube/client.js';
import { Reflector } from '../../../kube/reflector.js';
import type { Logger } from '../../../observability/logger.js';
import { ServiceUnavailableError } from '../../../server/errors.js';
import { eventRecordOf, type EventRecord } from './event-search.js';

/** How long a search waits for the first read of the events before a 503 (Retry-After). */
const FIRST_READ_MS = 20_000;

/**
 * The cluster's events, watched (core/v1, every namespace) and kept as search records: made and started by the
 * first search (and only then among kapi's reported caches), so a kapi nobody asks for events holds none; outside
 * readiness (a search before the first read waits for it, then answers 503).
 */
export class EventIndex {
  private events: Reflector<EventRecord> | undefined;
  private stopped = false;

  constructor(
    private readonly client: KubeClient,
    private readonly logger: Logger,
  ) {}

  /** Every event kept, once the first read is done. */
  async records(): Promise<readonly EventRecord[]> {
    if (this.stopped) throw new ServiceUnavailableError('kapi is shutting down', 1);
    if (!this.events) {
      this.events = new Reflector<EventRecord>({
        client: this.client,
        logger: this.logger,
        name: 'event-search',
        listPath: '/api/v1/events',
        transform: eventRecordOf,
        same: (a, b) => a.json === b.json,
      });
      this.events.start();
    }
    if (!this.events.synced) {
      await this.events.waitForSync(FIRST_READ_MS).catch(() => {
        throw new ServiceUnavailableError('the cluster’s events have not been read yet; try again', 2);
      });
    }
    return this.events.list();
  }

  get size(): number {
    return this.events?.size ?? 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.events?.stop();
  }
}
