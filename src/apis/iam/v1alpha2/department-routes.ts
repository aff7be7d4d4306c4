import { Router } from 'express';
import { jsonBody } from '../../../auth/account/account-routes.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import {
  NAMESPACE_ROLES,
  TENANT_GROUP,
  baseOf,
  namespaceRoleClusterRole,
  type NamespaceRole,
  type WorkspaceRoleBase,
} from '../../../controllers/platform-rbac/workspaces.js';
import { KubeApiError, type KubeClient } from '../../../kube/client.js';
import type { Logger } from '../../../observability/logger.js';
import { isObjectName } from '../../../auth/kube-names.js';
import { mountOperation } from '../../../openapi/operation.js';
import { ApiError, BadRequestError, NotFoundError } from '../../../server/errors.js';
import { WORKSPACE_UID_ANNOTATION, ofLiveWorkspace } from '../../../auth/departments/departments.js';
import { REALIZES_LABEL } from '../../../controllers/platform-rbac/realize.js';
import { asCaller, asKapi, deletedStatus, patchBody, requireRight, withCaller } from '../../caller.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import { parseListedItem, type ResourceListing } from '../../resources/v1alpha3/listing/resource-listing.js';
import {
  createDepartmentRoleBindings,
  createDepartmentWorkspaceRoleBindings,
  createDepartment,
  createDepartmentMembers,
  deleteDepartmentRoleBinding,
  deleteDepartmentWorkspaceRoleBinding,
  deleteDepartment,
  deleteDepartmentMember,
  listDepartmentRoleBindings,
  listDepartmentWorkspaceRoleBindings,
  listDepartmentMembers,
  listDepartments,
  patchDepartment,
  readDepartment,
  updateDepartment,
} from './department-operations.js';
import {
  GROUP_PARENT_LABEL,
  GROUP_REF_LABEL,
  WORKSPACE_LABEL,
  departmentGroup,
  departmentChanged,
  departmentMembership,
  departmentProjectBinding,
  departmentRoleEntries,
  departmentToCreate,
  departmentWorkspaceBinding,
  departmentsBelow,
  membershipEntries,
} from './departments.js';
import { confirmProjectRoleGivable, confirmWorkspaceRoleGivable } from './givable-roles.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface DepartmentRouteDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  /** kapi's own credentials (departments, their users, workspace role bindings); project bindings go as the caller. */
  client: KubeClient;
  logger: Logger;
}

const IAM = 'iam.kapi.io';
const IAM_PATH = `/apis/${IAM}/v1alpha2`;
const RBAC_PATH = '/apis/rbac.authorization.k8s.io/v1';
const kind = (resource: string) => KINDS_BY_RESOURCE.get(resource) as KindDefinition;
const groupsKind = kind('groups');
const groupBindingsKind = kind('groupbindings');
const workspaceBindingsKind = kind('workspacerolebindings');
const roleBindingsKind = kind('rolebindings');
const clusterRoleBindingsKind = kind('clusterrolebindings');
const namespacesKind = kind('namespaces');
const usersKind = kind('users');

/**
 * A workspace's departments (KubeSphere's Groups) at the console's routes. Every right is a SubjectAccessReview on
 * the workspace's `workspacetemplates/groups` (or `/workspacemembers` for the roles given to a department); kapi then
 * writes with its own credentials, except a department's project RoleBindings, written as the caller so that
 * kube-apiserver applies RBAC's rule against escalation itself. Reads come from the listing's watched caches.
 */
export function departmentRoutes(deps: DepartmentRouteDeps): Router {
  const router = Router();
  const log = deps.logger.child({ component: 'departments' });
  const right = (verb: string, sub: string, workspace: string): ResourceAttributes => ({
    verb,
    group: TENANT_GROUP,
    resource: 'workspacetemplates',
    subresource: sub,
    name: workspace,
    fresh: true,
  });
  const notFound = (name: string, kindName: string, group = IAM) =>
    new NotFoundError(`${group ? `${kindName}.${group}` : kindName} "${name}" not found`, {
      name,
      group,
      kind: kindName,
    });

  /** The workspace's uid; 404 when there is no such workspace. */
  const existingWorkspace = async (workspace: string): Promise<string> => {
    const stored = await deps.listing.readCached(kind('workspacetemplates'), undefined, workspace);
    if (!stored) throw notFound(workspace, 'workspacetemplates', TENANT_GROUP);
    return String(JSON.parse(stored.toString('utf8')).metadata?.uid ?? '');
  };
  /** The workspace's departments, parsed: none of an earlier workspace of the name. */
  const departmentsOf = async (workspace: string): Promise<Raw[]> => {
    const stored = await deps.listing.readCached(kind('workspacetemplates'), undefined, workspace);
    if (!stored) return [];
    const uids = new Map([[workspace, String(JSON.parse(stored.toString('utf8')).metadata?.uid ?? '')]]);
    return ((await deps.listing.cachedWithField(groupsKind, 'workspace', new Set([workspace]))) as Raw[]).filter(
      (group) => ofLiveWorkspace(group, uids),
    );
  };
  const department = async (workspace: string, name: string): Promise<Raw> => {
    const group = (await departmentsOf(workspace)).find((candidate) => candidate.metadata?.name === name);
    if (group) return group;
    // one just made may not be in the cache yet (the console gives a new department its role at once)
    const fresh = isObjectName(name) ? await readFresh(name) : undefined;
    const stored = await deps.listing.readCached(kind('workspacetemplates'), undefined, workspace);
    const uid = stored && String(JSON.parse(stored.toString('utf8')).metadata?.uid ?? '');
    if (!fresh || !uid || fresh.metadata?.deletionTimestamp || !ofLiveWorkspace(fresh, new Map([[workspace, uid]])))
      throw notFound(name, 'groups');
    const { managedFields: _managed, ...metadata } = fresh.metadata ?? {};
    return { ...fresh, metadata };
  };
  /** A Group as kube-apiserver has it now; undefined when there is none. */
  const readFresh = (name: string): Promise<Raw | undefined> =>
    deps.client
      .request<Raw>({ path: `${IAM_PATH}/groups/${encodeURIComponent(name)}`, timeoutMs: 10_000 })
      .catch((err: unknown) => {
        if (err instanceof KubeApiError && err.code === 404) return undefined;
        throw err;
      });
  const namesOf = (objects: readonly Raw[]) => new Set(objects.map((o) => o.metadata.name as string));
  /**
   * The departments a body may name as its parent: the cached ones, and the one it names when kube-apiserver has it
   * in this workspace though the cache does not yet (a sub-department made right after its parent).
   */
  const parentsFor = async (workspace: string, departments: readonly Raw[], ...from: Raw[]): Promise<Set<string>> => {
    const names = namesOf(departments);
    const parentOf = (o: Raw) => o?.metadata?.labels?.[GROUP_PARENT_LABEL];
    const named = from.map(parentOf).find((parent) => typeof parent === 'string');
    if (typeof named !== 'string' || names.has(named) || !isObjectName(named)) return names;
    const fresh = await readFresh(named);
    const stored = await deps.listing.readCached(kind('workspacetemplates'), undefined, workspace);
    const uid = stored && String(JSON.parse(stored.toString('utf8')).metadata?.uid ?? '');
    if (fresh && uid && ofLiveWorkspace(fresh, new Map([[workspace, uid]])) && !fresh.metadata?.deletionTimestamp)
      names.add(named);
    return names;
  };

  /** A department's workspace role bindings and project role bindings, from the caches. */
  const grantsOf = async (workspace: string, group: string) => {
    const workspaceBindings = (
      (await deps.listing.cachedWithField(workspaceBindingsKind, 'workspace', new Set([workspace]))) as Raw[]
    ).filter((b) => b.metadata?.labels?.[GROUP_REF_LABEL] === group);
    const projects = await workspaceProjects(workspace);
    const roleBindings = (
      (await deps.listing.cachedWhere(roleBindingsKind, (labels) => labels?.[GROUP_REF_LABEL] === group)) as Raw[]
    ).filter((b) => projects.has(b.metadata?.namespace));
    return { workspaceBindings, roleBindings };
  };
  const workspaceProjects = async (workspace: string) =>
    namesOf(
      (await deps.listing.cachedWhere(namespacesKind, (labels) => labels?.[WORKSPACE_LABEL] === workspace)) as Raw[],
    );

  /**
   * RBAC's rule against escalation for one who puts users in `group`: whatever any binding gives the department's
   * group, wherever it is (a project moved to another workspace keeps its bindings), the caller could give itself:
   * a workspace role or project role by the rules it holds, any other role only by `bind`.
   */
  const confirmDepartmentGivable = async (caller: UserInfo, group: string) => {
    const subject = new Set([`Group:${departmentGroup(group)}`]);
    const [workspaceBindings, roleBindings, clusterBindings] = (await Promise.all(
      [workspaceBindingsKind, roleBindingsKind, clusterRoleBindingsKind].map((kindOf) =>
        deps.listing.cachedWithField(kindOf, 'subject', subject),
      ),
    )) as Raw[][];
    // what kapi's controller realized of a workspace role is checked as that role (its WorkspaceRoleBinding), and a
    // binding labelled as realized that is not kapi's is deleted by the controller
    const own = (binding: Raw) => binding?.metadata?.labels?.[REALIZES_LABEL] === undefined;
    for (const binding of workspaceBindings ?? []) {
      const workspace = binding.metadata?.labels?.[WORKSPACE_LABEL];
      const base = typeof workspace === 'string' ? baseOf(workspace, String(binding.roleRef?.name ?? '')) : undefined;
      if (!base) continue; // no workspace role: kapi's controller realizes nothing of it
      await confirmWorkspaceRoleGivable(deps.authorizer, deps.listing, caller, workspace, base);
    }
    for (const binding of (roleBindings ?? []).filter(own)) {
      const namespace = binding.metadata.namespace as string;
      const role = NAMESPACE_ROLES.find((r) => namespaceRoleClusterRole(r) === binding.roleRef?.name);
      if (role && binding.roleRef?.kind === 'ClusterRole')
        await confirmProjectRoleGivable(deps.authorizer, caller, namespace, role);
      else await confirmBindable(caller, binding.roleRef, namespace);
    }
    for (const binding of (clusterBindings ?? []).filter(own))
      await confirmBindable(caller, binding.roleRef, undefined);
  };
  /** A role of any other kind a department holds: only one who may bind it may put users in the department. */
  const confirmBindable = async (caller: UserInfo, roleRef: Raw, namespace: string | undefined) => {
    await requireRight(deps.authorizer, caller, {
      verb: 'bind',
      group: 'rbac.authorization.k8s.io',
      resource: roleRef?.kind === 'Role' ? 'roles' : 'clusterroles',
      name: String(roleRef?.name ?? ''),
      ...(namespace !== undefined && { namespace }),
    });
  };

  const deleteIgnoringMissing = async (path: string) => {
    try {
      await deps.client.request({ method: 'DELETE', path, timeoutMs: 10_000 });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 404)) throw err;
    }
  };

  // ---- departments -----------------------------------------------------------------------------------------------

  mountOperation(
    router,
    '',
    listDepartments,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('list', 'groups', workspace));
      await existingWorkspace(workspace);
      const names = namesOf(await departmentsOf(workspace));
      res.json(await listed(deps.listing, groupsKind, req.query as Record<string, unknown>, names));
    }),
  );

  mountOperation(
    router,
    '',
    readDepartment,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('get', 'groups', workspace));
      res.json(await department(workspace, String(req.params.group)));
    }),
  );

  mountOperation(
    router,
    '',
    createDepartment,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('create', 'groups', workspace));
      const uid = await existingWorkspace(workspace);
      const departments = await departmentsOf(workspace);
      const group = departmentToCreate(
        req.body,
        workspace,
        await parentsFor(workspace, departments, req.body),
        caller.username,
      );
      if ('error' in group) throw new BadRequestError(group.error);
      // made in this workspace, not in one made later under its name
      group.metadata.annotations[WORKSPACE_UID_ANNOTATION] = `${workspace}/${uid}`;
      const display = group.metadata.generateName as string;
      if (departments.some((d) => d.metadata?.generateName === display))
        throw new ApiError(
          409,
          'AlreadyExists',
          `a department named "${display}" is already in workspace "${workspace}"`,
          {
            name: display,
            group: IAM,
            kind: 'groups',
          },
        );
      const made = await asKapi(
        deps.client,
        { method: 'POST', path: `${IAM_PATH}/groups`, body: group },
        { name: display, group: IAM, kind: 'groups' },
      );
      log.info('department made', { audit: 'department', workspace, group: made.metadata?.name, by: caller.username });
      res.json(made);
    }),
  );

  for (const operation of [updateDepartment, patchDepartment]) {
    const merge = operation === patchDepartment;
    mountOperation(
      router,
      '',
      operation,
      merge ? patchBody : jsonBody,
      withCaller(async (caller, req, res) => {
        const workspace = String(req.params.workspace);
        const name = String(req.params.group);
        await requireRight(deps.authorizer, caller, right(merge ? 'patch' : 'update', 'groups', workspace));
        const stored = await department(workspace, name);
        const departments = await departmentsOf(workspace);
        const changed = departmentChanged(
          stored,
          req.body,
          merge ? 'merge' : 'replace',
          // the parent the body names, else the one it keeps
          await parentsFor(workspace, departments, req.body, merge ? stored : undefined),
          new Set(departmentsBelow(departments, name)),
        );
        if ('error' in changed) throw new BadRequestError(changed.error);
        // written with the resourceVersion the body was read at (a PUT's), else the one cached: a change meanwhile is
        // a 409, never lost
        const { managedFields: _managed, ...metadata } = changed.metadata;
        const readAt = merge ? undefined : req.body?.metadata?.resourceVersion;
        if (typeof readAt === 'string' && readAt !== '') metadata.resourceVersion = readAt;
        try {
          const written = await deps.client.request<Raw>({
            method: 'PUT',
            path: `${IAM_PATH}/groups/${encodeURIComponent(name)}`,
            body: { ...changed, metadata },
            timeoutMs: 10_000,
          });
          const { managedFields: _written, ...shown } = written.metadata ?? {};
          res.json({ ...written, metadata: shown });
        } catch (err) {
          if (err instanceof KubeApiError && err.code === 409)
            throw new ApiError(409, 'Conflict', `department "${name}" changed since it was read: read it again`, {
              name,
              group: IAM,
              kind: 'groups',
            });
          if (err instanceof KubeApiError && err.code === 404) throw notFound(name, 'groups');
          throw err;
        }
      }),
    );
  }

  mountOperation(
    router,
    '',
    deleteDepartment,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.group);
      await requireRight(deps.authorizer, caller, right('delete', 'groups', workspace));
      const group = await department(workspace, name);
      const departments = await departmentsOf(workspace);
      // sub-departments first, each with what it was given and who was in it, then the department
      for (const gone of [...departmentsBelow(departments, name).reverse(), name]) {
        const { workspaceBindings, roleBindings } = await grantsOf(workspace, gone);
        const members = (
          (await deps.listing.cachedWithField(groupBindingsKind, 'workspace', new Set([workspace]))) as Raw[]
        ).filter((b) => b.groupRef?.name === gone);
        await Promise.all([
          ...workspaceBindings.map((b) =>
            deleteIgnoringMissing(`${IAM_PATH}/workspacerolebindings/${encodeURIComponent(b.metadata.name)}`),
          ),
          ...roleBindings.map((b) =>
            deleteIgnoringMissing(
              `${RBAC_PATH}/namespaces/${encodeURIComponent(b.metadata.namespace)}/rolebindings/${encodeURIComponent(b.metadata.name)}`,
            ),
          ),
          ...members.map((b) =>
            deleteIgnoringMissing(`${IAM_PATH}/groupbindings/${encodeURIComponent(b.metadata.name)}`),
          ),
        ]);
        await deleteIgnoringMissing(`${IAM_PATH}/groups/${encodeURIComponent(gone)}`);
      }
      log.info('department deleted', { audit: 'department', workspace, group: name, by: caller.username });
      res.json(deletedStatus(name, IAM, 'groups', group.metadata?.uid));
    }),
  );

  // ---- who is in them ------------------------------------------------------------------------------------------

  const membershipsIn = async (workspace: string) =>
    (await deps.listing.cachedWithField(groupBindingsKind, 'workspace', new Set([workspace]))) as Raw[];

  mountOperation(
    router,
    '',
    listDepartmentMembers,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('list', 'groups', workspace));
      await existingWorkspace(workspace);
      const names = namesOf(await membershipsIn(workspace));
      res.json(await listed(deps.listing, groupBindingsKind, req.query as Record<string, unknown>, names));
    }),
  );

  mountOperation(
    router,
    '',
    createDepartmentMembers,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('update', 'groups', workspace));
      await existingWorkspace(workspace);
      const entries = membershipEntries(req.body);
      if ('error' in entries) throw new BadRequestError(entries.error);
      // every entry checked before any is written: a refusal leaves the departments as they were
      const checked = new Set<string>();
      for (const { user, group } of entries) {
        await department(workspace, group);
        if (!(await deps.listing.readCached(usersKind, undefined, user))) throw notFound(user, 'users');
        if (!checked.has(group)) await confirmDepartmentGivable(caller, group);
        checked.add(group);
      }
      const existing = await membershipsIn(workspace);
      const answer: Raw[] = [];
      for (const { user, group } of entries) {
        const had = existing.find(
          (b) => b.groupRef?.name === group && Array.isArray(b.users) && b.users.includes(user),
        );
        if (had) {
          answer.push(had);
          continue;
        }
        const binding = departmentMembership(workspace, group, user);
        try {
          answer.push(
            await deps.client.request<Raw>({
              method: 'POST',
              path: `${IAM_PATH}/groupbindings`,
              body: binding,
              timeoutMs: 10_000,
            }),
          );
        } catch (err) {
          if (!(err instanceof KubeApiError && err.code === 409)) throw err;
          // made meanwhile (a second add at once): the one of its name, if it is this membership
          const made = await deps.client.request<Raw>({
            path: `${IAM_PATH}/groupbindings/${encodeURIComponent(binding.metadata.name)}`,
            timeoutMs: 10_000,
          });
          if (made?.groupRef?.name !== group || !Array.isArray(made.users) || !made.users.includes(user))
            throw new ApiError(
              409,
              'Conflict',
              `groupbindings.${IAM} "${binding.metadata.name}" exists for another membership`,
              {
                name: binding.metadata.name,
                group: IAM,
                kind: 'groupbindings',
              },
            );
          answer.push(made);
          continue;
        }
        log.info('user put in department', { audit: 'department', workspace, group, user, by: caller.username });
      }
      res.json(answer);
    }),
  );

  mountOperation(
    router,
    '',
    deleteDepartmentMember,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.groupbinding);
      await requireRight(deps.authorizer, caller, right('update', 'groups', workspace));
      const all = await membershipsIn(workspace);
      const binding = all.find((b) => b.metadata?.name === name);
      if (!binding) throw notFound(name, 'groupbindings');
      // every binding of the same users to the department goes with it: none is left to keep them in
      const users = new Set(Array.isArray(binding.users) ? binding.users : []);
      const same = all.filter(
        (b) =>
          b.groupRef?.name === binding.groupRef?.name &&
          Array.isArray(b.users) &&
          b.users.length > 0 &&
          b.users.every((u: unknown) => users.has(u)),
      );
      await Promise.all(
        same.map((b) => deleteIgnoringMissing(`${IAM_PATH}/groupbindings/${encodeURIComponent(b.metadata.name)}`)),
      );
      log.info('user taken out of department', {
        audit: 'department',
        workspace,
        group: binding.groupRef?.name,
        users: binding.users,
        by: caller.username,
      });
      res.json(deletedStatus(name, IAM, 'groupbindings', binding.metadata?.uid));
    }),
  );

  // ---- the workspace roles given to departments ----------------------------------------------------------------

  const departmentWorkspaceBindings = async (workspace: string) =>
    ((await deps.listing.cachedWithField(workspaceBindingsKind, 'workspace', new Set([workspace]))) as Raw[]).filter(
      (b) => typeof b.metadata?.labels?.[GROUP_REF_LABEL] === 'string',
    );

  mountOperation(
    router,
    '',
    listDepartmentWorkspaceRoleBindings,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('list', 'groups', workspace));
      await existingWorkspace(workspace);
      const names = namesOf(await departmentWorkspaceBindings(workspace));
      const { rolename, ...query } = req.query as Record<string, unknown>;
      res.json(
        await listed(
          deps.listing,
          workspaceBindingsKind,
          { ...query, ...(rolename ? { workspacerole: rolename } : {}) },
          names,
        ),
      );
    }),
  );

  mountOperation(
    router,
    '',
    createDepartmentWorkspaceRoleBindings,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('create', 'workspacemembers', workspace));
      await existingWorkspace(workspace);
      const entries = departmentRoleEntries(req.body);
      if ('error' in entries) throw new BadRequestError(entries.error);
      const bases: WorkspaceRoleBase[] = [];
      for (const { group, role } of entries) {
        await department(workspace, group);
        const base = baseOf(workspace, role);
        if (!base) throw notFound(role, 'workspaceroles');
        await confirmWorkspaceRoleGivable(deps.authorizer, deps.listing, caller, workspace, base);
        bases.push(base);
      }
      const answer: Raw[] = [];
      for (const { group, role } of entries) {
        const binding = departmentWorkspaceBinding(workspace, group, role);
        answer.push(await createOrKeep(`${IAM_PATH}/workspacerolebindings`, binding));
        log.info('workspace role given to department', {
          audit: 'department',
          workspace,
          group,
          role,
          by: caller.username,
        });
      }
      res.json(answer);
    }),
  );

  /**
   * Creates `object` with kapi's credentials; one of its name already there is answered as it is when it binds the
   * same (given before), and is a conflict when it binds another subject or role.
   */
  const createOrKeep = async (collection: string, object: Raw): Promise<Raw> => {
    const name = object.metadata.name as string;
    try {
      return await deps.client.request<Raw>({ method: 'POST', path: collection, body: object, timeoutMs: 10_000 });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 409)) throw err;
      const listed = await deps.client.request<{ items?: Raw[] }>({
        path: collection,
        query: { fieldSelector: `metadata.name=${name}` },
        timeoutMs: 10_000,
      });
      return sameGrant(listed.items?.[0], object, name);
    }
  };
  const sameGrant = (found: Raw, wanted: Raw, name: string): Raw => {
    if (found && subjectsOf(found) === subjectsOf(wanted) && found.roleRef?.name === wanted.roleRef?.name) return found;
    throw new ApiError(409, 'Conflict', `a binding "${name}" exists for another subject or role`, {
      name,
      group: IAM,
      kind: 'rolebindings',
    });
  };

  mountOperation(
    router,
    '',
    deleteDepartmentWorkspaceRoleBinding,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.rolebinding);
      await requireRight(deps.authorizer, caller, right('delete', 'workspacemembers', workspace));
      const binding = (await departmentWorkspaceBindings(workspace)).find((b) => b.metadata?.name === name);
      if (!binding) throw notFound(name, 'workspacerolebindings');
      await deleteIgnoringMissing(`${IAM_PATH}/workspacerolebindings/${encodeURIComponent(name)}`);
      log.info('workspace role taken from department', {
        audit: 'department',
        workspace,
        binding: name,
        by: caller.username,
      });
      res.json(deletedStatus(name, IAM, 'workspacerolebindings', binding.metadata?.uid));
    }),
  );

  // ---- the project roles given to departments ------------------------------------------------------------------

  mountOperation(
    router,
    '',
    listDepartmentRoleBindings,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, right('list', 'groups', workspace));
      await existingWorkspace(workspace);
      const projects = await workspaceProjects(workspace);
      const selector = typeof req.query.labelSelector === 'string' ? req.query.labelSelector : '';
      const wanted = equalityLabels(selector);
      if (!wanted) throw new BadRequestError('labelSelector: only key=value terms are read here');
      const found = (
        (await deps.listing.cachedWhere(
          roleBindingsKind,
          (labels) => typeof labels?.[GROUP_REF_LABEL] === 'string' && [...wanted].every(([k, v]) => labels?.[k] === v),
        )) as Raw[]
      ).filter((b) => projects.has(b.metadata?.namespace));
      res.json(found);
    }),
  );

  const projectOf = async (namespace: string): Promise<string> => {
    const stored = await deps.listing.readCached(namespacesKind, undefined, namespace);
    const workspace = stored && JSON.parse(stored.toString('utf8')).metadata?.labels?.[WORKSPACE_LABEL];
    if (!stored) throw notFound(namespace, 'namespaces', '');
    if (typeof workspace !== 'string' || workspace === '')
      throw new BadRequestError(`namespace "${namespace}" is in no workspace: it has no departments`);
    return workspace;
  };

  mountOperation(
    router,
    '',
    createDepartmentRoleBindings,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      // nothing of the project is told to one who may not bind roles in it
      await requireRight(deps.authorizer, caller, {
        verb: 'create',
        group: 'rbac.authorization.k8s.io',
        resource: 'rolebindings',
        namespace,
      });
      const workspace = await projectOf(namespace);
      const entries = departmentRoleEntries(req.body);
      if ('error' in entries) throw new BadRequestError(entries.error);
      const roles: NamespaceRole[] = [];
      for (const { group, role } of entries) {
        await department(workspace, group);
        const known = NAMESPACE_ROLES.find((r) => r === role);
        if (!known) throw notFound(role, 'roles', '');
        roles.push(known);
      }
      const answer: Raw[] = [];
      for (const [i, { group }] of entries.entries()) {
        const role = roles[i] as NamespaceRole;
        const binding = departmentProjectBinding(namespace, group, role, namespaceRoleClusterRole(role));
        const collection = `${RBAC_PATH}/namespaces/${encodeURIComponent(namespace)}/rolebindings`;
        try {
          // as the caller: kube-apiserver refuses one who may not grant the role
          answer.push(
            await asCaller(
              deps.client,
              caller,
              { method: 'POST', path: collection, body: binding },
              { name: binding.metadata.name, group: 'rbac.authorization.k8s.io', kind: 'rolebindings' },
            ),
          );
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 409)) throw err;
          const found = await asCaller(
            deps.client,
            caller,
            { path: `${collection}/${encodeURIComponent(binding.metadata.name)}` },
            { name: binding.metadata.name, group: 'rbac.authorization.k8s.io', kind: 'rolebindings' },
          );
          answer.push(sameGrant(found, binding, binding.metadata.name));
        }
        log.info('project role given to department', {
          audit: 'department',
          namespace,
          group,
          role,
          by: caller.username,
        });
      }
      res.json(answer);
    }),
  );

  mountOperation(
    router,
    '',
    deleteDepartmentRoleBinding,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      const name = String(req.params.rolebinding);
      await requireRight(deps.authorizer, caller, {
        verb: 'delete',
        group: 'rbac.authorization.k8s.io',
        resource: 'rolebindings',
        namespace,
        name,
      });
      const stored = await deps.listing.readCached(roleBindingsKind, namespace, name);
      const binding = stored && JSON.parse(stored.toString('utf8'));
      if (!binding || typeof binding.metadata?.labels?.[GROUP_REF_LABEL] !== 'string')
        throw notFound(name, 'rolebindings', 'rbac.authorization.k8s.io');
      await asCaller(
        deps.client,
        caller,
        {
          method: 'DELETE',
          path: `${RBAC_PATH}/namespaces/${encodeURIComponent(namespace)}/rolebindings/${encodeURIComponent(name)}`,
        },
        { name, group: 'rbac.authorization.k8s.io', kind: 'rolebindings' },
      );
      log.info('project role taken from department', {
        audit: 'department',
        namespace,
        binding: name,
        by: caller.username,
      });
      res.json(deletedStatus(name, 'rbac.authorization.k8s.io', 'rolebindings', binding.metadata?.uid));
    }),
  );

  return router;
}

const subjectsOf = (binding: Raw) =>
  (Array.isArray(binding?.subjects) ? binding.subjects : []).map((s: Raw) => `${s?.kind}/${s?.name}`).join(',');

/** A listing of cached objects restricted to `names`, its items parsed. */
async function listed(
  listing: ResourceListing,
  definition: KindDefinition,
  query: Record<string, unknown>,
  names: ReadonlySet<string>,
) {
  const answer = await listing.listCached(definition, query, names);
  return { items: answer.items.map((item) => parseListedItem(item)), totalItems: answer.totalItems };
}

/** `a=b,c=d` as pairs; undefined for any other term (`!=`, `in`, …), which this route does not read. */
function equalityLabels(selector: string): Map<string, string> | undefined {
  const pairs = new Map<string, string>();
  for (const term of selector
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)) {
    const match = /^([^=!\s]+)\s*==?\s*([^=!\s]*)$/.exec(term);
    if (!match) return undefined;
    pairs.set(match[1] as string, match[2] as string);
  }
  return pairs;
}
