// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** How many snapshots of each class there are, as KubeSphere shows it beside each class. */
export const SNAPSHOT_COUNT_ANNOTATION = 'kapi.io/snapshot-count';

/** Snapshots by the class they name (`spec.volumeSnapshotClassName`), in every namespace (pure). */
export function snapshotsByClass(snapshots: readonly Raw[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const snapshot of snapshots) {
    const name = snapshot?.spec?.volumeSnapshotClassName;
    if (typeof name === 'string' && name !== '') counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/** A class as listed, with its snapshot count added to its annotations, as KubeSphere's list adds it (pure). */
export function withSnapshotCount(snapshotClass: Raw, counts: ReadonlyMap<string, number>): Raw {
  const metadata = snapshotClass?.metadata ?? {};
  const count = counts.get(String(metadata.name)) ?? 0;
  return {
    ...snapshotClass,
    metadata: { ...metadata, annotations: { ...metadata.annotations, [SNAPSHOT_COUNT_ANNOTATION]: String(count) } },
  };
}
