import type { V1Node } from '@kubernetes/client-node';
import { parseListQuery } from '../../../../src/apis/resources/v1alpha3/list-query.js';
import { NodeLister } from '../../../../src/apis/resources/v1alpha3/node-lister.js';
import { filterNodes, paginate, sortNodes } from '../../../../src/apis/resources/v1alpha3/node-list.js';
import { deepFreeze, InMemoryNodeCache, names, node } from './fixtures.js';

const NODES = deepFreeze(
  Array.from({ length: 30 }, (_, i) =>
    node(`node-${String((i * 7) % 30).padStart(2, '0')}`, {
      created: new Date(Date.UTC(2024, 0, 1 + (i % 5))).toISOString(),
      labels: { role: i % 3 === 0 ? 'gpu' : 'worker', zone: `z${i % 2}` },
      unschedulable: i % 4 === 0,
    }),
  ),
);

describe('NodeLister', () => {
  it.each([
    {},
    { limit: '4' },
    { limit: '4', page: '3', sortBy: 'name' },
    { limit: '4', page: '99' },
    { limit: '0', labelSelector: 'role=gpu' },
    { labelSelector: 'role=worker', label: 'zone=z1', limit: '3', page: '2', ascending: 'true' },
    { status: 'unschedulable', sortBy: 'name', ascending: 'true' },
    { name: 'node-1', names: 'node-10,node-11,node-20' },
    { name: 'nothing' },
  ])('when the query is %j, then the page and count equal sort, filter and paginate done plainly', (raw) => {
    const query = parseListQuery(raw);
    const lister = new NodeLister(new InMemoryNodeCache(NODES));
    const expected = filterNodes(sortNodes(NODES, query.sortBy, query.ascending), query);
    for (let i = 0; i < 2; i++) {
      // The second answer comes from the memo and must be the same.
      const page = lister.list(query);
      expect(names(page.items)).toEqual(names(paginate(expected, query.page, query.limit)));
      expect(page.totalItems).toBe(expected.length);
    }
  });

  it('when a page is listed, then its items are the cached objects themselves (copies are made per response)', () => {
    const page = new NodeLister(new InMemoryNodeCache(NODES)).list(parseListQuery({ names: 'node-00' }));
    expect(page.items[0]).toBe(NODES.find((n: V1Node) => n.metadata?.name === 'node-00'));
  });

  it('when the same filter is asked again, then the cache is not relisted and the filter is not rerun', () => {
    const cache = new InMemoryNodeCache(NODES);
    const lister = new NodeLister(cache);
    let labelReads = 0;
    const counted = NODES.map((n: V1Node) => ({
      ...n,
      metadata: {
        ...n.metadata,
        get labels() {
          labelReads++;
          return n.metadata?.labels;
        },
      },
    }));
    cache.set(counted);
    lister.list(parseListQuery({ labelSelector: 'role=gpu', page: '1', limit: '2' }));
    const afterFirst = labelReads;
    lister.list(parseListQuery({ labelSelector: 'role=gpu', page: '2', limit: '2' }));
    expect(afterFirst).toBeGreaterThan(0);
    expect(labelReads).toBe(afterFirst);
    expect(cache.listCalls).toBe(1);
  });

  it('when the cache changes, then memoized filter results are not served', () => {
    const cache = new InMemoryNodeCache(NODES);
    const lister = new NodeLister(cache);
    const query = parseListQuery({ labelSelector: 'role=gpu' });
    expect(lister.list(query).totalItems).toBe(10);
    cache.set([...NODES, node('node-new', { labels: { role: 'gpu' } })]);
    expect(lister.list(query).totalItems).toBe(11);
  });

  it('when more filters are asked than are memoized, then the least recently used is dropped and recomputed', () => {
    const cache = new InMemoryNodeCache(NODES);
    const lister = new NodeLister(cache, 2);
    const gpu = parseListQuery({ labelSelector: 'role=gpu' });
    const first = lister.list(gpu).items;
    lister.list(parseListQuery({ labelSelector: 'zone=z0' }));
    lister.list(parseListQuery({ labelSelector: 'zone=z1' }));
    // The gpu result was evicted: recomputed, equal content, different array.
    const again = lister.list(gpu);
    expect(names(again.items)).toEqual(names(first));
    expect(again.totalItems).toBe(10);
  });
});
