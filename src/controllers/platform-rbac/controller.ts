import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';
import { WORKSPACE_LABEL } from '../../kube/namespace-cache.js';
import {
  USER_REF_LABEL,
  WORKSPACE_UID_ANNOTATION,
  desiredWorkspaceRbac,
  namespaceMemberBinding,
  orphanedMemberships,
  stampChanges,
} from './workspaces.js';
import { supersededBindings } from './superseded.js';
import { CLUSTER_ADMIN, markedClusterAdmin } from './preset-cluster-roles.js';
import {
  REALIZES_LABEL,
  desiredRbac,
  manifestOf,
  plan,
  realizedFrom,
  withoutNewGrants,
  type Realized,
  type RbacPlan,
} from './realize.js';
import type { GuardState } from '../../tenant-guard/guard-keeper.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const RBAC_PATH = '/apis/rbac.authorization.k8s.io/v1';
const collectionOf = (object: Realized) =>
  object.kind === 'RoleBinding'
    ? `${RBAC_PATH}/namespaces/${encodeURIComponent(object.namespace ?? '')}/rolebindings`
    : `${RBAC_PATH}/${object.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'}`;
const pathOf = (object: Realized) => `${collectionOf(object)}/${encodeURIComponent(object.name)}`;
const IAM_PATH = '/apis/iam.kapi.io/v1alpha2';
/** Writes at once (a membership change in a 50-namespace workspace is 50 RoleBindings: SPEC §18 wants it in 2 s). */
const WRITE_CONCURRENCY = 8;
/**
 * A namespace made through kapi's API carries this annotation (its creator) until the creator's admin binding is
 * written; a replica killed in between leaves it, and the controller completes the binding.
 */
export const CREATOR_PENDING_ANNOTATION = 'tenant.kapi.io/creator-pending';
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
 * Keeps the platform's roles (realize.ts) and workspaces (workspaces.ts) realized in RBAC while this replica leads:
 * watches GlobalRoles, GlobalRoleBindings, WorkspaceTemplates, WorkspaceRoleBindings, the namespaces of workspaces and
 * what kapi realized (ClusterRoles, ClusterRoleBindings and RoleBindings labelled `iam.kapi.io/realizes`), and after
 * every change, once all are read, writes what the plan says. Passes never overlap; a change during one brings
 * another. Its first pass repairs whatever changed while no replica led, and completes what a replica killed midway
 * left: a project's creator binding, the memberships of a deleted workspace.
 */
export class PlatformRbacController {
  private readonly sources: {
    roles: Reflector<Raw>;
    bindings: Reflector<Raw>;
    workspaces: Reflector<Raw>;
    workspaceBindings: Reflector<Raw>;
    namespaces: Reflector<Raw>;
    clusterRoles: Reflector<Raw>;
    clusterRoleBindings: Reflector<Raw>;
    roleBindings: Reflector<Raw>;
    memberClusterRoleBindings: Reflector<Raw>;
    memberRoleBindings: Reflector<Raw>;
  };
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  /** Whether cluster-admin was found marked as the platform's since the last resync (it is not watched). */
  private presetsMarked = false;
  private readonly log: Logger;
  /** Whether kube-apiserver guards the fields memberships follow (SPEC §18): without it, grants are only taken away. */
  private readonly guard: { readonly state: GuardState; onChange(listener: () => void): () => void };
  private readonly unwatchGuard: () => void;
  /** Told after every pass (tests wait on it). */
  onPass?: (outcome: PassOutcome) => void;
  /** kapi's own namespace: no workspace role reaches it (workspaces.ts). */
  private readonly kapiNamespace: string;

  constructor(
    private readonly client: KubeClient,
    logger: Logger,
    options: {
      kapiNamespace: string;
      /** This replica's view of the tenant guard (tenant-guard/guard-keeper.ts). */
      guard: { readonly state: GuardState; onChange(listener: () => void): () => void };
    },
  ) {
    this.log = logger.child({ component: 'platform-rbac' });
    this.guard = options.guard;
    this.unwatchGuard = options.guard.onChange(() => this.trigger());
    this.kapiNamespace = options.kapiNamespace;
    const keep = (raw: Raw) => raw;
    const watch = (name: string, listPath: string, labelSelector?: string) =>
      new Reflector<Raw>({ client, logger, name, listPath, transform: keep, ...(labelSelector && { labelSelector }) });
    this.sources = {
      roles: watch('controller/globalroles', '/apis/iam.kapi.io/v1alpha2/globalroles'),
      bindings: watch('controller/globalrolebindings', '/apis/iam.kapi.io/v1alpha2/globalrolebindings'),
      workspaces: watch('controller/workspacetemplates', '/apis/tenant.kapi.io/v1alpha2/workspacetemplates'),
      workspaceBindings: watch('controller/workspacerolebindings', `${IAM_PATH}/workspacerolebindings`),
      namespaces: watch('controller/namespaces', '/api/v1/namespaces', WORKSPACE_LABEL),
      clusterRoles: watch('controller/clusterroles', `${RBAC_PATH}/clusterroles`, REALIZES_LABEL),
      clusterRoleBindings: watch('controller/clusterrolebindings', `${RBAC_PATH}/clusterrolebindings`, REALIZES_LABEL),
      roleBindings: watch('controller/rolebindings', `${RBAC_PATH}/rolebindings`, REALIZES_LABEL),
      // members' own bindings (cluster and project memberships), for a role change a crash cut in two
      memberClusterRoleBindings: watch(
        'controller/member-clusterrolebindings',
        `${RBAC_PATH}/clusterrolebindings`,
        USER_REF_LABEL,
      ),
      memberRoleBindings: watch('controller/member-rolebindings', `${RBAC_PATH}/rolebindings`, USER_REF_LABEL),
    };
    for (const source of Object.values(this.sources)) {
      for (const event of ['added', 'modified', 'deleted'] as const) source.on(event, () => this.trigger());
      source.on('synced', () => this.trigger());
    }
  }

  start(): void {
    for (const source of Object.values(this.sources)) source.start();
    this.resync = setInterval(() => {
      this.presetsMarked = false;
      this.trigger();
    }, RESYNC_MS);
    this.resync.unref?.();
  }

  /** Stops watching and writing; resolves once a pass under way has ended (it writes nothing more). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    this.unwatchGuard();
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
      const { roles, bindings, workspaces, workspaceBindings, namespaces } = this.sources;
      const desired = [
        ...desiredRbac(roles.list(), bindings.list()),
        ...desiredWorkspaceRbac(workspaces.list(), workspaceBindings.list(), namespaces.list(), this.kapiNamespace),
      ];
      const existing = [
        ...this.sources.clusterRoles.list().map((raw) => realizedFrom(raw, 'ClusterRole')),
        ...this.sources.clusterRoleBindings.list().map((raw) => realizedFrom(raw, 'ClusterRoleBinding')),
        ...this.sources.roleBindings.list().map((raw) => realizedFrom(raw, 'RoleBinding')),
      ];
      const guarded = this.guard.state.state === 'guarded';
      const todo = plan(desired, existing);
      outcome = await this.apply(guarded ? todo : withoutNewGrants(todo, existing));
      const completed = await this.complete(guarded);
      outcome.deleted += completed.deleted;
      outcome.created += completed.created;
      outcome.failed += completed.failed;
      if (!this.presetsMarked) {
        const marked = await this.markPresets();
        this.presetsMarked = marked !== 'failed';
        if (marked === 'marked') outcome.updated += 1;
        if (marked === 'failed') outcome.failed += 1;
      }
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
        path: collectionOf(object),
        body: manifestOf(object),
        timeoutMs: 10_000,
      });
    } catch (error) {
      if (!(error instanceof KubeApiError && error.code === 409)) throw error;
      const path = pathOf(object);
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

  /** Marks Kubernetes' cluster-admin as the platform's preset cluster role (preset-cluster-roles.ts). */
  private async markPresets(): Promise<'marked' | 'unchanged' | 'failed'> {
    const path = `${RBAC_PATH}/clusterroles/${CLUSTER_ADMIN}`;
    try {
      const marked = markedClusterAdmin(await this.client.request<Raw>({ path, timeoutMs: 10_000 }));
      if (!marked) return 'unchanged';
      // with the resourceVersion read: a change made meanwhile is never written over (the next pass reads it again)
      await this.client.request({ method: 'PUT', path, body: marked, timeoutMs: 10_000 });
      this.log.info('cluster-admin is marked as the platform’s preset cluster role');
      return 'marked';
    } catch (error) {
      // a cluster without cluster-admin has no preset to mark
      if (error instanceof KubeApiError && error.code === 404) return 'unchanged';
      this.log.warn('could not mark cluster-admin as the platform’s cluster role', { error: describeError(error) });
      return 'failed';
    }
  }

  /**
   * What a replica killed between two writes of kapi's API left half-done: memberships of a workspace deleted (the
   * API deletes them after the workspace) are deleted; a role change (the API writes the new binding, then deletes
   * the one it replaces) loses the replaced binding (superseded.ts); a project made (the API writes its creator's admin
   * binding, then takes the annotation off) gets its creator's binding.
   */
  private async complete(guarded: boolean): Promise<{ created: number; deleted: number; failed: number }> {
    const done = { created: 0, deleted: 0, failed: 0 };
    const tolerate = (error: unknown) => {
      if (error instanceof KubeApiError && (error.code === 404 || error.code === 409)) return;
      done.failed += 1;
      this.log.warn('could not complete a workspace change', { error: describeError(error) });
    };
    for (const binding of orphanedMemberships(this.sources.workspaces.list(), this.sources.workspaceBindings.list())) {
      await this.client
        .request({
          method: 'DELETE',
          path: `${IAM_PATH}/workspacerolebindings/${encodeURIComponent(binding.metadata.name)}`,
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: binding.metadata.uid } },
          timeoutMs: 10_000,
        })
        .then(() => (done.deleted += 1), tolerate);
    }
    const superseded: [Raw, string][] = [
      ...supersededBindings(this.sources.workspaceBindings.list()).map((b): [Raw, string] => [
        b,
        `${IAM_PATH}/workspacerolebindings`,
      ]),
      ...supersededBindings(this.sources.bindings.list()).map((b): [Raw, string] => [
        b,
        `${IAM_PATH}/globalrolebindings`,
      ]),
      ...supersededBindings(this.sources.memberClusterRoleBindings.list()).map((b): [Raw, string] => [
        b,
        `${RBAC_PATH}/clusterrolebindings`,
      ]),
      ...supersededBindings(this.sources.memberRoleBindings.list()).map((b): [Raw, string] => [
        b,
        `${RBAC_PATH}/namespaces/${encodeURIComponent(b.metadata.namespace)}/rolebindings`,
      ]),
    ];
    for (const [binding, collection] of superseded) {
      await this.client
        .request({
          method: 'DELETE',
          path: `${collection}/${encodeURIComponent(binding.metadata.name)}`,
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: binding.metadata.uid } },
          timeoutMs: 10_000,
        })
        .then(() => {
          done.deleted += 1;
          this.log.info('a binding a role change replaced is deleted (its change was cut short)', {
            binding: `${binding.metadata.namespace ?? ''}/${binding.metadata.name}`,
          });
        }, tolerate);
    }
    // which workspace a namespace is in, by uid: stamped when it joined one (only while the stamp can be trusted to
    // stay kapi's), released when its workspace was deleted and another of the name made
    for (const change of stampChanges(
      this.sources.workspaces.list(),
      this.sources.namespaces.list(),
      this.kapiNamespace,
    )) {
      if ('stamp' in change && !guarded) continue;
      const annotations = { [WORKSPACE_UID_ANNOTATION]: 'stamp' in change ? change.stamp : null };
      await this.client
        .request({
          method: 'PATCH',
          path: `/api/v1/namespaces/${encodeURIComponent(change.namespace)}`,
          contentType: 'application/merge-patch+json',
          body: {
            metadata: { annotations, ...('release' in change && { labels: { [WORKSPACE_LABEL]: null } }) },
          },
          timeoutMs: 10_000,
        })
        .then(() => {
          if ('release' in change) {
            done.deleted += 1;
            this.log.info('a namespace of a deleted workspace leaves it (a workspace of the name was made since)', {
              namespace: change.namespace,
            });
          } else done.created += 1;
        }, tolerate);
    }
    // a creator binding follows an annotation only kapi may write, as long as kube-apiserver holds everyone to that
    for (const ns of guarded ? this.sources.namespaces.list() : []) {
      const creator = ns?.metadata?.annotations?.[CREATOR_PENDING_ANNOTATION];
      if (typeof creator !== 'string' || ns.metadata.deletionTimestamp) continue;
      const name = ns.metadata.name as string;
      try {
        await this.client
          .request({
            method: 'POST',
            path: `${RBAC_PATH}/namespaces/${encodeURIComponent(name)}/rolebindings`,
            body: namespaceMemberBinding(name, creator, 'admin'),
            timeoutMs: 10_000,
          })
          .catch(tolerate);
        await this.client.request({
          method: 'PATCH',
          path: `/api/v1/namespaces/${encodeURIComponent(name)}`,
          contentType: 'application/merge-patch+json',
          body: { metadata: { annotations: { [CREATOR_PENDING_ANNOTATION]: null } } },
          timeoutMs: 10_000,
        });
        done.created += 1;
      } catch (error) {
        tolerate(error);
      }
    }
    return done;
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
    const found = (object: Realized) => {
      const source =
        object.kind === 'ClusterRole'
          ? this.sources.clusterRoles
          : object.kind === 'ClusterRoleBinding'
            ? this.sources.clusterRoleBindings
            : this.sources.roleBindings;
      return source.get(object.namespace ? `${object.namespace}/${object.name}` : object.name);
    };
    // deletions first (a binding whose role changed is deleted and made again), then the rest, a few at a time
    await inBatches(todo.delete, (object) =>
      attempt('deleted', object, () =>
        this.client.request({
          method: 'DELETE',
          path: pathOf(object),
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: found(object)?.metadata?.uid } },
          timeoutMs: 10_000,
        }),
      ),
    );
    await inBatches(todo.create, (object) => attempt('created', object, () => this.create(object)));
    await inBatches(todo.update, (object) =>
      attempt('updated', object, () =>
        this.client.request({
          method: 'PUT',
          path: pathOf(object),
          body: manifestOf(object, found(object)?.metadata?.resourceVersion),
          timeoutMs: 10_000,
        }),
      ),
    );
    return outcome;
  }
}

/** Runs `work` over `items`, WRITE_CONCURRENCY at a time. */
async function inBatches<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, items.length) }, worker));
}
