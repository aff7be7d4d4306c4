import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import { WORKSPACE_LABEL } from '../../kube/namespace-cache.js';
import type { Logger } from '../../observability/logger.js';
import {
  QUOTAS_PATH,
  addAmounts,
  amountsOf,
  quotaStatus,
  selects,
  usageOf,
  workspaceQuotaOf,
  type Amounts,
  type NamespaceUsage,
  type WorkspaceQuota,
} from '../../workspace-quota/quota.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** A pod as the count needs it: its namespace, whether it finished, its four amounts (the pod cache's record). */
export interface CountedPod {
  namespace: string;
  finished: boolean;
  cpuRequestsMilli: number;
  cpuLimitsMilli: number;
  memoryRequestsBytes: number;
  memoryLimitsBytes: number;
}

/** A namespace as the count needs it: a quota selects on the workspace label only, the one kapi's caches keep. */
export interface CountedNamespace {
  name: string;
  workspace?: string | undefined;
}

/** The labels a quota's selector is matched against. */
export const selectedLabels = (namespace: { workspace?: string | undefined }): Record<string, string> =>
  namespace.workspace ? { [WORKSPACE_LABEL]: namespace.workspace } : {};

const FINISHED: Amounts = Object.freeze({ 'count/pods': 1 });

/** Each namespace's pods' use (pure): one pass over the pods for every quota of a recount. */
export function usageByNamespace(pods: Iterable<CountedPod>): Map<string, Amounts> {
  const byNamespace = new Map<string, Amounts>();
  for (const pod of pods) {
    let used = byNamespace.get(pod.namespace);
    if (!used) byNamespace.set(pod.namespace, (used = {}));
    // a finished pod keeps its place in count/pods (kube's object count) and takes nothing else
    addAmounts(used, pod.finished ? FINISHED : usageOf(pod));
  }
  return byNamespace;
}

/**
 * A quota's use counted from the pods (pure): per namespace it covers (every one, a namespace without pods at zero)
 * and in total. Finished pods take nothing.
 */
export function countUsage(
  quota: Pick<WorkspaceQuota, 'selector'>,
  namespaces: Iterable<CountedNamespace>,
  pods: Iterable<CountedPod> | Map<string, Amounts>,
): { total: Amounts; namespaces: NamespaceUsage[] } {
  const byNamespace = pods instanceof Map ? pods : usageByNamespace(pods);
  const total: Amounts = {};
  const covered: NamespaceUsage[] = [];
  for (const namespace of namespaces) {
    if (!selects(quota, selectedLabels(namespace))) continue;
    const used = { ...byNamespace.get(namespace.name) };
    addAmounts(total, used);
    covered.push({ namespace: namespace.name, used });
  }
  return { total, namespaces: covered };
}

/**
 * Whether a recount may write its use over the stored one (pure): not when it would lower a use kapi's webhook charged
 * a moment ago, for the pod charged may not be in kapi's watch of pods yet (counting it out would let the next pod
 * past the limit); that recount waits.
 */
export function mayWrite(stored: Raw, wanted: Amounts, hard: Amounts, now: number, settleMs: number): boolean {
  const chargedAt = Date.parse(String(stored?.chargedAt ?? ''));
  if (Number.isNaN(chargedAt) || now - chargedAt >= settleMs) return true;
  const used = amountsOf(stored?.total?.used);
  return (Object.keys(hard) as (keyof Amounts)[]).every((name) => (wanted[name] ?? 0) >= (used[name] ?? 0));
}

/** Whether a stored status says what a recount says (pure): the same lists (the time of the last charge aside). */
export function sameStatus(stored: Raw, wanted: Raw): boolean {
  const { chargedAt: _stored, ...storedLists } = stored ?? {};
  const { chargedAt: _wanted, ...wantedLists } = wanted ?? {};
  return canonical(storedLists) === canonical(wantedLists);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

/** What the controller reads of a watched cache (a Reflector). */
export interface WatchedSource<T> {
  readonly synced: boolean;
  list(): readonly T[];
  get(key: string): T | undefined;
  on(event: 'added' | 'modified' | 'deleted', handler: (obj: T, old: T | undefined) => void): () => void;
  on(event: 'synced', handler: () => void): () => void;
}

export interface WorkspaceQuotaControllerOptions {
  client: KubeClient;
  logger: Logger;
  quotas: WatchedSource<Raw>;
  namespaces: WatchedSource<CountedNamespace>;
  pods: WatchedSource<CountedPod>;
  /** Between full recounts (pods made around the webhook, charges of pods that never ran). */
  resyncMs?: number;
  /** How long changes gather before a recount. */
  settleMs?: number;
  /** How long a use just charged is not lowered by a recount (the pod reaching kapi's watch). */
  chargeSettleMs?: number;
  clock?: () => number;
}

/**
 * The workspace quotas' use kept true (on the leader): each quota's `status` recounted from the watched pods of the
 * namespaces it covers. Admission charges a pod before kube-apiserver stores it; this gives back what pods that are
 * gone, finished, or never stored held, and counts pods made before the quota or around its webhook. As kube's own
 * quota controller, it recounts when a pod goes or finishes, a quota or a namespace's labels change, and on a resync
 * (every minute), not on each new pod: a pod just charged and not yet watched would be counted out.
 */
export class WorkspaceQuotaController {
  private readonly unsubscribe: (() => void)[] = [];
  private dirty = new Set<string>();
  private everything = false;
  private timer: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: WorkspaceQuotaControllerOptions) {}

  start(): void {
    const { quotas, namespaces, pods } = this.options;
    const all = () => this.mark();
    this.unsubscribe.push(
      quotas.on('added', (quota: Raw) => this.mark(quota?.metadata?.name)),
      quotas.on('modified', (quota: Raw, old: Raw) => {
        // its own status writes come back as changes: only a changed spec asks for a recount
        if (canonical(quota?.spec) !== canonical(old?.spec)) this.mark(quota?.metadata?.name);
      }),
      quotas.on('synced', all),
      namespaces.on('modified', (ns: CountedNamespace, old: CountedNamespace | undefined) => {
        if (ns.workspace !== old?.workspace) all();
      }),
      namespaces.on('added', all),
      namespaces.on('deleted', all),
      pods.on('deleted', (pod: CountedPod) => this.markNamespace(pod.namespace)),
      pods.on('modified', (pod: CountedPod, old: CountedPod | undefined) => {
        if (pod.finished && !old?.finished) this.markNamespace(pod.namespace);
      }),
    );
    this.resync = setInterval(all, this.options.resyncMs ?? 60_000);
    this.resync.unref();
    all();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const off of this.unsubscribe.splice(0)) off();
    if (this.timer) clearTimeout(this.timer);
    if (this.resync) clearInterval(this.resync);
    await this.running;
  }

  /** The quotas covering a namespace whose pod went or finished. */
  private markNamespace(namespace: string): void {
    const labels = selectedLabels(this.options.namespaces.get(namespace) ?? {});
    if (Object.keys(labels).length === 0) return;
    for (const raw of this.options.quotas.list()) {
      const quota = workspaceQuotaOf(raw);
      if (quota && selects(quota, labels)) this.mark(quota.name);
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.running
        .then(() => this.recount())
        .catch((error: unknown) =>
          this.options.logger.warn('the workspace quotas could not be recounted', { error: describeError(error) }),
        );
    }, delayMs);
    this.timer.unref();
  }

  private mark(name?: string): void {
    if (this.stopped) return;
    if (typeof name === 'string') this.dirty.add(name);
    else this.everything = true;
    this.schedule(this.options.settleMs ?? 500);
  }

  private async recount(): Promise<void> {
    const { quotas, namespaces, pods, client, logger } = this.options;
    if (this.stopped || !quotas.synced || !namespaces.synced || !pods.synced) {
      if (!this.stopped) this.retryLater();
      return;
    }
    const names = this.everything ? undefined : new Set(this.dirty);
    this.everything = false;
    this.dirty.clear();
    const byNamespace = usageByNamespace(pods.list());
    const now = (this.options.clock ?? Date.now)();
    for (const raw of quotas.list()) {
      const quota = workspaceQuotaOf(raw);
      if (!quota || (names && !names.has(quota.name))) continue;
      const counted = countUsage(quota, namespaces.list(), byNamespace);
      const status = quotaStatus(raw, counted.total, counted.namespaces);
      if (sameStatus(raw.status, status)) continue;
      if (!mayWrite(raw.status, counted.total, quota.hard, now, this.options.chargeSettleMs ?? 10_000)) {
        this.dirty.add(quota.name);
        this.retryLater();
        continue;
      }
      try {
        await client.request({
          method: 'PUT',
          path: `${QUOTAS_PATH}/${encodeURIComponent(quota.name)}/status`,
          body: { ...raw, status },
          timeoutMs: 10_000,
        });
      } catch (err) {
        // changed meanwhile (a charge): its change event brings it back only when the spec changed, so again soon
        if (err instanceof KubeApiError && err.code === 404) continue;
        if (!(err instanceof KubeApiError && err.code === 409))
          logger.warn('a workspace quota’s use could not be written', { quota: quota.name, error: describeError(err) });
        this.dirty.add(quota.name);
        this.retryLater();
      }
    }
  }

  private retryLater(): void {
    this.schedule(2_000);
  }
}
