import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import { WORKSPACE_LABEL } from '../../kube/namespace-cache.js';
import type { Logger } from '../../observability/logger.js';
import {
  QUOTAS_PATH,
  addAmounts,
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

/**
 * A quota's use counted from the pods (pure): per namespace it covers (every one, a namespace without pods at zero)
 * and in total. Finished pods take nothing.
 */
export function countUsage(
  quota: Pick<WorkspaceQuota, 'selector'>,
  namespaces: Iterable<CountedNamespace>,
  pods: Iterable<CountedPod>,
): { total: Amounts; namespaces: NamespaceUsage[] } {
  const covered = new Map<string, Amounts>();
  for (const namespace of namespaces) if (selects(quota, selectedLabels(namespace))) covered.set(namespace.name, {});
  const total: Amounts = {};
  for (const pod of pods) {
    const used = covered.get(pod.namespace);
    if (!used || pod.finished) continue;
    const usage = usageOf(pod);
    addAmounts(used, usage);
    addAmounts(total, usage);
  }
  return { total, namespaces: [...covered].map(([namespace, used]) => ({ namespace, used })) };
}

/** Whether a stored status says what a recount says (pure): the same lists, compared as JSON of sorted keys. */
export function sameStatus(stored: Raw, wanted: Raw): boolean {
  return canonical(stored ?? {}) === canonical(wanted);
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
      pods.on('deleted', all),
      pods.on('modified', (pod: CountedPod, old: CountedPod | undefined) => {
        if (pod.finished && !old?.finished) all();
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

  private mark(name?: string): void {
    if (this.stopped) return;
    if (typeof name === 'string') this.dirty.add(name);
    else this.everything = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.running.then(() => this.recount());
    }, this.options.settleMs ?? 500);
    this.timer.unref();
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
    for (const raw of quotas.list()) {
      const quota = workspaceQuotaOf(raw);
      if (!quota || (names && !names.has(quota.name))) continue;
      const counted = countUsage(quota, namespaces.list(), pods.list());
      const status = quotaStatus(raw, counted.total, counted.namespaces);
      if (sameStatus(raw.status, status)) continue;
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
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.running.then(() => this.recount());
    }, 2_000);
    this.timer.unref();
  }
}
