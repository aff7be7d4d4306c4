import type { KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import { WORKSPACE_LABEL, type CachedNamespace, type WatchedNamespaces } from '../../kube/namespace-cache.js';
import type { Logger } from '../../observability/logger.js';

/** KubeSphere's built-in workspace of the system namespaces (the chart's files/platform.yaml makes it). */
export const SYSTEM_WORKSPACE = 'system-workspace';

/** The namespaces KubeSphere's installer puts in system-workspace, as kapi has them: Kubernetes' own and kapi's. */
export function systemNamespaces(kapiNamespace: string): ReadonlySet<string> {
  return new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease', kapiNamespace]);
}

/**
 * The system namespaces that belong to no workspace yet (pure). One an operator put in another workspace stays there.
 */
export function unplacedSystemNamespaces(namespaces: Iterable<CachedNamespace>, system: ReadonlySet<string>): string[] {
  const unplaced: string[] = [];
  for (const namespace of namespaces) {
    if (system.has(namespace.name) && namespace.workspace === undefined) unplaced.push(namespace.name);
  }
  return unplaced;
}

/**
 * Puts the system namespaces in system-workspace (the label `kapi.io/workspace`), as KubeSphere's installer does, when
 * they appear without one: at start and whenever one is made or loses its label. A merge patch of one label, the same
 * from every replica, so replicas doing it at once agree; a refusal (kapi not allowed to) is logged and left.
 */
export function placeSystemNamespaces(options: {
  client: KubeClient;
  namespaces: WatchedNamespaces;
  kapiNamespace: string;
  logger: Logger;
}): () => void {
  const { client, namespaces, logger } = options;
  const system = systemNamespaces(options.kapiNamespace);
  const pending = new Set<string>();
  const place = (names: readonly string[]) => {
    for (const name of names) {
      if (pending.has(name)) continue;
      pending.add(name);
      client
        .request({
          method: 'PATCH',
          path: `/api/v1/namespaces/${encodeURIComponent(name)}`,
          contentType: 'application/merge-patch+json',
          body: { metadata: { labels: { [WORKSPACE_LABEL]: SYSTEM_WORKSPACE } } },
          timeoutMs: 10_000,
        })
        .then(
          () => logger.info('system namespace placed in system-workspace', { namespace: name }),
          (error: unknown) =>
            logger.warn('could not place a system namespace in system-workspace', {
              namespace: name,
              error: describeError(error),
            }),
        )
        .finally(() => pending.delete(name));
    }
  };
  const check = (namespace: CachedNamespace) => place(unplacedSystemNamespaces([namespace], system));
  const unsubscribe = [
    namespaces.on('synced', () => place(unplacedSystemNamespaces(namespaces.list(), system))),
    namespaces.on('added', check),
    namespaces.on('modified', check),
  ];
  return () => unsubscribe.forEach((stop) => stop());
}
