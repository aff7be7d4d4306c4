import type { V1Namespace } from '@kubernetes/client-node';
import type { Logger } from '../observability/logger.js';
import type { KubeClient } from './client.js';
import { Reflector, type ReflectorOptions } from './reflector.js';

/**
 * A namespace as the logging API needs it: its name, and when it was made (logs older than that are another's); and
 * the workspace it belongs to.
 */
export interface CachedNamespace {
  readonly name: string;
  /** Unix seconds of `metadata.creationTimestamp`; 0 when unknown. */
  readonly createdAt: number;
  /** The workspace it belongs to: its label `kapi.io/workspace`; undefined when it has none. */
  readonly workspace?: string;
}

export const WORKSPACE_LABEL = 'kapi.io/workspace';

export type WatchedNamespaces = Reflector<CachedNamespace>;

export function toCachedNamespace(raw: V1Namespace, key: string): CachedNamespace {
  const created = Date.parse(String(raw.metadata?.creationTimestamp ?? ''));
  const workspace = raw.metadata?.labels?.[WORKSPACE_LABEL];
  return Object.freeze({
    name: key,
    createdAt: Number.isNaN(created) ? 0 : Math.floor(created / 1000),
    ...(workspace && { workspace }),
  });
}

export function createNamespaceCache(
  client: KubeClient,
  logger: Logger,
  tuning: Partial<Omit<ReflectorOptions<CachedNamespace>, 'client' | 'logger' | 'transform'>> = {},
): WatchedNamespaces {
  return new Reflector<CachedNamespace>({
    name: 'namespaces',
    listPath: '/api/v1/namespaces',
    ...tuning,
    client,
    logger,
    transform: toCachedNamespace,
    same: (a, b) => a.createdAt === b.createdAt && a.workspace === b.workspace,
  });
}
