import type { EventType, StoreEvent } from './history.js';
import { matchesFilter, type ObjectFilter } from './object-filter.js';
import { typeKey, type ResourceType } from './resource-types.js';
import { typeHeader, withResourceVersion, type StoredObject } from './stored-object.js';

/** One open watch, as the hub sees it: what it selects and where its lines go. */
export interface Watcher {
  readonly type: ResourceType;
  readonly version: string;
  /** '' watches every namespace. */
  readonly namespace: string;
  /** undefined: no selector, so every event goes out as the shared, once-serialized line. */
  readonly filter: ObjectFilter | undefined;
  readonly bookmarks: boolean;
  send(line: string): void;
  /** Ends the watch: cleanly (timeout, shutdown) or abruptly (a restarting apiserver drops connections). */
  close(abrupt: boolean): void;
}

/** How an event reaches a selecting watch: kube turns "stopped matching" into DELETED and "started" into ADDED. */
export interface Delivery {
  type: EventType;
  /** 'prev': the previous content, carrying the event's resourceVersion (the DELETED of an object that left). */
  content: 'object' | 'prev';
}

export function deliveryFor(event: StoreEvent, filter: ObjectFilter | undefined): Delivery | undefined {
  if (!filter) return { type: event.type, content: 'object' };
  switch (event.type) {
    case 'ADDED':
      return matchesFilter(filter, event.object) ? { type: 'ADDED', content: 'object' } : undefined;
    case 'DELETED':
      return matchesFilter(filter, event.object) ? { type: 'DELETED', content: 'object' } : undefined;
    case 'MODIFIED': {
      const now = matchesFilter(filter, event.object);
      const before = event.prev !== undefined && matchesFilter(filter, event.prev);
      if (now) return { type: before ? 'MODIFIED' : 'ADDED', content: 'object' };
      return before ? { type: 'DELETED', content: 'prev' } : undefined;
    }
  }
}

export function watchLine(type: string, objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

/** The line for an event as delivered at a version, serialized once per event and shared by every watch. */
export function eventLine(event: StoreEvent, delivery: Delivery, version: string): string {
  const memoKey = `${delivery.type}|${delivery.content}|${version}`;
  event.lines ??= new Map();
  let line = event.lines.get(memoKey);
  if (line === undefined) {
    const stored: StoredObject =
      delivery.content === 'prev' && event.prev
        ? withResourceVersion(event.resourceType, event.prev, event.rv)
        : event.object;
    line = watchLine(delivery.type, typeHeader(event.resourceType, version) + stored.body);
    event.lines.set(memoKey, line);
  }
  return line;
}

export function bookmarkLine(type: ResourceType, version: string, rv: number, initialEventsEnd = false): string {
  const annotations = initialEventsEnd ? ',"annotations":{"k8s.io/initial-events-end":"true"}' : '';
  return watchLine('BOOKMARK', `${typeHeader(type, version)}"metadata":{"resourceVersion":"${rv}"${annotations}}}`);
}

/**
 * Fans committed events out to open watches. Selector-less watches of a type share one serialized line per event;
 * bookmarks go out on one timer for all watches that asked for them.
 */
export class WatchHub {
  private readonly byType = new Map<string, Set<Watcher>>();
  /** Types whose live events and bookmarks are held back, per watch in order (see `hold`). */
  private readonly held = new Map<string, Map<Watcher, string[]>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly currentRv: () => number,
    bookmarkIntervalMs: number,
  ) {
    this.timer = setInterval(() => this.sendBookmarks(), bookmarkIntervalMs);
    this.timer.unref();
  }

  get size(): number {
    let count = 0;
    for (const set of this.byType.values()) count += set.size;
    return count;
  }

  add(watcher: Watcher): void {
    const key = typeKey(watcher.type.group, watcher.type.resource);
    let set = this.byType.get(key);
    if (!set) {
      set = new Set();
      this.byType.set(key, set);
    }
    set.add(watcher);
  }

  remove(watcher: Watcher): void {
    const key = typeKey(watcher.type.group, watcher.type.resource);
    this.byType.get(key)?.delete(watcher);
    this.held.get(key)?.delete(watcher);
  }

  /**
   * Holds back what open watches of a type are sent (events and bookmarks, in order) until the returned release is
   * called: a watch that lags behind its writes, as kube-apiserver's watch cache may. Tests use it.
   */
  hold(group: string, resource: string): () => void {
    const key = typeKey(group, resource);
    const queues = this.held.get(key) ?? new Map<Watcher, string[]>();
    this.held.set(key, queues);
    return () => {
      if (this.held.get(key) !== queues) return;
      this.held.delete(key);
      for (const [watcher, lines] of queues) for (const line of lines) watcher.send(line);
    };
  }

  private deliver(watcher: Watcher, line: string): void {
    const queues = this.held.get(typeKey(watcher.type.group, watcher.type.resource));
    if (!queues) return watcher.send(line);
    const queue = queues.get(watcher) ?? [];
    queue.push(line);
    queues.set(watcher, queue);
  }

  publish(event: StoreEvent): void {
    const watchers = this.byType.get(typeKey(event.resourceType.group, event.resourceType.resource));
    if (!watchers) return;
    for (const watcher of watchers) {
      if (watcher.namespace && watcher.namespace !== event.object.namespace) continue;
      const delivery = deliveryFor(event, watcher.filter);
      if (delivery) this.deliver(watcher, eventLine(event, delivery, watcher.version));
    }
  }

  /** Ends every watch of one type (its CRD was deleted), cleanly. */
  closeType(type: ResourceType): void {
    const key = typeKey(type.group, type.resource);
    for (const watcher of [...(this.byType.get(key) ?? [])]) watcher.close(false);
    this.byType.delete(key);
  }

  /** Ends every watch; `abrupt` cuts the connections instead of finishing the responses. */
  closeAll(abrupt: boolean): void {
    for (const set of [...this.byType.values()]) {
      for (const watcher of [...set]) watcher.close(abrupt);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sendBookmarks(): void {
    const rv = this.currentRv();
    const lines = new Map<string, string>();
    for (const set of this.byType.values()) {
      for (const watcher of set) {
        if (!watcher.bookmarks) continue;
        const key = `${watcher.type.group}/${watcher.type.resource}/${watcher.version}`;
        let line = lines.get(key);
        if (line === undefined) {
          line = bookmarkLine(watcher.type, watcher.version, rv);
          lines.set(key, line);
        }
        this.deliver(watcher, line);
      }
    }
  }
}
