import type { V1Node } from '@kubernetes/client-node';
import type { NodeCache } from '../../../kube/caches.js';
import type { SortField } from './list-query.js';
import { sortPermutation } from './node-list.js';

interface Order {
  readonly revision: number;
  readonly sorted: readonly V1Node[];
  readonly permutation: Uint32Array;
  /** Per position of the list the order was computed from: the sort keys it saw. */
  readonly names: readonly (string | undefined)[];
  readonly created: readonly unknown[];
}

/**
 * The cache's nodes in each requested order, sorted once per cache revision and shared by every request until the
 * cache changes (KubeSphere re-sorts all nodes per request). Sort keys (name, creation time) never change on a node
 * update, and the cache keeps a node's position in its list when it is replaced, so after a status-only change the
 * previous permutation is replayed in O(n) instead of sorting again. The arrays are frozen: readers never reorder them.
 */
export class SortedNodeOrders {
  private readonly orders = new Map<string, Order>();

  constructor(private readonly nodes: NodeCache) {}

  get(sortBy: SortField, ascending: boolean): readonly V1Node[] {
    const revision = this.nodes.revision;
    const key = `${sortBy}:${ascending}`;
    const previous = this.orders.get(key);
    if (previous?.revision === revision) return previous.sorted;

    const list = this.nodes.list();
    const names = list.map((node) => node.metadata?.name);
    const created = list.map((node) => node.metadata?.creationTimestamp as unknown);
    const permutation =
      previous !== undefined && sameKeys(previous, names, created)
        ? previous.permutation
        : sortPermutation(list, sortBy, ascending);
    const sorted = Object.freeze(Array.from(permutation, (i) => list[i] as V1Node));
    this.orders.set(key, { revision, sorted, permutation, names, created });
    return sorted;
  }
}

function sameKeys(order: Order, names: readonly (string | undefined)[], created: readonly unknown[]): boolean {
  if (order.names.length !== names.length) return false;
  for (let i = 0; i < names.length; i++) {
    if (order.names[i] !== names[i] || !sameTime(order.created[i], created[i])) return false;
  }
  return true;
}

function sameTime(a: unknown, b: unknown): boolean {
  return a === b || (a instanceof Date && b instanceof Date && a.getTime() === b.getTime());
}
