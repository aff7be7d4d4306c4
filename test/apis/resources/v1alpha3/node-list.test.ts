import {
  DISPLAY_NAME_ANNOTATION,
  filterNodes,
  pageWindow,
  paginate,
  sortPermutation,
  sortNodes,
} from '../../../../src/apis/resources/v1alpha3/node-list.js';
import { parseListQuery } from '../../../../src/apis/resources/v1alpha3/list-query.js';
import { deepFreeze, names, node } from './fixtures.js';

const NODES = deepFreeze([
  node('worker-b', { created: '2024-03-01T00:00:00Z', labels: { role: 'worker', zone: 'a' }, uid: 'u-wb' }),
  node('master-1', {
    created: '2024-01-01T00:00:00Z',
    labels: { role: 'master', 'node-role.kubernetes.io/control-plane': '' },
  }),
  node('worker-a', { created: '2024-03-01T00:00:00Z', labels: { role: 'worker', zone: 'b' }, unschedulable: true }),
  node('edge-1', {
    created: '2024-02-01T10:00:00.5Z',
    labels: { role: 'edge' },
    annotations: { [DISPLAY_NAME_ANNOTATION]: 'Shop floor' },
    conditions: [{ type: 'Ready', status: 'False' }],
  }),
  node('gpu-1', { created: '2024-02-01T10:00:00Z' }),
]);

describe('filterNodes', () => {
  it.each([
    ['no filter', {}, ['worker-b', 'master-1', 'worker-a', 'edge-1', 'gpu-1']],
    ['a name substring', { name: 'worker' }, ['worker-b', 'worker-a']],
    ['a name substring matching the display name', { name: 'floor' }, ['edge-1']],
    ['a name substring matching nothing', { name: 'nope' }, []],
    ['exact names', { names: 'gpu-1,master-1,absent' }, ['master-1', 'gpu-1']],
    ['names needing an exact match', { names: 'gpu' }, []],
    ['a uid', { uid: 'u-wb' }, ['worker-b']],
    ['status running', { status: 'running' }, ['worker-b', 'master-1', 'gpu-1']],
    ['status warning', { status: 'warning' }, ['edge-1']],
    ['status unschedulable', { status: 'unschedulable' }, ['worker-a']],
    ['an equality selector', { labelSelector: 'role=worker' }, ['worker-b', 'worker-a']],
    [
      'an existence selector with an empty value',
      { labelSelector: 'node-role.kubernetes.io/control-plane' },
      ['master-1'],
    ],
    ['an absence selector', { labelSelector: '!role' }, ['gpu-1']],
    ['a set selector', { label: 'role in (edge,master)' }, ['master-1', 'edge-1']],
    ['label and labelSelector', { label: 'role=worker', labelSelector: 'zone=b' }, ['worker-a']],
    ['several filters', { name: 'worker', status: 'running', labelSelector: 'zone' }, ['worker-b']],
  ])('when filtering by %s, then only the matching nodes remain, in input order', (_case, query, expected) => {
    expect(names(filterNodes(NODES, parseListQuery(query)))).toEqual(expected);
  });
});

describe('sortNodes', () => {
  it.each([
    [
      'creationTimestamp, descending (the default)',
      'creationTimestamp',
      false,
      ['worker-b', 'worker-a', 'edge-1', 'gpu-1', 'master-1'],
    ],
    [
      'creationTimestamp, ascending',
      'creationTimestamp',
      true,
      ['master-1', 'gpu-1', 'edge-1', 'worker-a', 'worker-b'],
    ],
    ['name, descending', 'name', false, ['worker-b', 'worker-a', 'master-1', 'gpu-1', 'edge-1']],
    ['name, ascending', 'name', true, ['edge-1', 'gpu-1', 'master-1', 'worker-a', 'worker-b']],
  ] as const)(
    "when sorting by %s, then the order is KubeSphere's with names breaking ties",
    (_case, sortBy, ascending, expected) => {
      expect(names(sortNodes(NODES, sortBy, ascending))).toEqual(expected);
    },
  );

  it('when the input is shuffled, then the order is the same (deterministic)', () => {
    const reversed = [...NODES].reverse();
    expect(names(sortNodes(reversed, 'creationTimestamp', false))).toEqual(
      names(sortNodes(NODES, 'creationTimestamp', false)),
    );
  });

  it('when a node has no or an unreadable creation timestamp, then it sorts as the oldest', () => {
    const odd = [node('a', { created: 'not a time' }), node('b'), { metadata: { name: 'c' } }];
    expect(names(sortNodes(odd, 'creationTimestamp', true))).toEqual(['a', 'c', 'b']);
  });

  it('when names differ only in case, then code-unit order applies, as Go compares strings', () => {
    expect(names(sortNodes([node('b'), node('B'), node('a')], 'name', true))).toEqual(['B', 'a', 'b']);
  });

  it('when the permutation is asked, then it lists input positions in sorted order', () => {
    expect(Array.from(sortPermutation(NODES, 'name', true))).toEqual([3, 4, 1, 2, 0]);
  });

  it('when sorting, then the input array is not reordered', () => {
    const input = [...NODES];
    sortNodes(input, 'name', true);
    expect(input).toEqual([...NODES]);
  });
});

describe('paginate', () => {
  const items = ['a', 'b', 'c', 'd', 'e'];

  it.each([
    ['no limit', 1, undefined, ['a', 'b', 'c', 'd', 'e']],
    ['no limit on page 3 (page ignored)', 3, undefined, ['a', 'b', 'c', 'd', 'e']],
    ['limit 2, page 1', 1, 2, ['a', 'b']],
    ['limit 2, page 3 (partial)', 3, 2, ['e']],
    ['limit 2, page 4 (out of range)', 4, 2, []],
    ['limit 0', 1, 0, []],
    ['limit larger than the list', 1, 50, ['a', 'b', 'c', 'd', 'e']],
  ])('when the page is %s, then it holds the right slice', (_case, page, limit, expected) => {
    expect(paginate(items, page, limit)).toEqual(expected);
  });

  it('when the page is far out of range, then the window is empty at the end', () => {
    expect(pageWindow(1_000_000, 10, 5)).toEqual({ start: 5, end: 5 });
  });
});
