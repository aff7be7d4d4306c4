import { describe, expect, test } from '@jest/globals';
import {
  SNAPSHOT_COUNT_ANNOTATION,
  snapshotsByClass,
  withSnapshotCount,
} from '../../../../src/apis/resources/v1alpha3/listing/snapshot-counts.js';

describe('snapshot counts', () => {
  const snapshot = (className?: string) => ({
    spec: className === undefined ? {} : { volumeSnapshotClassName: className },
  });

  test('when snapshots name classes (or none), then each class counts those naming it', () => {
    expect(snapshotsByClass([snapshot('a'), snapshot('b'), snapshot('a'), snapshot(), snapshot(''), {}])).toEqual(
      new Map([
        ['a', 2],
        ['b', 1],
      ]),
    );
  });

  test.each([
    ['a class with snapshots', 'a', '2'],
    ['a class with none', 'c', '0'],
  ])('when %s is listed, then it carries its count beside its own annotations', (_case, name, count) => {
    const listed = withSnapshotCount(
      { kind: 'VolumeSnapshotClass', metadata: { name, annotations: { keep: 'x' } }, driver: 'd' },
      new Map([['a', 2]]),
    );
    expect(listed).toEqual({
      kind: 'VolumeSnapshotClass',
      metadata: { name, annotations: { keep: 'x', [SNAPSHOT_COUNT_ANNOTATION]: count } },
      driver: 'd',
    });
  });
});
