import { canonicalQuantity, formatByteQuantity, formatMilliQuantity } from '../../src/kube/quantity-format.js';
import type { QuantityFormat } from '../../src/kube/quantity.js';

const Ki = 1024n;

describe('canonicalQuantity', () => {
  // apimachinery pkg/api/resource quantity_test.go, TestQuantityString: decQuantity(mantissa, exponent, format).
  it.each<[bigint, number, QuantityFormat, string]>([
    [Ki * Ki * Ki, 0, 'BinarySI', '1Gi'],
    [300n * Ki * Ki, 0, 'BinarySI', '300Mi'],
    [6n * Ki, 0, 'BinarySI', '6Ki'],
    [1001n * Ki * Ki * Ki, 0, 'BinarySI', '1001Gi'],
    [Ki * Ki * Ki * Ki, 0, 'BinarySI', '1Ti'],
    [5n, 0, 'BinarySI', '5'],
    [500n, -3, 'BinarySI', '500m'],
    [1n, 9, 'DecimalSI', '1G'],
    [1000n, 6, 'DecimalSI', '1G'],
    [1000000n, 3, 'DecimalSI', '1G'],
    [1000000000n, 0, 'DecimalSI', '1G'],
    [1n, -3, 'DecimalSI', '1m'],
    [80n, -3, 'DecimalSI', '80m'],
    [1080n, -3, 'DecimalSI', '1080m'],
    [108n, -2, 'DecimalSI', '1080m'],
    [10800n, -4, 'DecimalSI', '1080m'],
    [300n, 6, 'DecimalSI', '300M'],
    [1n, 12, 'DecimalSI', '1T'],
    [1n, 18, 'DecimalSI', '1E'],
    [1n, 21, 'DecimalSI', '1e21'],
    [5n, 21, 'DecimalSI', '5e21'],
    [1n, 24, 'DecimalSI', '1e24'],
    [1234567n, 6, 'DecimalSI', '1234567M'],
    [1234567n, -3, 'BinarySI', '1234567m'],
    [3n, 3, 'DecimalSI', '3k'],
    [1025n, 0, 'BinarySI', '1025'],
    [0n, 0, 'DecimalSI', '0'],
    [0n, 0, 'BinarySI', '0'],
    [1n, 9, 'DecimalExponent', '1e9'],
    [1n, -3, 'DecimalExponent', '1e-3'],
    [1n, -9, 'DecimalExponent', '1e-9'],
    [80n, -3, 'DecimalExponent', '80e-3'],
    [300n, 6, 'DecimalExponent', '300e6'],
    [1n, 12, 'DecimalExponent', '1e12'],
    [1n, 3, 'DecimalExponent', '1e3'],
    [3n, 3, 'DecimalExponent', '3e3'],
    [3n, 3, 'DecimalSI', '3k'],
    [0n, 0, 'DecimalExponent', '0'],
    [1n, -9, 'DecimalSI', '1n'],
    [80n, -9, 'DecimalSI', '80n'],
    [1080n, -9, 'DecimalSI', '1080n'],
    [108n, -8, 'DecimalSI', '1080n'],
    [10800n, -10, 'DecimalSI', '1080n'],
    [1n, -6, 'DecimalSI', '1u'],
    [80n, -6, 'DecimalSI', '80u'],
    [1080n, -6, 'DecimalSI', '1080u'],
    // TestQuantityParseEmit, with the parsed value written out: "1024Mi", "1000M", ".001Ki", ".000001Ki".
    [Ki * Ki * Ki, 0, 'BinarySI', '1Gi'],
    [1000n, 6, 'DecimalSI', '1G'],
    [1024n, -3, 'BinarySI', '1024m'],
    [1024n, -6, 'BinarySI', '1024u'],
  ])('when the value is %s × 10^%d in %s, then Quantity.String() is "%s"', (mantissa, exponent, format, text) => {
    expect(canonicalQuantity(mantissa, exponent, format)).toBe(text);
    // TestQuantityString checks the negated value too: the same text with a minus sign.
    if (mantissa !== 0n) expect(canonicalQuantity(-mantissa, exponent, format)).toBe(`-${text}`);
  });
});

describe('formatMilliQuantity', () => {
  it.each<[number, QuantityFormat | undefined, string]>([
    [0, undefined, '0'],
    [1, undefined, '1m'],
    [100, undefined, '100m'],
    [250, undefined, '250m'],
    [1250, undefined, '1250m'],
    [1000, undefined, '1'],
    [2000, undefined, '2'],
    [1_500_000, undefined, '1500'],
    [3_000_000, undefined, '3k'],
    [12_000_000, undefined, '12k'],
    [0.4, undefined, '1m'],
    // TestMilliNewSet: NewMilliQuantity(value, format).String().
    [1, 'DecimalSI', '1m'],
    [1000, 'DecimalSI', '1'],
    [1234000, 'DecimalSI', '1234'],
    [1024, 'BinarySI', '1024m'],
    [1024 * 1024, 'BinarySI', '1048576m'],
    [1_000_000, 'DecimalExponent', '1e3'],
    // CPU written as "1e3" by the pods stays in exponent form.
    [1500, 'DecimalExponent', '1500e-3'],
  ])(
    'when the CPU is %d millicores in %s, then it is written "%s" as Quantity.String() would',
    (milli, format, text) => {
      expect(formatMilliQuantity(milli, format)).toBe(text);
    },
  );
});

describe('formatByteQuantity', () => {
  it.each<[number, QuantityFormat | undefined, string]>([
    [0, undefined, '0'],
    [500, undefined, '500'],
    [1023, undefined, '1023'],
    [1024, undefined, '1Ki'],
    [1536, undefined, '1536'],
    [128 * 2 ** 20, undefined, '128Mi'],
    [1536 * 2 ** 20, undefined, '1536Mi'],
    [3 * 2 ** 30, undefined, '3Gi'],
    [2 ** 40, undefined, '1Ti'],
    [1_000_000_000, undefined, '1000000000'],
    [2 ** 30 + 512, undefined, '1073742336'],
    [100.2, undefined, '101'],
    // Requests of 1G and 500M (DecimalSI) sum to 1500M, as KubeSphere's annotation shows.
    [1_500_000_000, 'DecimalSI', '1500M'],
    [1_000_000_000, 'DecimalSI', '1G'],
    [2 ** 30, 'DecimalSI', '1073741824'],
    [1_500_000_000, 'DecimalExponent', '1500e6'],
    // TestNewSet: NewQuantity(value, format).String().
    [1, 'DecimalSI', '1'],
    [1000, 'DecimalSI', '1k'],
    [1234000, 'DecimalSI', '1234k'],
    [1024, 'BinarySI', '1Ki'],
    [1_000_000, 'DecimalExponent', '1e6'],
    [1024 * 1024, 'BinarySI', '1Mi'],
  ])('when the memory is %d bytes in %s, then it is written "%s" as Quantity.String() would', (bytes, format, text) => {
    expect(formatByteQuantity(bytes, format)).toBe(text);
  });
});
