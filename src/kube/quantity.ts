/**
 * Kubernetes resource quantities ("100m", "1.5", "512Mi", "1e3", "2G") as numbers. Unparsable text counts as 0,
 * which is what an allocation sum should do with a value kube-apiserver would have rejected anyway.
 */
const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

export function parseQuantity(text: string | number | undefined): number {
  if (typeof text === 'number') return Number.isFinite(text) ? text : 0;
  if (!text) return 0;
  const match = QUANTITY.exec(text.trim());
  if (!match) return 0;
  const base = Number(match[1]);
  if (match[2]) return base * 10 ** Number(match[2].slice(1));
  return base * (SUFFIX[match[3] ?? ''] ?? 1);
}

const DECIMAL_POWERS: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_POWERS: Readonly<Record<string, number>> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };

/**
 * The text exactly, as mantissa × 10^exponent (parseQuantity's float loses whole units above 2^53: a 10Ti limit
 * less 1Gi); undefined for text kube-apiserver would not have taken.
 */
export function exactQuantity(text: string): { mantissa: bigint; exponent: number } | undefined {
  const match = QUANTITY.exec(text.trim());
  if (!match) return undefined;
  const number = match[1] as string;
  const negative = number.startsWith('-');
  const [whole = '', fraction = ''] = number.replace(/^[+-]/, '').split('.');
  let mantissa = BigInt(`${whole}${fraction}` || '0') * (negative ? -1n : 1n);
  let exponent = -fraction.length + (match[2] ? Number(match[2].slice(1)) : 0);
  const suffix = match[3] ?? '';
  const binary = BINARY_POWERS[suffix];
  if (binary !== undefined) mantissa *= 1024n ** BigInt(binary);
  else exponent += DECIMAL_POWERS[suffix] ?? 0;
  return Math.abs(exponent) <= 64 ? { mantissa, exponent } : undefined;
}

/** CPU in millicores, rounded up as kube-scheduler does. */
export function cpuToMilli(text: string | number | undefined): number {
  return Math.ceil(Math.round(parseQuantity(text) * 1e6) / 1e3);
}

export function memoryToBytes(text: string | number | undefined): number {
  return Math.ceil(parseQuantity(text));
}

/**
 * How apimachinery's resource.Quantity remembers to print a value: the kind of suffix it was written with. A sum
 * takes the format of its first non-zero addend (Quantity.Add), so "1G" + "500M" prints "1500M" and "1Gi" + "512Mi"
 * prints "1536Mi".
 */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** The format ParseQuantity gives the text; a binary value between -1 and 1 ("0.5Ki" is 512, but "0.0001Ki" is not) is DecimalSI. */
export function quantityFormat(text: string | number | undefined): QuantityFormat {
  if (typeof text !== 'string') return 'DecimalSI';
  const match = QUANTITY.exec(text.trim());
  if (!match) return 'DecimalSI';
  if (match[2]) return 'DecimalExponent';
  const suffix = match[3];
  if (suffix === undefined || !suffix.endsWith('i')) return 'DecimalSI';
  const value = Math.abs(parseQuantity(text));
  return value > 0 && value < 1 ? 'DecimalSI' : 'BinarySI';
}
