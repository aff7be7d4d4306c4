import type { V1Node } from '@kubernetes/client-node';

/**
 * The seams between the watched caches and the features that read them. Features see these interfaces only, so
 * tests can hand them in-memory caches and the informer-backed ones stay free to change.
 */
export interface NodeCache {
  /** Every cached node. The array and the objects are shared with the cache: never mutate them. */
  list(): readonly V1Node[];
  get(name: string): V1Node | undefined;
  /** Changes whenever the cached set changes, so readers can memoize derived views (sorted orders). */
  readonly revision: number;
}

/** What the non-terminated pods bound to one node request and limit, summed. */
export interface NodeAllocation {
  cpuRequestsMilli: number;
  cpuLimitsMilli: number;
  memoryRequestsBytes: number;
  memoryLimitsBytes: number;
}

export interface PodAllocationIndex {
  /** Zeros for a node with no pods. */
  allocatedOn(nodeName: string): NodeAllocation;
}

/** One condition of `/readyz`: a cache, the configuration, the signing key. */
export interface ReadinessCheck {
  readonly name: string;
  /** `undefined` when ready, otherwise why not (shown by `/readyz?verbose`). */
  notReadyReason(): string | undefined;
}
