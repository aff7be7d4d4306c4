/**
 * KubeSphere 3.4's system components (`resources.kapi.io/v1alpha2/components`, pure): every Service with a selector in
 * the system namespaces, with how many of the pods it selects there run with every container ready.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface ComponentStatus {
  name: string;
  namespace: string;
  selfLink: string;
  label: Record<string, string>;
  startedAt: string;
  totalBackends: number;
  healthyBackends: number;
}

/** KubeSphere's SystemNamespaces, as kapi has them: its own namespace and Kubernetes'. */
export function componentNamespaces(kapiNamespace: string): string[] {
  return [kapiNamespace, 'kube-system'];
}

const selectorOf = (service: Raw): Record<string, string> | undefined => {
  const selector = service?.spec?.selector;
  if (!selector || typeof selector !== 'object' || Object.keys(selector).length === 0) return undefined;
  return selector as Record<string, string>;
};

const selects = (selector: Record<string, string>, pod: Raw) =>
  Object.entries(selector).every(([key, value]) => pod?.metadata?.labels?.[key] === value);

const healthy = (pod: Raw) =>
  pod?.status?.phase === 'Running' &&
  (pod.status.containerStatuses ?? []).every((container: Raw) => container?.ready === true);

/** The components of one namespace's services and pods, in the services' order. */
export function componentStatuses(services: readonly Raw[], pods: readonly Raw[]): ComponentStatus[] {
  const statuses: ComponentStatus[] = [];
  for (const service of services) {
    const selector = selectorOf(service);
    if (!selector) continue;
    const backends = pods.filter(
      (pod) => pod?.metadata?.namespace === service.metadata?.namespace && selects(selector, pod),
    );
    statuses.push({
      name: String(service.metadata?.name ?? ''),
      namespace: String(service.metadata?.namespace ?? ''),
      selfLink: '',
      label: selector,
      startedAt: String(service.metadata?.creationTimestamp ?? ''),
      totalBackends: backends.length,
      healthyBackends: backends.filter(healthy).length,
    });
  }
  return statuses;
}
