/**
 * Go duration text ("2h30m", "90s", "1.5h", "0") as used by Kubernetes objects, read exactly as Go's
 * `time.ParseDuration` reads it, except that negative durations are refused: no setting of ours can be negative.
 */
export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

const NANOS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's Duration is an int64 of nanoseconds (about 2,562,047 hours). */
const MAX_NANOS = (1n << 63n) - 1n;

/** One `<number><unit>` part: digits, an optional fraction, then every character up to the next number. */
const PART = /(\d*)(?:\.(\d*))?([^\d.]*)/y;

/** The duration in seconds (fractional below one second). Throws `DurationError` saying what is wrong. */
export function parseDuration(text: string): number {
  const nanos = parseDurationNanos(text);
  return Number(nanos / 1_000_000_000n) + Number(nanos % 1_000_000_000n) / 1e9;
}

export function parseDurationNanos(text: string): bigint {
  let rest = text;
  if (rest.startsWith('-')) throw new DurationError('must not be negative');
  if (rest.startsWith('+')) rest = rest.slice(1);
  if (rest === '0') return 0n;
  if (rest === '') throw new DurationError('is empty');

  let total = 0n;
  PART.lastIndex = 0;
  while (PART.lastIndex < rest.length) {
    const match = PART.exec(rest);
    const [, whole = '', fraction, unit = ''] = match ?? [];
    if (!match || (whole === '' && !fraction)) throw new DurationError('is not a duration such as 2h, 90m or 1h30m');
    if (unit === '') throw new DurationError(`has a number without a unit (use ns, us, ms, s, m or h)`);
    const perUnit = NANOS_PER_UNIT[unit];
    if (perUnit === undefined) throw new DurationError(`has an unknown unit "${unit}" (use ns, us, ms, s, m or h)`);
    total += BigInt(whole || '0') * perUnit;
    if (fraction) total += (BigInt(fraction) * perUnit) / 10n ** BigInt(fraction.length);
    if (total > MAX_NANOS) throw new DurationError('is too long');
  }
  return total;
}
