import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../observability/logger.js';
import type { AllocationFormats, NodeAllocation, PodAllocationIndex, ReadinessCheck } from './caches.js';
import type { KubeClient } from './client.js';
import { PodDirectory, type CachedPod } from './pod-directory.js';
import {
  ALLOCATION_AMOUNTS,
  podAllocation,
  sameAllocation,
  unpackFormat,
  type PodAllocation,
} from './pod-resources.js';
import type { QuantityFormat } from './quantity.js';
import { Reflector, type ReflectorOptions } from './reflector.js';

export type { PodAllocation } from './pod-resources.js';

interface NodeTotals {
  pods: number;
  cpuRequestsMilli: number;
  cpuLimitsMilli: number;
  memoryRequestsBytes: number;
  memoryLimitsBytes: number;
  /** Per amount (ALLOCATION_AMOUNTS order) and format (FORMATS order): how many pods gave a non-zero amount in it. */
  formatCounts: number[];
}

/** Ties go to the earlier one: memory stays in Mi/Gi when its pods are split evenly. */
const FORMATS: readonly QuantityFormat[] = ['BinarySI', 'DecimalSI', 'DecimalExponent'];

/**
 * Per-node sums of pod allocations, kept up to date one pod change at a time, so a node page never scans the pods.
 * Nodes without pods are dropped, so deleted nodes leave nothing behind.
 */
export class NodeAllocationIndex implements PodAllocationIndex {
  private readonly byNode = new Map<string, NodeTotals>();
  /** One string per node name, shared by the records of all its pods (a copy each would cost 50,000 strings). */
  private readonly names = new Map<string, string>();

  add(pod: PodAllocation): void {
    if (pod.nodeName === undefined) return;
    let totals = this.byNode.get(pod.nodeName);
    if (!totals) {
      totals = {
        pods: 0,
        cpuRequestsMilli: 0,
        cpuLimitsMilli: 0,
        memoryRequestsBytes: 0,
        memoryLimitsBytes: 0,
        formatCounts: new Array<number>(ALLOCATION_AMOUNTS.length * FORMATS.length).fill(0),
      };
      this.byNode.set(pod.nodeName, totals);
    }
    this.apply(totals, pod, 1);
  }

  remove(pod: PodAllocation): void {
    if (pod.nodeName === undefined) return;
    const totals = this.byNode.get(pod.nodeName);
    if (!totals) return;
    this.apply(totals, pod, -1);
    if (totals.pods <= 0) {
      this.byNode.delete(pod.nodeName);
      this.names.delete(pod.nodeName);
    }
  }

  allocatedOn(nodeName: string): NodeAllocation {
    const totals = this.byNode.get(nodeName);
    const allocation: NodeAllocation = {
      cpuRequestsMilli: totals?.cpuRequestsMilli ?? 0,
      cpuLimitsMilli: totals?.cpuLimitsMilli ?? 0,
      memoryRequestsBytes: totals?.memoryRequestsBytes ?? 0,
      memoryLimitsBytes: totals?.memoryLimitsBytes ?? 0,
    };
    if (totals) allocation.formats = sumFormats(totals.formatCounts);
    return allocation;
  }

  /** The shared string for a node name, for pod records made before they are added (a whole list is read first). */
  readonly internNodeName = (name: string): string => {
    const shared = this.names.get(name);
    if (shared !== undefined) return shared;
    this.names.set(name, name);
    return name;
  };

  /** Nodes that have at least one counted pod. */
  get nodes(): number {
    return this.byNode.size;
  }

  private apply(totals: NodeTotals, pod: PodAllocation, sign: 1 | -1): void {
    totals.pods += sign;
    totals.cpuRequestsMilli += sign * pod.cpuRequestsMilli;
    totals.cpuLimitsMilli += sign * pod.cpuLimitsMilli;
    totals.memoryRequestsBytes += sign * pod.memoryRequestsBytes;
    totals.memoryLimitsBytes += sign * pod.memoryLimitsBytes;
    ALLOCATION_AMOUNTS.forEach((amount, i) => {
      if (pod[amount] === 0) return;
      const slot = i * FORMATS.length + FORMATS.indexOf(unpackFormat(pod.formats, i));
      totals.formatCounts[slot] = (totals.formatCounts[slot] ?? 0) + sign;
    });
  }
}

/**
 * The format each sum prints in. KubeSphere's sum takes the format of the first pod its informer happens to list
 * (Quantity.Add), so when the pods agree this is exactly its output; when they are mixed, kapi picks the format most
 * of them used (KubeSphere's most likely answer) rather than one that changes from call to call.
 */
function sumFormats(counts: readonly number[]): AllocationFormats {
  const pick = (i: number): QuantityFormat => {
    let best: QuantityFormat = i < 2 ? 'DecimalSI' : 'BinarySI';
    let most = 0;
    FORMATS.forEach((format, f) => {
      const count = counts[i * FORMATS.length + f] ?? 0;
      if (count > most) [best, most] = [format, count];
    });
    return best;
  };
  return { cpuRequests: pick(0), cpuLimits: pick(1), memoryRequests: pick(2), memoryLimits: pick(3) };
}

/**
 * The watched pods, each trimmed to a `CachedPod` (allocation and log identity), feeding a `NodeAllocationIndex`
 * (finished pods count for no node) and a `PodDirectory` (pods not finished, by namespace, for the logging API). Raw
 * pods are dropped as soon as they are read and no resourceVersions are kept. Every pod is watched, finished ones
 * too: the pod listing attaches to this one watch (`pods.attach`) instead of holding a second watch of the pods.
 */
export class PodAllocations implements PodAllocationIndex {
  constructor(
    readonly pods: Reflector<CachedPod>,
    private readonly index: NodeAllocationIndex,
    readonly directory: PodDirectory = new PodDirectory(),
  ) {
    pods.on('added', (pod) => {
      this.index.add(pod);
      if (!pod.finished) this.directory.add(pod);
    });
    pods.on('modified', (pod, old) => {
      if (old) {
        this.index.remove(old);
        this.directory.remove(old);
      }
      this.index.add(pod);
      if (!pod.finished) this.directory.add(pod);
    });
    pods.on('deleted', (pod) => {
      this.index.remove(pod);
      this.directory.remove(pod);
    });
  }

  allocatedOn(nodeName: string): NodeAllocation {
    return this.index.allocatedOn(nodeName);
  }

  get size(): number {
    return this.pods.size;
  }

  get synced(): boolean {
    return this.pods.synced;
  }

  get readiness(): ReadinessCheck {
    return this.pods.readiness;
  }

  start(): void {
    this.pods.start();
  }

  waitForSync(timeoutMs?: number): Promise<void> {
    return this.pods.waitForSync(timeoutMs);
  }

  stop(): Promise<void> {
    return this.pods.stop();
  }
}

export function createPodAllocations(
  client: KubeClient,
  logger: Logger,
  tuning: Partial<Omit<ReflectorOptions<CachedPod>, 'client' | 'logger' | 'transform'>> = {},
): PodAllocations {
  const index = new NodeAllocationIndex();
  const directory = new PodDirectory();
  const pods = new Reflector<CachedPod>({
    name: 'pods',
    listPath: '/api/v1/pods',
    ...tuning,
    client,
    logger,
    transform: (raw: V1Pod, key: string): CachedPod => {
      const allocation = podAllocation(raw, index.internNodeName);
      const identity = directory.identify(raw, key);
      // One literal of fixed shape: a spread of the two would cost more per pod (150,000 of them).
      return Object.freeze({
        nodeName: allocation.nodeName,
        cpuRequestsMilli: allocation.cpuRequestsMilli,
        cpuLimitsMilli: allocation.cpuLimitsMilli,
        memoryRequestsBytes: allocation.memoryRequestsBytes,
        memoryLimitsBytes: allocation.memoryLimitsBytes,
        formats: allocation.formats,
        key: identity.key,
        namespace: identity.namespace,
        workload: identity.workload,
        containers: identity.containers,
        finished: raw.status?.phase === 'Succeeded' || raw.status?.phase === 'Failed',
      });
    },
    same: sameCachedPod,
  });
  return new PodAllocations(pods, index, directory);
}

/** Equal allocation, log identity and phase class (shared container lists compare by identity): no change. */
export function sameCachedPod(a: CachedPod, b: CachedPod): boolean {
  return (
    sameAllocation(a, b) && a.workload === b.workload && a.containers === b.containers && a.finished === b.finished
  );
}
