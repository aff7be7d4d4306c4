/**
 * A small, fast, seeded PRNG (mulberry32): the same seed gives the same demo cluster on every start. Globals are
 * read once at module level: seeding calls these millions of times, and global lookups are slow in VM contexts.
 */
const { imul, floor } = Math;

export type Random = () => number;

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[floor(random() * items.length)] as T;
}

/** FNV-1a of a string, for deterministic per-object seeds. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push((i < 16 ? '0' : '') + i.toString(16));

function word(random: Random): string {
  const n = (random() * 4294967296) >>> 0;
  return (HEX[n >>> 24] as string) + HEX[(n >>> 16) & 255] + HEX[(n >>> 8) & 255] + HEX[n & 255];
}

/** `words` random 32-bit words as lower-case hex (8 characters each). */
export function randomHex(random: Random, words: number): string {
  let out = '';
  for (let i = 0; i < words; i++) out += word(random);
  return out;
}

/** A version-4-shaped UUID from the seed, so seeded objects get stable uids cheaply. */
export function seededUid(random: Random): string {
  const h = randomHex(random, 4);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[h.charCodeAt(16) & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
