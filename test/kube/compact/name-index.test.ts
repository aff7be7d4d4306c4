import { NameIndex } from '../../../src/kube/compact/name-index.js';
import { SharedPool, StringPool, HASH_SEED, hashText } from '../../../src/kube/compact/shared-pool.js';

/** A tiny seeded generator, so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('NameIndex', () => {
  test.each([1, 2, 3])(
    'when thousands of keys are inserted and deleted in a random order (seed %i), then it finds exactly what a Map finds',
    (seed) => {
      const next = random(seed);
      const namespaceOf: number[] = [];
      const nameOf: string[] = [];
      const index = new NameIndex({ namespaceId: (slot) => namespaceOf[slot]!, name: (slot) => nameOf[slot]! });
      const expected = new Map<string, number>();
      const freeSlots: number[] = [];
      let slots = 0;
      for (let step = 0; step < 20_000; step++) {
        const namespace = Math.floor(next() * 5);
        // few names, so that inserts, hits and deletes all happen often and clusters form and break up
        const name = `pod-${Math.floor(next() * 3000)}`;
        const key = `${namespace}/${name}`;
        const found = index.find(namespace, name);
        expect(found).toBe(expected.get(key) ?? -1);
        if (found < 0) {
          const slot = freeSlots.pop() ?? slots++;
          namespaceOf[slot] = namespace;
          nameOf[slot] = name;
          index.insert(slot);
          expected.set(key, slot);
        } else if (next() < 0.6) {
          index.delete(found);
          expected.delete(key);
          freeSlots.push(found);
        }
      }
      expect(index.size).toBe(expected.size);
      for (const [key, slot] of expected) {
        const [namespace, name] = key.split('/') as [string, string];
        expect(index.find(Number(namespace), name)).toBe(slot);
      }
    },
  );
});

describe('SharedPool', () => {
  test('when equal values are held, then they get one id until the last holder releases it; the id is then reused', () => {
    const pool = new StringPool();
    const a = pool.hold('kube-system');
    expect(pool.hold('kube-system')).toBe(a);
    const b = pool.hold('default');
    expect(b).not.toBe(a);
    expect([pool.value(a), pool.holders(a), pool.find('default'), pool.find('absent')]).toEqual([
      'kube-system',
      2,
      b,
      -1,
    ]);
    pool.release(a);
    expect(pool.find('kube-system')).toBe(a);
    pool.release(a);
    expect(pool.find('kube-system')).toBe(-1);
    expect(pool.size).toBe(1);
    expect(pool.hold('demo')).toBe(a);
  });

  test('when different values share a hash, then each keeps its own id and releasing one leaves the other', () => {
    const pool = new SharedPool<string>();
    const collide = 42;
    const x = pool.hold(
      collide,
      (v) => v === 'x',
      () => 'x',
    );
    const y = pool.hold(
      collide,
      (v) => v === 'y',
      () => 'y',
    );
    const z = pool.hold(
      collide,
      (v) => v === 'z',
      () => 'z',
    );
    expect(new Set([x, y, z]).size).toBe(3);
    pool.release(y);
    expect(pool.find(collide, (v) => v === 'x')).toBe(x);
    expect(pool.find(collide, (v) => v === 'y')).toBe(-1);
    expect(pool.find(collide, (v) => v === 'z')).toBe(z);
    pool.release(x);
    expect(pool.find(collide, (v) => v === 'z')).toBe(z);
  });

  test('when texts are hashed, then a separator keeps ("ab", "c") and ("a", "bc") apart', () => {
    expect(hashText(hashText(HASH_SEED, 'ab'), 'c')).not.toBe(hashText(hashText(HASH_SEED, 'a'), 'bc'));
  });
});
