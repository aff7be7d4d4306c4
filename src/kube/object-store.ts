export type ChangeEvent = 'added' | 'modified' | 'deleted';
export type ChangeHandler<T> = (obj: T, old: T | undefined) => void;

/** An object read from a list, with the resourceVersion it came with. */
export interface StoredObject<T> {
  readonly value: T;
  readonly resourceVersion: string;
}

/**
 * The objects of one completed list, gathered for `ObjectStore.replace`: the values by key, and their
 * resourceVersions only when the store compares by version (a store with `same` does not keep them at all).
 */
export class ListedObjects<T> {
  readonly values = new Map<string, T>();
  readonly versions: Map<string, string> | undefined;

  constructor(trackVersions: boolean) {
    this.versions = trackVersions ? new Map() : undefined;
  }

  set(key: string, value: T, resourceVersion: string): void {
    this.values.set(key, value);
    this.versions?.set(key, resourceVersion);
  }

  get size(): number {
    return this.values.size;
  }
}

/**
 * The keyed objects of one reflector, and the only place they change. Every change bumps `revision` and is reported
 * to `onChange` after the store is updated, so a handler that reads the store sees the new state.
 *
 * A relist must tell changed objects from unchanged ones. By default the store keeps each object's resourceVersion
 * for that; a `same` comparison replaces it, for caches of many tiny objects where the version would cost more than
 * the object (pods trimmed to five fields).
 */
export class ObjectStore<T> {
  private values = new Map<string, T>();
  private versions: Map<string, string> | undefined;
  private listed: readonly T[] | undefined;
  private changes = 0;

  constructor(
    private readonly onChange: (event: ChangeEvent, obj: T, old: T | undefined) => void,
    private readonly same?: (stored: T, listed: T) => boolean,
  ) {
    if (!same) this.versions = new Map();
  }

  get size(): number {
    return this.values.size;
  }

  get revision(): number {
    return this.changes;
  }

  get(key: string): T | undefined {
    return this.values.get(key);
  }

  /** One frozen array shared by every reader until the next change. */
  list(): readonly T[] {
    this.listed ??= Object.freeze([...this.values.values()]);
    return this.listed;
  }

  /** Adds or replaces an object (a watch ADDED or MODIFIED); with `same`, an equal object is no change. */
  upsert(key: string, value: T, resourceVersion: string): void {
    const old = this.values.get(key);
    if (old !== undefined && this.same?.(old, value)) return;
    this.values.set(key, value);
    this.versions?.set(key, resourceVersion);
    this.changed(old === undefined ? 'added' : 'modified', value, old);
  }

  /** Removes an object (a watch DELETED); a key the store never held is no change. */
  remove(key: string): void {
    const old = this.values.get(key);
    if (old === undefined) return;
    this.values.delete(key);
    this.versions?.delete(key);
    this.changed('deleted', old, old);
  }

  /** An empty gathering for the next `replace`, keeping versions only if this store compares by them. */
  listing(): ListedObjects<T> {
    return new ListedObjects<T>(this.versions !== undefined);
  }

  /**
   * Makes the store hold exactly `next` (a completed list): vanished keys are deleted, new keys added, changed
   * objects modified. Unchanged objects keep their identity and cause no event. `next` is taken over, not copied.
   */
  replace(next: ListedObjects<T>): void {
    const listed = next.values;
    const listedVersions = next.versions ?? new Map<string, string>();
    // A fresh map, keyed by the strings this store already held where it held the key: the list's keys are equal
    // copies, which would otherwise live on beside the ones the objects may hold (a cached pod's key: 150,000 of them
    // after a relist).
    const values = new Map<string, T>();
    const versions = this.versions && new Map<string, string>();
    const deleted: T[] = [];
    const events: Array<[ChangeEvent, T, T | undefined]> = [];
    for (const [key, old] of this.values) {
      const value = listed.get(key);
      if (value === undefined) {
        deleted.push(old);
        continue;
      }
      const unchanged = this.same ? this.same(old, value) : this.versions?.get(key) === listedVersions.get(key);
      // the stored object keeps its identity, so readers holding it see no change
      values.set(key, unchanged ? old : value);
      versions?.set(key, listedVersions.get(key) as string);
      if (!unchanged) events.push(['modified', value, old]);
    }
    for (const [key, value] of listed) {
      if (values.has(key)) continue;
      values.set(key, value);
      versions?.set(key, listedVersions.get(key) as string);
      events.push(['added', value, undefined]);
    }
    this.values = values;
    this.versions = versions;
    // deletions first, as before any object is added
    for (const old of deleted) this.changed('deleted', old, old);
    for (const [event, obj, old] of events) this.changed(event, obj, old);
  }

  private changed(event: ChangeEvent, obj: T, old: T | undefined): void {
    this.changes++;
    this.listed = undefined;
    this.onChange(event, obj, old);
  }
}
