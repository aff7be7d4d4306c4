import type { V1Pod } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';
import {
  QUOTAS_PATH,
  addAmounts,
  admitPod,
  amountsOf,
  growth,
  podAmountsValid,
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
  /** The quotas (raw objects): the watched ones, or kube-apiserver's list while the watch has not read them yet. */
  quotas(): Promise<readonly Raw[]>;
  /** The labels a quota's selector is matched against; undefined when the namespace does not exist. */
  namespaceLabels(namespace: string): Promise<Record<string, string> | undefined>;
  /** Each covered namespace's use, counted from the watched pods: for a quota never charged yet. */
  usage(quota: WorkspaceQuota): { total: Amounts; namespaces: NamespaceUsage[] };
}

/** An AdmissionReview's answer: allowed, or refused with kube's code and message. */
export type AdmissionAnswer = { allowed: true } | { allowed: false; code: number; reason: string; message: string };

/** The creation (or resize) being admitted. */
export interface PodAdmission {
  pod: V1Pod;
  /** The pod before a resize; absent for a creation. */
  oldPod?: V1Pod;
  namespace: string;
  dryRun: boolean;
}

/** Attempts at charging a quota another writer changed meanwhile (another replica's admission, the controller). */
const CHARGE_ATTEMPTS = 5;
/** A whole admission, queueing included: under kube-apiserver's 10 s webhook timeout, so a late charge never lands. */
const DEADLINE_MS = 8_000;
/** Pods waiting for one quota on this replica; beyond, refused at once (a burst past this is retried by controllers). */
const MAX_QUEUED = 256;

class Late extends Error {}

const busy = (message: string): AdmissionAnswer => ({
  allowed: false,
  code: 503,
  reason: 'ServiceUnavailable',
  message,
});

/**
 * Pod admission against the workspace quotas of its namespace, as kube-apiserver's ResourceQuota admission does for
 * namespaced quotas: every quota covering the namespace is read afresh and checked first (one refusing charges none);
 * then each is charged — `status.total.used` and the namespace's entry, with the time — by an update conditioned on
 * its resourceVersion, so two replicas admitting at once cannot both take the last of a limit (a conflict is read and
 * checked again, and a quota refusing then gives back the charges already made). A refusal names the quota, what the
 * pod asked, what was used and the limit. What pods that never ran were charged, kapi's controller gives back when it
 * recounts. Each admission ends within 8 s, or is refused.
 */
export class WorkspaceQuotaAdmission {
  /** One charge at a time per quota on this replica: concurrent pods queue instead of conflicting. */
  private readonly queues = new Map<string, { tail: Promise<unknown>; waiting: number }>();

  constructor(
    private readonly client: KubeClient,
    private readonly sources: QuotaAdmissionSources,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  async admit(admission: PodAdmission): Promise<AdmissionAnswer> {
    const { pod, oldPod, namespace } = admission;
    if (!podAmountsValid(pod) || (oldPod && !podAmountsValid(oldPod)))
      return {
        allowed: false,
        code: 400,
        reason: 'BadRequest',
        message: 'the pod’s CPU and memory are not quantities',
      };
    const deadline = this.clock() + DEADLINE_MS;
    const labels = await this.sources.namespaceLabels(namespace);
    if (!labels) return { allowed: true };
    const names = (await this.sources.quotas())
      .map(workspaceQuotaOf)
      .filter((quota): quota is WorkspaceQuota => !!quota && selects(quota, labels))
      .map((quota) => quota.name)
      .sort();
    if (names.length === 0) return { allowed: true };
    try {
      // every quota first: one that refuses charges none
      for (const name of names) {
        const answer = await this.check(name, admission, labels, deadline);
        if (!answer.allowed) return answer;
      }
      if (admission.dryRun) return { allowed: true };
      const charged: string[] = [];
      for (const name of names) {
        const answer = await this.serially(name, deadline, () => this.charge(name, admission, labels, deadline, 1));
        if (!answer.allowed) {
          for (const done of charged)
            await this.serially(done, deadline, () => this.charge(done, admission, labels, deadline, -1)).catch(
              (error: unknown) =>
                this.logger.warn('a charge could not be given back', { quota: done, error: String(error) }),
            );
          return answer;
        }
        charged.push(name);
      }
      return { allowed: true };
    } catch (err) {
      if (err instanceof Late) return busy('the workspace quota is busy; try again');
      throw err;
    }
  }

  /** The quota as kube-apiserver holds it now; undefined when it is gone. */
  private async read(name: string, deadline: number): Promise<Raw | undefined> {
    try {
      return await this.client.request<Raw>({
        path: `${QUOTAS_PATH}/${encodeURIComponent(name)}`,
        timeoutMs: this.remaining(deadline),
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  private remaining(deadline: number): number {
    const left = deadline - this.clock();
    if (left <= 0) throw new Late();
    return left;
  }

  private async check(
    name: string,
    admission: PodAdmission,
    labels: Record<string, string>,
    deadline: number,
  ): Promise<AdmissionAnswer> {
    const raw = await this.read(name, deadline);
    const quota = raw && workspaceQuotaOf(raw);
    if (!quota || !selects(quota, labels)) return { allowed: true };
    const used = quota.used ?? this.sources.usage(quota).total;
    const decision = admitPod(quota, used, admission.pod, admission.oldPod);
    return decision.allowed ? { allowed: true } : refusal(decision.message);
  }

  private serially<T>(name: string, deadline: number, work: () => Promise<T>): Promise<T> {
    const queue = this.queues.get(name) ?? { tail: Promise.resolve(), waiting: 0 };
    if (queue.waiting >= MAX_QUEUED) return Promise.reject(new Late());
    queue.waiting++;
    this.queues.set(name, queue);
    const run = queue.tail.then(() => {
      this.remaining(deadline);
      return work();
    });
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    queue.tail = settled;
    void settled.then(() => {
      queue.waiting--;
      if (queue.waiting === 0 && this.queues.get(name) === queue) this.queues.delete(name);
    });
    return run;
  }

  /** Charges the pod's use to the quota (`sign` -1: gives it back), checking it again when charging. */
  private async charge(
    name: string,
    admission: PodAdmission,
    labels: Record<string, string>,
    deadline: number,
    sign: 1 | -1,
  ): Promise<AdmissionAnswer> {
    const { pod, oldPod, namespace } = admission;
    const usage = oldPod ? growth(podUsage(pod), podUsage(oldPod)) : podUsage(pod);
    for (let attempt = 1; ; attempt++) {
      const raw = await this.read(name, deadline);
      const quota = raw && workspaceQuotaOf(raw);
      if (!quota || !selects(quota, labels)) return { allowed: true };
      const counted = quota.used === undefined ? this.sources.usage(quota) : undefined;
      const used = quota.used ?? counted?.total ?? {};
      let total: Amounts;
      if (sign === 1) {
        const decision = admitPod(quota, used, pod, oldPod);
        if (!decision.allowed) return refusal(decision.message);
        total = decision.used;
      } else {
        total = subtract(used, usage);
      }
      const namespaces = namespaceUsages(raw, counted?.namespaces);
      const own = namespaces.find((entry) => entry.namespace === namespace)?.used ?? {};
      const next = [
        ...namespaces.filter((entry) => entry.namespace !== namespace),
        { namespace, used: sign === 1 ? addAmounts({ ...own }, usage) : subtract(own, usage) },
      ];
      const status = { ...quotaStatus(raw, total, next), chargedAt: new Date(this.clock()).toISOString() };
      try {
        await this.client.request({
          method: 'PUT',
          path: `${QUOTAS_PATH}/${encodeURIComponent(name)}/status`,
          body: { ...raw, status },
          timeoutMs: this.remaining(deadline),
        });
        return { allowed: true };
      } catch (err) {
        // deleted meanwhile: no quota to hold the pod to
        if (err instanceof KubeApiError && err.code === 404) return { allowed: true };
        if (!(err instanceof KubeApiError) || err.code !== 409 || attempt >= CHARGE_ATTEMPTS) throw err;
        this.logger.debug('a workspace quota changed while charging a pod; reading it again', { quota: name, attempt });
      }
    }
  }
}

function refusal(message: string): AdmissionAnswer {
  return { allowed: false, code: 403, reason: 'Forbidden', message };
}

function subtract(from: Amounts, amount: Amounts): Amounts {
  const left: Amounts = { ...from };
  for (const [name, value] of Object.entries(amount) as [keyof Amounts, number][])
    left[name] = Math.max(0, (left[name] ?? 0) - value);
  return left;
}

/** The namespaces' use as the quota's status says, or as counted when it was never charged. */
function namespaceUsages(raw: Raw, counted: NamespaceUsage[] | undefined): NamespaceUsage[] {
  if (counted) return counted;
  const entries: Raw[] = Array.isArray(raw?.status?.namespaces) ? raw.status.namespaces : [];
  return entries
    .filter((entry) => typeof entry?.namespace === 'string')
    .map((entry) => ({ namespace: entry.namespace, used: amountsOf(entry.used) }));
}
