/**
 * KubeSphere 3.4's resource usage of a project and of the cluster (`resources.kapi.io/v1alpha2` `quotas` and
 * `abnormalworkloads`, pure): what a project's overview draws its counts and warnings from. The counts come from
 * kapi's watched caches; a project's ResourceQuotas, when it has some, give its limits and their own counts.
 */
import { exactQuantity, parseQuantity, quantityFormat } from '../../../kube/quantity.js';
import { canonicalQuantity } from '../../../kube/quantity-format.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;
type ResourceList = Record<string, string>;

/** The object counts KubeSphere adds to a project's quota usage, each under its quota key, by the listed resource. */
export const COUNTED_RESOURCES: readonly (readonly [key: string, resource: string])[] = [
  ['count/pods', 'pods'],
  ['count/deployments.apps', 'deployments'],
  ['count/statefulsets.apps', 'statefulsets'],
  ['count/daemonsets.apps', 'daemonsets'],
  ['count/jobs.batch', 'jobs'],
  ['count/cronjobs.batch', 'cronjobs'],
  ['count/services', 'services'],
  ['count/ingresses.extensions', 'ingresses'],
  ['persistentvolumeclaims', 'persistentvolumeclaims'],
];

/**
 * The kinds whose objects an overview warns of, each with the statuses (values of the listing's `status` filter) that
 * count as abnormal: workloads still updating, failed jobs, claims pending or lost. The listing's own statuses, so a
 * warning's count is what the kind's list shows when filtered by them.
 */
export const ABNORMAL_STATUSES: readonly (readonly [resource: string, statuses: readonly string[]])[] = [
  ['deployments', ['updating']],
  ['statefulsets', ['updating']],
  ['daemonsets', ['updating']],
  ['jobs', ['failed']],
  ['persistentvolumeclaims', ['pending', 'lost']],
];

export interface ResourceUsage {
  namespace: string;
  data: { hard?: ResourceList; used: ResourceList; left?: ResourceList };
}

export interface AbnormalWorkloads {
  namespace: string;
  data: Record<string, number>;
}

const quantities = (list: unknown): [string, string][] =>
  list && typeof list === 'object'
    ? Object.entries(list as Record<string, unknown>).flatMap(([key, value]) =>
        typeof value === 'string' || typeof value === 'number' ? [[key, String(value)] as [string, string]] : [],
      )
    : [];

/** Per resource, the smallest of the lists' quantities (KubeSphere's merge of a namespace's quotas). */
function smallest(lists: readonly unknown[]): ResourceList {
  const merged: ResourceList = {};
  for (const list of lists)
    for (const [key, value] of quantities(list)) {
      const before = merged[key];
      if (before === undefined || parseQuantity(value) < parseQuantity(before)) merged[key] = value;
    }
  return merged;
}

/** hard − used in hard's format, never below zero (Quantity.Sub, as KubeSphere does it), computed exactly. */
function remaining(hard: string, used: string): string {
  const limit = exactQuantity(hard);
  const use = exactQuantity(used);
  if (!limit || !use) return '0';
  const exponent = Math.min(limit.exponent, use.exponent);
  const scaled = (q: { mantissa: bigint; exponent: number }) => q.mantissa * 10n ** BigInt(q.exponent - exponent);
  const left = scaled(limit) - scaled(use);
  return left <= 0n ? '0' : canonicalQuantity(left, exponent, quantityFormat(hard));
}

/**
 * A project's usage as KubeSphere answers it: its ResourceQuotas' `status.hard` and `status.used` merged (the smallest
 * of each), what is left of each limit, and the object counts for every counted key the quotas do not count
 * themselves. A project without quotas has only `used`.
 */
export function namespaceUsage(
  namespace: string,
  quotas: readonly Raw[],
  counts: ReadonlyMap<string, number>,
): ResourceUsage {
  const hard = smallest(quotas.map((quota) => quota?.status?.hard));
  const used = smallest(quotas.map((quota) => quota?.status?.used));
  const left: ResourceList = {};
  for (const [key, limit] of Object.entries(hard)) {
    const usedOfIt = used[key];
    if (usedOfIt !== undefined) left[key] = remaining(limit, usedOfIt);
  }
  for (const [key] of COUNTED_RESOURCES) if (used[key] === undefined) used[key] = String(counts.get(key) ?? 0);
  const data: ResourceUsage['data'] = { used };
  if (Object.keys(hard).length > 0) data.hard = hard;
  if (Object.keys(left).length > 0) data.left = left;
  return { namespace, data };
}

/** The cluster's usage: the object counts alone (KubeSphere's cluster quota has no limits). */
export function clusterUsage(counts: ReadonlyMap<string, number>): ResourceUsage {
  const used: ResourceList = {};
  for (const [key] of COUNTED_RESOURCES) used[key] = String(counts.get(key) ?? 0);
  return { namespace: '', data: { used } };
}

/** The abnormal objects' counts by resource, in one namespace or (namespace '') the whole cluster. */
export function abnormalWorkloads(namespace: string, counts: ReadonlyMap<string, number>): AbnormalWorkloads {
  const data: Record<string, number> = {};
  for (const [resource] of ABNORMAL_STATUSES) data[resource] = counts.get(resource) ?? 0;
  return { namespace, data };
}
