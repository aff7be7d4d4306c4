import { Router } from 'express';
import { jsonBody } from '../../auth/account/account-routes.js';
import { isLabelName, isObjectName } from '../../auth/kube-names.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../auth/identity.js';
import { CREATOR_PENDING_ANNOTATION } from '../../controllers/platform-rbac/controller.js';
import {
  ADMINISTER_PROJECTS_VERB,
  TENANT_GROUP,
  WORKSPACE_UID_ANNOTATION,
  namespaceMemberBinding,
  workspaceStamp,
} from '../../controllers/platform-rbac/workspaces.js';
import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { WORKSPACE_LABEL, type WatchedNamespaces } from '../../kube/namespace-cache.js';
import { GROUP_REF_LABEL } from '../../auth/departments/departments.js';
import type { Logger } from '../../observability/logger.js';
import { mountOperation } from '../../openapi/operation.js';
import { ApiError, BadRequestError, ForbiddenError, NotFoundError } from '../../server/errors.js';
import { asCaller, asKapi, patchBody, withCaller } from '../caller.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../resources/v1alpha3/kinds/kind-table.js';
import { writeListing, type ResourceListing } from '../resources/v1alpha3/listing/resource-listing.js';
import { TenantMemberships } from './memberships.js';
import {
  createWorkspaceNamespace,
  deleteWorkspaceNamespace,
  listWorkspaceNamespaces,
  listWorkspaceMemberNamespaces,
  patchWorkspaceNamespace,
  readWorkspaceNamespace,
  updateWorkspaceNamespace,
} from './operations.js';

export interface NamespaceRouteDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  namespaces: WatchedNamespaces;
  client: KubeClient;
  logger: Logger;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const namespacesKind = KINDS_BY_RESOURCE.get('namespaces') as KindDefinition;
const usersKind = KINDS_BY_RESOURCE.get('users') as KindDefinition;
const groupsKind = KINDS_BY_RESOURCE.get('groups') as KindDefinition;
const NAMESPACES_PATH = '/api/v1/namespaces';
const CREATOR_ANNOTATION = 'kapi.io/creator';
const strings = (value: unknown): value is Record<string, string | null> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((v) => typeof v === 'string' || v === null);

/**
 * The labels and annotations a project edit may change (pure): a merge patch of `metadata.labels` and
 * `metadata.annotations` only (values strings, or null to remove); the workspace label may name another workspace
 * (a move) but not be removed.
 */
export function namespaceEditFrom(body: unknown): {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
} {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('the body must be a merge patch of metadata.labels and metadata.annotations');
  const metadata = (body as Raw).metadata ?? {};
  for (const field of ['labels', 'annotations'] as const) {
    if (metadata[field] !== undefined && !strings(metadata[field]))
      throw new BadRequestError(`metadata.${field} must map names to strings (or null to remove one)`);
  }
  const labels = metadata.labels as Record<string, string | null> | undefined;
  if (labels && labels[WORKSPACE_LABEL] === null)
    throw new BadRequestError(`the label ${WORKSPACE_LABEL} cannot be removed here: a project stays in a workspace`);
  const annotations = metadata.annotations as Record<string, string | null> | undefined;
  for (const kapis of [CREATOR_PENDING_ANNOTATION, WORKSPACE_UID_ANNOTATION])
    if (annotations && kapis in annotations) throw new BadRequestError(`the annotation ${kapis} is kapi's`);
  return { ...(labels && { labels }), ...(annotations && { annotations }) };
}

/**
 * A workspace's projects (SPEC §18): list (per caller), create (its creator its admin), read, edit or move in one
 * call, delete. A namespace of another workspace is not found under this one.
 */
export function workspaceNamespaceRoutes(deps: NamespaceRouteDeps): Router {
  const router = Router();
  const memberships = new TenantMemberships(deps.listing);
  const may = async (user: UserInfo, attributes: ResourceAttributes) =>
    (await deps.authorizer.authorize(user, attributes)).allowed;
  const onWorkspace = (verb: string, workspace: string): ResourceAttributes => ({
    verb,
    group: TENANT_GROUP,
    resource: 'workspacetemplates',
    subresource: 'namespaces',
    name: workspace,
    fresh: true,
  });
  const onNamespace = (verb: string, namespace: string): ResourceAttributes => ({
    verb,
    resource: 'namespaces',
    name: namespace,
    namespace,
    fresh: true,
  });
  /** The workspace's template; 404 when there is none. */
  const existingWorkspace = async (workspace: string): Promise<Raw> => {
    const template = await memberships.workspace(workspace);
    if (!template)
      throw new NotFoundError(`workspacetemplates.${TENANT_GROUP} "${workspace}" not found`, {
        name: workspace,
        group: TENANT_GROUP,
        kind: 'workspacetemplates',
      });
    return template;
  };
  /** The stamp of the workspace a project is put in (its uid: controllers/platform-rbac/workspaces.ts). */
  const stampOf = (template: Raw) => workspaceStamp(String(template.metadata.name), String(template.metadata.uid));
  const notHere = (namespace: string) =>
    new NotFoundError(`namespaces "${namespace}" not found`, { name: namespace, group: '', kind: 'namespaces' });
  /** The namespace, which must be in `workspace` (as kapi's watch has it). */
  const inWorkspace = (workspace: string, namespace: string) => {
    const cached = deps.namespaces.get(namespace);
    if (!cached || cached.workspace !== workspace) throw notHere(namespace);
  };
  /** The caller may do `verb` on the project: on the workspace's projects, or on the namespace itself. */
  const requireProjectRight = async (caller: UserInfo, verb: string, workspace: string, namespace: string) => {
    if ((await may(caller, onWorkspace(verb, workspace))) || (await may(caller, onNamespace(verb, namespace)))) return;
    throw new ForbiddenError(
      `user "${caller.username}" cannot ${verb} project "${namespace}" of workspace "${workspace}"`,
      { name: namespace, group: '', kind: 'namespaces' },
    );
  };
  const kapiRequest = (request: Parameters<KubeClient['request']>[0], name: string) =>
    asKapi(deps.client, request, { name, group: '', kind: 'namespaces' });

  mountOperation(
    router,
    '',
    listWorkspaceMemberNamespaces,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const member = String(req.params.member);
      const all = deps.namespaces
        .list()
        .filter((ns) => ns.workspace === workspace)
        .map((ns) => ns.name);
      // the caller sees them all (a member's projects are some of the workspace's), before anything is looked up
      if (!(await memberships.visibleProjects(deps.authorizer, caller, workspace, all)).everything)
        throw new ForbiddenError(
          `user "${caller.username}" cannot list the projects of members of workspace "${workspace}"`,
          { name: workspace, group: TENANT_GROUP, kind: 'workspacetemplates' },
        );
      await existingWorkspace(workspace);
      if (!isObjectName(member) || !(await deps.listing.readCached(usersKind, undefined, member)))
        throw new NotFoundError(`users.iam.kapi.io "${member}" not found`, {
          name: member,
          group: 'iam.kapi.io',
          kind: 'users',
        });
      // as the member is asked it (KubeSphere passes its name, no groups)
      const visible = await memberships.visibleProjects(
        deps.authorizer,
        { username: member, groups: [] },
        workspace,
        all,
      );
      await writeListing(
        res,
        await deps.listing.listCached(namespacesKind, req.query as Record<string, unknown>, new Set(visible.names)),
      );
    }),
  );

  mountOperation(
    router,
    '',
    listWorkspaceNamespaces,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const all = deps.namespaces
        .list()
        .filter((ns) => ns.workspace === workspace)
        .map((ns) => ns.name);
      const visible = await memberships.visibleProjects(deps.authorizer, caller, workspace, all);
      const names = new Set(visible.names);
      // an outsider (no right in the workspace, no project in it) is refused before the workspace is looked up, so
      // the answer does not tell whether a workspace of that name exists (KubeSphere answers 403 too)
      if (!visible.everything && names.size === 0)
        throw new ForbiddenError(`user "${caller.username}" cannot list projects of workspace "${workspace}"`, {
          name: workspace,
          group: TENANT_GROUP,
          kind: 'workspacetemplates',
        });
      await existingWorkspace(workspace);
      await writeListing(
        res,
        await deps.listing.listCached(namespacesKind, req.query as Record<string, unknown>, names),
      );
    }),
  );

  mountOperation(
    router,
    '',
    createWorkspaceNamespace,
    jsonBody,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      if (!(await may(caller, onWorkspace('create', workspace))))
        throw new ForbiddenError(`user "${caller.username}" cannot create projects in workspace "${workspace}"`, {
          name: workspace,
          group: TENANT_GROUP,
          kind: 'workspacetemplates',
        });
      const template = await existingWorkspace(workspace);
      const body = req.body as Raw;
      const name = body?.metadata?.name;
      if (typeof name !== 'string' || !isLabelName(name))
        throw new BadRequestError('metadata.name must be a DNS label (a-z, 0-9 and -, at most 63 characters)');
      const edit = namespaceEditFrom(body);
      const drop = (values?: Record<string, string | null>) =>
        Object.fromEntries(
          Object.entries(values ?? {}).filter((entry): entry is [string, string] => entry[1] !== null),
        );
      const namespace = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name,
          labels: { ...drop(edit.labels), [WORKSPACE_LABEL]: workspace },
          // the creator's admin binding is written next; until then the controller would complete it
          annotations: {
            ...drop(edit.annotations),
            [CREATOR_ANNOTATION]: caller.username,
            [CREATOR_PENDING_ANNOTATION]: caller.username,
            [WORKSPACE_UID_ANNOTATION]: stampOf(template),
          },
        },
      };
      try {
        await kapiRequest({ method: 'POST', path: NAMESPACES_PATH, body: namespace }, name);
      } catch (err) {
        // the namespace exists (in this or another workspace, or none): which one is not the caller's to learn here
        if (err instanceof ApiError && err.code === 409)
          throw new ApiError(409, 'AlreadyExists', `namespaces "${name}" already exists`, {
            name,
            group: '',
            kind: 'namespaces',
          });
        throw err;
      }
      await deps.client
        .request({
          method: 'POST',
          path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${encodeURIComponent(name)}/rolebindings`,
          body: namespaceMemberBinding(name, caller.username, 'admin'),
          timeoutMs: 10_000,
        })
        .catch((err: unknown) => {
          if (!(err instanceof KubeApiError && err.code === 409)) throw err;
        });
      const created = await kapiRequest(
        {
          method: 'PATCH',
          path: `${NAMESPACES_PATH}/${encodeURIComponent(name)}`,
          contentType: 'application/merge-patch+json',
          body: { metadata: { annotations: { [CREATOR_PENDING_ANNOTATION]: null } } },
        },
        name,
      );
      deps.logger.info('project created', { audit: 'namespace', workspace, namespace: name, by: caller.username });
      res.status(201).json(created);
    }),
  );

  mountOperation(
    router,
    '',
    readWorkspaceNamespace,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const namespace = String(req.params.namespace);
      await requireProjectRight(caller, 'get', workspace, namespace);
      inWorkspace(workspace, namespace);
      const stored = await deps.listing.readCached(namespacesKind, undefined, namespace);
      if (!stored) throw notHere(namespace);
      res.type('application/json').send(stored);
    }),
  );

  /** Deletes the project's RoleBindings of departments that are not `workspace`'s (kapi's own credentials). */
  const releaseDepartments = async (namespace: string, workspace: string) => {
    const collection = `/apis/rbac.authorization.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/rolebindings`;
    const listed = await deps.client.request<{ items?: Raw[] }>({
      path: collection,
      query: { labelSelector: GROUP_REF_LABEL },
      timeoutMs: 10_000,
    });
    for (const binding of listed?.items ?? []) {
      const group = String(binding?.metadata?.labels?.[GROUP_REF_LABEL] ?? '');
      const stored = await deps.listing.readCached(groupsKind, undefined, group);
      const of = stored && JSON.parse(stored.toString('utf8')).metadata?.labels?.[WORKSPACE_LABEL];
      if (of === workspace) continue;
      await deps.client
        .request({
          method: 'DELETE',
          path: `${collection}/${encodeURIComponent(String(binding.metadata.name))}`,
          timeoutMs: 10_000,
        })
        .catch((err: unknown) => {
          if (!(err instanceof KubeApiError && err.code === 404)) throw err;
        });
    }
  };

  const edit = (verb: 'patch' | 'update') =>
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const namespace = String(req.params.namespace);
      await requireProjectRight(caller, verb, workspace, namespace);
      const change = namespaceEditFrom(req.body);
      inWorkspace(workspace, namespace);
      const target = change.labels?.[WORKSPACE_LABEL] ?? workspace;
      if (target !== workspace) {
        // a move: the caller administers the projects of both workspaces (KubeSphere's rule; the tenant guard asks the
        // same of a relabelling sent straight to kube-apiserver)
        for (const side of [workspace, target]) {
          if (!(await may(caller, onWorkspace(ADMINISTER_PROJECTS_VERB, side))))
            throw new ForbiddenError(
              `user "${caller.username}" cannot move project "${namespace}" from workspace "${workspace}" to "${target}": ` +
                `moving a project needs ${ADMINISTER_PROJECTS_VERB} on workspacetemplates/namespaces of both workspaces ` +
                `(their admin role), and "${side}" is not the caller's`,
              { name: side, group: TENANT_GROUP, kind: 'workspacetemplates' },
            );
        }
      }
      // a move stamps the project with the workspace it joins; an edit leaves its stamp as it is (a stamp of a
      // deleted workspace of the same name is the controller's to resolve, never an edit's to renew)
      const stamp = target !== workspace ? stampOf(await existingWorkspace(target)) : undefined;
      const updated = await kapiRequest(
        {
          method: 'PATCH',
          path: `${NAMESPACES_PATH}/${encodeURIComponent(namespace)}`,
          contentType: 'application/merge-patch+json',
          body: {
            metadata: {
              ...change,
              labels: { ...change.labels, [WORKSPACE_LABEL]: target },
              ...(stamp && { annotations: { ...change.annotations, [WORKSPACE_UID_ANNOTATION]: stamp } }),
            },
          },
        },
        namespace,
      );
      // the departments of the workspace it left hold nothing in it any more (the new one's admins cannot manage them)
      if (target !== workspace) await releaseDepartments(namespace, target);
      if (target !== workspace)
        deps.logger.info('project moved', {
          audit: 'namespace',
          namespace,
          from: workspace,
          to: target,
          by: caller.username,
        });
      res.json(updated);
    });
  mountOperation(router, '', patchWorkspaceNamespace, patchBody, edit('patch'));
  mountOperation(router, '', updateWorkspaceNamespace, jsonBody, edit('update'));

  mountOperation(
    router,
    '',
    deleteWorkspaceNamespace,
    withCaller(async (caller, req, res) => {
      const workspace = String(req.params.workspace);
      const namespace = String(req.params.namespace);
      await requireProjectRight(caller, 'delete', workspace, namespace);
      inWorkspace(workspace, namespace);
      const path = `${NAMESPACES_PATH}/${encodeURIComponent(namespace)}`;
      if (await may(caller, onWorkspace('delete', workspace))) {
        res.json(await kapiRequest({ method: 'DELETE', path }, namespace));
        return;
      }
      // not the workspace's admin: kube-apiserver's RBAC decides for the caller (a project admin may)
      res.json(
        await asCaller(
          deps.client,
          caller,
          { method: 'DELETE', path },
          { name: namespace, group: '', kind: 'namespaces' },
          `user "${caller.username}" cannot delete project "${namespace}"`,
        ),
      );
      deps.logger.info('project deleted', { audit: 'namespace', workspace, namespace, by: caller.username });
    }),
  );
  return router;
}
