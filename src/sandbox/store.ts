import { History, type EventType, type StoreEvent } from './history.js';
import { typeKey, type KubeObject, type ResourceType } from './resource-types.js';
import { toStored, withResourceVersion, type StoredObject } from './stored-object.js';

/** The objects of one resource type, in key order (as etcd ranges them), with their recent history. */
export class Collection {
  readonly objects = new Map<string, StoredObject>();
  /** Sorted keys: lists and continue tokens walk this order. */
  private keys: string[] = [];

  constructor(
    public type: ResourceType,
    readonly history: History,
  ) {}

  get(key: string): StoredObject | undefined {
    return this.objects.get(key);
  }

  get size(): number {
    return this.objects.size;
  }

  /** The sorted keys; shared, never mutate. */
  sortedKeys(): readonly string[] {
    return this.keys;
  }

  /** Index of the first key >= `key`. */
  lowerBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.keys[mid] as string) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  set(object: StoredObject): void {
    if (!this.objects.has(object.key)) this.keys.splice(this.lowerBound(object.key), 0, object.key);
    this.objects.set(object.key, object);
  }

  delete(key: string): void {
    if (!this.objects.delete(key)) return;
    const index = this.lowerBound(key);
    if (this.keys[index] === key) this.keys.splice(index, 1);
  }

  /** Adds many objects at once (seeding), sorting once instead of inserting one by one. */
  load(objects: readonly StoredObject[]): void {
    for (const object of objects) this.objects.set(object.key, object);
    this.keys = [...this.objects.keys()].sort();
  }
}

export type StoreListener = (event: StoreEvent) => void;

/**
 * All objects, by resource type, under one global resourceVersion counter (etcd's revision): every write takes the
 * next version, commits, records history and tells the listeners (the watch hub) synchronously, so a watch started
 * in the same tick can never miss or repeat an event.
 */
export class ObjectStore {
  private rv: number;
  private readonly collections = new Map<string, Collection>();
  private readonly listeners: StoreListener[] = [];

  constructor(
    private readonly historyCapacity = 10_000,
    initialRv = 1,
  ) {
    this.rv = initialRv;
  }

  get currentRv(): number {
    return this.rv;
  }

  onEvent(listener: StoreListener): void {
    this.listeners.push(listener);
  }

  /** The collection of a type, created empty (with history starting now) on first use. */
  collection(type: ResourceType): Collection {
    const key = typeKey(type.group, type.resource);
    let collection = this.collections.get(key);
    if (!collection) {
      collection = new Collection(type, new History(this.historyCapacity, this.rv));
      this.collections.set(key, collection);
    } else if (collection.type !== type) {
      collection.type = type;
    }
    return collection;
  }

  /** Forgets a type's objects without events (its CRD is gone and every object was already deleted). */
  dropCollection(type: ResourceType): void {
    this.collections.delete(typeKey(type.group, type.resource));
  }

  /** Commits a new object; its metadata.resourceVersion is assigned here. */
  create(type: ResourceType, obj: KubeObject): StoredObject {
    obj.metadata.resourceVersion = String(++this.rv);
    const stored = toStored(type, obj);
    const collection = this.collection(type);
    collection.set(stored);
    this.emit(collection, 'ADDED', stored, undefined);
    return stored;
  }

  /** Commits a new state of an existing object. */
  replace(type: ResourceType, obj: KubeObject, prev: StoredObject): StoredObject {
    obj.metadata.resourceVersion = String(++this.rv);
    const stored = toStored(type, obj);
    const collection = this.collection(type);
    collection.set(stored);
    this.emit(collection, 'MODIFIED', stored, prev);
    return stored;
  }

  /** Removes an object; answers its last state with the deletion's resourceVersion, as the DELETED event has it. */
  remove(type: ResourceType, prev: StoredObject): StoredObject {
    const collection = this.collection(type);
    const deleted = withResourceVersion(type, prev, ++this.rv);
    collection.delete(prev.key);
    this.emit(collection, 'DELETED', deleted, prev);
    return deleted;
  }

  /** Seeds objects without events: they exist from the start, as if listed by a fresh watch cache. */
  load(type: ResourceType, objects: readonly KubeObject[]): void {
    const stored = objects.map((obj) => {
      obj.metadata.resourceVersion = String(++this.rv);
      return toStored(type, obj);
    });
    const collection = this.collection(type);
    collection.load([...collection.objects.values(), ...stored]);
    collection.history.compact(this.rv);
  }

  /** Forgets all history, as an etcd compaction would: older resourceVersions get 410 Expired from now on. */
  compactHistory(): void {
    for (const collection of this.collections.values()) collection.history.compact(this.rv);
  }

  private emit(collection: Collection, type: EventType, object: StoredObject, prev: StoredObject | undefined): void {
    const event: StoreEvent = { type, rv: object.rv, resourceType: collection.type, object, prev };
    collection.history.push(event);
    for (const listener of this.listeners) listener(event);
  }
}
