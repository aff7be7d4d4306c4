import { Router, type NextFunction, type Request, type Response } from 'express';
import { forbidden } from '../../../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import { withCaller } from '../../caller.js';
import { TENANT_GROUP } from '../../../controllers/platform-rbac/workspaces.js';
import { mountOperation } from '../../../openapi/operation.js';
import { NotFoundError, UnauthorizedError } from '../../../server/errors.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import {
  parseListedItem,
  writeListing,
  type ResourceListing,
} from '../../resources/v1alpha3/listing/resource-listing.js';
import type { GlobalRoleDirectory } from './global-roles.js';
import { userAdminRoutes, type UserAdminDeps } from './user-routes.js';
import { memberAdminRoutes } from './member-routes.js';
import { clusterRoleAdminRoutes, globalRoleAdminRoutes } from './role-admin-routes.js';
import {
  listClusterMemberRoleTemplates,
  listClusterMembers,
  listClusterRoles,
  readClusterRole as readClusterRoleOperation,
  listGlobalRoles,
  listPlatformUsers,
  readGlobalRole,
  listNamespaceMemberRoleTemplates,
  listUserGlobalRoleTemplates,
  readPlatformUser,
} from './operations.js';
import { platformUser, userToInvite } from './platform-user.js';
import { TenantMemberships, namespaceRoleOf } from '../../tenant/memberships.js';
import { templatesOfNamespaceRole } from './scoped-roles.js';
import { tenantMemberRoutes } from './tenant-member-routes.js';
import type { MemberWriteHooks } from './role-bindings.js';
import { REALIZES_LABEL } from '../../../controllers/platform-rbac/realize.js';
import {
  CLUSTER_ROLE_ANNOTATION,
  GLOBAL_ROLE_ANNOTATION,
  USER_REF_LABEL,
  aggregatedRoleNames,
  roleBindingRecordFrom,
  roleOfUser,
} from './role-templates.js';

export interface IamRouteDeps {
  listing: ResourceListing;
  roles: GlobalRoleDirectory;
  authorizer: Authorizer;
  /** What the users' administration writes with; without it, only the reads are served. */
  admin?: Omit<UserAdminDeps, 'listing' | 'roles' | 'authorizer'>;
  /** Tests only: where a role change stops between its two writes. */
  memberWriteHooks?: MemberWriteHooks;
}

const kind = (resource: string) => KINDS_BY_RESOURCE.get(resource) as KindDefinition;
const IAM_GROUP = 'iam.kapi.io';

/**
 * The iam.kapi.io/v1alpha2 reads of every page load (SPEC §17). Users read what is their own (themselves, their
 * menus) whatever their role, as KubeSphere's `authenticated` role lets them; anything of another user is decided by
 * the cluster's RBAC on the iam.kapi.io resource it is.
 */
export function iamRoutes(deps: IamRouteDeps): Router {
  const router = Router();
  const users = kind('users');
  const clusterRoles = kind('clusterroles');
  const clusterRoleBindings = kind('clusterrolebindings');
  const roles = kind('roles');
  const roleBindings = kind('rolebindings');

  /** Runs `handler` once the caller may: its own name, or a review of `attributes`. */
  const ownOrAllowed =
    (attributes: (name: string) => ResourceAttributes, handler: (name: string, res: Response) => Promise<void>) =>
    (req: Request, res: Response, next: NextFunction) => {
      const user = req.user;
      if (!user) return next(new UnauthorizedError());
      const name = String(req.params.name);
      const allowed =
        user.username === name
          ? Promise.resolve()
          : deps.authorizer.authorize(user, attributes(name)).then((decision) => {
              if (!decision.allowed) throw forbidden(user.username, attributes(name), decision.reason);
            });
      allowed.then(() => handler(name, res)).catch(next);
    };

  /** Runs `handler` once a review of `attributes` allows the caller. */
  const guarded =
    (attributes: () => ResourceAttributes, handler: (req: Request, res: Response) => Promise<void>) =>
    (req: Request, res: Response, next: NextFunction) => {
      const user = req.user;
      if (!user) return next(new UnauthorizedError());
      deps.authorizer
        .authorize(user, attributes())
        .then((decision) => {
          if (!decision.allowed) throw forbidden(user.username, attributes(), decision.reason);
          return handler(req, res);
        })
        .catch(next);
    };

  const userExists = async (name: string) => {
    const stored = await deps.listing.readCached(users, undefined, name);
    if (!stored)
      throw new NotFoundError(`users.iam.kapi.io "${name}" not found`, { name, group: IAM_GROUP, kind: 'users' });
    return stored;
  };

  mountOperation(
    router,
    '',
    readPlatformUser,
    ownOrAllowed(
      (name) => ({ verb: 'get', group: IAM_GROUP, resource: 'users', name }),
      async (name, res) => {
        const stored = JSON.parse((await userExists(name)).toString('utf8'));
        res.json(platformUser(stored, deps.roles.roleOf(name)));
      },
    ),
  );

  mountOperation(
    router,
    '',
    listUserGlobalRoleTemplates,
    ownOrAllowed(
      (name) => ({ verb: 'get', group: IAM_GROUP, resource: 'users', subresource: 'globalroles', name }),
      async (name, res) => {
        await userExists(name);
        res.json(deps.roles.templatesOfUser(name).map((template) => template.body));
      },
    ),
  );

  /** Each member's cluster role, from kapi's memberships (ClusterRoleBindings labelled with their user). */
  const clusterMemberships = async (only?: string): Promise<Map<string, string>> => {
    const bindings = (
      await deps.listing.cachedWhere(
        clusterRoleBindings,
        // a platform role's realization is no cluster membership, whatever labels it was given
        (labels) =>
          labels?.[REALIZES_LABEL] === undefined &&
          (only === undefined ? labels?.[USER_REF_LABEL] !== undefined : labels?.[USER_REF_LABEL] === only),
      )
    ).map(roleBindingRecordFrom);
    const exists = new Map<string, boolean>();
    for (const binding of bindings) {
      if (binding.roleKind !== 'ClusterRole' || exists.has(binding.role)) continue;
      exists.set(binding.role, (await deps.listing.readCached(clusterRoles, undefined, binding.role)) !== undefined);
    }
    const members = new Map<string, string>();
    for (const binding of bindings) {
      const user = binding.labels[USER_REF_LABEL] as string;
      if (members.has(user)) continue;
      const role = roleOfUser(bindings, user, (name) => exists.get(name) === true);
      if (role) members.set(user, role);
    }
    return members;
  };

  const readClusterRole = async (name: string) => {
    const stored = await deps.listing.readCached(clusterRoles, undefined, name);
    return stored && (JSON.parse(stored.toString('utf8')) as StoredRole);
  };

  const memberships = new TenantMemberships(deps.listing);
  /** Whether the caller may add members to some workspace: all of them, or one it belongs to. */
  const invitesToAWorkspace = async (user: UserInfo) => {
    const invite = (name?: string) =>
      deps.authorizer.authorize(user, {
        verb: 'create',
        group: TENANT_GROUP,
        resource: 'workspacetemplates',
        subresource: 'workspacemembers',
        ...(name && { name }),
      });
    if ((await invite()).allowed) return true;
    for (const workspace of await memberships.workspacesOf(user)) if ((await invite(workspace)).allowed) return true;
    return false;
  };

  mountOperation(
    router,
    '',
    listPlatformUsers,
    withCaller(async (user, req, res) => {
      const attributes: ResourceAttributes = { verb: 'list', group: IAM_GROUP, resource: 'users' };
      const decision = await deps.authorizer.authorize(user, attributes);
      // whom to invite: a workspace admin picks among the users by name, and learns nothing else of them
      const picker = !decision.allowed && (await invitesToAWorkspace(user));
      if (!decision.allowed && !picker) throw forbidden(user.username, attributes, decision.reason);
      // the picker filters and sorts by what it shows (name, e-mail, creation), so no parameter tells what it hides
      const { ingroup: _in, notingroup: _out, ...asked } = req.query as Record<string, unknown>;
      const query = picker ? pickerQuery(asked) : asked;
      const role =
        !picker && typeof req.query.globalrole === 'string' && req.query.globalrole ? req.query.globalrole : undefined;
      const holders = role === undefined ? undefined : deps.roles.holdersOf(role);
      const filtered = await departmentFilter(user, req.query as Record<string, unknown>);
      const departments = filtered?.names;
      const names =
        departments && 'except' in departments && holders
          ? new Set([...holders].filter((name) => !departments.except.has(name)))
          : departments && holders
            ? new Set([...holders].filter((name) => (departments as ReadonlySet<string>).has(name)))
            : (departments ?? holders);
      const answer = await deps.listing.listCached(users, query, names);
      res.json({
        items: answer.items.map((item) => {
          const stored = parseListedItem(item);
          const shown = picker
            ? userToInvite(stored)
            : platformUser(stored, deps.roles.roleOf(String(stored?.metadata?.name)));
          // in the Departments page, a user's departments of that workspace, as KubeSphere keeps them in spec.groups
          const of = filtered?.departmentsOf.get(String(stored?.metadata?.name));
          return of ? { ...shown, spec: { ...shown.spec, groups: of } } : shown;
        }),
        totalItems: answer.totalItems,
      });
    }),
  );

  /**
   * The console's Departments page lists the users in a department (`ingroup=<group>`) and those not in it
   * (`notingroup=<group>`), as KubeSphere filters them; who is in one is told only to those who may list the
   * departments of its workspace (or list users).
   */
  const departmentFilter = async (
    caller: UserInfo,
    query: Record<string, unknown>,
  ): Promise<
    { names: ReadonlySet<string> | { except: ReadonlySet<string> }; departmentsOf: Map<string, string[]> } | undefined
  > => {
    const inGroup = typeof query.ingroup === 'string' && query.ingroup ? query.ingroup : undefined;
    const notInGroup = typeof query.notingroup === 'string' && query.notingroup ? query.notingroup : undefined;
    const group = inGroup ?? notInGroup;
    if (!group) return undefined;
    const stored = await deps.listing.readCached(kind('groups'), undefined, group);
    const workspace = stored && JSON.parse(stored.toString('utf8')).metadata?.labels?.['kapi.io/workspace'];
    const members = new Set<string>();
    const departmentsOf = new Map<string, string[]>();
    if (typeof workspace === 'string' && workspace !== '') {
      const attributes: ResourceAttributes = {
        verb: 'list',
        group: 'tenant.kapi.io',
        resource: 'workspacetemplates',
        subresource: 'groups',
        name: workspace,
      };
      const decision = await deps.authorizer.authorize(caller, attributes);
      if (
        !decision.allowed &&
        !(await deps.authorizer.authorize(caller, { verb: 'list', group: IAM_GROUP, resource: 'users' })).allowed
      )
        throw forbidden(caller.username, attributes, decision.reason);
      for (const binding of (await deps.listing.cachedWithField(
        kind('groupbindings'),
        'workspace',
        new Set([workspace]),
      )) as { groupRef?: { name?: string }; users?: unknown }[]) {
        const department = binding.groupRef?.name;
        if (typeof department !== 'string' || !Array.isArray(binding.users)) continue;
        for (const name of binding.users) {
          if (typeof name !== 'string') continue;
          if (department === group) members.add(name);
          const of = departmentsOf.get(name) ?? [];
          if (!of.includes(department)) departmentsOf.set(name, [...of, department].sort());
        }
      }
    }
    return { names: inGroup ? members : { except: members }, departmentsOf };
  };

  mountOperation(
    router,
    '',
    listClusterMembers,
    guarded(
      () => ({ verb: 'list', group: IAM_GROUP, resource: 'clustermembers' }),
      async (req, res) => {
        const members = await clusterMemberships();
        const wanted = typeof req.query.clusterrole === 'string' ? req.query.clusterrole : '';
        const names = new Set([...members].filter(([, role]) => !wanted || role === wanted).map(([user]) => user));
        const answer = await deps.listing.listCached(users, req.query as Record<string, unknown>, names);
        res.json({
          items: answer.items.map((item) => {
            const user = platformUser(parseListedItem(item), undefined);
            const name = user.metadata.name as string;
            const globalRole = deps.roles.roleOf(name);
            user.metadata.annotations = {
              ...user.metadata.annotations,
              ...(globalRole && { [GLOBAL_ROLE_ANNOTATION]: globalRole }),
              [CLUSTER_ROLE_ANNOTATION]: members.get(name),
            };
            return user;
          }),
          totalItems: answer.totalItems,
        });
      },
    ),
  );

  mountOperation(
    router,
    '',
    listClusterMemberRoleTemplates,
    ownOrAllowed(
      (name) => ({ verb: 'get', group: IAM_GROUP, resource: 'clustermembers', subresource: 'clusterroles', name }),
      async (name, res) => {
        const role = (await clusterMemberships(name)).get(name);
        res.json(await templatesRead(role ? await readClusterRole(role) : undefined, readClusterRole));
      },
    ),
  );

  mountOperation(
    router,
    '',
    listClusterRoles,
    guarded(
      () => ({ verb: 'list', group: IAM_GROUP, resource: 'clusterroles' }),
      async (req, res) => {
        await writeListing(res, await deps.listing.listCached(clusterRoles, req.query as Record<string, unknown>));
      },
    ),
  );
  mountOperation(router, '', readClusterRoleOperation, (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.clusterrole);
    guarded(
      () => ({ verb: 'get', group: IAM_GROUP, resource: 'clusterroles', name }),
      async (_req, answer) => {
        const stored = await deps.listing.readCached(clusterRoles, undefined, name);
        if (!stored)
          throw new NotFoundError(`clusterroles.rbac.authorization.k8s.io "${name}" not found`, {
            name,
            group: 'rbac.authorization.k8s.io',
            kind: 'clusterroles',
          });
        answer.type('application/json').send(stored);
      },
    )(req, res, next);
  });
  const globalRoles = kind('globalroles');
  mountOperation(
    router,
    '',
    listGlobalRoles,
    guarded(
      () => ({ verb: 'list', group: IAM_GROUP, resource: 'globalroles' }),
      async (req, res) => {
        await writeListing(res, await deps.listing.listCached(globalRoles, req.query as Record<string, unknown>));
      },
    ),
  );
  mountOperation(router, '', readGlobalRole, (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.name);
    guarded(
      () => ({ verb: 'get', group: IAM_GROUP, resource: 'globalroles', name }),
      async (_req, answer) => {
        const stored = await deps.listing.readCached(globalRoles, undefined, name);
        if (!stored)
          throw new NotFoundError(`globalroles.iam.kapi.io "${name}" not found`, {
            name,
            group: IAM_GROUP,
            kind: 'globalroles',
          });
        answer.json({ apiVersion: 'iam.kapi.io/v1alpha2', kind: 'GlobalRole', ...JSON.parse(stored.toString('utf8')) });
      },
    )(req, res, next);
  });
  if (deps.admin) {
    router.use(
      userAdminRoutes({ ...deps.admin, listing: deps.listing, roles: deps.roles, authorizer: deps.authorizer }),
    );
    router.use(
      memberAdminRoutes({ listing: deps.listing, authorizer: deps.authorizer, bindings: deps.admin.bindings }),
    );
    router.use(
      globalRoleAdminRoutes({
        roles: deps.roles,
        authorizer: deps.authorizer,
        client: deps.admin.client,
        logger: deps.admin.logger,
      }),
    );
    router.use(
      clusterRoleAdminRoutes({ authorizer: deps.authorizer, client: deps.admin.client, logger: deps.admin.logger }),
    );
    router.use(
      tenantMemberRoutes({
        listing: deps.listing,
        authorizer: deps.authorizer,
        roles: deps.roles,
        client: deps.admin.client,
        logger: deps.admin.logger,
        ...(deps.memberWriteHooks && { hooks: deps.memberWriteHooks }),
      }),
    );
  }

  mountOperation(router, '', listNamespaceMemberRoleTemplates, (req: Request, res: Response, next: NextFunction) => {
    const namespace = String(req.params.namespace);
    ownOrAllowed(
      (name) => ({
        verb: 'get',
        group: IAM_GROUP,
        resource: 'members',
        subresource: 'roles',
        namespace,
        name,
      }),
      async (name, answer) => {
        // kapi's own memberships of the project (labelled with their user), as for cluster members
        const bindings = (
          await deps.listing.cachedWhere(roleBindings, (labels) => labels?.[USER_REF_LABEL] === name, namespace)
        ).map(roleBindingRecordFrom);
        const readRole = async (roleName: string) => {
          const stored = await deps.listing.readCached(roles, namespace, roleName);
          return stored && (JSON.parse(stored.toString('utf8')) as StoredRole);
        };
        const found = new Map<string, StoredRole | undefined>();
        for (const binding of bindings) {
          if (binding.roleKind === 'Role' && !found.has(binding.role))
            found.set(binding.role, await readRole(binding.role));
        }
        // a member of kapi's project roles (a RoleBinding to kapi:namespace-role:<role>): that role's templates
        const projectRole = bindings
          .map((binding) => namespaceRoleOf({ roleRef: { kind: binding.roleKind, name: binding.role } }))
          .find(Boolean);
        if (projectRole) return void answer.json(templatesOfNamespaceRole(namespace, projectRole));
        const role = roleOfUser(bindings, name, (roleName) => found.get(roleName) !== undefined);
        answer.json(await templatesRead(role ? found.get(role) : undefined, readRole));
      },
    )(req, res, next);
  });
  return router;
}

/** A (Cluster)Role as stored, as far as its templates are concerned. */
type StoredRole = { metadata?: { annotations?: Record<string, string> } };

/** The templates `role` is aggregated from, each read by `readRole` (those missing skipped); none for no role. */
async function templatesRead(
  role: StoredRole | undefined,
  readRole: (name: string) => Promise<StoredRole | undefined>,
): Promise<StoredRole[]> {
  const templates: StoredRole[] = [];
  for (const name of role ? aggregatedRoleNames(role.metadata?.annotations) : []) {
    const template = await readRole(name);
    if (template) templates.push(template);
  }
  return templates;
}

/** What of a users listing's query the invite picker takes: paging, the name and e-mail filters, and sorting by them. */
function pickerQuery(query: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key of ['page', 'limit', 'ascending', 'name', 'email'])
    if (query[key] !== undefined) kept[key] = query[key];
  if (query.sortBy === 'name' || query.sortBy === 'createTime') kept.sortBy = query.sortBy;
  return kept;
}
