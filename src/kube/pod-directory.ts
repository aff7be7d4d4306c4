import type { V1Pod } from '@kubernetes/client-node';
import type { PodAllocation } from './pod-resources.js';

/**
 * Where a pod's logs are: its namespace and name, the workload that owns it and its containers. Kept beside the
 * allocation in the one pod cache (one watch of the pods, not two). `key` is the cache key `namespace/name`, shared
 * with the store, so the name costs no second string; `containers` arrays are shared by every pod with the same set.
 */
export interface PodIdentity {
  readonly key: string;
  readonly namespace: string;
  /** The owning workload as KubeSphere names it: a ReplicaSet's Deployment, else the direct owner; none for bare pods. */
  readonly workload: string | undefined;
  /** Init containers first, then the app containers (the order they start). */
  readonly containers: readonly string[];
}

export type CachedPod = PodAllocation &
  PodIdentity & {
    /** Succeeded or Failed: counted for no node, and not among the pods whose logs are read. */
    readonly finished: boolean;
  };

export function podName(pod: PodIdentity): string {
  return pod.key.slice(pod.namespace.length + 1);
}

/** The workload a pod belongs to: the Deployment of a ReplicaSet-owned pod (its pod-template-hash stripped). */
export function workloadOf(pod: V1Pod): string | undefined {
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller) ?? pod.metadata?.ownerReferences?.[0];
  if (!owner?.name) return undefined;
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash && owner.name.endsWith(`-${hash}`)) {
    return owner.name.slice(0, -(hash.length + 1));
  }
  return owner.name;
}

/**
 * Shares strings and arrays that many pods hold equal copies of: namespace names and container-name lists. An entry
 * lives while some pod uses it (counted), so namespaces and templates that come and go leave nothing behind.
 */
export class SharedValues<T> {
  private readonly entries = new Map<string, { value: T; users: number }>();

  /**
   * The shared value for `key`, made by `make` the first time. Counted only by `hold`: a whole list is read (and
   * shares its values) before any pod is added.
   */
  get(key: string, make: () => T): T {
    const entry = this.entries.get(key);
    if (entry) return entry.value;
    const value = make();
    this.entries.set(key, { value, users: 0 });
    return value;
  }

  hold(key: string, value: T): T {
    const entry = this.entries.get(key);
    if (entry) {
      entry.users++;
      return entry.value;
    }
    this.entries.set(key, { value, users: 1 });
    return value;
  }

  release(key: string): void {
    const entry = this.entries.get(key);
    if (entry && --entry.users <= 0) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * The cached pods grouped by namespace, for the logging API: a query for one namespace reads only its pods, never
 * the whole cache. Fed by the pod cache's change events; holds the cache's own records (no copies).
 */
export class PodDirectory {
  private readonly byNamespace = new Map<string, Set<CachedPod>>();
  private readonly namespaces = new SharedValues<string>();
  private readonly containerSets = new SharedValues<readonly string[]>();
  /** Workload names: every pod of a Deployment or DaemonSet would otherwise hold a copy of its own. */
  private readonly workloads = new SharedValues<string>();

  /** A pod record, with its namespace and container list shared with the pods already known. */
  identify(raw: V1Pod, key: string): PodIdentity {
    const namespace = raw.metadata?.namespace ?? '';
    const names = [...(raw.spec?.initContainers ?? []), ...(raw.spec?.containers ?? [])].map((c) => c.name);
    const setKey = names.join('\u0000');
    const workload = workloadOf(raw);
    return {
      key,
      namespace: this.namespaces.get(namespace, () => namespace),
      workload: workload === undefined ? undefined : this.workloads.get(workload, () => workload),
      containers: this.containerSets.get(setKey, () => Object.freeze(names)),
    };
  }

  add(pod: CachedPod): void {
    let pods = this.byNamespace.get(pod.namespace);
    if (!pods) {
      pods = new Set();
      this.byNamespace.set(pod.namespace, pods);
    }
    pods.add(pod);
    this.namespaces.hold(pod.namespace, pod.namespace);
    this.containerSets.hold(pod.containers.join('\u0000'), pod.containers);
    if (pod.workload !== undefined) this.workloads.hold(pod.workload, pod.workload);
  }

  remove(pod: CachedPod): void {
    const pods = this.byNamespace.get(pod.namespace);
    if (!pods?.delete(pod)) return;
    if (pods.size === 0) this.byNamespace.delete(pod.namespace);
    this.namespaces.release(pod.namespace);
    this.containerSets.release(pod.containers.join('\u0000'));
    if (pod.workload !== undefined) this.workloads.release(pod.workload);
  }

  /** Namespaces that have at least one cached pod. */
  namespaceNames(): IterableIterator<string> {
    return this.byNamespace.keys();
  }

  /** The cached pods of one namespace (live view: do not keep it across awaits). */
  podsIn(namespace: string): ReadonlySet<CachedPod> {
    return this.byNamespace.get(namespace) ?? EMPTY;
  }

  get size(): number {
    let total = 0;
    for (const pods of this.byNamespace.values()) total += pods.size;
    return total;
  }
}

const EMPTY: ReadonlySet<CachedPod> = new Set();
