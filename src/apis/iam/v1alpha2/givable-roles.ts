import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import {
  NAMESPACE_ROLE_RULES,
  TENANT_GROUP,
  WORKSPACE_NAMESPACE_RULES,
  namespaceRoleClusterRole,
  workspaceRoleName,
  workspaceRules,
  type NamespaceRole,
  type WorkspaceRoleBase,
} from '../../../controllers/platform-rbac/workspaces.js';
import { ForbiddenError } from '../../../server/errors.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../../resources/v1alpha3/listing/resource-listing.js';
import { confirmNoEscalation, describeRight, rightsOf } from './escalation.js';

/**
 * RBAC's rule against escalation for the workspace and project roles kapi gives on a caller's behalf (to a member, or
 * to a department and so to its members): the caller holds every right the role gives, or may bind it.
 */
const namespacesKind = KINDS_BY_RESOURCE.get('namespaces') as KindDefinition;
const RBAC = 'rbac.authorization.k8s.io';

const workspaceBind = (workspace: string): ResourceAttributes => ({
  verb: 'bind',
  group: TENANT_GROUP,
  resource: 'workspacetemplates',
  subresource: 'workspaceroles',
  name: workspace,
  fresh: true,
});

/**
 * A workspace role: the caller holds every right it gives on the workspace and, for a role with rights in the
 * workspace's namespaces, each of those in each namespace (or cluster-wide). A caller who may `bind` the workspace's
 * roles (`workspacetemplates/workspaceroles`) may give any.
 */
export async function confirmWorkspaceRoleGivable(
  authorizer: Authorizer,
  listing: ResourceListing,
  caller: UserInfo,
  workspace: string,
  base: WorkspaceRoleBase,
): Promise<void> {
  const role = `workspace role "${workspaceRoleName(workspace, base)}"`;
  const bind = workspaceBind(workspace);
  await confirmNoEscalation(authorizer, caller, workspaceRules(workspace, base), bind, role);
  const inNamespaces = WORKSPACE_NAMESPACE_RULES[base];
  if (!inNamespaces || (await authorizer.authorize(caller, bind)).allowed) return;
  const rights = rightsOf(inNamespaces);
  const clusterWide = await Promise.all(rights.map((right) => authorizer.authorize(caller, right)));
  if (clusterWide.every((decision) => decision.allowed)) return;
  const namespaces = await listing.cachedWhere(namespacesKind, (labels) => labels?.['kapi.io/workspace'] === workspace);
  for (const ns of namespaces as { metadata: { name: string } }[]) {
    for (const right of rights) {
      const inNamespace = { ...right, namespace: ns.metadata.name };
      if (!(await authorizer.authorize(caller, inNamespace)).allowed)
        throw new ForbiddenError(
          `user "${caller.username}" cannot give ${role}: it grants ${describeRight(right)} in namespace ` +
            `"${ns.metadata.name}", which "${caller.username}" does not hold (nor may bind it)`,
          { name: workspace, group: TENANT_GROUP, kind: 'workspacetemplates' },
        );
    }
  }
}

/** A project role in one namespace: the caller may bind its ClusterRole there, or holds each of its rights there. */
export async function confirmProjectRoleGivable(
  authorizer: Authorizer,
  caller: UserInfo,
  namespace: string,
  role: NamespaceRole,
): Promise<void> {
  const clusterRole = namespaceRoleClusterRole(role);
  const bind = { verb: 'bind', group: RBAC, resource: 'clusterroles', name: clusterRole, namespace };
  if ((await authorizer.authorize(caller, bind)).allowed) return;
  for (const right of rightsOf(NAMESPACE_ROLE_RULES[role])) {
    if (!(await authorizer.authorize(caller, { ...right, namespace })).allowed)
      throw new ForbiddenError(
        `user "${caller.username}" cannot give project role "${role}" in "${namespace}": it grants ` +
          `${describeRight(right)}, which "${caller.username}" does not hold there (nor may bind it)`,
        { name: namespace, group: '', kind: 'namespaces' },
      );
  }
}
