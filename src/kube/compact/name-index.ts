import { HASH_SEED, hashText } from './shared-pool.js';

/**
 * The slot of each (namespace, name) of a table, as an open-addressing hash table of slots in one Int32Array (linear
 * probing, deletion by backward shift): 4–8 bytes a record off the V8 heap, where a Map of Maps cost about 40 bytes
 * a record on it. The keys themselves are not stored: a probe compares the table's own columns.
 */
export interface IndexedColumns {
  namespaceId(slot: number): number;
  name(slot: number): string;
}

const EMPTY = -1;

export function nameHash(namespaceId: number, name: string): number {
  return hashText(Math.imul(HASH_SEED ^ namespaceId, 0x9e3779b1), name);
}

export class NameIndex {
  private cells = new Int32Array(64).fill(EMPTY);
  private mask = 63;
  private count = 0;

  constructor(private readonly columns: IndexedColumns) {}

  get size(): number {
    return this.count;
  }

  find(namespaceId: number, name: string): number {
    const { cells, mask, columns } = this;
    for (let i = nameHash(namespaceId, name) & mask; ; i = (i + 1) & mask) {
      const slot = cells[i]!;
      if (slot === EMPTY) return EMPTY;
      if (columns.namespaceId(slot) === namespaceId && columns.name(slot) === name) return slot;
    }
  }

  /** Adds a slot whose key is not in the index yet. */
  insert(slot: number): void {
    if ((this.count + 1) * 2 > this.cells.length) this.resize(this.cells.length * 2);
    this.place(slot);
    this.count++;
  }

  /** Removes a slot (its columns still hold its key). */
  delete(slot: number): void {
    const { cells, mask } = this;
    let i = nameHash(this.columns.namespaceId(slot), this.columns.name(slot)) & mask;
    while (cells[i] !== slot) {
      if (cells[i] === EMPTY) return;
      i = (i + 1) & mask;
    }
    // backward shift: move later entries of the cluster into the hole when their home allows it
    let hole = i;
    for (let j = (i + 1) & mask; cells[j] !== EMPTY; j = (j + 1) & mask) {
      const moved = cells[j]!;
      const home = nameHash(this.columns.namespaceId(moved), this.columns.name(moved)) & mask;
      // `moved` may fill the hole unless its home lies cyclically in (hole, j]
      const between = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!between) {
        cells[hole] = moved;
        hole = j;
      }
    }
    cells[hole] = EMPTY;
    this.count--;
  }

  private place(slot: number): void {
    const { cells, mask } = this;
    let i = nameHash(this.columns.namespaceId(slot), this.columns.name(slot)) & mask;
    while (cells[i] !== EMPTY) i = (i + 1) & mask;
    cells[i] = slot;
  }

  private resize(capacity: number): void {
    const old = this.cells;
    this.cells = new Int32Array(capacity).fill(EMPTY);
    this.mask = capacity - 1;
    for (const slot of old) if (slot !== EMPTY) this.place(slot);
  }
}
