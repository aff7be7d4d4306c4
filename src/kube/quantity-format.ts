import type { QuantityFormat } from './quantity.js';

/**
 * Quantities as apimachinery's resource.Quantity.String() writes them (CanonicalizeBytes), so the allocation
 * annotations read byte for byte as KubeSphere's: "1250m", "2", "1500M", "512Mi", "3Gi". The sums are kept in whole
 * millicores and bytes (rounded up, as Quantity.MilliValue()/Value() and the scheduler do).
 */
const DECIMAL_SUFFIXES: Readonly<Record<number, string>> = {
  [-9]: 'n',
  [-6]: 'u',
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** CPU from millicores: 1250 → "1250m", 2000 → "2", 0 → "0" (DecimalSI unless the pods wrote it otherwise). */
export function formatMilliQuantity(milli: number, format: QuantityFormat = 'DecimalSI'): string {
  return canonicalQuantity(toWhole(milli), -3, format);
}

/** Memory from bytes: 3 GiB → "3Gi" (BinarySI), 1.5e9 → "1500M" (DecimalSI), as the pods wrote their quantities. */
export function formatByteQuantity(bytes: number, format: QuantityFormat = 'BinarySI'): string {
  return canonicalQuantity(toWhole(bytes), 0, format);
}

/**
 * Quantity.String() of mantissa × 10^exponent in the given format. BinarySI falls back to DecimalSI for a value
 * between -1024 and 1024 or one that is not a whole number, so nothing is rounded; DecimalSI beyond "E" uses an
 * exponent.
 */
export function canonicalQuantity(mantissa: bigint, exponent: number, format: QuantityFormat): string {
  if (mantissa === 0n) return '0';
  if (format === 'BinarySI') {
    const whole = wholeValue(mantissa, exponent);
    if (whole !== undefined && (whole >= 1024n || whole <= -1024n)) return binary(whole);
    return decimal(mantissa, exponent, 'DecimalSI');
  }
  return decimal(mantissa, exponent, format);
}

/** Trailing zeros moved into an exponent that is a multiple of 3 (15e2 is "1500", 25e-2 is "250m"). */
function decimal(mantissa: bigint, exponent: number, format: 'DecimalSI' | 'DecimalExponent'): string {
  let amount = mantissa;
  let power = exponent;
  while (amount % 10n === 0n) {
    amount /= 10n;
    power++;
  }
  while (power % 3 !== 0) {
    amount *= 10n;
    power--;
  }
  const suffix = format === 'DecimalSI' ? DECIMAL_SUFFIXES[power] : undefined;
  if (suffix !== undefined) return `${amount}${suffix}`;
  return power === 0 ? `${amount}` : `${amount}e${power}`;
}

function binary(whole: bigint): string {
  let amount = whole;
  let power = 0;
  while (amount % 1024n === 0n && power < BINARY_SUFFIXES.length - 1) {
    amount /= 1024n;
    power++;
  }
  return `${amount}${BINARY_SUFFIXES[power]}`;
}

/** mantissa × 10^exponent as an integer, or `undefined` when it has a fraction. */
function wholeValue(mantissa: bigint, exponent: number): bigint | undefined {
  if (exponent >= 0) return mantissa * 10n ** BigInt(exponent);
  const divisor = 10n ** BigInt(-exponent);
  return mantissa % divisor === 0n ? mantissa / divisor : undefined;
}

function toWhole(value: number): bigint {
  return Number.isFinite(value) ? BigInt(Math.ceil(value)) : 0n;
}
