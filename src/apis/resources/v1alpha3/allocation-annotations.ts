import type { V1Node } from '@kubernetes/client-node';
import type { NodeAllocation } from '../../../kube/caches.js';
import { cpuToMilli, memoryToBytes } from '../../../kube/quantity.js';
import { formatByteQuantity, formatMilliQuantity } from '../../../kube/quantity-format.js';

/** KubeSphere's node.kubesphere.io/… display annotations, under our prefix. */
export const ALLOCATION_ANNOTATIONS = {
  cpuRequests: 'node.kapi.io/cpu-requests',
  cpuLimits: 'node.kapi.io/cpu-limits',
  memoryRequests: 'node.kapi.io/memory-requests',
  memoryLimits: 'node.kapi.io/memory-limits',
  cpuRequestsFraction: 'node.kapi.io/cpu-requests-fraction',
  cpuLimitsFraction: 'node.kapi.io/cpu-limits-fraction',
  memoryRequestsFraction: 'node.kapi.io/memory-requests-fraction',
  memoryLimitsFraction: 'node.kapi.io/memory-limits-fraction',
} as const;

/**
 * The allocation annotations of one node: sums as quantities and each as a whole percentage of the node's
 * allocatable, truncated ("31%"), "0%" when the node reports no allocatable — KubeSphere's annotateNode arithmetic.
 * Unlike KubeSphere, a node without pods gets them too (all zero), so every item has the same fields.
 */
export function allocationAnnotations(node: V1Node, allocation: NodeAllocation): Record<string, string> {
  const allocatable = node.status?.allocatable;
  const cpu = cpuToMilli(allocatable?.['cpu']);
  const memory = memoryToBytes(allocatable?.['memory']);
  const formats = allocation.formats;
  return {
    [ALLOCATION_ANNOTATIONS.cpuRequests]: formatMilliQuantity(allocation.cpuRequestsMilli, formats?.cpuRequests),
    [ALLOCATION_ANNOTATIONS.cpuLimits]: formatMilliQuantity(allocation.cpuLimitsMilli, formats?.cpuLimits),
    [ALLOCATION_ANNOTATIONS.memoryRequests]: formatByteQuantity(
      allocation.memoryRequestsBytes,
      formats?.memoryRequests,
    ),
    [ALLOCATION_ANNOTATIONS.memoryLimits]: formatByteQuantity(allocation.memoryLimitsBytes, formats?.memoryLimits),
    [ALLOCATION_ANNOTATIONS.cpuRequestsFraction]: percentOf(allocation.cpuRequestsMilli, cpu),
    [ALLOCATION_ANNOTATIONS.cpuLimitsFraction]: percentOf(allocation.cpuLimitsMilli, cpu),
    [ALLOCATION_ANNOTATIONS.memoryRequestsFraction]: percentOf(allocation.memoryRequestsBytes, memory),
    [ALLOCATION_ANNOTATIONS.memoryLimitsFraction]: percentOf(allocation.memoryLimitsBytes, memory),
  };
}

/**
 * A copy of the node carrying the allocation annotations. The cached node is shared by every reader and never
 * written (KubeSphere annotates its informer's objects in place: concurrent map writes, one user's view leaking into
 * another's). New object, metadata and annotations; spec and status are shared, being only serialized.
 */
export function annotateAllocation(node: V1Node, allocation: NodeAllocation): V1Node {
  return {
    ...node,
    metadata: {
      ...node.metadata,
      annotations: { ...node.metadata?.annotations, ...allocationAnnotations(node, allocation) },
    },
  };
}

/** Same float arithmetic as KubeSphere: (used / allocatable) × 100, truncated toward zero. */
function percentOf(used: number, allocatable: number): string {
  if (allocatable === 0 || !Number.isFinite(allocatable)) return '0%';
  const percent = Math.trunc((used / allocatable) * 100);
  return `${Number.isFinite(percent) ? percent : 0}%`;
}
