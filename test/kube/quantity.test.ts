import { describe, expect, it } from '@jest/globals';
import { quantityFormat, type QuantityFormat } from '../../src/kube/quantity.js';

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
