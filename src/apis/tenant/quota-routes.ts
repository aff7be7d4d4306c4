import { Router } from 'express';
import { jsonBody } from '../../auth/account/account-routes.js';
import { isObjectName } from '../../auth/kube-names.js';
import type { Authorizer } from '../../auth/identity.js';
import type { KubeClient } from '../../kube/client.js';
import { WORKSPACE_LABEL } from '../../kube/namespace-cache.js';
import type { Logger } from '../../observability/logger.js';
import { mountOperation } from '../../openapi/operation.js';
import { ApiError, BadRequestError, NotFoundError } from '../../server/errors.js';
import { QUOTAS_PATH, QUOTA_GROUP, QUOTA_VERSION, quotaSpecProblems } from '../../workspace-quota/quota.js';
import { asKapi, deletedStatus, requireRight, withCaller } from '../caller.js';
import type { ResourceListing } from '../resources/v1alpha3/listing/resource-listing.js';
import { TenantMemberships } from './memberships.js';
import {
  createWorkspaceQuota,
  deleteWorkspaceQuota,
  readWorkspaceQuota,
  updateWorkspaceQuota,
} from './quota-operations.js';

export interface WorkspaceQuotaDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  /** kapi's own client: it writes the quota once the caller's right is checked (no one else needs RBAC on it). */
  client: KubeClient;
  logger: Logger;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const TENANT_GROUP = 'tenant.kapi.io';
const ref = (name: string) => ({ name, group: QUOTA_GROUP, kind: 'resourcequotas' });
const conflict = (name: string) =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on resourcequotas.${QUOTA_GROUP} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    ref(name),
  );
/** Attempts at a quota's change while pods' charges change it. */
const UPDATE_ATTEMPTS = 3;
const quotaNotFound = (name: string) =>
  new NotFoundError(`resourcequotas.${QUOTA_GROUP} "${name}" not found`, ref(name));

/**
 * A workspace's quota at the console's routes, as KubeSphere 3.4.1 serves it (pkg/models/tenant/resourcequota.go):
 * each call a SubjectAccessReview of `workspacetemplates/resourcequotas` of the workspace; a quota is the workspace's
 * when labelled with it (another's is not found here); kapi sets the label and the selector (the workspace's projects),
 * whatever the body says, and takes only limits its webhook enforces.
 */
export function workspaceQuotaRoutes(deps: WorkspaceQuotaDeps): Router {
  const router = Router();
  const memberships = new TenantMemberships(deps.listing);

  const authorize = async (caller: Parameters<Authorizer['authorize']>[0], verb: string, workspace: string) => {
    await requireRight(deps.authorizer, caller, {
      verb,
      group: TENANT_GROUP,
      resource: 'workspacetemplates',
      subresource: 'resourcequotas',
      name: workspace,
    });
    if (!(await memberships.workspace(workspace)))
      throw new NotFoundError(`workspacetemplates.${TENANT_GROUP} "${workspace}" not found`, {
        name: workspace,
        group: TENANT_GROUP,
        kind: 'workspacetemplates',
      });
  };
  const path = (name: string) => `${QUOTAS_PATH}/${encodeURIComponent(name)}`;
  /** The stored quota when it is this workspace's; 404 otherwise. */
  const stored = async (workspace: string, name: string): Promise<Raw> => {
    if (!isObjectName(name)) throw quotaNotFound(name);
    const quota = await asKapi(deps.client, { path: path(name) }, ref(name));
    if (quota?.metadata?.labels?.[WORKSPACE_LABEL] !== workspace) throw quotaNotFound(name);
    return quota;
  };
  /** The quota to store from a body: its name and limits, the workspace's label and selector. */
  const quotaFrom = (body: Raw, workspace: string, base?: Raw): Raw => {
    const name = body?.metadata?.name;
    if (typeof name !== 'string' || !isObjectName(name))
      throw new BadRequestError(
        'metadata.name: Invalid value: a quota needs a name (lower-case letters, digits, -, .)',
      );
    const problems = quotaSpecProblems(body?.spec);
    if (problems.length > 0) throw new BadRequestError(`the quota is invalid: ${problems.join('; ')}`);
    const labels = { ...base?.metadata?.labels, ...body?.metadata?.labels, [WORKSPACE_LABEL]: workspace };
    return {
      apiVersion: `${QUOTA_GROUP}/${QUOTA_VERSION}`,
      kind: 'ResourceQuota',
      metadata: {
        ...(base ? { ...base.metadata } : {}),
        name,
        labels,
      },
      spec: { quota: { hard: { ...body.spec.quota.hard } }, selector: { [WORKSPACE_LABEL]: workspace } },
    };
  };

  mountOperation(
    router,
    '',
    createWorkspaceQuota,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await authorize(caller, 'create', workspace);
      const quota = quotaFrom(req.body, workspace);
      const created = await asKapi(
        deps.client,
        { method: 'POST', path: QUOTAS_PATH, body: quota },
        ref(quota.metadata.name),
      );
      deps.logger.info('workspace quota set', { audit: 'workspace-quota', workspace, by: caller.username });
      res.status(200).json(created);
    }),
  );

  mountOperation(
    router,
    '',
    readWorkspaceQuota,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      await authorize(caller, 'get', workspace);
      res.json(await stored(workspace, String(req.params.resourcequota)));
    }),
  );

  mountOperation(
    router,
    '',
    updateWorkspaceQuota,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.resourcequota);
      await authorize(caller, 'update', workspace);
      if (req.body?.metadata?.name !== name)
        throw new BadRequestError(
          `the name of the object (${String(req.body?.metadata?.name ?? '')}) does not match the name on the URL (${name})`,
        );
      // the version the caller edited, when it says (two admins do not overwrite each other); else the latest, read
      // again when a pod's charge changed it meanwhile (the webhook writes its status)
      const edited = req.body?.metadata?.resourceVersion;
      for (let attempt = 1; ; attempt++) {
        const before = await stored(workspace, name);
        if (typeof edited === 'string' && edited !== '' && edited !== before.metadata?.resourceVersion)
          throw conflict(name);
        const quota = quotaFrom(req.body, workspace, before);
        try {
          const updated = await asKapi(deps.client, { method: 'PUT', path: path(name), body: quota }, ref(name));
          deps.logger.info('workspace quota changed', { audit: 'workspace-quota', workspace, by: caller.username });
          res.json(updated);
          return;
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 409)) throw err;
          if (typeof edited === 'string' && edited !== '') throw conflict(name);
          if (attempt >= UPDATE_ATTEMPTS) throw conflict(name);
        }
      }
    }),
  );

  mountOperation(
    router,
    '',
    deleteWorkspaceQuota,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const name = String(req.params.resourcequota);
      await authorize(caller, 'delete', workspace);
      const before = await stored(workspace, name);
      await asKapi(
        deps.client,
        { method: 'DELETE', path: path(name), body: { preconditions: { uid: before.metadata?.uid } } },
        ref(name),
      );
      deps.logger.info('workspace quota lifted', { audit: 'workspace-quota', workspace, by: caller.username });
      res.json(deletedStatus(name, QUOTA_GROUP, 'resourcequotas', before.metadata?.uid));
    }),
  );

  return router;
}
