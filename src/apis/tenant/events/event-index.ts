import type { KubeClient } from '../../../kube/client.js';
import { Reflector } from '../../../kube/reflector.js';
import type { Logger } from '../../../observability/logger.js';
import { ServiceUnavailableError } from '../../../server/errors.js';
import { eventRecordOf, type EventRecord } from './event-search.js';

/** How long a search waits for the first read of the events before a 503 (Retry-After). */
const FIRST_READ_MS = 20_000;

/**
 * The cluster's events, watched (core/v1, every namespace) and kept as search records: started by the first search,
 * so a kapi nobody asks for events holds none; outside readiness (a search before the first read waits for it, then
 * answers 503).
 */
export class EventIndex {
  private readonly events: Reflector<EventRecord>;
  private started = false;

  constructor(client: KubeClient, logger: Logger) {
    this.events = new Reflector<EventRecord>({
      client,
      logger,
      name: 'event-search',
      listPath: '/api/v1/events',
      transform: eventRecordOf,
      same: (a, b) => a.json === b.json,
    });
  }

  /** Every event kept, once the first read is done. */
  async records(): Promise<readonly EventRecord[]> {
    if (!this.started) {
      this.started = true;
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
    return this.events.size;
  }

  async stop(): Promise<void> {
    await this.events.stop();
  }
}
