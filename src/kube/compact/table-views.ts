import type { ObjectTable, TableListener } from './object-table.js';

/**
 * Derived views of an `ObjectTable`, kept up to date one change at a time instead of recomputed per request: the
 * slots in each requested sort order (built on first use, then an insert or removal per change: a memmove, not a
 * sort), and the matches of each recent filter (a bit per slot with counts per namespace). A page is then a walk of
 * the sorted order taking the matching slots, and its total a sum of counts: a 10-item page of 150,000 pods costs
 * about the slots it skips, however often the pods change.
 */

/** A total order over slots (ties end on name, then namespace, which identify an object). */
export interface SortKey {
  readonly id: string;
  compare(table: ObjectTable, a: number, b: number): number;
}

/** A filter over one slot's columns; `key` identifies it (equal keys, equal predicates). */
export interface SlotFilter {
  readonly key: string;
  matches(table: ObjectTable, slot: number): boolean;
}

function compareText(a: string, b: string): number {
  // code-unit order, as Go's strings.Compare for the ASCII of Kubernetes names (not locale order)
  return a === b ? 0 : a < b ? -1 : 1;
}

/** Missing times sort as the oldest, like Go's zero time. */
function compareTime(a: number, b: number): number {
  const x = Number.isNaN(a) ? Number.NEGATIVE_INFINITY : a;
  const y = Number.isNaN(b) ? Number.NEGATIVE_INFINITY : b;
  return x === y ? 0 : x < y ? -1 : 1;
}

function byIdentity(table: ObjectTable, a: number, b: number): number {
  return compareText(table.name(a), table.name(b)) || compareText(table.namespace(a), table.namespace(b));
}

export const BY_NAME: SortKey = { id: 'name', compare: byIdentity };

export const BY_CREATION: SortKey = {
  id: 'created',
  compare: (table, a, b) => compareTime(table.created(a), table.created(b)) || byIdentity(table, a, b),
};

export function byTime(index: number): SortKey {
  return {
    id: `time:${index}`,
    compare: (table, a, b) => compareTime(table.time(a, index), table.time(b, index)) || byIdentity(table, a, b),
  };
}

/** By the status's text (its values in `texts`, by index), as KubeSphere compares a Job's status. */
export function byStatusText(texts: readonly string[]): SortKey {
  const text = (code: number) => (code >= 0 ? (texts[code] ?? '') : '');
  return {
    id: 'status',
    compare: (table, a, b) => compareText(text(table.status(a)), text(table.status(b))) || byIdentity(table, a, b),
  };
}

/** The slots of a table in one order, maintained per change. */
export class SortedIndex implements TableListener {
  private order: Int32Array;
  private length = 0;

  constructor(
    private readonly table: ObjectTable,
    private readonly key: SortKey,
  ) {
    const slots = [...table.slots()];
    slots.sort((a, b) => key.compare(table, a, b));
    this.order = Int32Array.from(slots);
    this.length = slots.length;
  }

  get size(): number {
    return this.length;
  }

  at(position: number): number {
    return this.order[position] as number;
  }

  added(slot: number): void {
    const at = this.lowerBound(slot);
    if (this.length === this.order.length) {
      const grown = new Int32Array(Math.max(64, this.order.length * 2));
      grown.set(this.order);
      this.order = grown;
    }
    this.order.copyWithin(at + 1, at, this.length);
    this.order[at] = slot;
    this.length++;
  }

  removing(slot: number): void {
    let at = this.lowerBound(slot);
    if (this.order[at] !== slot || at >= this.length) at = this.order.subarray(0, this.length).indexOf(slot);
    if (at < 0) return;
    this.order.copyWithin(at, at + 1, this.length);
    this.length--;
  }

  /** The first position whose slot does not sort before `slot`. */
  private lowerBound(slot: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.key.compare(this.table, this.order[mid] as number, slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The slots one filter matches, with counts per namespace, maintained per change. */
export class FilterMatches implements TableListener {
  private bits: Uint8Array;
  private total = 0;
  private readonly perNamespace = new Map<string, number>();

  constructor(
    private readonly table: ObjectTable,
    private readonly filter: SlotFilter,
  ) {
    this.bits = new Uint8Array(Math.max(64, table.slotLimit));
    for (const slot of table.slots()) this.added(slot);
  }

  get count(): number {
    return this.total;
  }

  countIn(namespace: string): number {
    return this.perNamespace.get(namespace) ?? 0;
  }

  has(slot: number): boolean {
    return this.bits[slot] === 1;
  }

  added(slot: number): void {
    if (!this.filter.matches(this.table, slot)) return;
    if (slot >= this.bits.length) {
      const grown = new Uint8Array(Math.max(slot + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[slot] = 1;
    this.total++;
    const namespace = this.table.namespace(slot);
    this.perNamespace.set(namespace, (this.perNamespace.get(namespace) ?? 0) + 1);
  }

  removing(slot: number): void {
    if (this.bits[slot] !== 1) return;
    this.bits[slot] = 0;
    this.total--;
    const namespace = this.table.namespace(slot);
    const left = (this.perNamespace.get(namespace) ?? 1) - 1;
    if (left > 0) this.perNamespace.set(namespace, left);
    else this.perNamespace.delete(namespace);
  }
}

/**
 * The slots holding each value of one filter field (a field holding several values counts under each), maintained
 * per change: "whose subject is one of these" is then a few lookups instead of a walk of every object, which is what
 * a member's workspace list asks of 10,000 memberships on every page.
 */
export class FieldIndex implements TableListener {
  private readonly slotsByValue = new Map<string, Set<number>>();

  constructor(
    private readonly table: ObjectTable,
    private readonly field: number,
  ) {
    for (const slot of table.slots()) this.added(slot);
  }

  /** The slots whose field is (or includes) `value`; do not keep it across changes. */
  slotsWith(value: string): ReadonlySet<number> {
    return this.slotsByValue.get(value) ?? NO_SLOTS;
  }

  added(slot: number): void {
    for (const value of valuesOf(this.table.field(slot, this.field))) {
      let slots = this.slotsByValue.get(value);
      if (!slots) this.slotsByValue.set(value, (slots = new Set()));
      slots.add(slot);
    }
  }

  removing(slot: number): void {
    for (const value of valuesOf(this.table.field(slot, this.field))) {
      const slots = this.slotsByValue.get(value);
      if (!slots) continue;
      slots.delete(slot);
      if (slots.size === 0) this.slotsByValue.delete(value);
    }
  }
}

const NO_SLOTS: ReadonlySet<number> = new Set();
const valuesOf = (field: string | readonly string[] | undefined): readonly string[] =>
  field === undefined ? [] : typeof field === 'string' ? [field] : field;

/** Filters whose matches are kept; a console paging through a few views hits the same ones. */
const MEMOIZED_FILTERS = 64;

/** What a page needs: an order, a filter, the namespaces in scope and the window. */
export interface PageRequest {
  readonly sort: SortKey;
  readonly ascending: boolean;
  readonly filter: SlotFilter | undefined;
  /** Namespaces whose objects count; undefined: every object. */
  readonly namespaces: ReadonlySet<string> | undefined;
  readonly offset: number;
  /** Undefined: every item from the offset. */
  readonly limit: number | undefined;
}

export interface PageSelection {
  readonly total: number;
  readonly slots: readonly number[];
}

/** A table's sorted orders and filter matches, as one listener of the table. */
export class TableViews implements TableListener {
  private readonly indexes = new Map<string, SortedIndex>();
  private readonly fieldIndexes = new Map<number, FieldIndex>();
  /** In recency order (Map order): the least recently used is dropped first. */
  private readonly matches = new Map<string, FilterMatches>();
  private readonly unlisten: () => void;

  constructor(private readonly table: ObjectTable) {
    this.unlisten = table.listen(this);
  }

  close(): void {
    this.unlisten();
  }

  added(slot: number): void {
    for (const index of this.indexes.values()) index.added(slot);
    for (const match of this.matches.values()) match.added(slot);
    for (const index of this.fieldIndexes.values()) index.added(slot);
  }

  removing(slot: number): void {
    for (const index of this.indexes.values()) index.removing(slot);
    for (const match of this.matches.values()) match.removing(slot);
    for (const index of this.fieldIndexes.values()) index.removing(slot);
  }

  /** The index of filter field `field` (its place in the kind's fields), built on first use and kept. */
  byField(field: number): FieldIndex {
    let index = this.fieldIndexes.get(field);
    if (!index) this.fieldIndexes.set(field, (index = new FieldIndex(this.table, field)));
    return index;
  }

  index(key: SortKey): SortedIndex {
    let index = this.indexes.get(key.id);
    if (!index) this.indexes.set(key.id, (index = new SortedIndex(this.table, key)));
    return index;
  }

  filtered(filter: SlotFilter): FilterMatches {
    let match = this.matches.get(filter.key);
    if (match) this.matches.delete(filter.key);
    else match = new FilterMatches(this.table, filter);
    this.matches.set(filter.key, match);
    if (this.matches.size > MEMOIZED_FILTERS) this.matches.delete(this.matches.keys().next().value as string);
    return match;
  }

  select(request: PageRequest): PageSelection {
    const table = this.table;
    const match = request.filter ? this.filtered(request.filter) : undefined;
    const scope = request.namespaces;
    let total = 0;
    let scopeSize = 0;
    if (scope === undefined) total = match ? match.count : table.size;
    else {
      for (const namespace of scope) {
        total += match ? match.countIn(namespace) : table.countIn(namespace);
        scopeSize += table.countIn(namespace);
      }
    }
    const wanted = request.limit === undefined ? total : Math.min(request.limit, total - request.offset);
    if (wanted <= 0 || request.offset >= total) return { total, slots: [] };

    // A few namespaces of a big table: sort their objects alone rather than walk the whole order.
    if (scope !== undefined && scopeSize * 8 < table.size) {
      const candidates: number[] = [];
      for (const namespace of scope) {
        for (const slot of table.slotsIn(namespace)) if (!match || match.has(slot)) candidates.push(slot);
      }
      const direction = request.ascending ? 1 : -1;
      candidates.sort((a, b) => direction * request.sort.compare(table, a, b));
      return { total, slots: candidates.slice(request.offset, request.offset + wanted) };
    }

    const index = this.index(request.sort);
    const slots: number[] = [];
    let skip = request.offset;
    const size = index.size;
    for (let i = 0; i < size && slots.length < wanted; i++) {
      const slot = index.at(request.ascending ? i : size - 1 - i);
      if (match && !match.has(slot)) continue;
      if (scope !== undefined && !scope.has(table.namespace(slot))) continue;
      if (skip > 0) skip--;
      else slots.push(slot);
    }
    return { total, slots };
  }
}
