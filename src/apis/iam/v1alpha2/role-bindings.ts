import { KubeApiError, type KubeClient } from '../../../kube/client.js';
import type { Logger } from '../../../observability/logger.js';
import { REALIZES_LABEL } from '../../../controllers/platform-rbac/realize.js';
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
  items?: { metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } }[];
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
  ) {}

  /** Makes `role` the user's only platform role: its binding first, then the others go (never a moment with none). */
  async assign(user: string, role: string): Promise<void> {
    const binding = globalRoleBindingObject(user, role);
    const name = (binding.metadata as { name: string }).name;
    try {
      await this.client.request({
        method: 'POST',
        path: GLOBAL_ROLE_BINDINGS_PATH,
        body: binding,
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      // already there (a retry, or another replica's): it is the binding wanted, by its name
      if (!(err instanceof KubeApiError && err.code === 409)) throw err;
    }
    const others = (await this.labelled(GLOBAL_ROLE_BINDINGS_PATH, user)).filter((item) => item.name !== name);
    await Promise.all(
      others.map((item) => this.remove(`${GLOBAL_ROLE_BINDINGS_PATH}/${encodeURIComponent(item.name)}`)),
    );
    this.logger.info('platform role given', { audit: 'globalrole', user, role, replaced: others.length });
  }

  /**
   * Makes the user a cluster member holding ClusterRole `role` (a ClusterRoleBinding `<user>-<role>` labelled as the
   * user's, as KubeSphere names it); the user's other cluster memberships go, after it is made.
   */
  async makeClusterMember(user: string, role: string): Promise<void> {
    const name = `${user}-${role}`;
    try {
      await this.client.request({
        method: 'POST',
        path: `${RBAC_PATH}/clusterrolebindings`,
        body: {
          apiVersion: `${RBAC_GROUP}/v1`,
          kind: 'ClusterRoleBinding',
          metadata: { name, labels: { [USER_REF_LABEL]: user } },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
          subjects: [{ apiGroup: RBAC_GROUP, kind: 'User', name: user }],
        },
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 409)) throw err;
    }
    const others = (await this.labelled(`${RBAC_PATH}/clusterrolebindings`, user)).filter(
      (item) => !item.realized && item.name !== name,
    );
    await Promise.all(
      others.map((item) => this.remove(`${RBAC_PATH}/clusterrolebindings/${encodeURIComponent(item.name)}`)),
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
  ): Promise<{ name: string; namespace: string; realized: boolean }[]> {
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
              realized: item.metadata.labels?.[REALIZES_LABEL] !== undefined,
            },
          ]
        : [],
    );
  }

  private async remove(path: string): Promise<void> {
    try {
      await this.client.request({ method: 'DELETE', path, timeoutMs: TIMEOUT_MS });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 404)) throw err;
    }
  }
}
