import { describe, expect, it } from '@jest/globals';
import { ListedObjects, ObjectStore } from '../../src/kube/object-store.js';

function store() {
  const events: string[] = [];
  const s = new ObjectStore<{ v: string }>((event, obj, old) => events.push(`${event} ${old?.v ?? '-'}->${obj.v}`));
  return { s, events };
}

const entries = (pairs: Array<[string, string, string]>) => {
  const listed = new ListedObjects<{ v: string }>(true);
  for (const [key, v, rv] of pairs) listed.set(key, { v }, rv);
  return listed;
};

describe('ObjectStore', () => {
  it('when objects are upserted and removed, then events, size and revision follow', () => {
    const { s, events } = store();
    s.upsert('a', { v: 'a1' }, '1');
    s.upsert('a', { v: 'a2' }, '2');
    s.remove('a');
    s.remove('never-there');
    expect(events).toEqual(['added -->a1', 'modified a1->a2', 'deleted a2->a2']);
    expect(s.size).toBe(0);
    expect(s.revision).toBe(3);
  });

  it('when nothing changed, then list() returns the same frozen array; after a change, a new one', () => {
    const { s } = store();
    s.upsert('a', { v: 'a' }, '1');
    const first = s.list();
    expect(s.list()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    s.upsert('b', { v: 'b' }, '2');
    expect(s.list()).not.toBe(first);
    expect(s.list().map((o) => o.v)).toEqual(['a', 'b']);
  });

  it('when replaced by a list, then vanished keys are deleted, moved ones modified, new ones added, same ones kept', () => {
    const { s, events } = store();
    s.replace(
      entries([
        ['keep', 'k', '1'],
        ['change', 'c1', '1'],
        ['gone', 'g', '1'],
      ]),
    );
    const kept = s.get('keep');
    events.length = 0;
    const revision = s.revision;

    s.replace(
      entries([
        ['keep', 'k-copy', '1'],
        ['change', 'c2', '2'],
        ['new', 'n', '3'],
      ]),
    );

    expect(events).toEqual(['deleted g->g', 'modified c1->c2', 'added -->n']);
    expect(s.get('keep')).toBe(kept);
    expect(s.get('gone')).toBeUndefined();
    expect(s.revision).toBe(revision + 3);
  });

  it('when a handler reads the store during a replace, then it sees the new contents', () => {
    const seen: number[] = [];
    const s: ObjectStore<{ v: string }> = new ObjectStore(() => seen.push(s.size));
    s.replace(
      entries([
        ['a', 'a', '1'],
        ['b', 'b', '1'],
      ]),
    );
    expect(seen).toEqual([2, 2]);
  });
});
