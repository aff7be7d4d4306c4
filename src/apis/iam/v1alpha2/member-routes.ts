import { Router } from 'express';
import { jsonBody } from '../../../auth/account/account-routes.js';
import { deletedStatus, requireRight as requireCallerRight, withCaller } from '../../caller.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import { rulesOf } from '../../../controllers/platform-rbac/realize.js';
import { mountOperation } from '../../../openapi/operation.js';
import { BadRequestError, InvalidParameterError, NotFoundError } from '../../../server/errors.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../../resources/v1alpha3/listing/resource-listing.js';
import { confirmNoEscalation } from './escalation.js';
import { createClusterMembers, deleteClusterMember, updateClusterMember } from './operations.js';
import type { UserRoleBindings } from './role-bindings.js';
import { RBAC_GROUP } from './role-templates.js';

export interface MemberAdminDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  bindings: UserRoleBindings;
}

const IAM_GROUP = 'iam.kapi.io';
const MAX_MEMBERS = 100;

export interface ClusterMember {
  username: string;
  roleRef: string;
}

/** A member as the console sends it, `{username, roleRef}`, checked (pure); `at` names it in a refusal. */
export function clusterMemberFrom(value: unknown, at: string): ClusterMember {
  const member = value as Record<string, unknown> | null;
  if (typeof member !== 'object' || member === null || Array.isArray(member))
    throw new InvalidParameterError(at, 'must be an object {username, roleRef}');
  for (const field of ['username', 'roleRef'] as const) {
    if (typeof member[field] !== 'string' || member[field] === '')
      throw new InvalidParameterError(`${at}.${field}`, 'is required (a name)');
  }
  return { username: member.username as string, roleRef: member.roleRef as string };
}

/**
 * Cluster members administered (SPEC §17, the console's Cluster Members page): invite, change a member's role,
 * remove. Each is authorized by a SubjectAccessReview of the caller on `clustermembers` in `iam.kapi.io`, and the
 * ClusterRole given passes RBAC's rule against escalation for the caller before kapi binds it.
 */
export function memberAdminRoutes(deps: MemberAdminDeps): Router {
  const router = Router();
  const users = KINDS_BY_RESOURCE.get('users') as KindDefinition;
  const clusterRoles = KINDS_BY_RESOURCE.get('clusterroles') as KindDefinition;

  const requireRight = (caller: UserInfo, attributes: ResourceAttributes) =>
    requireCallerRight(deps.authorizer, caller, attributes);

  /** The member may be made: the user and the role exist, and the caller may give the role. */
  const requireGivable = async (caller: UserInfo, member: ClusterMember) => {
    if (!(await deps.listing.readCached(users, undefined, member.username)))
      throw new NotFoundError(`users.iam.kapi.io "${member.username}" not found`, {
        name: member.username,
        group: IAM_GROUP,
        kind: 'users',
      });
    const stored = await deps.listing.readCached(clusterRoles, undefined, member.roleRef);
    if (!stored)
      throw new NotFoundError(`clusterroles.rbac.authorization.k8s.io "${member.roleRef}" not found`, {
        name: member.roleRef,
        group: RBAC_GROUP,
        kind: 'clusterroles',
      });
    await confirmNoEscalation(
      deps.authorizer,
      caller,
      rulesOf(JSON.parse(stored.toString('utf8'))),
      { verb: 'bind', group: RBAC_GROUP, resource: 'clusterroles', name: member.roleRef },
      `cluster role "${member.roleRef}"`,
    );
  };

  const handle = withCaller;

  mountOperation(
    router,
    '',
    createClusterMembers,
    jsonBody,
    handle(async (caller, req, res) => {
      await requireRight(caller, { verb: 'create', group: IAM_GROUP, resource: 'clustermembers' });
      const body: unknown = req.body;
      if (!Array.isArray(body) || body.length === 0 || body.length > MAX_MEMBERS)
        throw new BadRequestError(`the body must be a list of 1 to ${MAX_MEMBERS} members {username, roleRef}`);
      const members = body.map((value, i) => clusterMemberFrom(value, `[${i}]`));
      // every member checked before any is made: a refusal leaves the cluster as it was
      for (const member of members) await requireGivable(caller, member);
      for (const member of members) await deps.bindings.makeClusterMember(member.username, member.roleRef);
      res.json(members);
    }),
  );

  mountOperation(
    router,
    '',
    updateClusterMember,
    jsonBody,
    handle(async (caller, req, res) => {
      const name = String(req.params.name);
      await requireRight(caller, { verb: 'update', group: IAM_GROUP, resource: 'clustermembers', name });
      const member = clusterMemberFrom(req.body, 'body');
      if (member.username !== name)
        throw new BadRequestError(`the username of the member (${member.username}) is not the URL's (${name})`);
      await requireGivable(caller, member);
      await deps.bindings.makeClusterMember(member.username, member.roleRef);
      res.json(member);
    }),
  );

  mountOperation(
    router,
    '',
    deleteClusterMember,
    handle(async (caller, req, res) => {
      const name = String(req.params.name);
      await requireRight(caller, { verb: 'delete', group: IAM_GROUP, resource: 'clustermembers', name });
      if ((await deps.bindings.removeClusterMember(name)) === 0)
        throw new NotFoundError(`clustermembers.iam.kapi.io "${name}" not found`, {
          name,
          group: IAM_GROUP,
          kind: 'clustermembers',
        });
      res.json(deletedStatus(name, IAM_GROUP, 'clustermembers'));
    }),
  );
  return router;
}
