import type { V1Node } from '@kubernetes/client-node';
import { matchesLabelSelector } from '../../../kube/label-selector.js';
import type { NodeListQuery, SortField } from './list-query.js';
import { nodeStatus } from './node-status.js';

/**
 * Listing as pure steps over plain nodes (steve's listprocessor): match, sort, paginate. `NodeLister` runs them
 * over memoized sorted orders and filter results.
 */

/** The display name KubeSphere's `name` filter also searches (its `kubesphere.io/alias-name`). */
export const DISPLAY_NAME_ANNOTATION = 'kapi.io/alias-name';

export type NodeFilter = Pick<NodeListQuery, 'name' | 'names' | 'selectors' | 'status' | 'uid'>;

/** A predicate for the query's filters (KubeSphere's DefaultObjectMetaFilter plus the node status); all must hold. */
export function nodeMatcher(filter: NodeFilter): (node: V1Node) => boolean {
  const { name, names, selectors, status, uid } = filter;
  return (node) => {
    const metadata = node.metadata;
    const nodeName = metadata?.name ?? '';
    if (names !== undefined && !names.has(nodeName)) return false;
    if (uid !== undefined && metadata?.uid !== uid) return false;
    if (name !== undefined && !nodeName.includes(name)) {
      const displayName = metadata?.annotations?.[DISPLAY_NAME_ANNOTATION];
      if (!displayName || !displayName.includes(name)) return false;
    }
    if (status !== undefined && nodeStatus(node) !== status) return false;
    for (const selector of selectors) {
      if (!matchesLabelSelector(selector, metadata?.labels)) return false;
    }
    return true;
  };
}

export function filterNodes(nodes: readonly V1Node[], filter: NodeFilter): V1Node[] {
  return nodes.filter(nodeMatcher(filter));
}

/**
 * A new array in KubeSphere's DefaultObjectMetaCompare order: by name, or by creation time with the name breaking
 * ties; newest/last name first unless ascending. Node names are unique, so the order is total and deterministic.
 */
export function sortNodes(nodes: readonly V1Node[], sortBy: SortField, ascending: boolean): V1Node[] {
  return Array.from(sortPermutation(nodes, sortBy, ascending), (i) => nodes[i] as V1Node);
}

/** The positions of `nodes` in sorted order (`sortNodes` as indices, so an order can be replayed on a new list). */
export function sortPermutation(nodes: readonly V1Node[], sortBy: SortField, ascending: boolean): Uint32Array {
  const names = nodes.map((node) => node.metadata?.name ?? '');
  // Keys computed once per node, not once per comparison (timestamps are text in plain JSON).
  const times = sortBy === 'creationTimestamp' ? nodes.map(creationMillis) : undefined;
  const direction = ascending ? 1 : -1;
  return Uint32Array.from(nodes.keys()).sort((a, b) => {
    if (times !== undefined && times[a] !== times[b])
      return (times[a] as number) < (times[b] as number) ? -direction : direction;
    const nameA = names[a] as string;
    const nameB = names[b] as string;
    // Code-unit order, like Go's byte-wise strings.Compare for the ASCII of node names (not locale order).
    return nameA === nameB ? 0 : nameA < nameB ? -direction : direction;
  });
}

/** Which items of a list of `total` a page covers; no limit means everything, whatever the page. */
export function pageWindow(page: number, limit: number | undefined, total: number): { start: number; end: number } {
  if (limit === undefined) return { start: 0, end: total };
  const start = Math.min((page - 1) * limit, total);
  return { start, end: Math.min(start + limit, total) };
}

export function paginate<T>(items: readonly T[], page: number, limit: number | undefined): T[] {
  const { start, end } = pageWindow(page, limit, items.length);
  return items.slice(start, end);
}

/** Missing or unreadable timestamps sort as the oldest, like Go's zero time. */
function creationMillis(node: V1Node): number {
  const value = node.metadata?.creationTimestamp as unknown;
  const millis = typeof value === 'string' ? Date.parse(value) : value instanceof Date ? value.getTime() : Number.NaN;
  return Number.isNaN(millis) ? Number.NEGATIVE_INFINITY : millis;
}
