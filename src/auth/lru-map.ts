/**
 * A Map that holds at most `capacity` entries and forgets the least recently used one first. Bounded state is what
 * keeps per-client memory (decisions, failure windows, tombstones) from growing with hostile input.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();
  /**
   * The most recently used entry: using it again moves nothing and looks nothing up (one caller's requests in a row).
   * Compared before any lookup: a long key (a token) is then compared once, not hashed first.
   */
  private newest: K | undefined;
  private newestValue: V | undefined;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error('an LruMap needs a capacity of at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, marked as most recently used. */
  get(key: K): V | undefined {
    if (this.newestValue !== undefined && key === this.newest) return this.newestValue;
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    this.newestValue = value;
    return value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    this.newestValue = value;
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
    if (key === this.newest) this.forgetNewest();
    return this.entries.delete(key);
  }

  clear(): void {
    this.forgetNewest();
    this.entries.clear();
  }

  private forgetNewest(): void {
    this.newest = undefined;
    this.newestValue = undefined;
  }
}
