import type { KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import { WORKSPACE_LABEL, type CachedNamespace, type WatchedNamespaces } from '../../kube/namespace-cache.js';
import type { Logger } from '../../observability/logger.js';

/** KubeSphere's built-in workspace of the system namespaces (the chart's files/platform.yaml makes it). */
export const SYSTEM_WORKSPACE = 'system-workspace';

/**
 * The namespaces KubeSphere's installer puts in system-workspace, as kapi has them: Kubernetes' own. Not kapi's own
 * namespace (KubeSphere's installer puts its own there): it holds kapi's signing key and the users' password hashes,
 * which no workspace role may reach, so it belongs to no workspace (kapi takes a label off it, and its controller
 * realizes no workspace role in it whatever its label says).
 */
export function systemNamespaces(): ReadonlySet<string> {
  return new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
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
  const { client, namespaces, logger, kapiNamespace } = options;
  const system = systemNamespaces();
  const pending = new Set<string>();
  const label = (name: string, workspace: string | null) => {
    if (pending.has(name)) return;
    pending.add(name);
    client
      .request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${encodeURIComponent(name)}`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { [WORKSPACE_LABEL]: workspace } } },
        timeoutMs: 10_000,
      })
      .then(
        () =>
          logger.info(
            workspace ? 'system namespace placed in system-workspace' : 'kapi’s namespace taken out of its workspace',
            { namespace: name },
          ),
        (error: unknown) =>
          logger.warn('could not set the workspace of a system namespace', {
            namespace: name,
            error: describeError(error),
          }),
      )
      .finally(() => pending.delete(name));
  };
  const place = (names: readonly string[]) => names.forEach((name) => label(name, SYSTEM_WORKSPACE));
  const check = (namespace: CachedNamespace) => {
    // an older kapi put its own namespace in system-workspace: that label goes
    if (namespace.name === kapiNamespace && namespace.workspace !== undefined) label(namespace.name, null);
    place(unplacedSystemNamespaces([namespace], system));
  };
  const unsubscribe = [
    namespaces.on('synced', () => namespaces.list().forEach(check)),
    namespaces.on('added', check),
    namespaces.on('modified', check),
  ];
  return () => unsubscribe.forEach((stop) => stop());
}
