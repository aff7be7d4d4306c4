import { KubeApiError, type KubeClient } from '../../../kube/client.js';
import type { Logger } from '../../../observability/logger.js';
import { REALIZES_LABEL } from '../../../controllers/platform-rbac/realize.js';
import {
  SUPERSEDES_ANNOTATION,
  supersedesValue,
  type BindingRef,
} from '../../../controllers/platform-rbac/superseded.js';
import { GLOBAL_ROLE_BINDINGS_PATH } from './global-roles.js';
import { RBAC_GROUP, USER_REF_LABEL } from './role-templates.js';
import { userRefSelector } from './user-admin.js';

const TIMEOUT_MS = 10_000;
const RBAC_PATH = `/apis/${RBAC_GROUP}/v1`;
export const WORKSPACE_ROLE_BINDINGS_PATH = '/apis/iam.kapi.io/v1alpha2/workspacerolebindings';

/** The binding of a user's platform role as kapi names and labels it (`<user>-<role>`, as KubeSphere does). */
export function globalRoleBindingObject(user: string, role: string): Record<string, unknown> {
  return {
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'GlobalRoleBinding',
    metadata: { name: `${user}-${role}`, labels: { [USER_REF_LABEL]: user } },
    roleRef: { apiGroup: 'iam.kapi.io', kind: 'GlobalRole', name: role },
    subjects: [{ apiGroup: RBAC_GROUP, kind: 'User', name: user }],
  };
}

interface Listed {
  items?: { metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string> } }[];
}

/**
 * A test seam: called after a role change's new binding is written and before the bindings it replaces are deleted,
 * where a replica killed would leave both (the controller then deletes the replaced ones: superseded.ts).
 */
export interface MemberWriteHooks {
  afterNewBinding?(binding: string): Promise<void>;
}

/** A binding written to replace `replaced` (the user's other bindings of that scope): it names them, name and uid. */
export function replacing<T extends Record<string, unknown>>(binding: T, replaced: readonly BindingRef[]): T {
  if (replaced.length === 0) return binding;
  const metadata = binding.metadata as { annotations?: Record<string, string> };
  return {
    ...binding,
    metadata: {
      ...metadata,
      annotations: { ...metadata.annotations, [SUPERSEDES_ANNOTATION]: supersedesValue(replaced) },
    },
  };
}

/**
 * A user's bindings, written with kapi's own credentials once the route has checked the caller's rights: the
 * platform role (one GlobalRoleBinding, realized in RBAC by the controller) and, when the user goes, every binding
 * labelled as theirs (`iam.kapi.io/user-ref`: platform role, cluster and project memberships).
 */
export class UserRoleBindings {
  constructor(
    private readonly client: KubeClient,
    private readonly logger: Logger,
    private readonly hooks: MemberWriteHooks = {},
  ) {}

  /**
   * Makes `role` the user's only platform role: its binding first (naming the ones it replaces), then the others go
   * (never a moment with none; a crash in between is completed by the controller).
   */
  async assign(user: string, role: string): Promise<void> {
    const binding = globalRoleBindingObject(user, role);
    const name = (binding.metadata as { name: string }).name;
    const others = (await this.labelled(GLOBAL_ROLE_BINDINGS_PATH, user)).filter((item) => item.name !== name);
    try {
      await this.client.request({
        method: 'POST',
        path: GLOBAL_ROLE_BINDINGS_PATH,
        body: replacing(binding, others),
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      // already there (a retry, or another replica's): it is the binding wanted, by its name
      if (!(err instanceof KubeApiError && err.code === 409)) throw err;
    }
    await this.hooks.afterNewBinding?.(name);
    await Promise.all(
      others.map((item) => this.remove(`${GLOBAL_ROLE_BINDINGS_PATH}/${encodeURIComponent(item.name)}`, item.uid)),
    );
    this.logger.info('platform role given', { audit: 'globalrole', user, role, replaced: others.length });
  }

  /**
   * Makes the user a cluster member holding ClusterRole `role` (a ClusterRoleBinding `<user>-<role>` labelled as the
   * user's, as KubeSphere names it); the user's other cluster memberships go, after it is made.
   */
  async makeClusterMember(user: string, role: string): Promise<void> {
    const name = `${user}-${role}`;
    const others = (await this.labelled(`${RBAC_PATH}/clusterrolebindings`, user)).filter(
      (item) => !item.realized && item.name !== name,
    );
    try {
      await this.client.request({
        method: 'POST',
        path: `${RBAC_PATH}/clusterrolebindings`,
        body: replacing(
          {
            apiVersion: `${RBAC_GROUP}/v1`,
            kind: 'ClusterRoleBinding',
            metadata: { name, labels: { [USER_REF_LABEL]: user } },
            roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
            subjects: [{ apiGroup: RBAC_GROUP, kind: 'User', name: user }],
          },
          others,
        ),
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 409)) throw err;
    }
    await this.hooks.afterNewBinding?.(name);
    await Promise.all(
      others.map((item) => this.remove(`${RBAC_PATH}/clusterrolebindings/${encodeURIComponent(item.name)}`, item.uid)),
    );
    this.logger.info('cluster role given', { audit: 'clustermember', user, role, replaced: others.length });
  }

  /** Ends the user's cluster memberships; how many there were. */
  async removeClusterMember(user: string): Promise<number> {
    const memberships = (await this.labelled(`${RBAC_PATH}/clusterrolebindings`, user)).filter(
      (item) => !item.realized,
    );
    await Promise.all(
      memberships.map((item) => this.remove(`${RBAC_PATH}/clusterrolebindings/${encodeURIComponent(item.name)}`)),
    );
    return memberships.length;
  }

  private async labelled(
    path: string,
    user: string,
  ): Promise<{ name: string; namespace: string; uid: string; realized: boolean }[]> {
    const listed = await this.client.request<Listed>({
      path,
      query: { labelSelector: userRefSelector(user) },
      timeoutMs: TIMEOUT_MS,
    });
    return (listed?.items ?? []).flatMap((item) =>
      typeof item.metadata?.name === 'string'
        ? [
            {
              name: item.metadata.name,
              namespace: item.metadata.namespace ?? '',
              uid: item.metadata.uid ?? '',
              realized: item.metadata.labels?.[REALIZES_LABEL] !== undefined,
            },
          ]
        : [],
    );
  }

  /** Deletes a binding; `uid`: only that one (a binding of the name made since is not it). */
  private async remove(path: string, uid?: string): Promise<void> {
    try {
      await this.client.request({
        method: 'DELETE',
        path,
        ...(uid && { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } } }),
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      // gone, or a new binding of the name (its uid differs): not the one to delete
      if (!(err instanceof KubeApiError && (err.code === 404 || err.code === 409))) throw err;
    }
  }
}
