import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import type { NodeAllocation } from './caches.js';
import { cpuToMilli, memoryToBytes } from './quantity.js';

/** All the pod cache keeps of a pod: where it runs and what it requests and limits. */
export interface PodAllocation extends Readonly<NodeAllocation> {
  readonly nodeName: string | undefined;
}

interface CpuMemory {
  cpu: number;
  memory: number;
}

type ResourceList = Record<string, string> | undefined;

/**
 * What a pod takes from its node, computed as `kubectl describe node` and kube-scheduler do (component-helpers
 * PodRequests/PodLimits, spec only): per resource, the larger of the containers' sum (restartable init containers —
 * sidecars — included) and the peak of any init container (plus the sidecars started before it); pod-level
 * resources, when set, replace that; the pod overhead is added to requests, and to limits that are set. A pod that
 * has finished (Succeeded/Failed) or is not bound to a node counts for no node. `internNodeName` lets the pods of
 * one node share one name string instead of a copy each.
 */
export function podAllocation(pod: V1Pod, internNodeName: (name: string) => string = (name) => name): PodAllocation {
  const spec = pod.spec;
  const phase = pod.status?.phase;
  const nodeName =
    spec?.nodeName && phase !== 'Succeeded' && phase !== 'Failed' ? internNodeName(spec.nodeName) : undefined;
  if (!spec || nodeName === undefined) return Object.freeze({ nodeName: undefined, ...ZERO });

  const requests = aggregate(spec, (container) => container.resources?.requests);
  const limits = aggregate(spec, (container) => container.resources?.limits);
  const podRequests = spec.resources?.requests as ResourceList;
  const podLimits = spec.resources?.limits as ResourceList;
  if (hasCpuOrMemory(podRequests)) override(requests, podRequests);
  if (hasCpuOrMemory(podRequests) || hasCpuOrMemory(podLimits)) override(limits, podLimits);

  const overhead = read(spec.overhead as ResourceList);
  requests.cpu += overhead.cpu;
  requests.memory += overhead.memory;
  if (limits.cpu > 0) limits.cpu += overhead.cpu;
  if (limits.memory > 0) limits.memory += overhead.memory;

  return Object.freeze({
    nodeName,
    cpuRequestsMilli: requests.cpu,
    cpuLimitsMilli: limits.cpu,
    memoryRequestsBytes: requests.memory,
    memoryLimitsBytes: limits.memory,
  });
}

/** Whether two allocations are equal: a pod update that leaves its allocation alone is no change. */
export function sameAllocation(a: PodAllocation, b: PodAllocation): boolean {
  return (
    a.nodeName === b.nodeName &&
    a.cpuRequestsMilli === b.cpuRequestsMilli &&
    a.cpuLimitsMilli === b.cpuLimitsMilli &&
    a.memoryRequestsBytes === b.memoryRequestsBytes &&
    a.memoryLimitsBytes === b.memoryLimitsBytes
  );
}

const ZERO = { cpuRequestsMilli: 0, cpuLimitsMilli: 0, memoryRequestsBytes: 0, memoryLimitsBytes: 0 };

function aggregate(spec: V1PodSpec, pick: (container: V1Container) => ResourceList): CpuMemory {
  const total = { cpu: 0, memory: 0 };
  for (const container of spec.containers ?? []) add(total, read(pick(container)));
  // An init container runs alongside the sidecars started before it, so its use is its own plus theirs.
  const sidecars = { cpu: 0, memory: 0 };
  const initPeak = { cpu: 0, memory: 0 };
  for (const container of spec.initContainers ?? []) {
    const own = read(pick(container));
    if (container.restartPolicy === 'Always') {
      add(total, own);
      add(sidecars, own);
      raise(initPeak, sidecars);
    } else {
      raise(initPeak, { cpu: own.cpu + sidecars.cpu, memory: own.memory + sidecars.memory });
    }
  }
  raise(total, initPeak);
  return total;
}

function read(list: ResourceList): CpuMemory {
  return { cpu: cpuToMilli(list?.cpu), memory: memoryToBytes(list?.memory) };
}

function hasCpuOrMemory(list: ResourceList): list is Record<string, string> {
  return list?.cpu !== undefined || list?.memory !== undefined;
}

function override(target: CpuMemory, list: ResourceList): void {
  if (list?.cpu !== undefined) target.cpu = cpuToMilli(list.cpu);
  if (list?.memory !== undefined) target.memory = memoryToBytes(list.memory);
}

function add(target: CpuMemory, amount: CpuMemory): void {
  target.cpu += amount.cpu;
  target.memory += amount.memory;
}

function raise(target: CpuMemory, amount: CpuMemory): void {
  target.cpu = Math.max(target.cpu, amount.cpu);
  target.memory = Math.max(target.memory, amount.memory);
}
