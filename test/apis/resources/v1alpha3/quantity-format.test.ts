import { formatByteQuantity, formatMilliQuantity } from '../../../../src/apis/resources/v1alpha3/quantity-format.js';

describe('formatMilliQuantity', () => {
  it.each([
    [0, '0'],
    [1, '1m'],
    [100, '100m'],
    [250, '250m'],
    [1250, '1250m'],
    [1000, '1'],
    [2000, '2'],
    [1_500_000, '1500'],
    [3_000_000, '3k'],
    [12_000_000, '12k'],
    [0.4, '1m'],
  ])('when the CPU is %d millicores, then it is written "%s" as Quantity.String() would', (milli, text) => {
    expect(formatMilliQuantity(milli)).toBe(text);
  });
});

describe('formatByteQuantity', () => {
  it.each([
    [0, '0'],
    [500, '500'],
    [1023, '1023'],
    [1024, '1Ki'],
    [1536, '1536'],
    [128 * 2 ** 20, '128Mi'],
    [1536 * 2 ** 20, '1536Mi'],
    [3 * 2 ** 30, '3Gi'],
    [2 ** 40, '1Ti'],
    [1_000_000_000, '1000000000'],
    [2 ** 30 + 512, '1073742336'],
    [100.2, '101'],
  ])('when the memory is %d bytes, then it is written "%s" as a BinarySI Quantity would', (bytes, text) => {
    expect(formatByteQuantity(bytes)).toBe(text);
  });
});
