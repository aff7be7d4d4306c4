import type { V1Pod } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';
import {
  QUOTAS_PATH,
  addAmounts,
  admitPod,
  amountsOf,
  podUsage,
  quotaStatus,
  selects,
  workspaceQuotaOf,
  type Amounts,
  type NamespaceUsage,
  type WorkspaceQuota,
} from './quota.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** What admission reads: the quotas kapi watches, a namespace's labels, and the pods' use per namespace. */
export interface QuotaAdmissionSources {
  /** The watched quotas (raw objects); a quota is read afresh before it is charged. */
  quotas(): readonly Raw[];
  /** The namespace's labels; undefined when it does not exist. */
  namespaceLabels(namespace: string): Promise<Record<string, string> | undefined>;
  /** Each covered namespace's use, counted from the watched pods: for a quota never charged yet. */
  usage(quota: WorkspaceQuota): { total: Amounts; namespaces: NamespaceUsage[] };
}

/** An AdmissionReview's answer. */
export interface AdmissionAnswer {
  allowed: boolean;
  message?: string;
}

/** Attempts at charging a quota another writer changed meanwhile (another replica's admission, the controller). */
const CHARGE_ATTEMPTS = 5;

/**
 * Pod admission against the workspace quotas of its namespace, as kube-apiserver's ResourceQuota admission does for
 * namespaced quotas: each quota covering the namespace is read afresh, the pod checked against it, and its use
 * charged to `status.total.used` (and the namespace's entry) by an update conditioned on the quota's resourceVersion,
 * so two replicas admitting at once cannot both take the last of a limit; a conflict is read and checked again. A
 * refusal names the quota, what the pod asked, what was used and the limit. Charges of pods that then never ran (a
 * later admission refused them) are given back when kapi's controller recounts.
 */
export class WorkspaceQuotaAdmission {
  /** One charge at a time per quota on this replica: concurrent pods queue instead of conflicting. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly client: KubeClient,
    private readonly sources: QuotaAdmissionSources,
    private readonly logger: Logger,
  ) {}

  async admit(pod: V1Pod, namespace: string, dryRun: boolean): Promise<AdmissionAnswer> {
    const labels = await this.sources.namespaceLabels(namespace);
    if (!labels) return { allowed: true };
    const names = this.sources
      .quotas()
      .map(workspaceQuotaOf)
      .filter((quota): quota is WorkspaceQuota => !!quota && selects(quota, labels))
      .map((quota) => quota.name)
      .sort();
    for (const name of names) {
      const answer = await this.serially(name, () => this.charge(name, pod, namespace, labels, dryRun));
      if (!answer.allowed) return answer;
    }
    return { allowed: true };
  }

  private serially<T>(name: string, work: () => Promise<T>): Promise<T> {
    const before = this.queues.get(name) ?? Promise.resolve();
    const run = before.then(work, work);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(name, settled);
    void settled.then(() => {
      if (this.queues.get(name) === settled) this.queues.delete(name);
    });
    return run;
  }

  private async charge(
    name: string,
    pod: V1Pod,
    namespace: string,
    labels: Record<string, string>,
    dryRun: boolean,
  ): Promise<AdmissionAnswer> {
    for (let attempt = 1; ; attempt++) {
      let raw: Raw;
      try {
        raw = await this.client.request<Raw>({ path: `${QUOTAS_PATH}/${encodeURIComponent(name)}`, timeoutMs: 5_000 });
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 404) return { allowed: true };
        throw err;
      }
      const quota = workspaceQuotaOf(raw);
      // changed since the watch saw it: no longer this namespace's
      if (!quota || !selects(quota, labels)) return { allowed: true };
      const counted = quota.used === undefined ? this.sources.usage(quota) : undefined;
      const used = quota.used ?? counted?.total ?? {};
      const decision = admitPod(quota, used, pod);
      if (!decision.allowed) return { allowed: false, message: decision.message };
      if (dryRun) return { allowed: true };
      const namespaces = namespaceUsages(raw, counted?.namespaces);
      const own = namespaces.find((entry) => entry.namespace === namespace);
      const nextNamespaces = [
        ...namespaces.filter((entry) => entry.namespace !== namespace),
        { namespace, used: addAmounts({ ...own?.used }, podUsage(pod)) },
      ];
      const status = quotaStatus(raw, decision.used, nextNamespaces);
      try {
        await this.client.request({
          method: 'PUT',
          path: `${QUOTAS_PATH}/${encodeURIComponent(name)}/status`,
          body: { ...raw, status },
          timeoutMs: 5_000,
        });
        return { allowed: true };
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.code !== 409 || attempt >= CHARGE_ATTEMPTS) throw err;
        this.logger.debug('a workspace quota changed while charging a pod; reading it again', { quota: name, attempt });
      }
    }
  }
}

/** The namespaces' use as the quota's status says, or as counted when it was never charged. */
function namespaceUsages(raw: Raw, counted: NamespaceUsage[] | undefined): NamespaceUsage[] {
  if (counted) return counted;
  const entries: Raw[] = Array.isArray(raw?.status?.namespaces) ? raw.status.namespaces : [];
  return entries
    .filter((entry) => typeof entry?.namespace === 'string')
    .map((entry) => ({ namespace: entry.namespace, used: amountsOf(entry.used) }));
}
