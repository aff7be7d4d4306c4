/**
 * A Map that holds at most `capacity` entries and forgets the least recently used one first. Bounded state is what
 * keeps per-client memory (decisions, failure windows, tombstones) from growing with hostile input.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  /** The most recently used key: using it again moves nothing (one caller's requests in a row, one lookup each). */
  private newest: K | undefined;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error('an LruMap needs a capacity of at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, marked as most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    if (key !== this.newest) {
      this.entries.delete(key);
      this.entries.set(key, value);
      this.newest = key;
    }
    return value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  /** The values, least recently used first, without marking them used. */
  values(): IterableIterator<V> {
    return this.entries.values();
  }

  delete(key: K): boolean {
    if (key === this.newest) this.newest = undefined;
    return this.entries.delete(key);
  }

  clear(): void {
    this.newest = undefined;
    this.entries.clear();
  }
}
