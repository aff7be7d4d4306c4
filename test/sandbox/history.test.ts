import { builtinTypes } from '../../src/sandbox/builtin-types.js';
import { decodeContinue, encodeContinue, readPage } from '../../src/sandbox/list-pager.js';
import { parseListOptions } from '../../src/sandbox/list-options.js';
import { ObjectStore } from '../../src/sandbox/store.js';

const configMaps = builtinTypes().find((t) => t.resource === 'configmaps')!;
const cm = (name: string, value = '1') => ({ metadata: { name, namespace: 'ns', uid: name }, data: { value } });

function options(query: string) {
  return parseListOptions(configMaps, new URLSearchParams(query));
}

describe('store history and snapshots', () => {
  test('when the history is full, then the oldest events are forgotten and the floor moves up', () => {
    const store = new ObjectStore(3);
    for (const name of ['a', 'b', 'c', 'd', 'e']) store.create(configMaps, cm(name));
    const history = store.collection(configMaps).history;
    expect(history.since(0).map((e) => e.object.name)).toEqual(['c', 'd', 'e']);
    expect(history.covers(history.floor)).toBe(true);
    expect(history.covers(history.floor - 1)).toBe(false);
  });

  test('when a snapshot at an older version is read, then creations, updates and deletions after it are undone', () => {
    const store = new ObjectStore();
    const a = store.create(configMaps, cm('a'));
    const b = store.create(configMaps, cm('b'));
    const rv = store.currentRv;
    store.replace(configMaps, { ...cm('a', '2'), metadata: { ...cm('a').metadata } }, a);
    store.remove(configMaps, b);
    store.create(configMaps, cm('c'));
    const page = readPage(
      store.collection(configMaps),
      store.currentRv,
      'ns/',
      options(`resourceVersion=${rv}&resourceVersionMatch=Exact`),
    );
    expect(page.rv).toBe(rv);
    expect(page.items.map((i) => [i.name, JSON.parse(`{${i.body}`).data.value])).toEqual([
      ['a', '1'],
      ['b', '1'],
    ]);
  });

  test('when history is compacted, then exact reads before it are 410 and current reads still work', () => {
    const store = new ObjectStore();
    store.create(configMaps, cm('a'));
    const rv = store.currentRv;
    store.create(configMaps, cm('b'));
    store.compactHistory();
    expect(() =>
      readPage(
        store.collection(configMaps),
        store.currentRv,
        '',
        options(`resourceVersion=${rv}&resourceVersionMatch=Exact`),
      ),
    ).toThrow(expect.objectContaining({ code: 410 }));
    expect(readPage(store.collection(configMaps), store.currentRv, '', options('')).items).toHaveLength(2);
  });

  test('when a continue token round-trips, then it carries the version and start key; forged ones are 400', () => {
    expect(decodeContinue(encodeContinue(42, 'ns/b\u0000'))).toEqual({ rv: 42, start: 'ns/b\u0000' });
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    expect(() => decodeContinue(forged({ v: 'other', rv: 1, start: 'a' }))).toThrow(
      expect.objectContaining({ code: 400 }),
    );
    expect(() => decodeContinue(forged({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' }))).toThrow(
      /incorrect encoded start resourceVersion/,
    );
    expect(() => decodeContinue(forged({ v: 'meta.k8s.io/v1', rv: 1, start: '' }))).toThrow(/encoded start key empty/);
  });
});
