import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * The full bodies of a cache's objects, stored compactly off the V8 heap: each body is JSON, deflated (raw, with a
 * preset dictionary learned from the kind's first objects) and appended to 1 MiB slabs (Buffers, outside the
 * heap's old space), so 150,000 pods cost tens of megabytes there instead of hundreds on the heap. A body is addressed
 * by a handle (a small integer); replacing or freeing one leaves a hole, and once holes outweigh what is live the
 * live bodies are copied into fresh slabs (amortized: every byte written is copied at most once more on average).
 *
 * Bodies are only ever decoded for the page being answered.
 */
export interface BodyArenaOptions {
  /** Deflate bodies (default true); off for short-lived tables built for one answer. */
  compress?: boolean;
  /** Bodies stored as they are before the dictionary is learned from a spread of them (default 256). */
  samples?: number;
}

const SLAB_BYTES = 1 << 20;
/** A window of 8 KiB: deflate and inflate set-up stay cheap (a 32 KiB window costs several times more per call). */
const WINDOW_BITS = 13;
const DICTIONARY_BYTES = 1 << WINDOW_BITS;
/** Bodies the dictionary is made of, taken evenly from the samples. */
const DICTIONARY_SAMPLES = 16;
/** zlib's output chunk: most bodies fit one (Node's default is 16 KiB). */
const CHUNK_BYTES = 4096;
const NONE = -1;

interface Slab {
  readonly buffer: Buffer;
  used: number;
  live: number;
}

export class BodyArena {
  private slabs: (Slab | undefined)[] = [];
  private current: Slab | undefined;
  /** Per handle: slab index, offset, stored length, decoded length (0: stored as is). */
  private slabOf = new Int32Array(1024).fill(NONE);
  private offsetOf = new Int32Array(1024);
  private storedLength = new Int32Array(1024);
  private plainLength = new Int32Array(1024);
  private freeHandles: number[] = [];
  private nextHandle = 0;
  private liveBytes = 0;
  private deadBytes = 0;
  private dictionary: Buffer | undefined;
  private readonly sampled: number[] = [];
  private readonly compress: boolean;
  private readonly samples: number;

  constructor(options: BodyArenaOptions = {}) {
    this.compress = options.compress ?? true;
    this.samples = options.samples ?? 256;
  }

  /** Stores a body; returns its handle. */
  add(json: Buffer): number {
    const handle = this.freeHandles.pop() ?? this.nextHandle++;
    this.ensure(handle);
    this.write(handle, json);
    if (this.compress && this.dictionary === undefined) {
      this.sampled.push(handle);
      if (this.sampled.length >= this.samples) this.learn();
    }
    return handle;
  }

  /** Replaces the body behind a handle. */
  replace(handle: number, json: Buffer): void {
    this.release(handle);
    this.write(handle, json);
  }

  free(handle: number): void {
    this.release(handle);
    const sample = this.sampled.indexOf(handle);
    if (sample >= 0) this.sampled.splice(sample, 1);
    this.freeHandles.push(handle);
  }

  /** The body as stored (JSON bytes): a view into a slab when it was stored as is, valid until the next write. */
  read(handle: number): Buffer {
    const slab = this.slabs[this.slabOf[handle]!];
    if (!slab) throw new Error(`no body behind handle ${handle}`);
    const start = this.offsetOf[handle]!;
    const stored = slab.buffer.subarray(start, start + this.storedLength[handle]!);
    if (this.plainLength[handle] === 0) return stored;
    return inflateRawSync(stored, {
      windowBits: WINDOW_BITS,
      dictionary: this.dictionary as Buffer,
      chunkSize: Math.max(CHUNK_BYTES, this.plainLength[handle]!),
    });
  }

  isDeflated(handle: number): boolean {
    return this.plainLength[handle] !== 0;
  }

  /** A copy of the stored bytes (still compressed) and how to decode them later, independent of this arena. */
  snapshot(handle: number): StoredBody {
    const slab = this.slabs[this.slabOf[handle]!] as Slab;
    const start = this.offsetOf[handle]!;
    return {
      bytes: Buffer.from(slab.buffer.subarray(start, start + this.storedLength[handle]!)),
      deflated: this.plainLength[handle] !== 0,
      dictionary: this.dictionary,
    };
  }

  /** Bytes held in slabs (live and holes), for metrics. */
  get bytes(): number {
    let total = 0;
    for (const slab of this.slabs) total += slab?.buffer.length ?? 0;
    return total;
  }

  get storedBytes(): number {
    return this.liveBytes;
  }

  /** Learns the dictionary now (the end of a first list shorter than the sample). */
  settle(): void {
    if (this.compress && this.dictionary === undefined && this.sampled.length > 0) this.learn();
    // the per-handle columns sized to the handles in use plus a sixteenth, not what growing left
    const room = this.nextHandle + Math.max(64, this.nextHandle >> 4);
    if (this.slabOf.length > room + (room >> 3)) this.resize(room);
  }

  private ensure(handle: number): void {
    if (handle < this.slabOf.length) return;
    this.resize(Math.max(handle + 1, Math.floor(this.slabOf.length * 1.5)));
  }

  private resize(size: number): void {
    const copy = (old: Int32Array, fill = 0) => {
      const next = new Int32Array(size).fill(fill);
      next.set(old.subarray(0, Math.min(old.length, size)));
      return next;
    };
    this.slabOf = copy(this.slabOf, NONE);
    this.offsetOf = copy(this.offsetOf);
    this.storedLength = copy(this.storedLength);
    this.plainLength = copy(this.plainLength);
  }

  private write(handle: number, json: Buffer): void {
    let stored = json;
    let plain = 0;
    if (this.dictionary !== undefined) {
      // memLevel 4 and small chunks: each call allocates (and frees) a few KiB instead of ~250 KiB, which also leaves
      // the C heap less fragmented after a first list of 150,000 objects
      const deflated = deflateRawSync(json, {
        windowBits: WINDOW_BITS,
        dictionary: this.dictionary,
        level: constants.Z_DEFAULT_COMPRESSION,
        memLevel: 4,
        chunkSize: CHUNK_BYTES,
      });
      if (deflated.length < json.length) {
        stored = deflated;
        plain = json.length;
      }
    }
    const slab = this.room(stored.length);
    stored.copy(slab.buffer, slab.used);
    this.slabOf[handle] = this.slabs.indexOf(slab);
    this.offsetOf[handle] = slab.used;
    this.storedLength[handle] = stored.length;
    this.plainLength[handle] = plain;
    slab.used += stored.length;
    slab.live += stored.length;
    this.liveBytes += stored.length;
  }

  /** Turns a handle's body into a hole (the handle then points nowhere until written again). */
  private release(handle: number): void {
    const index = this.slabOf[handle]!;
    const slab = this.slabs[index];
    this.slabOf[handle] = NONE;
    if (!slab) return;
    const length = this.storedLength[handle]!;
    slab.live -= length;
    this.liveBytes -= length;
    this.deadBytes += length;
    if (slab.live === 0 && slab !== this.current) {
      this.slabs[index] = undefined;
      this.deadBytes -= slab.used;
    }
    if (this.deadBytes > Math.max(8 * SLAB_BYTES, this.liveBytes)) this.compact();
  }

  /** A slab with `length` bytes free: the current one, or a new one (of its own size for a body beyond a slab). */
  private room(length: number): Slab {
    if (this.current && this.current.buffer.length - this.current.used >= length) return this.current;
    // Slabs grow with the arena (64 KiB first, up to 1 MiB): a kind of a few objects holds a few pages.
    const size = Math.min(SLAB_BYTES, Math.max(64 * 1024, this.bytes));
    const slab: Slab = { buffer: Buffer.allocUnsafeSlow(Math.max(size, length)), used: 0, live: 0 };
    const free = this.slabs.indexOf(undefined);
    if (free >= 0) this.slabs[free] = slab;
    else this.slabs.push(slab);
    // A body larger than a slab gets one of its own; the current slab keeps taking the small ones.
    if (length <= size) {
      const previous = this.current;
      this.current = slab;
      if (previous && previous.live === 0) this.drop(previous);
    }
    return slab;
  }

  private drop(slab: Slab): void {
    const index = this.slabs.indexOf(slab);
    if (index >= 0) this.slabs[index] = undefined;
    this.deadBytes -= slab.used - slab.live;
  }

  /** Copies every live body into fresh slabs, in handle order. */
  private compact(): void {
    const old = this.slabs;
    this.slabs = [];
    this.current = undefined;
    this.liveBytes = 0;
    this.deadBytes = 0;
    for (let handle = 0; handle < this.nextHandle; handle++) {
      const slab = old[this.slabOf[handle]!];
      if (!slab) continue;
      const start = this.offsetOf[handle]!;
      const length = this.storedLength[handle]!;
      const target = this.room(length);
      slab.buffer.copy(target.buffer, target.used, start, start + length);
      this.slabOf[handle] = this.slabs.indexOf(target);
      this.offsetOf[handle] = target.used;
      target.used += length;
      target.live += length;
      this.liveBytes += length;
    }
  }

  /**
   * The preset dictionary: 16 bodies spread over the sampled ones (a list comes in key order, so the first few are
   * often alike: one namespace, one workload), cut to the window. The samples are then stored again, deflated with
   * it. A spread of 256 rather than the first 16 stored ReplicaSets and Deployments in a fifth fewer bytes.
   */
  private learn(): void {
    const bodies = this.sampled.map((handle) => Buffer.from(this.read(handle)));
    const step = Math.max(1, Math.floor(bodies.length / DICTIONARY_SAMPLES));
    const joined = Buffer.concat(bodies.filter((_, i) => i % step === 0));
    this.dictionary = Buffer.from(joined.subarray(Math.max(0, joined.length - DICTIONARY_BYTES)));
    this.sampled.forEach((handle, i) => this.replace(handle, bodies[i] as Buffer));
    this.sampled.length = 0;
  }
}

/** A body copied out of an arena for an answer written over several turns of the event loop. */
export interface StoredBody {
  readonly bytes: Buffer;
  readonly deflated: boolean;
  readonly dictionary: Buffer | undefined;
}

export function decodeStoredBody(body: StoredBody): Buffer {
  if (!body.deflated) return body.bytes;
  return inflateRawSync(body.bytes, { windowBits: WINDOW_BITS, dictionary: body.dictionary as Buffer });
}
