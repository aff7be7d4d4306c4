import { LruMap } from '../../src/auth/lru-map.js';

const keys = (map: LruMap<string, number>) => [...map.values()];

describe('LruMap', () => {
  test('when it is full, then the least recently used entry goes first', () => {
    const map = new LruMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).toBe(1);
    map.set('d', 4);
    expect([map.has('a'), map.has('b'), map.has('c'), map.has('d')]).toEqual([true, false, true, true]);
    expect(keys(map)).toEqual([3, 1, 4]);
  });

  test('when the newest entry is used again and again, then it stays newest and the order of the others holds', () => {
    const map = new LruMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    for (let i = 0; i < 3; i++) expect(map.get('b')).toBe(2);
    expect(map.get('a')).toBe(1);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    map.set('d', 4);
    expect(keys(map)).toEqual([1, 3, 4]);
  });

  test('when the newest entry is deleted or the map cleared, then using another key still marks it used', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.delete('b');
    expect(map.get('b')).toBeUndefined();
    map.set('c', 3);
    expect(map.get('a')).toBe(1);
    map.set('d', 4);
    expect(keys(map)).toEqual([1, 4]);
    map.clear();
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('e', 5);
    expect(keys(map)).toEqual([1, 5]);
  });

  test('when a key equal to the newest comes as another string, then it is the same entry', () => {
    const map = new LruMap<string, number>(2);
    const long = 'x'.repeat(100);
    map.set(long, 1);
    expect(map.get(['x'.repeat(50), 'x'.repeat(50)].join(''))).toBe(1);
    expect(map.size).toBe(1);
  });

  test('when the newest entry is set again or deleted, then a get answers what the map holds, never an old value', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    expect(map.get('a')).toBe(1);
    map.set('a', 2);
    expect(map.get('a')).toBe(2);
    map.delete('a');
    expect(map.get('a')).toBeUndefined();
    map.set('b', 3);
    map.clear();
    expect(map.get('b')).toBeUndefined();
    expect(map.size).toBe(0);
  });

  test('when the newest entry is pushed out by a full map, then it is not answered from memory', () => {
    const map = new LruMap<string, number>(1);
    map.set('a', 1);
    expect(map.get('a')).toBe(1);
    map.set('b', 2);
    expect(map.get('a')).toBeUndefined();
    expect(map.get('b')).toBe(2);
  });
});
