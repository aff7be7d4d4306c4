import { Router } from 'express';
import { jsonBody } from '../../auth/account/account-routes.js';
import { isObjectName } from '../../auth/kube-names.js';
import type { Authorizer, UserInfo } from '../../auth/identity.js';
import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { WORKSPACE_LABEL } from '../../kube/namespace-cache.js';
import { GROUP_REF_LABEL } from '../../auth/departments/departments.js';
import { WORKSPACE_UID_ANNOTATION } from '../../controllers/platform-rbac/workspaces.js';
import type { Logger } from '../../observability/logger.js';
import { QUOTAS_PATH } from '../../workspace-quota/quota.js';
import { mountOperation } from '../../openapi/operation.js';
import { NotFoundError } from '../../server/errors.js';
import { asKapi, asCaller, deletedStatus, optionalJsonBody, patchBody, requireRight, withCaller } from '../caller.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../resources/v1alpha3/listing/resource-listing.js';
import { WORKSPACE_ROLE_BINDINGS_PATH } from '../iam/v1alpha2/role-bindings.js';
import { createWorkspaceTemplate, deleteWorkspaceTemplate, patchWorkspaceTemplate } from './operations.js';
import { deletesNamespaces, workspaceEditFrom, workspaceRequestFrom } from './workspace-admin.js';

export interface WorkspaceAdminDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  /** kapi's own client: it writes WorkspaceTemplates and the namespaces' label once the caller's rights are checked. */
  client: KubeClient;
  logger: Logger;
}

const TENANT_GROUP = 'tenant.kapi.io';
const TEMPLATES_PATH = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
const TIMEOUT_MS = 10_000;
const IAM_PATH = '/apis/iam.kapi.io/v1alpha2';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const details = (name: string) => ({ name, group: TENANT_GROUP, kind: 'workspacetemplates' });
const notFound = (name: string) =>
  new NotFoundError(`workspacetemplates.tenant.kapi.io "${name}" not found`, details(name));

/**
 * Workspaces administered (SPEC §18, the console's Workspaces page): create, edit, delete, each a SubjectAccessReview
 * of the caller on `workspacetemplates`; naming another user as manager needs `bind` on it (KubeSphere PR #6385).
 */
export function workspaceAdminRoutes(deps: WorkspaceAdminDeps): Router {
  const router = Router();

  /** Deletes what `selector` names in `collection` (kapi's own credentials); the names of those listed. */
  const deleteLabelled = async (collection: string, selector: string): Promise<string[]> => {
    const listed = await deps.client.request<{ items?: Raw[] }>({
      path: collection,
      query: { labelSelector: selector },
      timeoutMs: TIMEOUT_MS,
    });
    const names = (listed?.items ?? []).map((item) => String(item?.metadata?.name));
    for (const item of names)
      await deps.client
        .request({ method: 'DELETE', path: `${collection}/${encodeURIComponent(item)}`, timeoutMs: TIMEOUT_MS })
        .catch((err: unknown) => {
          if (!(err instanceof KubeApiError && err.code === 404)) throw err;
        });
    return names;
  };
  const users = KINDS_BY_RESOURCE.get('users') as KindDefinition;

  /** The manager may be named by the caller: itself, or another existing user with the right to. */
  const requireManager = async (caller: UserInfo, workspace: string, manager: string) => {
    if (manager === caller.username) return;
    await requireRight(deps.authorizer, caller, {
      verb: 'bind',
      group: TENANT_GROUP,
      resource: 'workspacetemplates',
      name: workspace,
    });
    if (!(await deps.listing.readCached(users, undefined, manager)))
      throw new NotFoundError(`users.iam.kapi.io "${manager}" not found`, {
        name: manager,
        group: 'iam.kapi.io',
        kind: 'users',
      });
  };

  const write = (request: { method: string; path: string; body?: unknown; contentType?: string }, name: string) =>
    asKapi(deps.client, request, details(name));
  const readTemplate = (name: string) =>
    asKapi(deps.client, { path: `${TEMPLATES_PATH}/${encodeURIComponent(name)}` }, details(name));

  mountOperation(
    router,
    '',
    createWorkspaceTemplate,
    jsonBody,
    withCaller(async (caller, req, res) => {
      await requireRight(deps.authorizer, caller, {
        verb: 'create',
        group: TENANT_GROUP,
        resource: 'workspacetemplates',
      });
      const request = workspaceRequestFrom(req.body);
      const manager = request.manager ?? caller.username;
      await requireManager(caller, request.name, manager);
      const created = await write(
        {
          method: 'POST',
          path: TEMPLATES_PATH,
          body: {
            apiVersion: 'tenant.kapi.io/v1alpha2',
            kind: 'WorkspaceTemplate',
            metadata: {
              name: request.name,
              annotations: { ...request.annotations, 'kapi.io/creator': caller.username },
            },
            spec: { template: { spec: { manager } } },
          },
        },
        request.name,
      );
      deps.logger.info('workspace created', {
        audit: 'workspace',
        workspace: request.name,
        manager,
        by: caller.username,
      });
      res.status(201).json(created);
    }),
  );

  mountOperation(
    router,
    '',
    patchWorkspaceTemplate,
    patchBody,
    withCaller(async (caller, req, res) => {
      const name = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, {
        verb: 'patch',
        group: TENANT_GROUP,
        resource: 'workspacetemplates',
        name,
      });
      const edit = workspaceEditFrom(req.body);
      const stored = await readTemplate(name);
      if (edit.manager !== undefined && edit.manager !== stored?.spec?.template?.spec?.manager)
        await requireManager(caller, name, edit.manager);
      const patch: Record<string, unknown> = {};
      if (edit.annotations) patch.metadata = { annotations: edit.annotations };
      if (edit.manager) patch.spec = { template: { spec: { manager: edit.manager } } };
      const updated = await write(
        {
          method: 'PATCH',
          path: `${TEMPLATES_PATH}/${encodeURIComponent(name)}`,
          body: patch,
          contentType: 'application/merge-patch+json',
        },
        name,
      );
      res.json(updated);
    }),
  );

  mountOperation(
    router,
    '',
    deleteWorkspaceTemplate,
    optionalJsonBody,
    withCaller(async (caller, req, res) => {
      const name = String(req.params.workspace);
      await requireRight(deps.authorizer, caller, {
        verb: 'delete',
        group: TENANT_GROUP,
        resource: 'workspacetemplates',
        name,
      });
      // a name no workspace can have would also be no label selector of one
      if (!isObjectName(name)) throw notFound(name);
      const removeNamespaces = deletesNamespaces(req.body);
      await readTemplate(name);
      // as kube-apiserver has them now (a namespace labelled a moment ago is the workspace's too)
      const listed = await deps.client.request<{ items?: Raw[] }>({
        path: '/api/v1/namespaces',
        query: { labelSelector: `${WORKSPACE_LABEL}=${name}` },
        timeoutMs: TIMEOUT_MS,
      });
      const namespaces = (listed?.items ?? []).map((item) => String(item?.metadata?.name));
      if (removeNamespaces) {
        // each namespace as the caller: kube-apiserver's RBAC decides, before the workspace goes
        for (const namespace of namespaces) {
          await asCaller(
            deps.client,
            caller,
            { method: 'DELETE', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}`, timeoutMs: TIMEOUT_MS },
            { name: namespace, group: '', kind: 'namespaces' },
            `the caller may not delete namespace "${namespace}" of workspace "${name}"`,
          ).catch((err: unknown) => {
            if (!(err instanceof NotFoundError)) throw err;
          });
        }
      }
      await write({ method: 'DELETE', path: `${TEMPLATES_PATH}/${encodeURIComponent(name)}` }, name);
      // its memberships go with it (a replica killed before this leaves them to the controller, which deletes them)
      const memberships = await deps.client.request<{ items?: Raw[] }>({
        path: WORKSPACE_ROLE_BINDINGS_PATH,
        query: { labelSelector: `${WORKSPACE_LABEL}=${name}` },
        timeoutMs: TIMEOUT_MS,
      });
      for (const binding of memberships?.items ?? []) {
        await deps.client
          .request({
            method: 'DELETE',
            path: `${WORKSPACE_ROLE_BINDINGS_PATH}/${encodeURIComponent(String(binding?.metadata?.name))}`,
            timeoutMs: TIMEOUT_MS,
          })
          .catch((err: unknown) => {
            if (!(err instanceof KubeApiError && err.code === 404)) throw err;
          });
      }
      // so do its departments: who was in them, and what they were given in the projects it keeps
      const departments = await deleteLabelled(`${IAM_PATH}/groups`, `${WORKSPACE_LABEL}=${name}`);
      await deleteLabelled(`${IAM_PATH}/groupbindings`, `${WORKSPACE_LABEL}=${name}`);
      // and its quota: a workspace of that name made later starts without one
      await deleteLabelled(QUOTAS_PATH, `${WORKSPACE_LABEL}=${name}`);
      for (const namespace of removeNamespaces ? [] : namespaces)
        for (const group of departments)
          await deleteLabelled(
            `/apis/rbac.authorization.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/rolebindings`,
            `${GROUP_REF_LABEL}=${group}`,
          );
      if (!removeNamespaces) {
        // kept, out of the workspace: a workspace of that name made later must not inherit them
        for (const namespace of namespaces) {
          await deps.client
            .request({
              method: 'PATCH',
              path: `/api/v1/namespaces/${encodeURIComponent(namespace)}`,
              contentType: 'application/merge-patch+json',
              body: {
                metadata: { labels: { [WORKSPACE_LABEL]: null }, annotations: { [WORKSPACE_UID_ANNOTATION]: null } },
              },
              timeoutMs: TIMEOUT_MS,
            })
            .catch((err: unknown) => {
              if (!(err instanceof KubeApiError && err.code === 404)) throw err;
            });
        }
      }
      deps.logger.info('workspace deleted', {
        audit: 'workspace',
        workspace: name,
        by: caller.username,
        namespaces: namespaces.length,
        namespacesDeleted: removeNamespaces,
      });
      res.json(deletedStatus(name, TENANT_GROUP, 'workspacetemplates'));
    }),
  );
  return router;
}
