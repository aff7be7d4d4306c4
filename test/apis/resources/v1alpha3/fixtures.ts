import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';
import type { NodeAllocation, NodeCache, PodAllocationIndex } from '../../../../src/kube/caches.js';

export interface NodeShape {
  created?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  unschedulable?: boolean;
  conditions?: Array<Pick<V1NodeCondition, 'type' | 'status'>>;
  allocatable?: Record<string, string>;
}

/** A node as it comes out of the informer: plain JSON, timestamps as text, no kind/apiVersion (list items). */
export function node(name: string, shape: NodeShape = {}): V1Node {
  return {
    metadata: {
      name,
      uid: shape.uid ?? `uid-${name}`,
      resourceVersion: '100',
      creationTimestamp: (shape.created ?? '2024-01-01T00:00:00Z') as unknown as Date,
      ...(shape.labels && { labels: shape.labels }),
      ...(shape.annotations && { annotations: shape.annotations }),
    },
    spec: { ...(shape.unschedulable !== undefined && { unschedulable: shape.unschedulable }) },
    status: {
      allocatable: shape.allocatable ?? { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: (shape.conditions ?? [{ type: 'Ready', status: 'True' }]) as V1NodeCondition[],
    },
  };
}

export function names(nodes: readonly V1Node[]): string[] {
  return nodes.map((n) => n.metadata?.name ?? '');
}

/** Freezes an object graph, so a test fails loudly if code under test writes into it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** An in-memory NodeCache: `set` replaces the content and bumps the revision, as an informer event would. */
export class InMemoryNodeCache implements NodeCache {
  revision = 0;
  listCalls = 0;
  private nodes: readonly V1Node[] = [];
  private byName = new Map<string, V1Node>();

  constructor(nodes: readonly V1Node[] = []) {
    this.set(nodes);
  }

  set(nodes: readonly V1Node[]): void {
    this.nodes = nodes;
    this.byName = new Map(nodes.map((n) => [n.metadata?.name ?? '', n]));
    this.revision++;
  }

  list(): readonly V1Node[] {
    this.listCalls++;
    return this.nodes;
  }

  get(name: string): V1Node | undefined {
    return this.byName.get(name);
  }
}

export const NO_ALLOCATION: NodeAllocation = Object.freeze({
  cpuRequestsMilli: 0,
  cpuLimitsMilli: 0,
  memoryRequestsBytes: 0,
  memoryLimitsBytes: 0,
});

export class FixedAllocations implements PodAllocationIndex {
  constructor(private readonly byNode: Record<string, NodeAllocation> = {}) {}

  allocatedOn(nodeName: string): NodeAllocation {
    return this.byNode[nodeName] ?? NO_ALLOCATION;
  }
}
