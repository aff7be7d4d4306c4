import type { ResourceAttributes } from '../../../auth/identity.js';
import type { Level } from './catalogue.js';
import type { Slots } from './expand.js';
import { equals, matchesOwn, nameMatcher, notEquals, oneOf, quoteMeta, type Names } from './selectors.js';

/**
 * What a monitoring route asks for (SPEC §19, pure): the level of KubeSphere's named metrics it reads, the matchers
 * each metric's template is filled with (KubeSphere 3.4.1's `make*MetricExpr`, from validated names only), the
 * namespaces its answer is confined to, and the right a SubjectAccessReview asks on `monitoring.kapi.io`.
 */
export const MONITORING_GROUP = 'monitoring.kapi.io';

export const WORKLOAD_KINDS = ['deployment', 'statefulset', 'daemonset'] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];
export const COMPONENTS = ['apiserver', 'scheduler', 'etcd'] as const;
export type Component = (typeof COMPONENTS)[number];

export type Target =
  | { kind: 'cluster' }
  | { kind: 'nodes'; node?: string }
  | { kind: 'workspaces' }
  | { kind: 'workspace'; workspace: string }
  | { kind: 'workspace-namespaces'; workspace: string }
  | { kind: 'namespaces' }
  | { kind: 'namespace'; namespace: string }
  | { kind: 'workloads'; namespace: string; workloadKind?: WorkloadKind }
  | { kind: 'workload-pods'; namespace: string; workloadKind: WorkloadKind; workload: string }
  | { kind: 'pods' }
  | { kind: 'namespace-pods'; namespace: string; pod?: string }
  | { kind: 'node-pods'; node: string; pod?: string }
  | { kind: 'containers'; namespace: string; pod: string; container?: string }
  | { kind: 'pvcs'; namespace: string; pvc?: string }
  | { kind: 'storageclass-pvcs'; storageClass: string }
  | { kind: 'component'; component: Component };

/** `ns/pod` pairs of `namespaced_resources_filter` (on `/pods` and `/nodes/{node}/pods`). */
export interface PodPair {
  namespace?: string;
  pod: string;
}

export interface Plan {
  level: Level;
  /** Each metric's slots (a workload's kind decides its replica metrics' label). */
  slotsFor(metric: string): Slots;
  /**
   * The namespaces the answer may hold series of: a namespaced route's one, a workspace route's (as kapi has them);
   * undefined for a cluster-wide route (its right is cluster-scoped).
   */
  scope?: readonly string[];
  /** The one namespace whose creation clamps the time range (KubeSphere's namespace clamp). */
  clampNamespace?: string;
}

const slots = (s1: readonly string[], s2: readonly string[] = [], scope: readonly string[] = []): Slots => ({
  $1: s1,
  $2: s2,
  $S: scope,
});
const scopeMatchers = (namespaces: readonly string[]) =>
  namespaces.length === 1 ? [equals('namespace', namespaces[0] as string)] : [oneOf('namespace', namespaces)];
const restrict = (names: readonly string[], filter: Names) =>
  'all' in filter ? names : names.filter((name) => filter.names.includes(name));

export interface PlanInput {
  filter: Names;
  pairs?: readonly PodPair[];
  /** A workspace's namespaces as kapi has them, already narrowed to those the caller may see. */
  workspaceNamespaces?: readonly string[];
}

export function planOf(target: Target, input: PlanInput): Plan {
  const { filter } = input;
  switch (target.kind) {
    case 'cluster':
      return { level: 'cluster', slotsFor: () => slots([]) };
    case 'component':
      return { level: target.component, slotsFor: () => slots([]) };
    case 'nodes': {
      const node = target.node ? [equals('node', target.node)] : nameMatcher('node', filter);
      return { level: 'node', slotsFor: () => slots(node) };
    }
    case 'workspaces': {
      const ws = [notEquals('workspace', ''), ...nameMatcher('workspace', filter)];
      return { level: 'workspace', slotsFor: () => slots(ws) };
    }
    case 'workspace': {
      const namespaces = input.workspaceNamespaces ?? [];
      const scope = scopeMatchers(namespaces);
      return {
        level: 'workspace',
        slotsFor: () => slots([equals('workspace', target.workspace)], [], scope),
        scope: namespaces,
      };
    }
    case 'workspace-namespaces': {
      const namespaces = restrict(input.workspaceNamespaces ?? [], filter);
      return { level: 'namespace', slotsFor: () => slots(scopeMatchers(namespaces)), scope: namespaces };
    }
    case 'namespaces':
      return { level: 'namespace', slotsFor: () => slots(nameMatcher('namespace', filter)) };
    case 'namespace':
      return {
        level: 'namespace',
        slotsFor: () => slots([equals('namespace', target.namespace)]),
        scope: [target.namespace],
        clampNamespace: target.namespace,
      };
    case 'workloads': {
      const ns = equals('namespace', target.namespace);
      const workloads = workloadMatcher(target.workloadKind, filter);
      return {
        level: 'workload',
        // the kind selector is the route's kind, else the metric's own (KubeSphere: a route's kind empties the others)
        slotsFor: (metric) => {
          const kind = target.workloadKind ?? WORKLOAD_KINDS.find((k) => metric.includes(k)) ?? 'deployment';
          return slots([ns, ...workloads], [ns, notEquals(kind, ''), ...nameMatcher(kind, filter)]);
        },
        scope: [target.namespace],
        clampNamespace: target.namespace,
      };
    }
    case 'workload-pods': {
      const ns = equals('namespace', target.namespace);
      const owner =
        target.workloadKind === 'deployment'
          ? [equals('owner_kind', 'ReplicaSet'), matchesOwn('owner_name', `^${quoteMeta(target.workload)}-[^-]{1,10}$`)]
          : [
              equals('owner_kind', target.workloadKind === 'statefulset' ? 'StatefulSet' : 'DaemonSet'),
              equals('owner_name', target.workload),
            ];
      return {
        level: 'pod',
        slotsFor: () => slots(owner, [...nameMatcher('pod', filter), ns], [ns]),
        scope: [target.namespace],
        clampNamespace: target.namespace,
      };
    }
    case 'namespace-pods': {
      const ns = equals('namespace', target.namespace);
      const pods = target.pod ? [equals('pod', target.pod)] : nameMatcher('pod', filter);
      return {
        level: 'pod',
        slotsFor: () => slots([], [...pods, ns], [ns]),
        scope: [target.namespace],
        clampNamespace: target.namespace,
      };
    }
    case 'node-pods': {
      const node = equals('node', target.node);
      const matchers = target.pod
        ? [equals('pod', target.pod), node]
        : [node, ...nameMatcher('pod', filter), ...pairMatchers(input.pairs)];
      return { level: 'pod', slotsFor: () => slots([], matchers) };
    }
    case 'pods':
      return { level: 'pod', slotsFor: () => slots([], pairMatchers(input.pairs)) };
    case 'containers': {
      const pod = [equals('pod', target.pod), equals('namespace', target.namespace)];
      const containers = target.container ? [equals('container', target.container)] : nameMatcher('container', filter);
      return {
        level: 'container',
        slotsFor: () => slots([...pod, ...containers]),
        scope: [target.namespace],
        clampNamespace: target.namespace,
      };
    }
    case 'pvcs': {
      const ns = equals('namespace', target.namespace);
      const claims = target.pvc
        ? [equals('persistentvolumeclaim', target.pvc)]
        : nameMatcher('persistentvolumeclaim', filter);
      return {
        level: 'pvc',
        slotsFor: () => slots([ns, ...claims], [], [ns]),
        scope: [target.namespace],
        clampNamespace: target.namespace,
      };
    }
    case 'storageclass-pvcs':
      return {
        level: 'pvc',
        slotsFor: () =>
          slots([equals('storageclass', target.storageClass), ...nameMatcher('persistentvolumeclaim', filter)]),
      };
  }
}

/**
 * The `workload` label of the recorded workload series (`Deployment:web`) for a route's kind and names: KubeSphere's
 * `workload=~"<Kind>:(<names>)"`, with the kind `.*` when the route names none.
 */
function workloadMatcher(kind: WorkloadKind | undefined, filter: Names): string[] {
  const label = kind && { deployment: 'Deployment', statefulset: 'StatefulSet', daemonset: 'DaemonSet' }[kind];
  if (!label && 'all' in filter) return [];
  const names = 'all' in filter ? '.*' : `(?:${filter.names.map(quoteMeta).join('|')})`;
  return [matchesOwn('workload', `^${label ?? '[^:]+'}:${names}$`)];
}

/** `namespace=~…, pod=~…` for `namespaced_resources_filter`'s pairs (each name quoted; KubeSphere's split kept). */
function pairMatchers(pairs: readonly PodPair[] | undefined): string[] {
  if (!pairs?.length) return [];
  const namespaces = [...new Set(pairs.flatMap((pair) => (pair.namespace ? [pair.namespace] : [])))];
  const pods = [...new Set(pairs.map((pair) => pair.pod))];
  return [...(namespaces.length ? [oneOf('namespace', namespaces)] : []), oneOf('pod', pods)];
}

/** The right a route needs, as a SubjectAccessReview on `monitoring.kapi.io` asks it. */
export function accessOf(target: Target): ResourceAttributes {
  const right = (
    verb: string,
    resource: string,
    name?: string,
    namespace?: string,
    subresource?: string,
  ): ResourceAttributes => ({
    verb,
    group: MONITORING_GROUP,
    resource,
    ...(subresource !== undefined && { subresource }),
    ...(name !== undefined && { name }),
    ...(namespace !== undefined && { namespace }),
  });
  switch (target.kind) {
    case 'cluster':
      return right('get', 'cluster');
    case 'component':
      return right('get', 'components', target.component);
    case 'nodes':
      return target.node ? right('get', 'nodes', target.node) : right('list', 'nodes');
    // a node's pods are of every namespace: a right of its own beside the node's (KubeSphere's subresource)
    case 'node-pods':
      return right('get', 'nodes', target.node, undefined, 'pods');
    case 'workspaces':
      return right('list', 'workspaces');
    case 'workspace':
    case 'workspace-namespaces':
      return right('get', 'workspaces', target.workspace);
    case 'namespaces':
      return right('list', 'namespaces');
    case 'namespace':
      return right('get', 'namespaces', target.namespace, target.namespace);
    case 'workloads':
      return right('list', 'workloads', undefined, target.namespace);
    case 'workload-pods':
      return right('get', 'workloads', target.workload, target.namespace);
    case 'pods':
      return right('list', 'pods');
    case 'namespace-pods':
      return target.pod
        ? right('get', 'pods', target.pod, target.namespace)
        : right('list', 'pods', undefined, target.namespace);
    case 'containers':
      return right('get', 'pods', target.pod, target.namespace);
    case 'pvcs':
      return target.pvc
        ? right('get', 'persistentvolumeclaims', target.pvc, target.namespace)
        : right('list', 'persistentvolumeclaims', undefined, target.namespace);
    case 'storageclass-pvcs':
      return right('get', 'storageclasses', target.storageClass, undefined, 'persistentvolumeclaims');
  }
}
