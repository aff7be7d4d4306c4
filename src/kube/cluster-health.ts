/**
 * What kapi knows of kube-apiserver as a whole, apart from any one request: whether it refuses kapi's own
 * credentials, and when it answers again after an outage.
 *
 * - A 401 to a request made with kapi's credentials is kapi's fault, never the caller's (kube-apiserver never sees the
 *   caller's token): `refused()` marks it, the connection re-reads its credentials at once (as client-go does on a
 *   401), and `/readyz` says not-ready until kube-apiserver accepts them again, so a Service stops routing to a replica
 *   whose ServiceAccount token was revoked.
 * - Caches that lost kube-apiserver back off (up to 30 s); `whenAnswering` lets them come back as soon as it answers
 *   again instead of at their next backoff step. While anyone waits, or the credentials are refused, a probe asks
 *   kube-apiserver's own `/readyz` every `intervalMs` (one request, however many caches wait): it is 200 only once
 *   etcd answers too, so an etcd outage does not wake the caches into failing lists every second. A waiter is woken
 *   only by a return, a ready answer after one that was not: a cache whose own requests fail while kube-apiserver is
 *   ready (a broken CRD) keeps its backoff.
 */
export type ProbeResult = 'ready' | 'refused' | 'failing';

export interface ClusterHealthLog {
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
}

export const PROBE_INTERVAL_MS = 1_000;

export class ClusterHealth {
  private refusedSince: number | undefined;
  /** Each waiter with the count of not-ready probes when it began to wait. */
  private readonly waiters = new Map<() => void, number>();
  private notReadyProbes = 0;
  private probing: Promise<void> | undefined;
  private closed = false;
  private wakeProbe: (() => void) | undefined;
  /** Probes made, for tests. */
  probes = 0;

  constructor(
    private readonly probe: () => Promise<ProbeResult>,
    private readonly log?: ClusterHealthLog,
    private readonly intervalMs = PROBE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** kube-apiserver answered 401 to kapi's own credentials. */
  refused(): void {
    if (this.refusedSince === undefined) {
      this.refusedSince = this.now();
      this.log?.warn('kube-apiserver refuses kapi’s own credentials (HTTP 401): not ready until it accepts them', {});
    }
    this.ensureProbing();
  }

  /** kube-apiserver answered a request made with kapi's credentials with anything but 401. */
  accepted(): void {
    if (this.refusedSince === undefined) return;
    this.log?.info('kube-apiserver accepts kapi’s credentials again', { refusedForMs: this.now() - this.refusedSince });
    this.refusedSince = undefined;
  }

  get credentialsRefused(): boolean {
    return this.refusedSince !== undefined;
  }

  /** For `/readyz`. */
  notReadyReason(): string | undefined {
    if (this.refusedSince === undefined) return undefined;
    const seconds = Math.round((this.now() - this.refusedSince) / 1000);
    return `kube-apiserver has refused kapi's own credentials (HTTP 401) for ${seconds} s`;
  }

  /** Resolves once a probe finds kube-apiserver ready (or `signal` aborts, or the health is closed). */
  whenAnswering(signal: AbortSignal): Promise<void> {
    if (this.closed || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.set(done, this.notReadyProbes);
      signal.addEventListener('abort', done, { once: true });
      this.ensureProbing();
    });
  }

  close(): void {
    this.closed = true;
    for (const wake of [...this.waiters.keys()]) wake();
    this.wakeProbe?.();
  }

  private ensureProbing(): void {
    if (this.probing || this.closed) return;
    this.probing = this.probeLoop().finally(() => (this.probing = undefined));
  }

  private async probeLoop(): Promise<void> {
    while (!this.closed && (this.refusedSince !== undefined || this.waiters.size > 0)) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.intervalMs);
        this.wakeProbe = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeProbe = undefined;
      if (this.closed) break;
      this.probes++;
      const result = await this.probe().catch((): ProbeResult => 'failing');
      if (result !== 'ready') this.notReadyProbes++;
      if (result === 'refused') this.refused();
      if (result === 'ready') {
        this.accepted();
        for (const [wake, since] of [...this.waiters]) if (this.notReadyProbes > since) wake();
      }
    }
  }
}
