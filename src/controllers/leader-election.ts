import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { KubeApiError, type KubeClient } from '../kube/client.js';
import { describeError } from '../kube/cache-health.js';
import type { Logger } from '../observability/logger.js';

/**
 * One leader among kapi's replicas, by a `coordination.k8s.io` Lease, as client-go's `tools/leaderelection` elects one:
 * the holder renews the lease every `retryPeriod`; another replica takes it over once it has seen the same record
 * unchanged for `leaseDuration` (its own clock: clocks of replicas need not agree), and every write carries the
 * resourceVersion read, so two replicas never both win. A leader that could not renew for `renewDeadline` stops
 * leading before its lease can lapse, so two never act at once.
 */
export interface LeaseRecord {
  holder: string;
  leaseDurationSeconds: number;
  transitions: number;
}

export interface ObservedLease {
  record: LeaseRecord;
  /** When this replica first saw this record (ms, its own monotonic clock). */
  observedAt: number;
}

export type LeaseAction = 'create' | 'renew' | 'acquire' | 'follow';

/** What to do now (pure): make the lease, renew ours, take over a lapsed or released one, or follow its holder. */
export function leaseAction(observed: ObservedLease | undefined, identity: string, now: number): LeaseAction {
  if (!observed) return 'create';
  const { record, observedAt } = observed;
  if (record.holder === identity) return 'renew';
  if (record.holder === '' || now >= observedAt + record.leaseDurationSeconds * 1000) return 'acquire';
  return 'follow';
}

export interface LeaderElectionOptions {
  client: KubeClient;
  logger: Logger;
  namespace: string;
  name: string;
  /** Default: host name and a random suffix. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  now?: () => number;
}

interface LeaseObject {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  readonly identity: string;
  private observed: ObservedLease | undefined;
  private observedKey = '';
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  /** Steps down when no renewal succeeded for `renewDeadline`, whatever the requests under way are doing. */
  private deadline: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;
  private readonly path: string;

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.now = options.now ?? (() => performance.now());
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/leases`;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.stopped = false;
    this.ticking = this.tick();
  }

  /** Stops trying; a leader releases the lease (holder emptied), so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // a round under way may still win the lease: wait for it, then release what it won
    await this.ticking;
    clearTimeout(this.deadline);
    if (!this.leading) return;
    this.setLeading(false);
    try {
      const lease = await this.read();
      if (lease?.spec.holderIdentity === this.identity) {
        await this.options.client.request({
          method: 'PUT',
          path: `${this.path}/${encodeURIComponent(this.options.name)}`,
          body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } },
          timeoutMs: 5_000,
        });
      }
    } catch (error) {
      this.options.logger.warn('could not release the controller lease', { error: describeError(error) });
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick();
    }, this.retryPeriodMs);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    try {
      await this.tryAcquireOrRenew();
    } catch (error) {
      this.options.logger.warn('controller lease not acquired or renewed', { error: describeError(error) });
    }
    this.schedule();
  }

  private async read(): Promise<LeaseObject | undefined> {
    try {
      return await this.options.client.request<LeaseObject>({
        path: `${this.path}/${encodeURIComponent(this.options.name)}`,
        timeoutMs: 5_000,
      });
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 404) return undefined;
      throw error;
    }
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const lease = await this.read();
    const now = this.now();
    if (lease) this.observe(lease, now);
    else this.observed = undefined;
    const action = leaseAction(this.observed, this.identity, now);
    if (action === 'follow') {
      if (this.leading) this.setLeading(false);
      return;
    }
    const wall = Date.now();
    // the deadline counts from when the renewal was sent: the lease others watch may be that old already
    const sentAt = this.now();
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    const spec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: durationSeconds,
      renewTime: microTime(wall),
      acquireTime: action === 'renew' ? (lease?.spec.acquireTime ?? microTime(wall)) : microTime(wall),
      leaseTransitions: (lease?.spec.leaseTransitions ?? 0) + (action === 'acquire' ? 1 : 0),
    };
    try {
      if (action === 'create') {
        await this.options.client.request({
          method: 'POST',
          path: this.path,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.options.name, namespace: this.options.namespace },
            spec,
          },
          timeoutMs: 5_000,
        });
      } else {
        await this.options.client.request({
          method: 'PUT',
          path: `${this.path}/${encodeURIComponent(this.options.name)}`,
          body: { ...lease, spec },
          timeoutMs: 5_000,
        });
      }
    } catch (error) {
      // another replica wrote first (409): it won this round
      if (error instanceof KubeApiError && error.code === 409) return;
      throw error;
    }
    if (this.stopped && !this.leading) {
      // won after stop() began: stop() releases it once this round is over
      this.leading = true;
      return;
    }
    this.renewed(sentAt);
    if (!this.leading) this.setLeading(true);
  }

  /** A renewal sent at `sentAt` succeeded: the deadline to step down by starts again from then. */
  private renewed(sentAt: number): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(
      () => {
        // no renewal for renewDeadline: step down before the lease can lapse for the others
        if (this.leading) this.setLeading(false);
      },
      Math.max(0, this.renewDeadlineMs - (this.now() - sentAt)),
    );
    this.deadline.unref?.();
  }

  private observe(lease: LeaseObject, now: number): void {
    const record: LeaseRecord = {
      holder: lease.spec.holderIdentity ?? '',
      leaseDurationSeconds: lease.spec.leaseDurationSeconds ?? Math.ceil(this.leaseDurationMs / 1000),
      transitions: lease.spec.leaseTransitions ?? 0,
    };
    // the record changes at every renewal (renewTime), so a live holder is never taken over
    const key = JSON.stringify([record.holder, lease.spec.renewTime, record.transitions]);
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observed = { record, observedAt: now };
    }
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.options.logger.info(leading ? 'leading the controllers' : 'no longer leading the controllers', {
      identity: this.identity,
      lease: `${this.options.namespace}/${this.options.name}`,
    });
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }
}
