import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import type { AllocationAmounts } from './caches.js';
import { cpuToMilli, memoryToBytes, quantityFormat, type QuantityFormat } from './quantity.js';

/** All the pod cache keeps of a pod: where it runs and what it requests and limits. */
export interface PodAllocation extends Readonly<AllocationAmounts> {
  readonly nodeName: string | undefined;
  /** How each of the four amounts is written, packed by `packFormats` (one small integer, not four fields a pod). */
  readonly formats: number;
}

interface CpuMemory {
  cpu: number;
  memory: number;
  /** The format of the first non-zero addend, as Quantity.Add keeps it; undefined while the amount is zero. */
  cpuFormat: QuantityFormat | undefined;
  memoryFormat: QuantityFormat | undefined;
}

/** The four amounts of an allocation in `packFormats` order. */
export const ALLOCATION_AMOUNTS = [
  'cpuRequestsMilli',
  'cpuLimitsMilli',
  'memoryRequestsBytes',
  'memoryLimitsBytes',
] as const;

const FORMAT_CODES: readonly QuantityFormat[] = ['DecimalSI', 'BinarySI', 'DecimalExponent'];

/** Two bits per amount, in `ALLOCATION_AMOUNTS` order; an unknown format (a zero amount) is DecimalSI. */
export function packFormats(formats: readonly (QuantityFormat | undefined)[]): number {
  let packed = 0;
  formats.forEach((format, i) => {
    packed |= Math.max(0, FORMAT_CODES.indexOf(format ?? 'DecimalSI')) << (2 * i);
  });
  return packed;
}

/** The format of amount `index` (its place in `ALLOCATION_AMOUNTS`). */
export function unpackFormat(packed: number, index: number): QuantityFormat {
  return FORMAT_CODES[(packed >> (2 * index)) & 3] ?? 'DecimalSI';
}

type ResourceList = Record<string, string> | undefined;

/**
 * What a pod takes from its node, computed as `kubectl describe node` and kube-scheduler do (component-helpers
 * PodRequests/PodLimits, spec only): per resource, the larger of the containers' sum (restartable init containers —
 * sidecars — included) and the peak of any init container (plus the sidecars started before it); pod-level
 * resources, when set, replace that; the pod overhead is added to requests, and to limits that are set. A pod that
 * has finished (Succeeded/Failed) takes nothing; one not bound to a node yet counts for no node (`nodeName` undefined)
 * but keeps its amounts. `internNodeName` lets the pods of
 * one node share one name string instead of a copy each.
 */
export function podAllocation(pod: V1Pod, internNodeName: (name: string) => string = (name) => name): PodAllocation {
  const spec = pod.spec;
  const phase = pod.status?.phase;
  const finished = phase === 'Succeeded' || phase === 'Failed';
  const nodeName = spec?.nodeName && !finished ? internNodeName(spec.nodeName) : undefined;
  // A pod not yet scheduled counts for no node, but keeps its amounts: a workspace quota charges it already.
  if (!spec || finished) return Object.freeze({ nodeName: undefined, ...ZERO });

  const requests = aggregate(spec, (container) => container.resources?.requests);
  const limits = aggregate(spec, (container) => container.resources?.limits);
  const podRequests = spec.resources?.requests as ResourceList;
  const podLimits = spec.resources?.limits as ResourceList;
  if (hasCpuOrMemory(podRequests)) override(requests, podRequests);
  if (hasCpuOrMemory(podRequests) || hasCpuOrMemory(podLimits)) override(limits, podLimits);

  const overhead = read(spec.overhead as ResourceList);
  add(requests, overhead);
  add(limits, {
    cpu: limits.cpu > 0 ? overhead.cpu : 0,
    memory: limits.memory > 0 ? overhead.memory : 0,
    cpuFormat: overhead.cpuFormat,
    memoryFormat: overhead.memoryFormat,
  });

  return Object.freeze({
    nodeName,
    cpuRequestsMilli: requests.cpu,
    cpuLimitsMilli: limits.cpu,
    memoryRequestsBytes: requests.memory,
    memoryLimitsBytes: limits.memory,
    formats: packFormats([requests.cpuFormat, limits.cpuFormat, requests.memoryFormat, limits.memoryFormat]),
  });
}

/** Whether two allocations are equal: a pod update that leaves its allocation alone is no change. */
export function sameAllocation(a: PodAllocation, b: PodAllocation): boolean {
  return (
    a.nodeName === b.nodeName &&
    a.cpuRequestsMilli === b.cpuRequestsMilli &&
    a.cpuLimitsMilli === b.cpuLimitsMilli &&
    a.memoryRequestsBytes === b.memoryRequestsBytes &&
    a.memoryLimitsBytes === b.memoryLimitsBytes &&
    a.formats === b.formats
  );
}

const ZERO = { cpuRequestsMilli: 0, cpuLimitsMilli: 0, memoryRequestsBytes: 0, memoryLimitsBytes: 0, formats: 0 };

function none(): CpuMemory {
  return { cpu: 0, memory: 0, cpuFormat: undefined, memoryFormat: undefined };
}

function aggregate(spec: V1PodSpec, pick: (container: V1Container) => ResourceList): CpuMemory {
  const total = none();
  for (const container of spec.containers ?? []) add(total, read(pick(container)));
  // An init container runs alongside the sidecars started before it, so its use is its own plus theirs.
  const sidecars = none();
  const initPeak = none();
  for (const container of spec.initContainers ?? []) {
    const own = read(pick(container));
    if (container.restartPolicy === 'Always') {
      add(total, own);
      add(sidecars, own);
      raise(initPeak, sidecars);
    } else {
      const withSidecars = { ...own };
      add(withSidecars, sidecars);
      raise(initPeak, withSidecars);
    }
  }
  raise(total, initPeak);
  return total;
}

function read(list: ResourceList): CpuMemory {
  const cpu = cpuToMilli(list?.cpu);
  const memory = memoryToBytes(list?.memory);
  return {
    cpu,
    memory,
    cpuFormat: cpu === 0 ? undefined : quantityFormat(list?.cpu),
    memoryFormat: memory === 0 ? undefined : quantityFormat(list?.memory),
  };
}

function hasCpuOrMemory(list: ResourceList): list is Record<string, string> {
  return list?.cpu !== undefined || list?.memory !== undefined;
}

function override(target: CpuMemory, list: ResourceList): void {
  const given = read(list);
  if (list?.cpu !== undefined) [target.cpu, target.cpuFormat] = [given.cpu, given.cpuFormat];
  if (list?.memory !== undefined) [target.memory, target.memoryFormat] = [given.memory, given.memoryFormat];
}

/** Quantity.Add: a zero sum takes the addend's format. */
function add(target: CpuMemory, amount: CpuMemory): void {
  if (target.cpu === 0) target.cpuFormat = amount.cpuFormat;
  if (target.memory === 0) target.memoryFormat = amount.memoryFormat;
  target.cpu += amount.cpu;
  target.memory += amount.memory;
}

/** The larger amount wins, with its format (kubectl's maxResourceList). */
function raise(target: CpuMemory, amount: CpuMemory): void {
  if (amount.cpu > target.cpu) [target.cpu, target.cpuFormat] = [amount.cpu, amount.cpuFormat];
  if (amount.memory > target.memory) [target.memory, target.memoryFormat] = [amount.memory, amount.memoryFormat];
}
