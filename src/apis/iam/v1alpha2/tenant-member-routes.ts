import { Router } from 'express';
import { jsonBody } from '../../../auth/account/account-routes.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import {
  NAMESPACE_ROLES,
  TENANT_GROUP,
  baseOf,
  namespaceMemberBinding,
  workspaceMemberBinding,
  workspaceRoleName,
  type NamespaceRole,
  type WorkspaceRoleBase,
} from '../../../controllers/platform-rbac/workspaces.js';
import { KubeApiError, type KubeClient, type KubeRequest } from '../../../kube/client.js';
import type { Logger } from '../../../observability/logger.js';
import { mountOperation } from '../../../openapi/operation.js';
import { ApiError, BadRequestError, NotFoundError } from '../../../server/errors.js';
import { asCaller as asKapiCaller, deletedStatus, requireRight, withCaller } from '../../caller.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import { parseListedItem, type ResourceListing } from '../../resources/v1alpha3/listing/resource-listing.js';
import { TenantMemberships } from '../../tenant/memberships.js';
import { confirmWorkspaceRoleGivable } from './givable-roles.js';
import { clusterMemberFrom, type ClusterMember } from './member-routes.js';
import {
  createNamespaceMembers,
  createWorkspaceMembers,
  deleteNamespaceMember,
  deleteWorkspaceMember,
  listNamespaceMembers,
  listNamespaceRoles,
  readNamespaceRole,
  listWorkspaceMemberRoleTemplates,
  listWorkspaceMembers,
  listWorkspaceRoles,
  readNamespaceMember,
  readWorkspaceMember,
  readWorkspaceRole,
  updateNamespaceMember,
  updateWorkspaceMember,
} from './member-operations.js';
import { platformUser } from './platform-user.js';
import { GLOBAL_ROLE_ANNOTATION, RBAC_GROUP, USER_REF_LABEL } from './role-templates.js';
import { WORKSPACE_ROLE_BINDINGS_PATH, replacing, type MemberWriteHooks } from './role-bindings.js';
import type { BindingRef } from '../../../controllers/platform-rbac/superseded.js';
import {
  asksForTemplates,
  namespaceRoleTemplates,
  namespaceRoles,
  rolePage,
  templatesOfWorkspaceRole,
  workspaceRoleTemplates,
  workspaceRoles,
} from './scoped-roles.js';
import type { GlobalRoleDirectory } from './global-roles.js';

export interface TenantMemberDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  roles: GlobalRoleDirectory;
  client: KubeClient;
  logger: Logger;
  hooks?: MemberWriteHooks;
}

const IAM_GROUP = 'iam.kapi.io';
const WORKSPACE_ROLE_ANNOTATION = 'iam.kapi.io/workspacerole';
const ROLE_ANNOTATION = 'iam.kapi.io/role';
const MAX_MEMBERS = 100;
const RBAC_PATH = `/apis/${RBAC_GROUP}/v1`;
const users = KINDS_BY_RESOURCE.get('users') as KindDefinition;
const namespacesKind = KINDS_BY_RESOURCE.get('namespaces') as KindDefinition;

/** The members of a POST body, each checked (`[i].field` names a bad entry). */
function membersFrom(body: unknown): ClusterMember[] {
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_MEMBERS)
    throw new BadRequestError(`the body must be a list of 1 to ${MAX_MEMBERS} members {username, roleRef}`);
  return body.map((value, i) => clusterMemberFrom(value, `[${i}]`));
}

function memberFrom(body: unknown, name: string): ClusterMember {
  const member = clusterMemberFrom(body, 'body');
  if (member.username !== name)
    throw new BadRequestError(`the username of the member (${member.username}) is not the URL's (${name})`);
  return member;
}

/**
 * Workspace and project members and roles (SPEC §18). Workspace rights are SubjectAccessReviews on the workspace's
 * pseudo-subresources (`workspacetemplates/workspacemembers` …, its name), which kapi's controller realizes for its
 * members; a workspace membership is written by kapi once the caller passed the rule against escalation; a project
 * membership is a RoleBinding written as the caller, so kube-apiserver applies that rule itself.
 */
export function tenantMemberRoutes(deps: TenantMemberDeps): Router {
  const router = Router();
  const memberships = new TenantMemberships(deps.listing);
  const workspaceRight = (verb: string, sub: string, workspace: string): ResourceAttributes => ({
    verb,
    group: TENANT_GROUP,
    resource: 'workspacetemplates',
    subresource: sub,
    name: workspace,
    fresh: true,
  });

  const existingWorkspace = async (workspace: string) => {
    const template = await memberships.workspace(workspace);
    if (!template)
      throw new NotFoundError(`workspacetemplates.${TENANT_GROUP} "${workspace}" not found`, {
        name: workspace,
        group: TENANT_GROUP,
        kind: 'workspacetemplates',
      });
    return template;
  };
  const existingUser = async (name: string) => {
    const stored = await deps.listing.readCached(users, undefined, name);
    if (!stored)
      throw new NotFoundError(`users.${IAM_GROUP} "${name}" not found`, { name, group: IAM_GROUP, kind: 'users' });
    return JSON.parse(stored.toString('utf8'));
  };
  const roleNotFound = (name: string, kind: string) =>
    new NotFoundError(`${kind}.${IAM_GROUP} "${name}" not found`, { name, group: IAM_GROUP, kind });

  /** The users of `members`, listed as users are (the listing's parameters), each annotated with its role. */
  const listMembers = async (
    members: Map<string, string>,
    query: Record<string, unknown>,
    annotation: string,
    only: string | undefined,
  ) => {
    const names = new Set([...members].filter(([, role]) => !only || role === only).map(([user]) => user));
    const { [annotation === ROLE_ANNOTATION ? 'role' : 'workspacerole']: _only, ...rest } = query;
    const answer = await deps.listing.listCached(users, rest, names);
    return {
      items: answer.items.map((item) => annotated(parseListedItem(item), members, annotation)),
      totalItems: answer.totalItems,
    };
  };
  const annotated = (stored: unknown, members: Map<string, string>, annotation: string) => {
    const user = platformUser(stored, undefined);
    const name = user.metadata.name as string;
    const globalRole = deps.roles.roleOf(name);
    user.metadata.annotations = {
      ...user.metadata.annotations,
      ...(globalRole && { [GLOBAL_ROLE_ANNOTATION]: globalRole }),
      [annotation]: members.get(name),
    };
    return user;
  };

  // ---- workspace roles -------------------------------------------------------------------------------------------

  mountOperation(
    router,
    '',
    listWorkspaceRoles,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, workspaceRight('list', 'workspaceroles', workspace));
      const template = await existingWorkspace(workspace);
      const query = req.query as Record<string, unknown>;
      const roles = asksForTemplates(query)
        ? workspaceRoleTemplates()
        : workspaceRoles(workspace, template.metadata?.creationTimestamp);
      res.json(rolePage(roles, asksForTemplates(query) ? { ...query, label: undefined } : query));
    }),
  );

  mountOperation(
    router,
    '',
    readWorkspaceRole,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.role);
      await requireRight(deps.authorizer, caller, workspaceRight('get', 'workspaceroles', workspace));
      const template = await existingWorkspace(workspace);
      const role = workspaceRoles(workspace, template.metadata?.creationTimestamp).find(
        (candidate) => candidate.metadata.name === name,
      );
      if (!role) throw roleNotFound(name, 'workspaceroles');
      res.json(role);
    }),
  );

  // ---- workspace members -----------------------------------------------------------------------------------------

  mountOperation(
    router,
    '',
    listWorkspaceMembers,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, workspaceRight('list', 'workspacemembers', workspace));
      await existingWorkspace(workspace);
      const members = await memberships.membersOf(workspace);
      const named = new Map([...members].map(([user, base]) => [user, workspaceRoleName(workspace, base)]));
      const only =
        typeof req.query.workspacerole === 'string' && req.query.workspacerole ? req.query.workspacerole : undefined;
      res.json(await listMembers(named, req.query as Record<string, unknown>, WORKSPACE_ROLE_ANNOTATION, only));
    }),
  );

  mountOperation(
    router,
    '',
    readWorkspaceMember,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.name);
      await requireRight(deps.authorizer, caller, workspaceRight('get', 'workspacemembers', workspace));
      await existingWorkspace(workspace);
      const base = (await memberships.membersOf(workspace)).get(name);
      if (!base) throw new NotFoundError(`user "${name}" is not a member of workspace "${workspace}"`);
      const stored = await existingUser(name);
      res.json(annotated(stored, new Map([[name, workspaceRoleName(workspace, base)]]), WORKSPACE_ROLE_ANNOTATION));
    }),
  );

  const confirmGivable = (caller: UserInfo, workspace: string, base: WorkspaceRoleBase) =>
    confirmWorkspaceRoleGivable(deps.authorizer, deps.listing, caller, workspace, base);

  /** A member may be made: the user exists and is not the manager, the role is the workspace's and givable. */
  const checkWorkspaceMember = async (
    caller: UserInfo,
    workspace: string,
    template: { spec?: { template?: { spec?: { manager?: string } } } },
    member: ClusterMember,
  ): Promise<WorkspaceRoleBase> => {
    await existingUser(member.username);
    const base = baseOf(workspace, member.roleRef);
    if (!base) throw roleNotFound(member.roleRef, 'workspaceroles');
    if (template.spec?.template?.spec?.manager === member.username) throw managerConflict(workspace, member.username);
    await confirmGivable(caller, workspace, base);
    return base;
  };
  const managerConflict = (workspace: string, user: string) =>
    new ApiError(
      409,
      'Conflict',
      `user "${user}" manages workspace "${workspace}" and is its admin while it does: change the manager first`,
      { name: user, group: IAM_GROUP, kind: 'workspacemembers' },
    );

  /** Makes the membership, then ends the user's other ones in the workspace (one role per scope). */
  const makeWorkspaceMember = async (workspace: string, user: string, base: WorkspaceRoleBase) => {
    const binding = workspaceMemberBinding(workspace, user, base);
    const name = (binding.metadata as { name: string }).name;
    const others = (await workspaceBindingsOf(workspace, user)).filter((other) => other.name !== name);
    try {
      await deps.client.request({
        method: 'POST',
        path: WORKSPACE_ROLE_BINDINGS_PATH,
        body: replacing(binding, others),
        timeoutMs: 10_000,
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 409)) throw err;
    }
    await deps.hooks?.afterNewBinding?.(name);
    await Promise.all(others.map((other) => removeWorkspaceBinding(other.name, other.uid)));
    deps.logger.info('workspace role given', { audit: 'workspacemember', workspace, user, role: base });
  };
  /** The user's memberships of the workspace, read from kube-apiserver (not the cache: a change just made counts). */
  const workspaceBindingsOf = async (workspace: string, user: string): Promise<BindingRef[]> => {
    const listed = await deps.client.request<{ items?: { metadata?: { name?: string; uid?: string } }[] }>({
      path: WORKSPACE_ROLE_BINDINGS_PATH,
      query: { labelSelector: `kapi.io/workspace=${workspace},${USER_REF_LABEL}=${user}` },
      timeoutMs: 10_000,
    });
    return (listed.items ?? []).flatMap((item) =>
      item.metadata?.name ? [{ name: item.metadata.name, uid: item.metadata.uid ?? '' }] : [],
    );
  };
  /** Deletes a membership; `uid`: only that one (one of the name made since is not it). */
  const removeWorkspaceBinding = async (name: string, uid?: string) => {
    try {
      await deps.client.request({
        method: 'DELETE',
        path: `${WORKSPACE_ROLE_BINDINGS_PATH}/${encodeURIComponent(name)}`,
        ...(uid && { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } } }),
        timeoutMs: 10_000,
      });
    } catch (err) {
      if (!(err instanceof KubeApiError && (err.code === 404 || (uid && err.code === 409)))) throw err;
    }
  };

  mountOperation(
    router,
    '',
    createWorkspaceMembers,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, workspaceRight('create', 'workspacemembers', workspace));
      const template = await existingWorkspace(workspace);
      const members = membersFrom(req.body);
      // every member checked before any is made: a refusal leaves the workspace as it was
      const bases: WorkspaceRoleBase[] = [];
      for (const member of members) bases.push(await checkWorkspaceMember(caller, workspace, template, member));
      for (const [i, member] of members.entries())
        await makeWorkspaceMember(workspace, member.username, bases[i] as WorkspaceRoleBase);
      res.json(members);
    }),
  );

  mountOperation(
    router,
    '',
    updateWorkspaceMember,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.name);
      await requireRight(deps.authorizer, caller, workspaceRight('update', 'workspacemembers', workspace));
      const template = await existingWorkspace(workspace);
      const member = memberFrom(req.body, name);
      const base = await checkWorkspaceMember(caller, workspace, template, member);
      await makeWorkspaceMember(workspace, name, base);
      res.json(member);
    }),
  );

  mountOperation(
    router,
    '',
    deleteWorkspaceMember,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.name);
      await requireRight(deps.authorizer, caller, workspaceRight('delete', 'workspacemembers', workspace));
      const template = await existingWorkspace(workspace);
      if (template.spec?.template?.spec?.manager === name) throw managerConflict(workspace, name);
      const bindings = await workspaceBindingsOf(workspace, name);
      if (bindings.length === 0) throw new NotFoundError(`user "${name}" is not a member of workspace "${workspace}"`);
      await Promise.all(bindings.map((binding) => removeWorkspaceBinding(binding.name)));
      deps.logger.info('workspace member removed', { audit: 'workspacemember', workspace, user: name });
      res.json(deletedStatus(name, IAM_GROUP, 'workspacemembers'));
    }),
  );

  mountOperation(
    router,
    '',
    listWorkspaceMemberRoleTemplates,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.name);
      if (caller.username !== name)
        await requireRight(deps.authorizer, caller, workspaceRight('get', 'workspacemembers', workspace));
      const base = (await memberships.membersOf(workspace)).get(name);
      res.json(base ? templatesOfWorkspaceRole(base) : []);
    }),
  );

  // ---- project roles and members ---------------------------------------------------------------------------------

  const existingNamespace = async (namespace: string) => {
    const stored = await deps.listing.readCached(namespacesKind, undefined, namespace);
    if (!stored)
      throw new NotFoundError(`namespaces "${namespace}" not found`, {
        name: namespace,
        group: '',
        kind: 'namespaces',
      });
    return JSON.parse(stored.toString('utf8'));
  };
  const projectRight = (verb: string, namespace: string, resource = 'members'): ResourceAttributes => ({
    verb,
    group: IAM_GROUP,
    resource,
    namespace,
    fresh: true,
  });

  mountOperation(
    router,
    '',
    listNamespaceRoles,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      await requireRight(deps.authorizer, caller, projectRight('list', namespace, 'roles'));
      const stored = await existingNamespace(namespace);
      const query = req.query as Record<string, unknown>;
      const roles = asksForTemplates(query)
        ? namespaceRoleTemplates(namespace)
        : namespaceRoles(namespace, stored.metadata?.creationTimestamp);
      res.json(rolePage(roles, asksForTemplates(query) ? { ...query, label: undefined } : query));
    }),
  );

  mountOperation(
    router,
    '',
    readNamespaceRole,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      const name = String(req.params.role);
      await requireRight(deps.authorizer, caller, projectRight('get', namespace, 'roles'));
      const stored = await existingNamespace(namespace);
      const role = namespaceRoles(namespace, stored.metadata?.creationTimestamp).find(
        (candidate) => candidate.metadata.name === name,
      );
      if (!role) throw roleNotFound(name, 'roles');
      res.json(role);
    }),
  );

  mountOperation(
    router,
    '',
    listNamespaceMembers,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      await requireRight(deps.authorizer, caller, projectRight('list', namespace));
      const members = await memberships.projectMembersOf(namespace);
      const only = typeof req.query.role === 'string' && req.query.role ? req.query.role : undefined;
      res.json(await listMembers(members, req.query as Record<string, unknown>, ROLE_ANNOTATION, only));
    }),
  );

  mountOperation(
    router,
    '',
    readNamespaceMember,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      const name = String(req.params.name);
      await requireRight(deps.authorizer, caller, projectRight('get', namespace));
      const role = (await memberships.projectMembersOf(namespace)).get(name);
      if (!role) throw new NotFoundError(`user "${name}" is not a member of project "${namespace}"`);
      res.json(annotated(await existingUser(name), new Map([[name, role]]), ROLE_ANNOTATION));
    }),
  );

  /** A member RoleBinding written as the caller: kube-apiserver's escalation rule decides. */
  const asCaller = (caller: UserInfo, request: KubeRequest, name: string) =>
    asKapiCaller(deps.client, caller, request, { name, group: RBAC_GROUP, kind: 'rolebindings' });

  const projectRole = (member: ClusterMember): NamespaceRole => {
    const role = NAMESPACE_ROLES.find((candidate) => candidate === member.roleRef);
    if (!role) throw roleNotFound(member.roleRef, 'roles');
    return role;
  };

  /** Makes the membership as the caller, then ends the user's other ones in the project (one role per scope). */
  const makeProjectMember = async (caller: UserInfo, namespace: string, user: string, role: NamespaceRole) => {
    const name = `${user}-${role}`;
    const others = (await memberships.projectBindingsOf(namespace, user))
      .map((other) => ({ name: String(other?.metadata?.name), uid: String(other?.metadata?.uid ?? '') }))
      .filter((other) => other.name !== name);
    const binding = replacing(namespaceMemberBinding(namespace, user, role), others);
    const path = `${RBAC_PATH}/namespaces/${encodeURIComponent(namespace)}/rolebindings`;
    try {
      await asCaller(caller, { method: 'POST', path, body: binding }, name);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
    await deps.hooks?.afterNewBinding?.(name);
    for (const other of others) await removeProjectBinding(caller, namespace, other.name);
    deps.logger.info('project role given', { audit: 'member', namespace, user, role });
  };
  const removeProjectBinding = async (caller: UserInfo, namespace: string, name: string) => {
    try {
      await asCaller(
        caller,
        {
          method: 'DELETE',
          path: `${RBAC_PATH}/namespaces/${encodeURIComponent(namespace)}/rolebindings/${encodeURIComponent(name)}`,
        },
        name,
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  };

  mountOperation(
    router,
    '',
    createNamespaceMembers,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      const members = membersFrom(req.body);
      const roles: NamespaceRole[] = [];
      for (const member of members) {
        await existingUser(member.username);
        roles.push(projectRole(member));
      }
      for (const [i, member] of members.entries())
        await makeProjectMember(caller, namespace, member.username, roles[i] as NamespaceRole);
      res.json(members);
    }),
  );

  mountOperation(
    router,
    '',
    updateNamespaceMember,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      const member = memberFrom(req.body, String(req.params.name));
      await existingUser(member.username);
      await makeProjectMember(caller, namespace, member.username, projectRole(member));
      res.json(member);
    }),
  );

  mountOperation(
    router,
    '',
    deleteNamespaceMember,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      const name = String(req.params.name);
      const bindings = await memberships.projectBindingsOf(namespace, name);
      if (bindings.length === 0) throw new NotFoundError(`user "${name}" is not a member of project "${namespace}"`);
      for (const binding of bindings)
        await removeProjectBinding(
          caller,
          namespace,
          String((binding as { metadata: { name: string } }).metadata.name),
        );
      deps.logger.info('project member removed', { audit: 'member', namespace, user: name });
      res.json(deletedStatus(name, IAM_GROUP, 'members'));
    }),
  );

  return router;
}
