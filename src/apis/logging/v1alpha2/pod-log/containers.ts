import { podName, type CachedPod } from '../../../../kube/pod-directory.js';
import type { NamespaceScope } from '../log-backend.js';
import type { LogFilter } from '../query.js';
import { fieldMatcher } from '../text-match.js';

/** One container whose log is read; `order` breaks ties between lines written at the same instant. */
export interface ContainerTarget {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly order: number;
}

/** The cached pods by namespace (`PodDirectory`). */
export interface PodSource {
  namespaceNames(): Iterable<string>;
  podsIn(namespace: string): Iterable<CachedPod>;
}

/**
 * The containers a search reads: pods bound to a node (others have no log yet) in the namespaces the caller may read,
 * filtered by namespace, workload, pod and container. Sorted by namespace, pod and container, so answers are stable.
 */
export function selectContainers(source: PodSource, filter: LogFilter, scope: NamespaceScope): ContainerTarget[] {
  const namespaceOk = fieldMatcher(filter.namespaces, filter.namespaceQuery);
  const workloadOk = fieldMatcher(filter.workloads, filter.workloadQuery);
  const podOk = fieldMatcher(filter.pods, filter.podQuery);
  const containerOk = fieldMatcher(filter.containers, filter.containerQuery);
  const namespaces =
    scope.kind === 'all' ? [...source.namespaceNames()] : [...scope.namespaces.keys()].filter((ns) => ns !== '');
  const found: Omit<ContainerTarget, 'order'>[] = [];
  for (const namespace of namespaces) {
    if (!namespaceOk(namespace)) continue;
    for (const cached of source.podsIn(namespace)) {
      if (cached.nodeName === undefined || !workloadOk(cached.workload)) continue;
      const pod = podName(cached);
      if (!podOk(pod)) continue;
      for (const container of cached.containers) {
        if (containerOk(container)) found.push({ namespace, pod, container });
      }
    }
  }
  found.sort((a, b) => compare(a.namespace, b.namespace) || compare(a.pod, b.pod) || compare(a.container, b.container));
  return found.map((target, order) => ({ ...target, order }));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
