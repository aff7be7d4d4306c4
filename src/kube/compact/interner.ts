/**
 * Shares equal values among the records of a cache: a namespace name, a label set, an owner list is stored once and
 * every object holding it keeps a reference (4 bytes) instead of a copy. Entries are counted, so values that stop
 * being used (a namespace emptied, the labels of an old rollout) leave nothing behind.
 */
export class Interner<T extends object | string> {
  private readonly byKey = new Map<string, { value: T; users: number }>();
  /** Objects are found again by identity when released (their key is not kept per user). */
  private readonly keyOf = new Map<T, string>();

  /** The shared value for `key` (made by `make` the first time), counted as used once more. */
  hold(key: string, make: () => T): T {
    const entry = this.byKey.get(key);
    if (entry) {
      entry.users++;
      return entry.value;
    }
    const value = make();
    this.byKey.set(key, { value, users: 1 });
    if (typeof value !== 'string') this.keyOf.set(value, key);
    return value;
  }

  /** One use fewer of a value `hold` returned (its key for strings, the object itself otherwise). */
  release(value: T | undefined): void {
    if (value === undefined) return;
    const key = typeof value === 'string' ? value : this.keyOf.get(value);
    if (key === undefined) return;
    const entry = this.byKey.get(key);
    if (!entry || --entry.users > 0) return;
    this.byKey.delete(key);
    if (typeof value !== 'string') this.keyOf.delete(value);
  }

  get size(): number {
    return this.byKey.size;
  }
}

/** A string interner keyed by the string itself. */
export class StringInterner {
  private readonly interner = new Interner<string>();

  hold(text: string): string {
    return this.interner.hold(text, () => text);
  }

  release(text: string | undefined): void {
    this.interner.release(text);
  }

  get size(): number {
    return this.interner.size;
  }
}
