/**
 * Quantities as apimachinery's resource.Quantity.String() writes them (canonical form), so the allocation
 * annotations read as KubeSphere's do: "1250m", "2", "512Mi", "3Gi". Inputs are rounded up to whole units first,
 * as Quantity.MilliValue()/Value() do.
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

/** CPU (DecimalSI) from millicores: 1250 → "1250m", 2000 → "2", 100 → "100m", 0 → "0". */
export function formatMilliQuantity(milli: number): string {
  return formatDecimal(toWhole(milli), -3);
}

/**
 * Memory (BinarySI) from bytes: 3 GiB → "3Gi", 1536 MiB → "1536Mi"; a byte count that is not a multiple of 1024,
 * or less than 1024, is written plain ("1536", "500") as Quantity does to avoid rounding.
 */
export function formatByteQuantity(bytes: number): string {
  let value = toWhole(bytes);
  const negative = value < 0n;
  if (negative) value = -value;
  if (value < 1024n) return (negative ? '-' : '') + formatDecimal(value, 0);
  let exponent = 0;
  while (value % 1024n === 0n && exponent < BINARY_SUFFIXES.length - 1) {
    value /= 1024n;
    exponent++;
  }
  return `${negative ? '-' : ''}${value}${BINARY_SUFFIXES[exponent]}`;
}

/** DecimalSI canonical form of value × 10^scale: trailing zeros moved into an exponent that is a multiple of 3. */
function formatDecimal(value: bigint, scale: number): string {
  if (value === 0n) return '0';
  let mantissa = value;
  let exponent = scale;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  // Down to a multiple of 3: 15e2 is written "1500", 25e-2 "250m".
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  const suffix = DECIMAL_SUFFIXES[exponent];
  return suffix === undefined ? `${mantissa}e${exponent}` : `${mantissa}${suffix}`;
}

function toWhole(value: number): bigint {
  return Number.isFinite(value) ? BigInt(Math.ceil(value)) : 0n;
}
