import { BodyArena, type BodyArenaOptions, type StoredBody } from './body-arena.js';
import { NameIndex } from './name-index.js';
import { HASH_SEED, SharedPool, StringPool, hashText } from './shared-pool.js';
import { packUid, sameUid, unpackUid } from './uid.js';

/**
 * The objects of one listed kind, kept as columns: per object only what filters, sorts and counts read (name,
 * namespace, uid, creation time, shared label and annotation sets, owners, the kind's status and its own sort and
 * filter values), plus a handle to its full body in a `BodyArena` (off the V8 heap). An object lives in a slot (a
 * small integer); slots of deleted objects are reused.
 *
 * Only the name is a pointer per object on the V8 heap. Everything else is a typed-array column (outside the heap,
 * never traced by the garbage collector): numbers, the packed uid, the only owner (most objects have at most one)
 * as its packed uid and kind, and the ids of values that many objects share — the namespace, the label and
 * annotation sets, the kind's filter values — kept once each in a `SharedPool`. The (namespace, name) index is a
 * hash table of slots (`NameIndex`), and each namespace's objects a linked list through two more columns.
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
  /**
   * Annotations kept verbatim whatever their length (the display name, which `name` searches by substring): every
   * other annotation value longer than a label value is kept as `LONG_VALUE`.
   */
  readonly verbatimAnnotations?: readonly string[];
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
const NONE = -1;
/** `ownerKinds` of an object with no owner, and of one whose owners are kept in `otherOwners`. */
const NO_OWNER = 0;
const OTHER_OWNERS = -1;

export class ObjectTable {
  private capacity = 0;
  /** The one pointer column: names are compared and searched as text by every sort and `name` filter. */
  private names: string[] = [];
  private namespaceIds = new Int32Array(0);
  private labelIds = new Int32Array(0);
  private annotationIds = new Int32Array(0);
  /** 1 + the index of the only owner's kind in `ownerKindNames`; `NO_OWNER`; `OTHER_OWNERS`. */
  private ownerKinds = new Int16Array(0);
  /** The only owner's uid, packed (16 bytes a slot). */
  private ownerUids = new Uint8Array(0);
  /** Objects with several owners, or an owner whose uid is no UUID (rare). */
  private readonly otherOwners = new Map<number, readonly OwnerRef[]>();
  private readonly ownerKindNames: string[] = [];
  private readonly ownerKindIds = new Map<string, number>();
  private fieldIds: Int32Array[];
  private uids = new Uint8Array(0);
  /** Uids that are not UUIDs (rare): kept as text. */
  private readonly odd = new Map<number, string>();
  private createdColumn = new Float64Array(0);
  private timeColumns: Float64Array[];
  private statusColumn = new Int8Array(0);
  private versions = new Float64Array(0);
  private bodyOf = new Int32Array(0);
  /** Each namespace's slots as a doubly linked list (next/previous slot; -1 ends it), headed per namespace id. */
  private nextInNamespace = new Int32Array(0);
  private previousInNamespace = new Int32Array(0);
  private namespaceHeads = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private slotCount = 0;
  private liveCount = 0;
  /** Namespaces by id; each slot holds its namespace once, so a namespace's holders are its objects. */
  private readonly namespaces = new StringPool();
  private readonly index: NameIndex;
  /** Label and annotation sets, shared by every object holding an equal one. */
  private readonly sets = new SharedPool<Labels>();
  /** The kind's filter values (a node name, a list of claims), shared likewise. */
  private readonly fieldValues = new SharedPool<Exclude<FieldValue, undefined>>();
  private readonly verbatim: ReadonlySet<string>;
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
    this.fieldIds = Array.from({ length: shape.fields }, () => new Int32Array(0));
    this.timeColumns = Array.from({ length: shape.times }, () => new Float64Array(0));
    this.verbatim = new Set(shape.verbatimAnnotations ?? []);
    this.arena = new BodyArena(arena);
    this.index = new NameIndex({
      namespaceId: (slot) => this.namespaceIds[slot]!,
      name: (slot) => this.names[slot]!,
    });
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
    const namespaceId = this.namespaces.find(namespace);
    return namespaceId === NONE ? NO_SLOT : this.index.find(namespaceId, name);
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.slotCount && this.bodyOf[slot] !== NO_SLOT;
  }

  /** Namespaces holding objects, with how many each holds. */
  *namespaceCounts(): IterableIterator<[string, number]> {
    for (const id of [...this.namespaces.ids()]) yield [this.namespaces.value(id), this.namespaces.holders(id)];
  }

  countIn(namespace: string): number {
    const id = this.namespaces.find(namespace);
    return id === NONE ? 0 : this.namespaces.holders(id);
  }

  /** The slots of one namespace's objects (live view: do not keep across changes). */
  *slotsIn(namespace: string): IterableIterator<number> {
    const id = this.namespaces.find(namespace);
    if (id === NONE) return;
    for (let slot = this.namespaceHeads[id]!; slot !== NO_SLOT; slot = this.nextInNamespace[slot]!) yield slot;
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
    const namespaceId = this.namespaces.hold(record.namespace);
    this.names[slot] = record.name;
    this.namespaceIds[slot] = namespaceId;
    this.link(slot, namespaceId);
    this.index.insert(slot);
    this.write(slot, record, version);
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
    this.index.delete(slot);
    const namespaceId = this.namespaceIds[slot]!;
    this.unlink(slot, namespaceId);
    this.namespaces.release(namespaceId);
    this.releaseColumns(slot);
    this.arena.free(this.bodyOf[slot]!);
    this.bodyOf[slot] = NO_SLOT;
    this.names[slot] = '';
    this.namespaceIds[slot] = NONE;
    this.versions[slot] = Number.NaN;
    this.liveCount--;
    this.freeSlots.push(slot);
    this.changes++;
  }

  /** Every live slot. */
  *slots(): IterableIterator<number> {
    for (let slot = 0; slot < this.slotCount; slot++) if (this.bodyOf[slot] !== NO_SLOT) yield slot;
  }

  /**
   * After a list: learns the body dictionary now if the kind had fewer objects than the sample, and sizes the columns
   * to what is held plus a sixteenth (growing by half each time had left up to a third of them unused: 11 MB of the
   * pod table's 25 at 150,000 pods).
   */
  settle(): void {
    this.arena.settle();
    const room = roomFor(this.slotCount);
    if (this.capacity > room + (room >> 3)) this.resize(room);
  }

  // Column readers (pure views for filters and sorts).
  name(slot: number): string {
    return this.names[slot] as string;
  }
  namespace(slot: number): string {
    return this.namespaces.value(this.namespaceIds[slot]!);
  }
  labels(slot: number): Labels | undefined {
    const id = this.labelIds[slot]!;
    return id === NONE ? undefined : this.sets.value(id);
  }
  annotations(slot: number): Labels | undefined {
    const id = this.annotationIds[slot]!;
    return id === NONE ? undefined : this.sets.value(id);
  }
  /** The owners (made for the call: filters use `hasOwnerUid` and `hasOwnerKind`). */
  owners(slot: number): readonly OwnerRef[] | undefined {
    const kind = this.ownerKinds[slot]!;
    if (kind === NO_OWNER) return undefined;
    if (kind === OTHER_OWNERS) return this.otherOwners.get(slot);
    return [{ kind: this.ownerKindNames[kind - 1]!, uid: unpackUid(this.ownerUids, slot * 16) }];
  }
  hasOwnerUid(slot: number, uid: string): boolean {
    const kind = this.ownerKinds[slot]!;
    if (kind === NO_OWNER) return false;
    if (kind === OTHER_OWNERS) return this.otherOwners.get(slot)?.some((owner) => owner.uid === uid) ?? false;
    return sameUid(this.ownerUids, slot * 16, uid);
  }
  hasOwnerKind(slot: number, ownerKind: string): boolean {
    const kind = this.ownerKinds[slot]!;
    if (kind === NO_OWNER) return false;
    if (kind === OTHER_OWNERS) return this.otherOwners.get(slot)?.some((owner) => owner.kind === ownerKind) ?? false;
    return this.ownerKindNames[kind - 1] === ownerKind;
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
    const id = (this.fieldIds[index] as Int32Array)[slot]!;
    return id === NONE ? undefined : this.fieldValues.value(id);
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

  private link(slot: number, namespaceId: number): void {
    if (namespaceId >= this.namespaceHeads.length) {
      const grown = new Int32Array(Math.max(namespaceId + 1, this.namespaceHeads.length * 2, 8)).fill(NO_SLOT);
      grown.set(this.namespaceHeads);
      this.namespaceHeads = grown;
    }
    const head = this.namespaceHeads[namespaceId]!;
    this.previousInNamespace[slot] = NO_SLOT;
    this.nextInNamespace[slot] = head;
    if (head !== NO_SLOT) this.previousInNamespace[head] = slot;
    this.namespaceHeads[namespaceId] = slot;
  }

  private unlink(slot: number, namespaceId: number): void {
    const previous = this.previousInNamespace[slot]!;
    const next = this.nextInNamespace[slot]!;
    if (previous !== NO_SLOT) this.nextInNamespace[previous] = next;
    else this.namespaceHeads[namespaceId] = next;
    if (next !== NO_SLOT) this.previousInNamespace[next] = previous;
  }

  private write(slot: number, record: ObjectRecord, version: number): void {
    this.labelIds[slot] = this.holdSet(record.labels, false);
    this.annotationIds[slot] = this.holdSet(record.annotations, true);
    this.writeOwners(slot, record.owners);
    for (let i = 0; i < this.shape.fields; i++) {
      (this.fieldIds[i] as Int32Array)[slot] = this.holdField(record.fields[i]);
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
    this.sets.release(this.labelIds[slot]!);
    this.sets.release(this.annotationIds[slot]!);
    this.labelIds[slot] = NONE;
    this.annotationIds[slot] = NONE;
    for (let i = 0; i < this.shape.fields; i++) {
      const column = this.fieldIds[i] as Int32Array;
      this.fieldValues.release(column[slot]!);
      column[slot] = NONE;
    }
    this.ownerKinds[slot] = NO_OWNER;
    this.otherOwners.delete(slot);
  }

  private writeOwners(slot: number, owners: readonly OwnerRef[] | undefined): void {
    if (owners === undefined || owners.length === 0) {
      this.ownerKinds[slot] = NO_OWNER;
      return;
    }
    const only = owners[0] as OwnerRef;
    if (owners.length === 1 && packUid(only.uid, this.ownerUids, slot * 16)) {
      let kind = this.ownerKindIds.get(only.kind);
      // owner kinds are few (the workload kinds, a node, custom controllers'): kept for the table's life
      if (kind === undefined && this.ownerKindNames.length < 0x7fff - 1) {
        this.ownerKindNames.push(only.kind);
        this.ownerKindIds.set(only.kind, (kind = this.ownerKindNames.length));
      }
      if (kind !== undefined) {
        this.ownerKinds[slot] = kind;
        return;
      }
    }
    this.ownerKinds[slot] = OTHER_OWNERS;
    this.otherOwners.set(
      slot,
      Object.freeze(owners.map((owner) => Object.freeze({ kind: owner.kind, uid: owner.uid }))),
    );
  }

  /** A label or annotation set: sorted by key, shared with every object holding an equal one. */
  private holdSet(labels: Labels | undefined, annotations: boolean): number {
    if (labels === undefined) return NONE;
    const keys = Object.keys(labels);
    if (keys.length === 0) return NONE;
    keys.sort();
    const values = new Array<string>(keys.length);
    let hash = HASH_SEED;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const value = String(labels[key]);
      values[i] = annotations && value.length > LABEL_VALUE_MAX && !this.verbatim.has(key) ? LONG_VALUE : value;
      hash = hashText(hashText(hash, key), values[i] as string);
    }
    return this.sets.hold(
      hash,
      (set) => sameEntries(set, keys, values),
      () => {
        const set: Record<string, string> = {};
        // Property names are shared by V8 itself (internalized): only the values are this set's own.
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i] as string;
          if (key === '__proto__') Object.defineProperty(set, key, { value: values[i], enumerable: true });
          else set[key] = values[i] as string;
        }
        return Object.freeze(set);
      },
    );
  }

  private holdField(value: FieldValue): number {
    if (value === undefined) return NONE;
    if (typeof value === 'string') {
      return this.fieldValues.hold(
        hashText(HASH_SEED, value),
        (held) => held === value,
        () => value,
      );
    }
    if (value.length === 0) return NONE;
    let hash = HASH_SEED ^ 1;
    for (const item of value) hash = hashText(hash, item);
    return this.fieldValues.hold(
      hash,
      (held) => typeof held !== 'string' && held.length === value.length && held.every((item, i) => item === value[i]),
      () => Object.freeze([...value]),
    );
  }

  private ensure(size: number): void {
    if (size <= this.capacity) return;
    this.resize(Math.max(size, Math.floor(this.capacity * 1.5), 64));
  }

  /** Columns for `capacity` slots (at least `slotCount`), growing or shrinking them. */
  private resize(capacity: number): void {
    const copy = <A extends Float64Array | Int32Array | Int16Array | Int8Array | Uint8Array>(old: A, next: A): A => {
      next.set(old.subarray(0, Math.min(old.length, next.length)));
      return next;
    };
    this.namespaceIds = copy(this.namespaceIds, new Int32Array(capacity).fill(NONE));
    this.labelIds = copy(this.labelIds, new Int32Array(capacity).fill(NONE));
    this.annotationIds = copy(this.annotationIds, new Int32Array(capacity).fill(NONE));
    this.ownerKinds = copy(this.ownerKinds, new Int16Array(capacity));
    this.ownerUids = copy(this.ownerUids, new Uint8Array(capacity * 16));
    this.fieldIds = this.fieldIds.map((column) => copy(column, new Int32Array(capacity).fill(NONE)));
    this.createdColumn = copy(this.createdColumn, new Float64Array(capacity));
    this.timeColumns = this.timeColumns.map((column) => copy(column, new Float64Array(capacity)));
    this.statusColumn = copy(this.statusColumn, new Int8Array(capacity));
    this.versions = copy(this.versions, new Float64Array(capacity));
    this.bodyOf = copy(this.bodyOf, new Int32Array(capacity).fill(NO_SLOT));
    this.uids = copy(this.uids, new Uint8Array(capacity * 16));
    this.nextInNamespace = copy(this.nextInNamespace, new Int32Array(capacity));
    this.previousInNamespace = copy(this.previousInNamespace, new Int32Array(capacity));
    this.capacity = capacity;
  }
}

/** Slots for `count` objects plus room for a sixteenth more (at least 64). */
export function roomFor(count: number): number {
  return count + Math.max(64, count >> 4);
}

/** Whether a held set has exactly these (sorted) keys and values. */
function sameEntries(set: Labels, keys: readonly string[], values: readonly string[]): boolean {
  let count = 0;
  for (const key in set) if (Object.hasOwn(set, key)) count++;
  if (count !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) if (set[keys[i] as string] !== values[i]) return false;
  return true;
}

/** etcd's revisions are decimal: a number compares cheaply; anything else is never "the same version". */
function numericVersion(text: string): number {
  return /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
}
