/**
 * Histogram intervals as KubeSphere accepts them (`[0-9]+[smhdwMqy]`, default 15m): s, m, h, d and w are fixed
 * widths; M, q and y are calendar months, quarters and years (UTC), which OpenSearch allows only with a count of 1.
 */
export type Interval =
  | { readonly text: string; readonly kind: 'fixed'; readonly ms: number }
  | { readonly text: string; readonly kind: 'calendar'; readonly unit: 'month' | 'quarter' | 'year' };

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const CALENDAR: Readonly<Record<string, 'month' | 'quarter' | 'year'>> = { M: 'month', q: 'quarter', y: 'year' };

/** `text` is already validated by the query schema; anything else is a programming error. */
export function parseInterval(text: string): Interval {
  const match = /^(\d+)([smhdwMqy])$/.exec(text);
  if (!match) throw new Error(`not an interval: ${text}`);
  const count = Number(match[1]);
  const unit = match[2]!;
  const calendar = CALENDAR[unit];
  if (calendar) return { text, kind: 'calendar', unit: calendar };
  return { text, kind: 'fixed', ms: count * UNIT_MS[unit]! };
}

/** The start (epoch ms) of the bucket holding `ms`: fixed widths align to the epoch, as OpenSearch aligns them. */
export function bucketStart(interval: Interval, ms: number): number {
  if (interval.kind === 'fixed') return Math.floor(ms / interval.ms) * interval.ms;
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (interval.unit === 'year') return Date.UTC(year, 0, 1);
  const month = date.getUTCMonth();
  return Date.UTC(year, interval.unit === 'quarter' ? month - (month % 3) : month, 1);
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucket(interval: Interval, start: number): number {
  if (interval.kind === 'fixed') return start + interval.ms;
  const date = new Date(start);
  const months = interval.unit === 'month' ? 1 : interval.unit === 'quarter' ? 3 : 12;
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1);
}

/**
 * Counts per bucket as OpenSearch's date_histogram answers them (min_doc_count 0): every bucket from the first
 * non-empty one to the last, empty ones included, ascending. `undefined` when that would exceed `maxBuckets`.
 */
export function fillBuckets(
  interval: Interval,
  counts: ReadonlyMap<number, number>,
  maxBuckets: number,
): { time: number; count: number }[] | undefined {
  if (counts.size === 0) return [];
  let first = Infinity;
  let last = -Infinity;
  for (const key of counts.keys()) {
    first = Math.min(first, key);
    last = Math.max(last, key);
  }
  const buckets: { time: number; count: number }[] = [];
  for (let start = first; start <= last; start = nextBucket(interval, start)) {
    if (buckets.length >= maxBuckets) return undefined;
    buckets.push({ time: start, count: counts.get(start) ?? 0 });
  }
  return buckets;
}
