import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';
import {
  REALIZES_LABEL,
  desiredRbac,
  manifestOf,
  plan,
  realizedFrom,
  type Realized,
  type RbacPlan,
} from './realize.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const RBAC_PATH = '/apis/rbac.authorization.k8s.io/v1';
const collectionOf = (kind: Realized['kind']) =>
  `${RBAC_PATH}/${kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'}`;
/** After a failed write, the next pass comes this much later (then at every change). */
const RETRY_MS = 5_000;
/** A pass now and then even with no change seen, as informers resync. */
const RESYNC_MS = 5 * 60_000;

/** What a pass did, for logs and tests. */
export interface PassOutcome {
  created: number;
  updated: number;
  deleted: number;
  failed: number;
}

/**
 * Keeps the platform's roles realized in RBAC (realize.ts) while this replica leads: watches GlobalRoles,
 * GlobalRoleBindings and what kapi realized (ClusterRoles and ClusterRoleBindings labelled `iam.kapi.io/realizes`),
 * and after every change, once all four are read, writes what the plan says. Passes never overlap; a change during
 * one brings another. Its first pass repairs whatever changed while no replica led.
 */
export class PlatformRbacController {
  private readonly sources: {
    roles: Reflector<Raw>;
    bindings: Reflector<Raw>;
    clusterRoles: Reflector<Raw>;
    clusterRoleBindings: Reflector<Raw>;
  };
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  /** Told after every pass (tests wait on it). */
  onPass?: (outcome: PassOutcome) => void;

  constructor(
    private readonly client: KubeClient,
    logger: Logger,
  ) {
    this.log = logger.child({ component: 'platform-rbac' });
    const keep = (raw: Raw) => raw;
    const watch = (name: string, listPath: string, labelSelector?: string) =>
      new Reflector<Raw>({ client, logger, name, listPath, transform: keep, ...(labelSelector && { labelSelector }) });
    this.sources = {
      roles: watch('controller/globalroles', '/apis/iam.kapi.io/v1alpha2/globalroles'),
      bindings: watch('controller/globalrolebindings', '/apis/iam.kapi.io/v1alpha2/globalrolebindings'),
      clusterRoles: watch('controller/clusterroles', `${RBAC_PATH}/clusterroles`, REALIZES_LABEL),
      clusterRoleBindings: watch('controller/clusterrolebindings', `${RBAC_PATH}/clusterrolebindings`, REALIZES_LABEL),
    };
    for (const source of Object.values(this.sources)) {
      for (const event of ['added', 'modified', 'deleted'] as const) source.on(event, () => this.trigger());
      source.on('synced', () => this.trigger());
    }
  }

  start(): void {
    for (const source of Object.values(this.sources)) source.start();
    this.resync = setInterval(() => this.trigger(), RESYNC_MS);
    this.resync.unref?.();
  }

  /** Stops watching and writing; resolves once a pass under way has ended (it writes nothing more). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await Promise.all(Object.values(this.sources).map((source) => source.stop()));
  }

  /** Asks for a pass soon (changes close together share one). */
  private trigger(delayMs = 50): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.pass().then((retry) => {
        this.running = undefined;
        if (retry) this.trigger(RETRY_MS);
        else if (this.again) this.trigger();
      });
    }, delayMs);
    this.timer.unref?.();
  }

  /** One pass; whether it should be tried again later (a write failed). Never rejects. */
  private async pass(): Promise<boolean> {
    if (this.stopped || !Object.values(this.sources).every((source) => source.synced)) return false;
    this.again = false;
    let outcome: PassOutcome = { created: 0, updated: 0, deleted: 0, failed: 1 };
    try {
      const desired = desiredRbac(this.sources.roles.list(), this.sources.bindings.list());
      const existing = [
        ...this.sources.clusterRoles.list().map((raw) => realizedFrom(raw, 'ClusterRole')),
        ...this.sources.clusterRoleBindings.list().map((raw) => realizedFrom(raw, 'ClusterRoleBinding')),
      ];
      outcome = await this.apply(plan(desired, existing));
    } catch (error) {
      // never expected (the plan is pure, each write catches its own); a pass that threw is tried again later
      this.log.error('a pass of the platform roles controller failed', { error: describeError(error) });
    }
    if (outcome.created + outcome.updated + outcome.deleted + outcome.failed > 0)
      this.log.info('platform roles realized in RBAC', { ...outcome });
    this.onPass?.(outcome);
    return outcome.failed > 0;
  }

  /**
   * Creates a realized object; one of its name already there without kapi's labels (made by hand, or its labels
   * taken off) is overwritten: the `kapi:` names are kapi's, and bindings of kapi's name refer to it.
   */
  private async create(object: Realized): Promise<void> {
    try {
      await this.client.request({
        method: 'POST',
        path: collectionOf(object.kind),
        body: manifestOf(object),
        timeoutMs: 10_000,
      });
    } catch (error) {
      if (!(error instanceof KubeApiError && error.code === 409)) throw error;
      const path = `${collectionOf(object.kind)}/${encodeURIComponent(object.name)}`;
      const existing = await this.client.request<{ metadata?: { resourceVersion?: string } }>({
        path,
        timeoutMs: 10_000,
      });
      this.log.warn('a realized platform role was there without kapi’s labels: taken back', {
        object: `${object.kind}/${object.name}`,
      });
      await this.client.request({
        method: 'PUT',
        path,
        body: manifestOf(object, existing.metadata?.resourceVersion),
        timeoutMs: 10_000,
      });
    }
  }

  private async apply(todo: RbacPlan): Promise<PassOutcome> {
    const outcome: PassOutcome = { created: 0, updated: 0, deleted: 0, failed: 0 };
    const attempt = async (
      what: keyof Omit<PassOutcome, 'failed'>,
      object: Realized,
      write: () => Promise<unknown>,
    ) => {
      try {
        await write();
        outcome[what] += 1;
      } catch (error) {
        // gone already (delete) or made meanwhile (create): the watch brings the truth and the next pass
        if (error instanceof KubeApiError && (error.code === 404 || error.code === 409)) return;
        outcome.failed += 1;
        this.log.warn('could not realize a platform role in RBAC', {
          object: `${object.kind}/${object.name}`,
          error: describeError(error),
        });
      }
    };
    const found = (object: Realized) =>
      (object.kind === 'ClusterRole' ? this.sources.clusterRoles : this.sources.clusterRoleBindings).get(object.name);
    for (const object of todo.delete) {
      await attempt('deleted', object, () =>
        this.client.request({
          method: 'DELETE',
          path: `${collectionOf(object.kind)}/${encodeURIComponent(object.name)}`,
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: found(object)?.metadata?.uid } },
          timeoutMs: 10_000,
        }),
      );
    }
    for (const object of todo.create) {
      await attempt('created', object, () =>
        this.client.request({
          method: 'POST',
          path: collectionOf(object.kind),
          body: manifestOf(object),
          timeoutMs: 10_000,
        }),
      );
    }
    for (const object of todo.update) {
      const resourceVersion = found(object)?.metadata?.resourceVersion;
      await attempt('updated', object, () =>
        this.client.request({
          method: 'PUT',
          path: `${collectionOf(object.kind)}/${encodeURIComponent(object.name)}`,
          body: manifestOf(object, resourceVersion),
          timeoutMs: 10_000,
        }),
      );
    }
    return outcome;
  }
}
