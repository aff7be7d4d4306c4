import { BodyArena, type BodyArenaOptions, type StoredBody } from './body-arena.js';
import { Interner, StringInterner } from './interner.js';
import { packUid, sameUid, unpackUid } from './uid.js';

/**
 * The objects of one listed kind, kept as columns: per object only what filters, sorts and counts read (name,
 * namespace, uid, creation time, shared label and annotation sets, owners, the kind's status and its own sort and
 * filter values), plus a handle to its full body in a `BodyArena` (off the V8 heap). An object lives in a slot (a
 * small integer); slots of deleted objects are reused. Strings and sets that many objects hold equal copies of are
 * shared (`Interner`); numbers live in typed arrays, outside the heap's old space.
 */
export type Labels = Readonly<Record<string, string>>;

export interface OwnerRef {
  readonly kind: string;
  readonly uid: string;
}

/** A kind-specific filter value: one text (a pod's node), or several (the claims a pod mounts). */
export type FieldValue = string | readonly string[] | undefined;

/** What a kind's extractor reads from one raw object. */
export interface ObjectRecord {
  readonly name: string;
  /** '' for cluster-scoped objects. */
  readonly namespace: string;
  readonly uid: string;
  /** ms since the epoch; NaN when missing. */
  readonly created: number;
  readonly resourceVersion: string;
  readonly labels: Labels | undefined;
  readonly annotations: Labels | undefined;
  readonly owners: readonly OwnerRef[] | undefined;
  /** Index into the kind's status values; -1 when it has none. */
  readonly status: number;
  /** The kind's own sort times (ms; NaN when missing), in the kind's order. */
  readonly times: readonly number[];
  /** The kind's own filter values, in the kind's order. */
  readonly fields: readonly FieldValue[];
  /** The object as answered: JSON bytes. */
  readonly body: Buffer;
}

export interface TableShape {
  readonly times: number;
  readonly fields: number;
}

/**
 * Annotation values longer than any label value (63 characters) can never equal one, so a selector over
 * annotations (`annotation=key=value`, label syntax) cannot tell them apart: they are kept as this marker instead
 * (no valid label value, so `=`/`in` never match it, `!=`/`notin`/exists behave as with the real value), which lets
 * objects whose long annotations differ (last-applied-configuration) share one set.
 */
export const LONG_VALUE = '\u0000';
const LABEL_VALUE_MAX = 63;

export interface TableListener {
  /** A slot now holds an object (new, or after `removing` for a replaced one). */
  added(slot: number): void;
  /** A slot's object is about to go (or be replaced): its columns still hold the old values. */
  removing(slot: number): void;
}

const NO_SLOT = -1;

export class ObjectTable {
  private capacity = 0;
  private names: string[] = [];
  private namespaces: string[] = [];
  private labelSets: (Labels | undefined)[] = [];
  private annotationSets: (Labels | undefined)[] = [];
  private ownerLists: (readonly OwnerRef[] | undefined)[] = [];
  private fieldColumns: FieldValue[][];
  private uids = new Uint8Array(0);
  /** Uids that are not UUIDs (rare): kept as text. */
  private readonly odd = new Map<number, string>();
  private createdColumn = new Float64Array(0);
  private timeColumns: Float64Array[];
  private statusColumn = new Int8Array(0);
  private versions = new Float64Array(0);
  private bodyOf = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private slotCount = 0;
  private liveCount = 0;
  private readonly byNamespace = new Map<string, Map<string, number>>();
  private readonly strings = new StringInterner();
  private readonly labelInterner = new Interner<Labels>();
  private readonly ownerInterner = new Interner<readonly OwnerRef[]>();
  private readonly arrayInterner = new Interner<readonly string[]>();
  private readonly arena: BodyArena;
  private readonly listeners = new Set<TableListener>();
  private changes = 0;
  /**
   * Bodies decoded lately (recency order), within `decodedBudget` bytes: a console refreshing the same pages gets them
   * without inflating again. Dropped when their object changes.
   */
  private readonly decoded = new Map<number, Buffer>();
  private decodedBytes = 0;
  private readonly decodedBudget: number;

  constructor(
    readonly shape: TableShape,
    arena: BodyArenaOptions & { decodedBudget?: number } = {},
  ) {
    this.decodedBudget = arena.decodedBudget ?? 2 * 1024 * 1024;
    this.fieldColumns = Array.from({ length: shape.fields }, () => []);
    this.timeColumns = Array.from({ length: shape.times }, () => new Float64Array(0));
    this.arena = new BodyArena(arena);
  }

  get size(): number {
    return this.liveCount;
  }

  /** Bumped by every change. */
  get revision(): number {
    return this.changes;
  }

  /** One past the highest slot in use: slots are below it. */
  get slotLimit(): number {
    return this.slotCount;
  }

  get bodyBytes(): number {
    return this.arena.bytes;
  }

  listen(listener: TableListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  slotOf(namespace: string, name: string): number {
    return this.byNamespace.get(namespace)?.get(name) ?? NO_SLOT;
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.slotCount && this.bodyOf[slot] !== NO_SLOT;
  }

  /** Namespaces holding objects, with how many each holds. */
  namespaceCounts(): IterableIterator<[string, number]> {
    const entries = this.byNamespace.entries();
    return (function* () {
      for (const [namespace, names] of entries) yield [namespace, names.size] as [string, number];
    })();
  }

  countIn(namespace: string): number {
    return this.byNamespace.get(namespace)?.size ?? 0;
  }

  /** The slots of one namespace's objects (live view: do not keep across changes). */
  slotsIn(namespace: string): IterableIterator<number> {
    return (this.byNamespace.get(namespace) ?? EMPTY).values();
  }

  /** The slot already holding this version of the object (a relist re-reads what did not change), else -1. */
  current(namespace: string, name: string, resourceVersion: string): number {
    const slot = this.slotOf(namespace, name);
    if (slot === NO_SLOT) return NO_SLOT;
    const version = numericVersion(resourceVersion);
    return !Number.isNaN(version) && this.versions[slot] === version ? slot : NO_SLOT;
  }

  /** Adds or replaces the object of `record`'s namespace and name (unchanged when the resourceVersion is the same); its slot. */
  upsert(record: ObjectRecord): number {
    const existing = this.slotOf(record.namespace, record.name);
    const version = numericVersion(record.resourceVersion);
    if (existing !== NO_SLOT) {
      if (!Number.isNaN(version) && this.versions[existing] === version) return existing;
      for (const listener of this.listeners) listener.removing(existing);
      this.forget(existing);
      this.releaseColumns(existing);
      this.write(existing, record, version);
      this.arena.replace(this.bodyOf[existing]!, record.body);
      this.changed(existing);
      return existing;
    }
    const slot = this.freeSlots.pop() ?? this.slotCount++;
    this.ensure(slot + 1);
    const namespace = this.strings.hold(record.namespace);
    let names = this.byNamespace.get(namespace);
    if (!names) this.byNamespace.set(namespace, (names = new Map()));
    this.write(slot, record, version, namespace);
    names.set(this.names[slot] as string, slot);
    this.bodyOf[slot] = this.arena.add(record.body);
    this.liveCount++;
    this.changed(slot);
    return slot;
  }

  remove(namespace: string, name: string): boolean {
    const slot = this.slotOf(namespace, name);
    if (slot === NO_SLOT) return false;
    this.removeSlot(slot);
    return true;
  }

  removeSlot(slot: number): void {
    for (const listener of this.listeners) listener.removing(slot);
    this.forget(slot);
    const namespace = this.namespaces[slot] as string;
    const names = this.byNamespace.get(namespace);
    names?.delete(this.names[slot] as string);
    if (names?.size === 0) this.byNamespace.delete(namespace);
    this.releaseColumns(slot);
    this.strings.release(namespace);
    this.arena.free(this.bodyOf[slot]!);
    this.bodyOf[slot] = NO_SLOT;
    this.names[slot] = '';
    this.namespaces[slot] = '';
    this.versions[slot] = Number.NaN;
    this.liveCount--;
    this.freeSlots.push(slot);
    this.changes++;
  }

  /** Every live slot. */
  *slots(): IterableIterator<number> {
    for (let slot = 0; slot < this.slotCount; slot++) if (this.bodyOf[slot] !== NO_SLOT) yield slot;
  }

  /** Learns the body dictionary now, if the kind had fewer objects than the sample (after a first list). */
  settle(): void {
    this.arena.settle();
  }

  // Column readers (pure views for filters and sorts).
  name(slot: number): string {
    return this.names[slot] as string;
  }
  namespace(slot: number): string {
    return this.namespaces[slot] as string;
  }
  labels(slot: number): Labels | undefined {
    return this.labelSets[slot];
  }
  annotations(slot: number): Labels | undefined {
    return this.annotationSets[slot];
  }
  owners(slot: number): readonly OwnerRef[] | undefined {
    return this.ownerLists[slot];
  }
  created(slot: number): number {
    return this.createdColumn[slot] as number;
  }
  time(slot: number, index: number): number {
    return (this.timeColumns[index] as Float64Array)[slot] as number;
  }
  status(slot: number): number {
    return this.statusColumn[slot] as number;
  }
  field(slot: number, index: number): FieldValue {
    return (this.fieldColumns[index] as FieldValue[])[slot];
  }
  uid(slot: number): string {
    return this.odd.get(slot) ?? unpackUid(this.uids, slot * 16);
  }
  hasUid(slot: number, uid: string): boolean {
    const odd = this.odd.get(slot);
    return odd !== undefined ? odd === uid : sameUid(this.uids, slot * 16, uid);
  }

  /** The object's JSON, decoded (for an answer). */
  body(slot: number): Buffer {
    const kept = this.decoded.get(slot);
    if (kept !== undefined) {
      this.decoded.delete(slot);
      this.decoded.set(slot, kept);
      return kept;
    }
    const body = this.arena.read(this.bodyOf[slot]!);
    // a body stored as is is a view into a slab that moves: only inflated ones (copies) are kept
    if (body.length <= this.decodedBudget / 16 && this.arena.isDeflated(this.bodyOf[slot]!)) {
      this.decoded.set(slot, body);
      this.decodedBytes += body.length;
      for (const [oldest, buffer] of this.decoded) {
        if (this.decodedBytes <= this.decodedBudget) break;
        this.decoded.delete(oldest);
        this.decodedBytes -= buffer.length;
      }
    }
    return body;
  }

  private forget(slot: number): void {
    const kept = this.decoded.get(slot);
    if (kept === undefined) return;
    this.decoded.delete(slot);
    this.decodedBytes -= kept.length;
  }

  /** The object's body as stored, copied out (for an answer written over several turns). */
  storedBody(slot: number): StoredBody {
    return this.arena.snapshot(this.bodyOf[slot]!);
  }

  private changed(slot: number): void {
    this.changes++;
    for (const listener of this.listeners) listener.added(slot);
  }

  private write(slot: number, record: ObjectRecord, version: number, heldNamespace?: string): void {
    if (heldNamespace !== undefined) {
      this.names[slot] = record.name;
      this.namespaces[slot] = heldNamespace;
    }
    this.labelSets[slot] = this.holdLabels(record.labels, false);
    this.annotationSets[slot] = this.holdLabels(record.annotations, true);
    this.ownerLists[slot] = this.holdOwners(record.owners);
    for (let i = 0; i < this.shape.fields; i++) {
      (this.fieldColumns[i] as FieldValue[])[slot] = this.holdField(record.fields[i]);
    }
    this.odd.delete(slot);
    if (!packUid(record.uid, this.uids, slot * 16)) this.odd.set(slot, record.uid);
    this.createdColumn[slot] = record.created;
    for (let i = 0; i < this.shape.times; i++) {
      (this.timeColumns[i] as Float64Array)[slot] = record.times[i] ?? Number.NaN;
    }
    this.statusColumn[slot] = record.status;
    this.versions[slot] = version;
  }

  private releaseColumns(slot: number): void {
    this.labelInterner.release(this.labelSets[slot]);
    this.labelInterner.release(this.annotationSets[slot]);
    this.ownerInterner.release(this.ownerLists[slot]);
    for (let i = 0; i < this.shape.fields; i++) {
      const value = (this.fieldColumns[i] as FieldValue[])[slot];
      if (typeof value === 'string') this.strings.release(value);
      else if (value !== undefined) this.arrayInterner.release(value);
    }
    this.labelSets[slot] = undefined;
    this.annotationSets[slot] = undefined;
    this.ownerLists[slot] = undefined;
  }

  private holdLabels(labels: Labels | undefined, annotations: boolean): Labels | undefined {
    if (labels === undefined) return undefined;
    const keys = Object.keys(labels);
    if (keys.length === 0) return undefined;
    keys.sort();
    const entries: [string, string][] = keys.map((key) => {
      const value = String(labels[key]);
      return [key, annotations && value.length > LABEL_VALUE_MAX ? LONG_VALUE : value];
    });
    const key = JSON.stringify(entries);
    return this.labelInterner.hold(key, () => {
      const set: Record<string, string> = {};
      // Property names are shared by V8 itself (internalized): only the values are this set's own.
      for (const [k, v] of entries) set[k] = v;
      return Object.freeze(set);
    });
  }

  private holdOwners(owners: readonly OwnerRef[] | undefined): readonly OwnerRef[] | undefined {
    if (owners === undefined || owners.length === 0) return undefined;
    const key = owners.map((owner) => `${owner.kind}\u0000${owner.uid}`).join('\u0001');
    return this.ownerInterner.hold(key, () =>
      Object.freeze(owners.map((owner) => Object.freeze({ kind: owner.kind, uid: owner.uid }))),
    );
  }

  private holdField(value: FieldValue): FieldValue {
    if (value === undefined) return undefined;
    if (typeof value === 'string') return this.strings.hold(value);
    if (value.length === 0) return undefined;
    return this.arrayInterner.hold(value.join('\u0000'), () => Object.freeze([...value]));
  }

  private ensure(size: number): void {
    if (size <= this.capacity) return;
    const capacity = Math.max(size, this.capacity * 2, 64);
    const grow = <A extends Float64Array | Int32Array | Int8Array | Uint8Array>(old: A, next: A): A => {
      next.set(old);
      return next;
    };
    this.createdColumn = grow(this.createdColumn, new Float64Array(capacity));
    this.timeColumns = this.timeColumns.map((column) => grow(column, new Float64Array(capacity)));
    this.statusColumn = grow(this.statusColumn, new Int8Array(capacity));
    this.versions = grow(this.versions, new Float64Array(capacity));
    this.bodyOf = grow(this.bodyOf, new Int32Array(capacity).fill(NO_SLOT));
    this.uids = grow(this.uids, new Uint8Array(capacity * 16));
    this.capacity = capacity;
  }
}

const EMPTY = new Map<string, number>();

/** etcd's revisions are decimal: a number compares cheaply; anything else is never "the same version". */
function numericVersion(text: string): number {
  return /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
}
