/**
 * Values that many records of a cache hold equal copies of (a namespace name, a label set, a node name), each kept
 * once and referred to by a small integer id that a record stores in a typed-array column (4 bytes off the V8 heap,
 * instead of an 8-byte pointer on it). A value is found again by its hash and an equality check, so no key string
 * is kept beside it; ids are counted, and a value nobody holds any more is dropped and its id reused.
 */
export class SharedPool<T> {
  private values: (T | undefined)[] = [];
  private hashes = new Int32Array(16);
  private counts = new Int32Array(16);
  private readonly freeIds: number[] = [];
  /** hash → id, or ids when several values share a hash (rare). */
  private readonly byHash = new Map<number, number | number[]>();
  private live = 0;

  /** The id of the value equal to one with `hash`, or -1. */
  find(hash: number, equals: (value: T) => boolean): number {
    const found = this.byHash.get(hash);
    if (found === undefined) return -1;
    if (typeof found === 'number') return equals(this.values[found] as T) ? found : -1;
    for (const id of found) if (equals(this.values[id] as T)) return id;
    return -1;
  }

  /** The id of the equal value (made by `make` the first time), counted as held once more. */
  hold(hash: number, equals: (value: T) => boolean, make: () => T): number {
    let id = this.find(hash, equals);
    if (id < 0) {
      id = this.freeIds.pop() ?? this.values.length;
      if (id === this.values.length) this.values.push(undefined);
      this.ensure(id + 1);
      this.values[id] = make();
      this.hashes[id] = hash;
      this.counts[id] = 0;
      const others = this.byHash.get(hash);
      if (others === undefined) this.byHash.set(hash, id);
      else if (typeof others === 'number') this.byHash.set(hash, [others, id]);
      else others.push(id);
      this.live++;
    }
    this.counts[id]!++;
    return id;
  }

  /** One holder more of an id `hold` gave. */
  retain(id: number): void {
    this.counts[id]!++;
  }

  /** One holder fewer; the value goes when none is left. */
  release(id: number): void {
    if (id < 0 || --this.counts[id]! > 0) return;
    const hash = this.hashes[id]!;
    const others = this.byHash.get(hash);
    if (typeof others === 'number') this.byHash.delete(hash);
    else if (others !== undefined) {
      others.splice(others.indexOf(id), 1);
      if (others.length === 1) this.byHash.set(hash, others[0]!);
    }
    this.values[id] = undefined;
    this.freeIds.push(id);
    this.live--;
  }

  value(id: number): T {
    return this.values[id] as T;
  }

  /** How many records hold the id. */
  holders(id: number): number {
    return this.counts[id] ?? 0;
  }

  /** Every id in use (for small pools: namespaces). */
  *ids(): IterableIterator<number> {
    for (let id = 0; id < this.values.length; id++) if (this.values[id] !== undefined) yield id;
  }

  get size(): number {
    return this.live;
  }

  private ensure(size: number): void {
    if (size <= this.counts.length) return;
    const capacity = Math.max(size, this.counts.length * 2);
    const grow = (old: Int32Array) => {
      const next = new Int32Array(capacity);
      next.set(old);
      return next;
    };
    this.hashes = grow(this.hashes);
    this.counts = grow(this.counts);
  }
}

/** FNV-1a over a string's code units, continuing from `hash` (seed with `HASH_SEED`). */
export function hashText(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  // a separator, so ("ab","c") and ("a","bc") differ
  return Math.imul(h ^ 0xff, 0x01000193);
}

export const HASH_SEED = 0x811c9dc5 | 0;

/** A pool of strings (namespaces, node names, a kind's filter values). */
export class StringPool {
  private readonly pool = new SharedPool<string>();

  find(text: string): number {
    return this.pool.find(hashText(HASH_SEED, text), (value) => value === text);
  }

  hold(text: string): number {
    return this.pool.hold(
      hashText(HASH_SEED, text),
      (value) => value === text,
      () => text,
    );
  }

  retain(id: number): void {
    this.pool.retain(id);
  }

  release(id: number): void {
    this.pool.release(id);
  }

  value(id: number): string {
    return this.pool.value(id);
  }

  holders(id: number): number {
    return this.pool.holders(id);
  }

  ids(): IterableIterator<number> {
    return this.pool.ids();
  }

  get size(): number {
    return this.pool.size;
  }
}
