import { Router } from 'express';
import { jsonBody } from '../../../auth/account/account-routes.js';
import { asKapi, deletedStatus, patchBody, requireRight as requireCallerRight, withCaller } from '../../caller.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import { REALIZES_LABEL, ROLE_TEMPLATE_LABEL } from '../../../controllers/platform-rbac/realize.js';
import { KubeApiError, type KubeClient } from '../../../kube/client.js';
import { mergePatch } from '../../../kube/merge-patch.js';
import type { Logger } from '../../../observability/logger.js';
import { mountOperation, type OperationDefinition } from '../../../openapi/operation.js';
import { ApiError, BadRequestError, ForbiddenError, NotFoundError } from '../../../server/errors.js';
import { confirmNoEscalation } from './escalation.js';
import { aggregatedRules, globalRoleRequestFrom, type GlobalRoleRequest } from './global-role-admin.js';
import { GLOBAL_ROLE_BINDINGS_PATH, GLOBAL_ROLES_PATH, type GlobalRoleDirectory } from './global-roles.js';
import {
  createClusterRole,
  createGlobalRole,
  deleteClusterRole,
  deleteGlobalRole,
  patchClusterRole,
  patchGlobalRole,
  updateClusterRole,
  updateGlobalRole,
} from './operations.js';

const IAM_GROUP = 'iam.kapi.io';
const RBAC_PATH = '/apis/rbac.authorization.k8s.io/v1';
const TIMEOUT_MS = 10_000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** One kind of role the platform's API writes: GlobalRoles (platform roles) or ClusterRoles (cluster roles). */
interface RoleKind {
  /** The resource of `iam.kapi.io` the caller's rights are asked on, and the collection kube-apiserver keeps. */
  resource: 'globalroles' | 'clusterroles';
  collectionPath: string;
  apiVersion: string;
  kind: string;
  /** How a refusal names the kind: `globalroles.iam.kapi.io`. */
  qualified: string;
  /** The role as stored now; undefined when there is none. */
  find(name: string): Promise<Raw | undefined>;
  /** Why a role that exists is not written through this API (a template, a preset, not the platform's). */
  notWritable(stored: Raw): string | undefined;
  /** The right that lets a caller give a role granting more than they hold (RBAC's `escalate`). */
  escalate: ResourceAttributes;
  /** How many bindings give the role, as kube-apiserver has them now. */
  holders(name: string): Promise<number>;
  operations: {
    create: OperationDefinition;
    update: OperationDefinition;
    patch: OperationDefinition;
    remove: OperationDefinition;
  };
}

const isTemplate = (stored: Raw) => stored?.metadata?.labels?.[ROLE_TEMPLATE_LABEL] !== undefined;

/**
 * A kind of platform role administered (SPEC §17, the console's Platform Roles and Cluster Roles pages): create,
 * change (whole or by merge patch), delete. Each is a SubjectAccessReview of the caller on the kind in `iam.kapi.io`;
 * a role's rules pass RBAC's rule against escalation (the caller holds them, or may `escalate`) before kapi writes it,
 * with its own credentials, only ever a role's annotations of description and templates and its rules: never labels,
 * so no role written here aggregates into another.
 */
function roleAdminRoutes(kind: RoleKind, authorizer: Authorizer, client: KubeClient, logger: Logger): Router {
  const router = Router();
  const details = (name: string) => ({ name, group: IAM_GROUP, kind: kind.resource });
  const notFound = (name: string, what = kind.qualified) =>
    new NotFoundError(`${what} "${name}" not found`, details(name));
  const requireRight = (caller: UserInfo, verb: string, name?: string) =>
    requireCallerRight(authorizer, caller, { verb, group: IAM_GROUP, resource: kind.resource, ...(name && { name }) });

  /** The role as stored, when this API may write it. */
  const writable = async (name: string) => {
    const stored = await kind.find(name);
    if (!stored) throw notFound(name);
    const why = kind.notWritable(stored);
    if (why)
      throw new ForbiddenError(`${kind.qualified} "${name}" ${why}: it is not written through this API`, details(name));
    return stored;
  };

  /** The rules the role will have, once the caller is found to hold them. */
  const rulesFor = async (caller: UserInfo, request: GlobalRoleRequest) => {
    const templates = await Promise.all(
      (request.templates ?? []).map(async (name) => {
        const template = await kind.find(name);
        if (!template || !isTemplate(template)) throw notFound(name, 'role template');
        return template;
      }),
    );
    const rules = request.templates ? aggregatedRules(templates) : request.rules;
    await confirmNoEscalation(authorizer, caller, rules, kind.escalate, `${kind.kind} "${request.name}"`);
    return rules;
  };

  const write = (method: 'POST' | 'PATCH', path: string, body: unknown, name: string) =>
    asKapi(
      client,
      { method, path, body, ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}) },
      details(name),
    );

  mountOperation(
    router,
    '',
    kind.operations.create,
    jsonBody,
    withCaller(async (caller, req, res) => {
      await requireRight(caller, 'create');
      const request = globalRoleRequestFrom(req.body);
      const rules = await rulesFor(caller, request);
      const created = await write(
        'POST',
        kind.collectionPath,
        {
          apiVersion: kind.apiVersion,
          kind: kind.kind,
          metadata: { name: request.name, annotations: { ...request.annotations, 'kapi.io/creator': caller.username } },
          rules,
        },
        request.name,
      );
      logger.info(`${kind.kind} created`, { audit: kind.resource, role: request.name, by: caller.username });
      res.status(201).json(created);
    }),
  );

  /** A change: the body is the role (PUT) or a merge patch of it (PATCH, the console's Edit Information). */
  const change = (patch: boolean) =>
    withCaller(async (caller, req, res) => {
      const name = String(req.params.name);
      await requireRight(caller, patch ? 'patch' : 'update', name);
      const stored = await writable(name);
      if (patch && (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)))
        throw new BadRequestError(`the body must be a JSON merge patch of the ${kind.kind}`);
      const request = globalRoleRequestFrom(patch ? mergePatch(stored, req.body) : req.body, name);
      const rules = await rulesFor(caller, request);
      // annotations the change leaves out are taken off (a description cleared), others kept
      const annotations: Record<string, string | null> = { ...request.annotations };
      for (const key of managedAnnotations) if (!(key in annotations)) annotations[key] = null;
      const updated = await write(
        'PATCH',
        `${kind.collectionPath}/${encodeURIComponent(name)}`,
        { metadata: { annotations }, rules },
        name,
      );
      logger.info(`${kind.kind} changed`, { audit: kind.resource, role: name, by: caller.username });
      res.json(updated);
    });
  mountOperation(router, '', kind.operations.update, jsonBody, change(false));
  mountOperation(router, '', kind.operations.patch, patchBody, change(true));

  mountOperation(
    router,
    '',
    kind.operations.remove,
    withCaller(async (caller, req, res) => {
      const name = String(req.params.name);
      await requireRight(caller, 'delete', name);
      await writable(name);
      const holders = await kind.holders(name);
      if (holders > 0)
        throw new ApiError(
          409,
          'Conflict',
          `${kind.qualified} "${name}" is given by ${holders} binding(s): give their users another role first`,
          details(name),
        );
      try {
        await client.request({
          method: 'DELETE',
          path: `${kind.collectionPath}/${encodeURIComponent(name)}`,
          timeoutMs: TIMEOUT_MS,
        });
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 404) throw notFound(name);
        throw err;
      }
      logger.info(`${kind.kind} deleted`, { audit: kind.resource, role: name, by: caller.username });
      res.json(deletedStatus(name, IAM_GROUP, kind.resource));
    }),
  );
  return router;
}

/** The annotations a role write sets: description, alias, templates (globalRoleRequestFrom). */
const managedAnnotations = ['kapi.io/description', 'kapi.io/alias-name', 'iam.kapi.io/aggregation-roles'];

export interface RoleAdminDeps {
  roles: GlobalRoleDirectory;
  authorizer: Authorizer;
  client: KubeClient;
  logger: Logger;
}

/** Bindings of `items` whose roleRef is the `kind` named `name`. */
const countHolders = (items: Raw[] | undefined, kindName: string, name: string) =>
  (items ?? []).filter((binding) => binding?.roleRef?.kind === kindName && binding.roleRef.name === name).length;

/** Platform roles (GlobalRoles), realized by kapi's controller as ClusterRoles `kapi:globalrole:<name>`. */
export function globalRoleAdminRoutes(deps: RoleAdminDeps): Router {
  return roleAdminRoutes(
    {
      resource: 'globalroles',
      collectionPath: GLOBAL_ROLES_PATH,
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'GlobalRole',
      qualified: 'globalroles.iam.kapi.io',
      find: async (name) => deps.roles.role(name)?.body,
      notWritable: (stored) => (isTemplate(stored) ? 'is a role template' : undefined),
      escalate: { verb: 'escalate', group: IAM_GROUP, resource: 'globalroles' },
      // the bindings as kube-apiserver has them now, not as kapi's watch last saw them: a binding made a moment ago
      // (on any replica) still holds the role
      holders: async (name) =>
        countHolders(
          (await deps.client.request<{ items?: Raw[] }>({ path: GLOBAL_ROLE_BINDINGS_PATH, timeoutMs: TIMEOUT_MS }))
            ?.items,
          'GlobalRole',
          name,
        ),
      operations: {
        create: createGlobalRole,
        update: updateGlobalRole,
        patch: patchGlobalRole,
        remove: deleteGlobalRole,
      },
    },
    deps.authorizer,
    deps.client,
    deps.logger,
  );
}

export const PRESET_CLUSTER_ROLES = ['cluster-admin', 'cluster-viewer'];

/**
 * Cluster roles (the console's Cluster Roles page): ClusterRoles the platform made (`kapi.io/creator`), written as
 * they are, since RBAC is their authorizer. The presets (cluster-admin, cluster-viewer), templates, kapi's realized
 * roles and every ClusterRole not made for the platform (Kubernetes' own, controllers') are read, never written here.
 */
export function clusterRoleAdminRoutes(deps: Omit<RoleAdminDeps, 'roles'>): Router {
  const collectionPath = `${RBAC_PATH}/clusterroles`;
  return roleAdminRoutes(
    {
      resource: 'clusterroles',
      collectionPath,
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      qualified: 'clusterroles.rbac.authorization.k8s.io',
      // read as kube-apiserver has it now: a write follows the role it changes, not a watch's view of it
      find: async (name) => {
        try {
          return await deps.client.request<Raw>({
            path: `${collectionPath}/${encodeURIComponent(name)}`,
            timeoutMs: TIMEOUT_MS,
          });
        } catch (err) {
          if (err instanceof KubeApiError && err.code === 404) return undefined;
          throw err;
        }
      },
      notWritable: (stored) => {
        if (isTemplate(stored)) return 'is a role template';
        if (PRESET_CLUSTER_ROLES.includes(stored?.metadata?.name)) return 'is a preset role of the platform';
        if (stored?.metadata?.labels?.[REALIZES_LABEL] !== undefined) return 'is kapi’s realization of a platform role';
        if (stored?.metadata?.annotations?.['kapi.io/creator'] === undefined) return 'was not made for the platform';
        return undefined;
      },
      escalate: { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
      // a ClusterRole is given by ClusterRoleBindings and by RoleBindings in any namespace
      holders: async (name) => {
        const [clusterBindings, bindings] = await Promise.all(
          [`${RBAC_PATH}/clusterrolebindings`, `${RBAC_PATH}/rolebindings`].map((path) =>
            deps.client.request<{ items?: Raw[] }>({ path, timeoutMs: TIMEOUT_MS }),
          ),
        );
        return (
          countHolders(clusterBindings?.items, 'ClusterRole', name) + countHolders(bindings?.items, 'ClusterRole', name)
        );
      },
      operations: {
        create: createClusterRole,
        update: updateClusterRole,
        patch: patchClusterRole,
        remove: deleteClusterRole,
      },
    },
    deps.authorizer,
    deps.client,
    deps.logger,
  );
}
