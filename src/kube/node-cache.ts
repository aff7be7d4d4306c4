import type { V1Node } from '@kubernetes/client-node';
import type { Logger } from '../observability/logger.js';
import type { NodeCache } from './caches.js';
import type { KubeClient } from './client.js';
import { Reflector, type ReflectorOptions } from './reflector.js';

/** The watched Nodes: a reflector that also is the `NodeCache` the node listing reads. */
export type WatchedNodes = Reflector<V1Node> & NodeCache;

/**
 * Nodes as stored: without `managedFields` (often the largest part of a node, and never served), with the type
 * fields that list items lack, and deeply frozen — readers share these objects, so annotating one in place (the
 * reference's concurrent-map-write fault) throws instead of corrupting the cache.
 */
export function toCachedNode(raw: V1Node): V1Node {
  const { managedFields: _dropped, ...metadata } = raw.metadata ?? {};
  return deepFreeze({ apiVersion: 'v1', kind: 'Node', ...raw, metadata });
}

export function createNodeCache(
  client: KubeClient,
  logger: Logger,
  tuning: Partial<Omit<ReflectorOptions<V1Node>, 'client' | 'logger' | 'transform'>> = {},
): WatchedNodes {
  return new Reflector<V1Node>({
    name: 'nodes',
    listPath: '/api/v1/nodes',
    ...tuning,
    client,
    logger,
    transform: toCachedNode,
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
