import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { Logger } from '../../observability/logger.js';
import { timestamp } from '../users/login-limits.js';
import type { CodeRedemptions, Redemption } from './authorization-codes.js';

export const CODE_REDEMPTIONS_PATH = '/apis/iam.kapi.io/v1beta1/coderedemptions';

const REQUEST_TIMEOUT_MS = 10_000;
const SWEEP_INTERVAL_MS = 60_000;
/** A record outlives its code by this much, so a replica whose clock runs behind still finds it. */
const KEEP_AFTER_EXPIRY_SECONDS = 60;
const SWEEP_PAGE = 500;

interface RedemptionList {
  items?: { metadata?: { name?: string }; spec?: { expiresAt?: unknown } }[];
  metadata?: { continue?: string };
}

/**
 * Redeemed codes as `CodeRedemption` objects: creating one is the redemption, and kube-apiserver creates an object of
 * a given name only once (409 AlreadyExists for every later attempt, whichever replica makes it), which is what makes
 * a code single-use across replicas without shared memory. Records past their code's expiry are deleted by a sweep
 * that every replica runs (losing a race to another is a harmless 404). One create per sign-in, one delete later.
 */
export class ClusterCodeRedemptions implements CodeRedemptions {
  private sweeper: NodeJS.Timeout | undefined;
  private readonly log: Logger;

  constructor(
    private readonly client: KubeClient,
    logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.log = logger.child({ component: 'code-redemptions' });
  }

  async record(digest: string, redemption: Redemption): Promise<boolean> {
    try {
      await this.client.request({
        method: 'POST',
        path: CODE_REDEMPTIONS_PATH,
        body: {
          apiVersion: 'iam.kapi.io/v1beta1',
          kind: 'CodeRedemption',
          metadata: { name: digest },
          spec: { ...redemption, expiresAt: timestamp(redemption.expiresAt * 1000) },
        },
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) return false;
      throw err;
    }
  }

  start(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  /** Deletes the records whose code expired more than a minute ago; the number deleted. */
  async sweep(): Promise<number> {
    const nowMs = this.clock();
    let removed = 0;
    try {
      let next: string | undefined;
      do {
        const list = await this.client.request<RedemptionList>({
          path: CODE_REDEMPTIONS_PATH,
          query: { limit: SWEEP_PAGE, continue: next },
          timeoutMs: REQUEST_TIMEOUT_MS,
        });
        for (const item of list.items ?? []) {
          const name = item.metadata?.name;
          const expiresAt = typeof item.spec?.expiresAt === 'string' ? Date.parse(item.spec.expiresAt) : NaN;
          if (!name || !(expiresAt + KEEP_AFTER_EXPIRY_SECONDS * 1000 < nowMs)) continue;
          await this.delete(name);
          removed++;
        }
        next = list.metadata?.continue || undefined;
      } while (next);
    } catch (err) {
      this.log.warn('could not delete expired code redemptions; the next sweep tries again', { error: String(err) });
    }
    return removed;
  }

  private async delete(name: string): Promise<void> {
    try {
      await this.client.request({
        method: 'DELETE',
        path: `${CODE_REDEMPTIONS_PATH}/${encodeURIComponent(name)}`,
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 404)) throw err;
    }
  }
}
