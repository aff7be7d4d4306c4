import { describe, expect, it } from '@jest/globals';
import { exactQuantity, quantityFormat, type QuantityFormat } from '../../src/kube/quantity.js';

describe('quantityFormat', () => {
  // apimachinery quantity_test.go TestQuantityParse: the format each text parses to.
  it.each<[string | number | undefined, QuantityFormat]>([
    ['0', 'DecimalSI'],
    ['0Ki', 'BinarySI'],
    ['0M', 'DecimalSI'],
    ['1', 'DecimalSI'],
    ['1Ki', 'BinarySI'],
    ['7Mi', 'BinarySI'],
    ['3Ei', 'BinarySI'],
    ['5n', 'DecimalSI'],
    ['3m', 'DecimalSI'],
    ['50k', 'DecimalSI'],
    ['6G', 'DecimalSI'],
    ['1E', 'DecimalSI'],
    ['1E-3', 'DecimalExponent'],
    ['1e3', 'DecimalExponent'],
    ['1.3E+6', 'DecimalExponent'],
    ['0.5e-9', 'DecimalExponent'],
    ['100.035Ki', 'BinarySI'],
    ['0.5Mi', 'BinarySI'],
    ['0.000000000001Ki', 'DecimalSI'],
    ['.001', 'DecimalSI'],
    ['1.G', 'DecimalSI'],
    [1000, 'DecimalSI'],
    [undefined, 'DecimalSI'],
  ])('when a quantity is written %j, then it keeps the %s format', (text, format) => {
    expect(quantityFormat(text)).toBe(format);
  });
});

describe('exactQuantity', () => {
  it.each([
    ['10Ti', 10n * 1024n ** 4n, 0],
    ['1.5Gi', 15n * 1024n ** 3n, -1],
    ['250m', 250n, -3],
    ['-2k', -2n, 3],
    ['1e3', 1n, 3],
    ['.5', 5n, -1],
  ])('when the text is %s, then it is read exactly', (text, mantissa, exponent) => {
    expect(exactQuantity(text)).toEqual({ mantissa, exponent });
  });

  it.each(['', 'lots', '1Zi', '1e999'])('when the text is %j, then it is not a quantity', (text) => {
    expect(exactQuantity(text)).toBeUndefined();
  });
});
