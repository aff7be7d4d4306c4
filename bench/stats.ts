/** Latency summaries in milliseconds, from nanosecond samples. */
export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile over sorted samples (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function summarize(samplesNs: readonly number[]): Summary {
  const sorted = [...samplesNs].sort((a, b) => a - b);
  const ms = (ns: number) => ns / 1e6;
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    p50: ms(percentile(sorted, 50)),
    p90: ms(percentile(sorted, 90)),
    p99: ms(percentile(sorted, 99)),
    max: ms(sorted.at(-1) ?? Number.NaN),
    mean: ms(sorted.length ? total / sorted.length : Number.NaN),
  };
}

/** "p50 0.41 ms, p90 0.52, p99 0.93, max 4.10 (n=12,034)" */
export function formatSummary(s: Summary): string {
  return `p50 ${ms(s.p50)}, p90 ${ms(s.p90)}, p99 ${ms(s.p99)}, max ${ms(s.max)} (n=${s.count.toLocaleString('en-US')})`;
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)} ms`;
}

/** "+0.29 ms", "−0.03 ms": a difference, with its sign either way. */
export function signedMs(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${value < 0 ? '−' : '+'}${ms(Math.abs(value))}`;
}

export function rate(perSecond: number, unit = 'req/s'): string {
  if (!Number.isFinite(perSecond)) return 'n/a';
  return `${perSecond < 100 ? perSecond.toFixed(1) : Math.round(perSecond).toLocaleString('en-US')} ${unit}`;
}
