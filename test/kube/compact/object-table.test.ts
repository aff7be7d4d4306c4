import { randomBytes } from 'node:crypto';
import { BodyArena, decodeStoredBody } from '../../../src/kube/compact/body-arena.js';
import { ObjectTable, LONG_VALUE, type ObjectRecord } from '../../../src/kube/compact/object-table.js';
import { BY_CREATION, BY_NAME, TableViews, byTime, type SlotFilter } from '../../../src/kube/compact/table-views.js';
import { packUid, sameUid, unpackUid } from '../../../src/kube/compact/uid.js';
import { matchesLabelSelector, parseLabelSelector } from '../../../src/kube/label-selector.js';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

function record(partial: Partial<ObjectRecord> & { name: string }): ObjectRecord {
  return {
    namespace: 'default',
    uid: '0b7f3c7e-1d2a-4f3b-9c4d-5e6f7a8b9c0d',
    created: Date.parse('2025-01-01T00:00:00Z'),
    resourceVersion: '1',
    labels: undefined,
    annotations: undefined,
    owners: undefined,
    status: -1,
    times: [],
    fields: [],
    body: json({ metadata: { name: partial.name } }),
    ...partial,
  };
}

describe('uid packing', () => {
  test.each([
    ['0b7f3c7e-1d2a-4f3b-9c4d-5e6f7a8b9c0d', true],
    ['ffffffff-ffff-ffff-ffff-ffffffffffff', true],
    ['0B7F3C7E-1D2A-4F3B-9C4D-5E6F7A8B9C0D', false],
    ['not-a-uid', false],
    ['', false],
  ])('when %s is packed, then it round-trips (or is left to the caller: %s)', (uid, packable) => {
    const bytes = new Uint8Array(32);
    expect(packUid(uid, bytes, 16)).toBe(packable);
    if (packable) {
      expect(unpackUid(bytes, 16)).toBe(uid);
      expect(sameUid(bytes, 16, uid)).toBe(true);
      expect(sameUid(bytes, 16, uid.toUpperCase())).toBe(false);
      expect(sameUid(bytes, 16, 'ffffffff-ffff-ffff-ffff-fffffffffff0')).toBe(
        uid === 'ffffffff-ffff-ffff-ffff-fffffffffff0',
      );
    }
  });
});

describe('BodyArena', () => {
  const pod = (i: number) =>
    json({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: `web-${i}`, namespace: 'demo', labels: { app: 'web' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', resources: { requests: { cpu: '100m' } } }] },
      status: { phase: 'Running', podIP: `10.0.0.${i % 250}` },
    });

  test('when bodies are stored, then each reads back byte for byte, deflated once the dictionary is learned', () => {
    const arena = new BodyArena({ samples: 4 });
    const handles = Array.from({ length: 50 }, (_, i) => arena.add(pod(i)));
    handles.forEach((handle, i) => expect(arena.read(handle)).toEqual(pod(i)));
    // the dictionary makes similar bodies small
    expect(arena.storedBytes).toBeLessThan(50 * pod(0).length * 0.5);
    const snapshot = arena.snapshot(handles[7]!);
    expect(decodeStoredBody(snapshot)).toEqual(pod(7));
  });

  test('when bodies are replaced and freed many times, then holes are reclaimed and every live body survives', () => {
    const arena = new BodyArena({ samples: 2 });
    const live = new Map<number, Buffer>();
    for (let i = 0; i < 200; i++) live.set(arena.add(pod(i)), pod(i));
    // incompressible bodies: 30 rounds leave holes well past the compaction threshold
    const noise = randomBytes(12_000).toString('base64');
    for (let round = 0; round < 30; round++) {
      for (const [handle] of [...live].slice(0, 50)) {
        const body = json({ round, big: noise.slice(round), handle });
        arena.replace(handle, body);
        live.set(handle, body);
      }
    }
    for (const [handle] of [...live].slice(150)) {
      arena.free(handle);
      live.delete(handle);
    }
    for (const [handle, body] of live) expect(arena.read(handle)).toEqual(body);
    // holes do not outweigh what is live (beyond the compaction threshold of 8 slabs)
    expect(arena.bytes).toBeLessThan(2 * arena.storedBytes + 9 * 1024 * 1024);
  });

  test('when compression is off, then bodies are stored as given', () => {
    const arena = new BodyArena({ compress: false, samples: 1 });
    const handle = arena.add(pod(1));
    arena.add(pod(2));
    expect(arena.snapshot(handle).deflated).toBe(false);
    expect(arena.read(handle)).toEqual(pod(1));
  });
});

describe('ObjectTable', () => {
  test('when objects are added, replaced and removed, then columns, counts and bodies follow', () => {
    const table = new ObjectTable({ times: 1, fields: 1 });
    const a = table.upsert(record({ name: 'a', labels: { app: 'web' }, times: [5], fields: ['node-1'] }));
    const b = table.upsert(record({ name: 'b', namespace: 'demo', labels: { app: 'web' }, fields: [['x', 'y']] }));
    expect(table.size).toBe(2);
    expect(table.labels(a)).toBe(table.labels(b)); // one shared set
    expect([table.name(a), table.namespace(b), table.time(a, 0), table.field(a, 0), table.field(b, 0)]).toEqual([
      'a',
      'demo',
      5,
      'node-1',
      ['x', 'y'],
    ]);
    expect(table.uid(a)).toBe('0b7f3c7e-1d2a-4f3b-9c4d-5e6f7a8b9c0d');
    expect(table.current('default', 'a', '1')).toBe(a);
    expect(table.current('default', 'a', '2')).toBe(-1);

    const revision = table.revision;
    expect(table.upsert(record({ name: 'a', resourceVersion: '1', labels: { app: 'db' } }))).toBe(a);
    expect(table.revision).toBe(revision); // the same version is no change
    table.upsert(record({ name: 'a', resourceVersion: '2', labels: { app: 'db' }, uid: 'odd-uid' }));
    expect(table.labels(a)).toEqual({ app: 'db' });
    expect(table.uid(a)).toBe('odd-uid');
    expect(table.hasUid(a, 'odd-uid')).toBe(true);

    expect(table.remove('demo', 'b')).toBe(true);
    expect(table.remove('demo', 'b')).toBe(false);
    expect([...table.namespaceCounts()]).toEqual([['default', 1]]);
    const c = table.upsert(record({ name: 'c' }));
    expect(c).toBe(b); // the slot is reused
    expect(JSON.parse(table.body(c).toString())).toEqual({ metadata: { name: 'c' } });
  });

  test('when a table settles after a list and then grows, shrinks and grows again, then every column keeps its values', () => {
    const table = new ObjectTable({ times: 1, fields: 1 }, { samples: 4 });
    const uid = (i: number) => `0b7f3c7e-1d2a-4f3b-9c4d-${String(i).padStart(12, '0')}`;
    const put = (i: number) =>
      table.upsert(
        record({
          name: `pod-${i}`,
          namespace: `ns-${i % 7}`,
          uid: uid(i),
          created: 1_000 + i,
          times: [i],
          fields: [`node-${i % 5}`],
          labels: { app: `a${i % 3}` },
          owners: [{ kind: 'ReplicaSet', uid: uid(i + 1) }],
          body: json({ metadata: { name: `pod-${i}` }, i }),
        }),
      );
    const check = (i: number) => {
      const slot = table.slotOf(`ns-${i % 7}`, `pod-${i}`);
      expect(slot).toBeGreaterThanOrEqual(0);
      expect([table.uid(slot), table.created(slot), table.time(slot, 0), table.field(slot, 0)]).toEqual([
        uid(i),
        1_000 + i,
        i,
        `node-${i % 5}`,
      ]);
      expect(table.labels(slot)).toEqual({ app: `a${i % 3}` });
      expect(table.hasOwnerUid(slot, uid(i + 1))).toBe(true);
      expect(JSON.parse(table.body(slot).toString()).i).toBe(i);
    };
    for (let i = 0; i < 3000; i++) put(i);
    table.settle(); // the columns shrink to what is held plus a little room
    for (let i = 0; i < 3000; i += 97) check(i);
    for (let i = 3000; i < 5000; i++) put(i); // and grow again past it
    for (let i = 0; i < 2500; i++) table.remove(`ns-${i % 7}`, `pod-${i}`);
    table.settle();
    expect(table.size).toBe(2500);
    for (let i = 2500; i < 5000; i += 89) check(i);
    expect(table.slotOf('ns-0', 'pod-7')).toBe(-1);
  });

  test('when a body was read (and kept decoded) and its object changes, then the next read is the new body', () => {
    const table = new ObjectTable({ times: 0, fields: 0 }, { samples: 1 });
    const big = (version: number) => json({ metadata: { name: 'a' }, data: 'x'.repeat(500), version });
    table.upsert(record({ name: 'seed' }));
    const slot = table.upsert(record({ name: 'a', body: big(1) }));
    expect(JSON.parse(table.body(slot).toString()).version).toBe(1);
    expect(JSON.parse(table.body(slot).toString()).version).toBe(1);
    table.upsert(record({ name: 'a', resourceVersion: '2', body: big(2) }));
    expect(JSON.parse(table.body(slot).toString()).version).toBe(2);
    table.remove('default', 'a');
    const other = table.upsert(record({ name: 'b', body: big(3) }));
    expect(other).toBe(slot);
    expect(JSON.parse(table.body(other).toString()).version).toBe(3);
  });

  test('when objects have one owner, several, or an owner with an odd uid, then owner filters read them all', () => {
    const table = new ObjectTable({ times: 0, fields: 0 });
    const rs = { kind: 'ReplicaSet', uid: '11111111-2222-4333-8444-555555555555' };
    const job = { kind: 'Job', uid: 'not-a-uuid' };
    const node = { kind: 'Node', uid: '66666666-7777-4888-8999-000000000000' };
    const one = table.upsert(record({ name: 'one', owners: [rs] }));
    const odd = table.upsert(record({ name: 'odd', owners: [job] }));
    const two = table.upsert(record({ name: 'two', owners: [rs, node] }));
    const none = table.upsert(record({ name: 'none' }));
    expect([one, odd, two, none].map((slot) => table.owners(slot))).toEqual([[rs], [job], [rs, node], undefined]);
    expect([one, odd, two, none].map((slot) => table.hasOwnerUid(slot, rs.uid))).toEqual([true, false, true, false]);
    expect([one, odd, two, none].map((slot) => table.hasOwnerKind(slot, 'Job'))).toEqual([false, true, false, false]);
    expect(table.hasOwnerUid(odd, 'not-a-uuid')).toBe(true);
    expect(table.hasOwnerKind(two, 'Node')).toBe(true);
    // a replaced object takes its new owners; the old ones leave nothing behind
    table.upsert(record({ name: 'two', resourceVersion: '2', owners: [job] }));
    expect(table.owners(two)).toEqual([job]);
    table.upsert(record({ name: 'odd', resourceVersion: '2', owners: [node] }));
    expect([table.owners(odd), table.hasOwnerKind(odd, 'Node')]).toEqual([[node], true]);
  });

  test('when namespaces fill and empty, then counts, slots per namespace and lookups follow every change', () => {
    const table = new ObjectTable({ times: 0, fields: 0 });
    for (let i = 0; i < 30; i++) table.upsert(record({ name: `o-${i}`, namespace: `ns-${i % 3}` }));
    for (let i = 0; i < 30; i += 2) table.remove(`ns-${i % 3}`, `o-${i}`);
    const expected = (namespace: string) =>
      Array.from({ length: 30 }, (_, i) => i)
        .filter((i) => i % 2 === 1 && `ns-${i % 3}` === namespace)
        .map((i) => `o-${i}`)
        .sort();
    for (const namespace of ['ns-0', 'ns-1', 'ns-2']) {
      expect([...table.slotsIn(namespace)].map((slot) => table.name(slot)).sort()).toEqual(expected(namespace));
      expect(table.countIn(namespace)).toBe(expected(namespace).length);
    }
    for (let i = 1; i < 30; i += 2) if (i % 3 === 0) table.remove('ns-0', `o-${i}`);
    expect([...table.namespaceCounts()].sort()).toEqual([
      ['ns-1', 5],
      ['ns-2', 5],
    ]);
    expect([table.countIn('ns-0'), [...table.slotsIn('ns-0')], table.slotOf('ns-0', 'o-3')]).toEqual([0, [], -1]);
    expect(table.name(table.slotOf('ns-1', 'o-7'))).toBe('o-7');
  });

  test('when the display-name annotation is longer than a label value, then it is kept verbatim for name searches', () => {
    const long = `${'Display name '.repeat(8)}end`;
    const table = new ObjectTable({ times: 0, fields: 0, verbatimAnnotations: ['kapi.io/alias-name'] });
    const slot = table.upsert(record({ name: 'a', annotations: { 'kapi.io/alias-name': long, note: long } }));
    expect(table.annotations(slot)).toEqual({ 'kapi.io/alias-name': long, note: LONG_VALUE });
  });

  test('when annotations hold values longer than any label value, then they share one marker (selectors still tell)', () => {
    const table = new ObjectTable({ times: 0, fields: 0 });
    const one = table.upsert(record({ name: 'one', annotations: { applied: 'x'.repeat(100), team: 'a' } }));
    const two = table.upsert(record({ name: 'two', annotations: { applied: 'y'.repeat(100), team: 'a' } }));
    expect(table.annotations(one)).toBe(table.annotations(two));
    expect(table.annotations(one)?.applied).toBe(LONG_VALUE);
    const has = parseLabelSelector('applied');
    const equals = parseLabelSelector(`applied=${'x'.repeat(10)}`);
    expect(matchesLabelSelector(has, table.annotations(one))).toBe(true);
    expect(matchesLabelSelector(equals, table.annotations(one))).toBe(false);
  });
});

describe('TableViews', () => {
  const names = (table: ObjectTable, slots: readonly number[]) => slots.map((slot) => table.name(slot));
  const app = (value: string): SlotFilter => ({
    key: `app=${value}`,
    matches: (table, slot) => table.labels(slot)?.['app'] === value,
  });

  function fill(table: ObjectTable): void {
    for (let i = 0; i < 40; i++) {
      table.upsert(
        record({
          name: `obj-${String(i).padStart(2, '0')}`,
          namespace: i % 4 === 0 ? 'small' : 'big',
          created: Date.parse('2025-01-01T00:00:00Z') + (i % 10) * 1000,
          labels: { app: i % 2 === 0 ? 'web' : 'db' },
          times: [i % 3],
        }),
      );
    }
  }

  /** The same page computed from scratch: what the maintained views must always equal. */
  function expected(table: ObjectTable, request: Parameters<TableViews['select']>[0]) {
    const slots = [...table.slots()].filter(
      (slot) =>
        (!request.filter || request.filter.matches(table, slot)) &&
        (!request.namespaces || request.namespaces.has(table.namespace(slot))),
    );
    slots.sort((a, b) => (request.ascending ? 1 : -1) * request.sort.compare(table, a, b));
    const end = request.limit === undefined ? slots.length : request.offset + request.limit;
    return { total: slots.length, slots: slots.slice(request.offset, end) };
  }

  test.each([
    ['by name, ascending, first page', { sort: BY_NAME, ascending: true, offset: 0, limit: 5 }],
    ['by name, descending, third page', { sort: BY_NAME, ascending: false, offset: 10, limit: 5 }],
    [
      'by creation (ties by name), filtered',
      { sort: BY_CREATION, ascending: false, offset: 0, limit: 7, filter: 'web' },
    ],
    [
      'by a kind’s time, one small namespace',
      { sort: byTime(0), ascending: true, offset: 0, limit: 3, namespaces: ['small'] },
    ],
    ['past the end', { sort: BY_NAME, ascending: true, offset: 100, limit: 5 }],
    ['no limit from an offset', { sort: BY_NAME, ascending: true, offset: 35, limit: undefined }],
    ['limit 0', { sort: BY_NAME, ascending: true, offset: 0, limit: 0 }],
  ])(
    'when a page is selected %s, then it equals the page computed from scratch, before and after changes',
    (_what, given) => {
      const table = new ObjectTable({ times: 1, fields: 0 });
      const views = new TableViews(table);
      fill(table);
      const request = {
        sort: given.sort,
        ascending: given.ascending,
        offset: given.offset,
        limit: given.limit,
        filter: 'filter' in given ? app(given.filter as string) : undefined,
        namespaces: 'namespaces' in given ? new Set(given.namespaces as string[]) : undefined,
      };
      const check = () => {
        const selected = views.select(request);
        const want = expected(table, request);
        expect(selected.total).toBe(want.total);
        expect(names(table, selected.slots)).toEqual(names(table, want.slots));
      };
      check();
      // changes after the views exist are applied to them one by one
      table.remove('big', 'obj-01');
      table.upsert(record({ name: 'obj-99', namespace: 'small', labels: { app: 'web' }, times: [2] }));
      table.upsert(
        record({ name: 'obj-02', namespace: 'small', resourceVersion: '2', labels: { app: 'db' }, times: [9] }),
      );
      table.upsert(record({ name: 'aaa', namespace: 'big', created: 0, labels: { app: 'web' }, times: [0] }));
      check();
    },
  );

  test('when objects with one field value, several, or none change, then the field index names exactly the slots holding each value', () => {
    const table = new ObjectTable({ times: 0, fields: 1 });
    const views = new TableViews(table);
    table.upsert(record({ name: 'a', fields: ['User:alice'] }));
    const index = views.byField(0); // built over what is there, then kept in step
    table.upsert(record({ name: 'b', fields: [['User:alice', 'Group:ops']] }));
    table.upsert(record({ name: 'c', fields: [undefined] }));
    const holders = (value: string) => [...index.slotsWith(value)].map((slot) => table.name(slot)).sort();
    expect([holders('User:alice'), holders('Group:ops'), holders('User:bob')]).toEqual([['a', 'b'], ['b'], []]);

    table.upsert(record({ name: 'a', resourceVersion: '2', fields: ['User:bob'] })); // replaced: old value leaves
    table.remove('default', 'b');
    expect([holders('User:alice'), holders('Group:ops'), holders('User:bob')]).toEqual([[], [], ['a']]);
    // the index equals a walk of every slot
    const walked = [...table.slots()].filter((slot) => table.field(slot, 0) === 'User:bob').map((s) => table.name(s));
    expect(holders('User:bob')).toEqual(walked);
  });
});
