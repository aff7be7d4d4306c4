import type { ResourceType } from './resource-types.js';
import type { StoredObject } from './stored-object.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change. Watch lines serialized from it are memoized on the event, so fan-out serializes once. */
export interface StoreEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly resourceType: ResourceType;
  /** The new state; for DELETED, the last state carrying the deletion's resourceVersion. */
  readonly object: StoredObject;
  /** The state before the change (MODIFIED, DELETED). */
  readonly prev: StoredObject | undefined;
  lines?: Map<string, string>;
}

/**
 * A bounded, ordered window of one resource type's recent events, like the watch cache's ring: a watch or a paged
 * list may start at any resourceVersion at or after `floor`; anything older has been forgotten (410 Expired).
 */
export class History {
  private ring: (StoreEvent | undefined)[];
  private start = 0;
  private size = 0;

  constructor(
    private readonly capacity: number,
    /** Events with rv <= floor are not (or no longer) known. */
    public floor: number,
  ) {
    this.ring = new Array<StoreEvent | undefined>(capacity);
  }

  push(event: StoreEvent): void {
    if (this.size === this.capacity) {
      const dropped = this.ring[this.start] as StoreEvent;
      this.floor = dropped.rv;
      this.ring[this.start] = undefined;
      this.start = (this.start + 1) % this.capacity;
      this.size--;
    }
    this.ring[(this.start + this.size) % this.capacity] = event;
    this.size++;
  }

  /** Forgets every event: only versions from `floor` on remain usable. */
  compact(floor: number): void {
    this.ring = new Array<StoreEvent | undefined>(this.capacity);
    this.start = 0;
    this.size = 0;
    this.floor = floor;
  }

  /** Whether the window still covers every change after `rv`. */
  covers(rv: number): boolean {
    return rv >= this.floor;
  }

  /** Events with rv > `after`, oldest first. */
  since(after: number): StoreEvent[] {
    // Binary search over the ring for the first event newer than `after`.
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).rv <= after) lo = mid + 1;
      else hi = mid;
    }
    const events: StoreEvent[] = [];
    for (let i = lo; i < this.size; i++) events.push(this.at(i));
    return events;
  }

  /**
   * How the objects changed since `rv` looked at `rv`: key → the state then (null: absent then). Keys missing from
   * the map are unchanged. Walking newest to oldest leaves each key with its state just before its first later change.
   */
  stateAt(rv: number): Map<string, StoredObject | null> {
    const states = new Map<string, StoredObject | null>();
    const events = this.since(rv);
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i] as StoreEvent;
      states.set(event.object.key, event.type === 'ADDED' ? null : (event.prev ?? null));
    }
    return states;
  }

  private at(index: number): StoreEvent {
    return this.ring[(this.start + index) % this.capacity] as StoreEvent;
  }
}
