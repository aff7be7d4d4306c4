import { Router } from 'express';
import { withCaller } from '../caller.js';
import { forbidden } from '../../auth/authorization/access-guard.js';
import type { Authorizer, UserInfo } from '../../auth/identity.js';
import { mountOperation } from '../../openapi/operation.js';
import { NotFoundError } from '../../server/errors.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../resources/v1alpha3/kinds/kind-table.js';
import { parseListedItem, writeListing, type ResourceListing } from '../resources/v1alpha3/listing/resource-listing.js';
import {
  listWorkspaceTemplates,
  listWorkspaceTemplatesV1alpha2,
  listWorkspaces,
  readWorkspaceTemplate,
} from './operations.js';
import { workspaceOf } from './workspaces.js';
import { TenantMemberships } from './memberships.js';

export interface TenantRouteDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
}

const TENANT_GROUP = 'tenant.kapi.io';
const templates = KINDS_BY_RESOURCE.get('workspacetemplates') as KindDefinition;

/**
 * The workspace reads (SPEC §18): each list answers, per caller, every workspace to one the cluster's RBAC lets list
 * them, else the caller's own; a workspace is read by its members or with the right to.
 */
export function tenantRoutes(deps: TenantRouteDeps): Router {
  const router = Router();
  const wrap = withCaller;
  const allowed = async (user: UserInfo, verb: 'list' | 'get', name?: string) =>
    (
      await deps.authorizer.authorize(user, {
        verb,
        group: TENANT_GROUP,
        resource: 'workspacetemplates',
        ...(name && { name, fresh: true }),
      })
    ).allowed;
  const memberships = new TenantMemberships(deps.listing);
  /** The workspaces the caller belongs to: managed, or bound in (itself or one of its groups). */
  const own = (user: UserInfo) => memberships.workspacesOf(user);
  const visible = async (user: UserInfo) => ((await allowed(user, 'list')) ? undefined : await own(user));

  const listTemplates = wrap(async (user, req, res) => {
    const answer = await deps.listing.listCached(templates, req.query as Record<string, unknown>, await visible(user));
    await writeListing(res, answer);
  });
  mountOperation(router, '', listWorkspaceTemplates, listTemplates);
  mountOperation(router, '', listWorkspaceTemplatesV1alpha2, listTemplates);
  mountOperation(
    router,
    '',
    listWorkspaces,
    wrap(async (user, req, res) => {
      const answer = await deps.listing.listCached(
        templates,
        req.query as Record<string, unknown>,
        await visible(user),
      );
      res.json({
        items: answer.items.map((item) => workspaceOf(parseListedItem(item))),
        totalItems: answer.totalItems,
      });
    }),
  );
  mountOperation(
    router,
    '',
    readWorkspaceTemplate,
    wrap(async (user, req, res) => {
      const name = String(req.params.workspace);
      if (!(await allowed(user, 'get', name)) && !(await own(user)).has(name)) {
        throw forbidden(user.username, { verb: 'get', group: TENANT_GROUP, resource: 'workspacetemplates', name });
      }
      const stored = await deps.listing.readCached(templates, undefined, name);
      if (!stored) {
        throw new NotFoundError(`workspacetemplates.tenant.kapi.io "${name}" not found`, {
          name,
          group: TENANT_GROUP,
          kind: 'workspacetemplates',
        });
      }
      res.type('application/json').send(stored);
    }),
  );
  return router;
}
