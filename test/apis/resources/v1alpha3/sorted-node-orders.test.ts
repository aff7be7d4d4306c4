import { SortedNodeOrders } from '../../../../src/apis/resources/v1alpha3/sorted-node-orders.js';
import { InMemoryNodeCache, names, node } from './fixtures.js';

describe('SortedNodeOrders', () => {
  function setup() {
    const cache = new InMemoryNodeCache([node('b', { created: '2024-01-02T00:00:00Z' }), node('a'), node('c')]);
    return { cache, orders: new SortedNodeOrders(cache) };
  }

  it('when the same order is asked twice at one revision, then the same array is returned without relisting', () => {
    const { cache, orders } = setup();
    const first = orders.get('name', true);
    const second = orders.get('name', true);
    expect(second).toBe(first);
    expect(cache.listCalls).toBe(1);
    expect(names(first)).toEqual(['a', 'b', 'c']);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('when different orders are asked, then each is sorted and memoized separately', () => {
    const { cache, orders } = setup();
    expect(names(orders.get('name', false))).toEqual(['c', 'b', 'a']);
    expect(names(orders.get('creationTimestamp', false))).toEqual(['b', 'c', 'a']);
    orders.get('name', false);
    orders.get('creationTimestamp', false);
    expect(cache.listCalls).toBe(2);
  });

  it('when the cache revision changes, then the orders are rebuilt from the new content', () => {
    const { cache, orders } = setup();
    const before = orders.get('name', true);
    cache.set([node('z'), node('a')]);
    const after = orders.get('name', true);
    expect(after).not.toBe(before);
    expect(names(after)).toEqual(['a', 'z']);
    expect(orders.get('name', true)).toBe(after);
  });

  it('when a node is replaced in place with the same sort keys, then the order is kept and holds the new object', () => {
    const { cache, orders } = setup();
    const before = orders.get('creationTimestamp', false);
    const current = cache.list();
    const updated = {
      ...current[1],
      status: { conditions: [{ type: 'Ready', status: 'False' }] },
    } as (typeof current)[number];
    cache.set([current[0]!, updated, current[2]!]);
    const after = orders.get('creationTimestamp', false);
    expect(after).not.toBe(before);
    expect(names(after)).toEqual(names(before));
    expect(after).toContain(updated);
  });

  it('when a node is renamed at the same position, then the order is sorted again', () => {
    const { cache, orders } = setup();
    orders.get('name', true);
    const current = cache.list();
    cache.set([current[0]!, node('0-first'), current[2]!]);
    expect(names(orders.get('name', true))).toEqual(['0-first', 'b', 'c']);
  });

  it('when a creation time changes at the same position (recreated node), then the order is sorted again', () => {
    const { cache, orders } = setup();
    expect(names(orders.get('creationTimestamp', false))).toEqual(['b', 'c', 'a']);
    cache.set([node('b', { created: '2023-01-01T00:00:00Z' }), node('a'), node('c')]);
    expect(names(orders.get('creationTimestamp', false))).toEqual(['c', 'a', 'b']);
  });
});
