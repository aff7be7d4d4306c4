import type { V1Node } from '@kubernetes/client-node';
import type { QuantityFormat } from './quantity.js';

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
export interface AllocationAmounts {
  cpuRequestsMilli: number;
  cpuLimitsMilli: number;
  memoryRequestsBytes: number;
  memoryLimitsBytes: number;
}

/** How each amount is printed: the format the node's pods wrote it in (resource.Quantity keeps it through sums). */
export interface AllocationFormats {
  cpuRequests: QuantityFormat;
  cpuLimits: QuantityFormat;
  memoryRequests: QuantityFormat;
  memoryLimits: QuantityFormat;
}

export interface NodeAllocation extends AllocationAmounts {
  /** Absent: CPU in DecimalSI, memory in BinarySI. */
  formats?: AllocationFormats;
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
