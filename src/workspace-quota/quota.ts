import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { podAllocation } from '../kube/pod-resources.js';
import { exactQuantity, parseQuantity } from '../kube/quantity.js';
import { formatByteQuantity, formatMilliQuantity } from '../kube/quantity-format.js';

/**
 * Workspace quotas (KubeSphere 3.4.1's `quota.kubesphere.io` ResourceQuota, here `quota.kapi.io`), pure: a hard limit
 * on what the pods of all the namespaces a quota selects (a workspace's projects) take together, which a namespaced
 * ResourceQuota cannot express. Enforced as KubeSphere enforces it — by a validating webhook on pod creation that
 * charges the quota's `status.total.used` — with kube-apiserver's ResourceQuota rules and messages
 * (plugin/pkg/admission/resourcequota, the pod evaluator): a finished pod takes nothing; a pod in a quota that limits
 * requests or limits of CPU or memory must state them; a pod that would take a quota past a hard limit is refused,
 * naming what it asked, what was used and the limit.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const QUOTA_GROUP = 'quota.kapi.io';
export const QUOTA_VERSION = 'v1alpha2';
export const QUOTAS_PATH = `/apis/${QUOTA_GROUP}/${QUOTA_VERSION}/resourcequotas`;

/**
 * The resources a workspace quota limits: those of pods, the only kind its webhook is asked about (as KubeSphere's).
 * The console's form offers the four compute amounts; `cpu` and `memory` are kube's aliases of the requests.
 */
export const QUOTA_RESOURCES = [
  'limits.cpu',
  'limits.memory',
  'requests.cpu',
  'requests.memory',
  'cpu',
  'memory',
  'pods',
  'count/pods',
] as const;
export type QuotaResource = (typeof QUOTA_RESOURCES)[number];

const CPU = new Set<string>(['limits.cpu', 'requests.cpu', 'cpu']);

/** Amounts in whole units: millicores for CPU, bytes for memory, pods for counts. */
export type Amounts = Partial<Record<QuotaResource, number>>;

export function isQuotaResource(name: string): name is QuotaResource {
  return (QUOTA_RESOURCES as readonly string[]).includes(name);
}

/** A quantity of `resource` in its whole unit (millicores, bytes, pods); undefined for text that is no quantity. */
export function amountOf(resource: QuotaResource, text: unknown): number | undefined {
  if (typeof text !== 'string' && typeof text !== 'number') return undefined;
  const value = String(text);
  const exact = exactQuantity(value);
  if (!exact || exact.mantissa < 0n) return undefined;
  const parsed = parseQuantity(value);
  return CPU.has(resource) ? Math.ceil(Math.round(parsed * 1e6) / 1e3) : Math.ceil(parsed);
}

/** An amount as a quantity kube-apiserver would print: "1500m", "2", "512Mi", "3". */
export function formatAmount(resource: QuotaResource, amount: number): string {
  if (CPU.has(resource)) return formatMilliQuantity(amount);
  if (resource === 'pods' || resource === 'count/pods') return String(amount);
  return formatByteQuantity(amount, 'BinarySI');
}

/** A resource list (`hard`, `used`) read into amounts: only the quota's resources, only valid quantities. */
export function amountsOf(list: unknown): Amounts {
  const amounts: Amounts = {};
  if (!list || typeof list !== 'object') return amounts;
  for (const [name, text] of Object.entries(list as Record<string, unknown>)) {
    if (!isQuotaResource(name)) continue;
    const amount = amountOf(name, text);
    if (amount !== undefined) amounts[name] = amount;
  }
  return amounts;
}

/** Amounts written as a resource list, for the resources of `hard` (kube tracks use only of what is limited). */
export function resourceList(amounts: Amounts, hard: Amounts): Record<string, string> {
  const list: Record<string, string> = {};
  for (const name of QUOTA_RESOURCES) if (hard[name] !== undefined) list[name] = formatAmount(name, amounts[name] ?? 0);
  return list;
}

/**
 * What one pod takes of each quota resource, as kube's evaluators count: a finished pod takes nothing but its place in
 * `count/pods` (the object count counts every pod; `pods` only those not finished).
 */
export function podUsage(pod: V1Pod): Amounts {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { 'count/pods': 1 };
  const allocation = podAllocation(pod);
  return usageOf(allocation);
}

/**
 * Whether every CPU and memory amount the pod states is a quantity of at least zero. kube-apiserver validates a pod
 * before any webhook sees it, so only a review that did not come from it holds another: it is refused, never summed
 * (a negative request would lower a quota's use).
 */
export function podAmountsValid(pod: V1Pod): boolean {
  const spec = pod.spec;
  const lists: unknown[] = [spec?.resources?.requests, spec?.resources?.limits, spec?.overhead];
  for (const container of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])])
    lists.push(container.resources?.requests, container.resources?.limits);
  for (const list of lists) {
    if (list === undefined || list === null) continue;
    if (typeof list !== 'object') return false;
    for (const name of ['cpu', 'memory']) {
      const value = (list as Record<string, unknown>)[name];
      if (value === undefined) continue;
      if (typeof value !== 'string' && typeof value !== 'number') return false;
      const exact = exactQuantity(String(value));
      if (!exact || exact.mantissa < 0n) return false;
    }
  }
  return true;
}

/** The usage of a pod from its four amounts (the pod cache keeps these). */
export function usageOf(amounts: {
  cpuRequestsMilli: number;
  cpuLimitsMilli: number;
  memoryRequestsBytes: number;
  memoryLimitsBytes: number;
}): Amounts {
  const cpuRequests = Math.max(0, amounts.cpuRequestsMilli);
  const memoryRequests = Math.max(0, amounts.memoryRequestsBytes);
  return {
    pods: 1,
    'count/pods': 1,
    'requests.cpu': cpuRequests,
    cpu: cpuRequests,
    'requests.memory': memoryRequests,
    memory: memoryRequests,
    'limits.cpu': Math.max(0, amounts.cpuLimitsMilli),
    'limits.memory': Math.max(0, amounts.memoryLimitsBytes),
  };
}

export function addAmounts(into: Amounts, more: Amounts): Amounts {
  for (const name of QUOTA_RESOURCES) {
    const amount = more[name];
    if (amount !== undefined) into[name] = (into[name] ?? 0) + amount;
  }
  return into;
}

/** A workspace quota as admission and the controller read it (pure). */
export interface WorkspaceQuota {
  name: string;
  /** The namespace labels it selects on (`spec.selector`); empty selects nothing. */
  selector: Record<string, string>;
  hard: Amounts;
  /** `status.total.used` as charged so far; undefined when it was never counted. */
  used: Amounts | undefined;
}

export function workspaceQuotaOf(raw: Raw): WorkspaceQuota | undefined {
  const name = raw?.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const selector: Record<string, string> = {};
  const rawSelector = raw?.spec?.selector;
  if (rawSelector && typeof rawSelector === 'object') {
    for (const [key, value] of Object.entries(rawSelector)) if (typeof value === 'string') selector[key] = value;
  }
  const used = raw?.status?.total?.used;
  return {
    name,
    selector,
    hard: amountsOf(raw?.spec?.quota?.hard),
    used: used && typeof used === 'object' ? amountsOf(used) : undefined,
  };
}

/**
 * Whether a quota covers a namespace with these labels. An empty selector covers nothing: a quota is a workspace's,
 * and one that named no workspace would otherwise stop every pod of the cluster.
 */
export function selects(quota: Pick<WorkspaceQuota, 'selector'>, labels: Record<string, string> | undefined): boolean {
  const entries = Object.entries(quota.selector);
  return entries.length > 0 && entries.every(([key, value]) => labels?.[key] === value);
}

const REQUIRED: readonly [QuotaResource, 'requests' | 'limits', 'cpu' | 'memory'][] = [
  ['requests.cpu', 'requests', 'cpu'],
  ['cpu', 'requests', 'cpu'],
  ['requests.memory', 'requests', 'memory'],
  ['memory', 'requests', 'memory'],
  ['limits.cpu', 'limits', 'cpu'],
  ['limits.memory', 'limits', 'memory'],
];

/**
 * kube's "must specify": each compute resource the quota limits, that a container of the pod (init containers too)
 * does not state: `limits.cpu for: app,sidecar; requests.memory for: app`. Empty when the pod states all.
 */
export function missingAmounts(pod: V1Pod, hard: Amounts): string[] {
  const containers: V1Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const missing = new Map<string, string[]>();
  for (const [resource, kind, amount] of REQUIRED) {
    if (hard[resource] === undefined) continue;
    for (const container of containers) {
      const list = container.resources?.[kind] as Record<string, unknown> | undefined;
      if (list?.[amount] !== undefined) continue;
      // named as the quota names it (`cpu` or `requests.cpu`), as kube does
      const names = missing.get(resource) ?? [];
      if (!names.includes(container.name)) names.push(container.name);
      missing.set(resource, names);
    }
  }
  return [...missing.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([resource, names]) => `${resource} for: ${[...names].sort().join(',')}`);
}

export type QuotaDecision =
  { allowed: true; used: Amounts } | { allowed: false; message: string; reason: 'missing' | 'exceeded' };

/**
 * Admitting one pod against one quota (pure): the quota's use after it, or kube's refusal. `used` is what the quota
 * has charged so far (each of its resources; absent counts as zero).
 */
export function admitPod(quota: WorkspaceQuota, used: Amounts, pod: V1Pod, oldPod?: V1Pod): QuotaDecision {
  // a resize charges what the pod takes more than before (a smaller one charges nothing: the recount gives it back)
  const requested = oldPod ? growth(podUsage(pod), podUsage(oldPod)) : podUsage(pod);
  const missing = oldPod ? [] : missingAmounts(pod, quota.hard);
  if (missing.length > 0) {
    return {
      allowed: false,
      reason: 'missing',
      message: `failed quota: ${quota.name}: must specify ${missing.join('; ')}`,
    };
  }
  const after: Amounts = { ...used };
  const exceeded: QuotaResource[] = [];
  for (const name of QUOTA_RESOURCES) {
    const hard = quota.hard[name];
    if (hard === undefined) continue;
    const total = (used[name] ?? 0) + (requested[name] ?? 0);
    after[name] = total;
    // as kube: a quota already past a limit (lowered since) refuses every new pod
    if (total > hard) exceeded.push(name);
  }
  if (exceeded.length > 0) {
    const sorted = [...exceeded].sort();
    const print = (amounts: Amounts) =>
      sorted.map((name) => `${name}=${formatAmount(name, amounts[name] ?? 0)}`).join(',');
    return {
      allowed: false,
      reason: 'exceeded',
      message:
        `exceeded quota: ${quota.name}, requested: ${print(requested)}, used: ${print(used)}, ` +
        `limited: ${print(quota.hard)}`,
    };
  }
  return { allowed: true, used: after };
}

/** What `after` takes more than `before`, per resource (never less than nothing). */
export function growth(after: Amounts, before: Amounts): Amounts {
  const more: Amounts = {};
  for (const name of QUOTA_RESOURCES) {
    const delta = (after[name] ?? 0) - (before[name] ?? 0);
    if (delta > 0) more[name] = delta;
  }
  return more;
}

/** Whether two usages are the same over the quota's resources. */
export function sameUsage(a: Amounts | undefined, b: Amounts, hard: Amounts): boolean {
  if (!a) return false;
  return QUOTA_RESOURCES.every((name) => hard[name] === undefined || (a[name] ?? 0) === (b[name] ?? 0));
}

/** One namespace's use, in the quota's status. */
export interface NamespaceUsage {
  namespace: string;
  used: Amounts;
}

/**
 * The quota's status, KubeSphere's shape: `total` (hard, used) and, per namespace it selects, that namespace's use
 * (its `hard` is the quota's, as KubeSphere writes it), in namespace order.
 */
export function quotaStatus(raw: Raw, total: Amounts, namespaces: readonly NamespaceUsage[]): Raw {
  const hardList = raw?.spec?.quota?.hard ?? {};
  const hard = amountsOf(hardList);
  const limited: Record<string, string> = {};
  for (const name of QUOTA_RESOURCES) if (hard[name] !== undefined) limited[name] = String(hardList[name]);
  return {
    total: { hard: limited, used: resourceList(total, hard) },
    namespaces: [...namespaces]
      .sort((a, b) => a.namespace.localeCompare(b.namespace))
      .map((entry) => ({ namespace: entry.namespace, hard: limited, used: resourceList(entry.used, hard) })),
  };
}

/**
 * What a quota written through kapi may say (pure): `spec.quota.hard` of the quota's resources, each a quantity of at
 * least zero; no scopes (kube's scopes select by priority class and the like, which the webhook does not read).
 * Returns the reasons it may not, empty when it may.
 */
export function quotaSpecProblems(spec: Raw): string[] {
  const problems: string[] = [];
  const quota = spec?.quota;
  if (!quota || typeof quota !== 'object') return ['spec.quota.hard: Required value'];
  if (quota.scopes !== undefined || quota.scopeSelector !== undefined) {
    problems.push('spec.quota.scopes: Forbidden: kapi’s workspace quotas have no scopes');
  }
  const hard = quota.hard;
  if (!hard || typeof hard !== 'object' || Array.isArray(hard)) return [...problems, 'spec.quota.hard: Required value'];
  for (const [name, value] of Object.entries(hard)) {
    if (!isQuotaResource(name)) {
      problems.push(
        `spec.quota.hard[${name}]: Unsupported value: a workspace quota limits ${QUOTA_RESOURCES.join(', ')}`,
      );
    } else if (amountOf(name, value) === undefined) {
      problems.push(
        `spec.quota.hard[${name}]: Invalid value: ${JSON.stringify(value)}: must be a quantity of at least 0`,
      );
    }
  }
  return problems;
}
