import type { V1Node } from '@kubernetes/client-node';
import type { NodeCache } from '../../../kube/caches.js';
import type { NodeListQuery } from './list-query.js';
import { nodeMatcher, paginate } from './node-list.js';
import { SortedNodeOrders } from './sorted-node-orders.js';

export interface NodePage {
  /** The cached objects themselves: copy before changing anything. */
  readonly items: readonly V1Node[];
  /** How many nodes matched, over all pages. */
  readonly totalItems: number;
}

/** Filter results kept per sorted order; a UI paging through one filtered view hits the same few entries. */
const DEFAULT_MEMOIZED_FILTERS = 64;

/**
 * Answers list queries from the node cache: the memoized sorted order, then the matching nodes of that order
 * (memoized per filter, least recently used dropped first), then the page. A cache change yields a new sorted
 * array, which retires every filter result computed from the old one.
 */
export class NodeLister {
  private readonly orders: SortedNodeOrders;
  private readonly matches = new WeakMap<readonly V1Node[], Map<string, readonly V1Node[]>>();

  constructor(
    nodes: NodeCache,
    private readonly maxMemoizedFilters = DEFAULT_MEMOIZED_FILTERS,
  ) {
    this.orders = new SortedNodeOrders(nodes);
  }

  list(query: NodeListQuery): NodePage {
    const sorted = this.orders.get(query.sortBy, query.ascending);
    const matching = query.filterKey === '' ? sorted : this.matching(sorted, query);
    return { items: paginate(matching, query.page, query.limit), totalItems: matching.length };
  }

  private matching(sorted: readonly V1Node[], query: NodeListQuery): readonly V1Node[] {
    let memo = this.matches.get(sorted);
    if (memo === undefined) {
      memo = new Map();
      this.matches.set(sorted, memo);
    }
    const hit = memo.get(query.filterKey);
    if (hit !== undefined) {
      memo.delete(query.filterKey); // re-inserted below: Map order is the recency order
      memo.set(query.filterKey, hit);
      return hit;
    }
    const found = Object.freeze(sorted.filter(nodeMatcher(query)));
    memo.set(query.filterKey, found);
    if (memo.size > this.maxMemoizedFilters) memo.delete(memo.keys().next().value as string);
    return found;
  }
}
