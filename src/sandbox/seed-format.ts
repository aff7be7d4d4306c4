/** Shared by the seed generators: time and address formats. */
export const DAY = 86_400_000;
// Read once: generation calls these hundreds of thousands of times, and global lookups are slow in VM contexts.
const DateType = Date;

/** RFC3339 at whole seconds, as kube stores timestamps. */
export function iso(ms: number): string {
  return new DateType(ms - (ms % 1000)).toISOString().slice(0, 19) + 'Z';
}

export function nodeIp(index: number): string {
  const n = index + 10;
  return `172.${16 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;
}

export function podCidrBase(index: number): string {
  return `10.${64 + ((index >> 8) & 63)}.${index & 255}`;
}
