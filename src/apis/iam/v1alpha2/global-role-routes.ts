import { Router } from 'express';
import { jsonBody } from '../../../auth/account/account-routes.js';
import { asKapi, deletedStatus, requireRight as requireCallerRight, withCaller } from '../../caller.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import { ROLE_TEMPLATE_LABEL } from '../../../controllers/platform-rbac/realize.js';
import { KubeApiError, type KubeClient } from '../../../kube/client.js';
import type { Logger } from '../../../observability/logger.js';
import { mountOperation } from '../../../openapi/operation.js';
import { ApiError, NotFoundError } from '../../../server/errors.js';
import { confirmNoEscalation } from './escalation.js';
import { aggregatedRules, globalRoleRequestFrom, type GlobalRoleRequest } from './global-role-admin.js';
import { GLOBAL_ROLE_BINDINGS_PATH, GLOBAL_ROLES_PATH, type GlobalRoleDirectory } from './global-roles.js';
import { createGlobalRole, deleteGlobalRole, updateGlobalRole } from './operations.js';

export interface GlobalRoleAdminDeps {
  roles: GlobalRoleDirectory;
  authorizer: Authorizer;
  client: KubeClient;
  logger: Logger;
}

const IAM_GROUP = 'iam.kapi.io';
const TIMEOUT_MS = 10_000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const details = (name: string) => ({ name, group: IAM_GROUP, kind: 'globalroles' });
const notFound = (name: string, what = 'globalroles.iam.kapi.io') =>
  new NotFoundError(`${what} "${name}" not found`, details(name));

/**
 * Platform roles administered (SPEC §17, the console's Platform Roles page): create, change, delete. Each is a
 * SubjectAccessReview of the caller on `globalroles`; a role's rules pass RBAC's rule against escalation (the caller
 * holds them, or may `escalate` globalroles) before kapi writes it.
 */
export function globalRoleAdminRoutes(deps: GlobalRoleAdminDeps): Router {
  const router = Router();

  const requireRight = (caller: UserInfo, attributes: ResourceAttributes) =>
    requireCallerRight(deps.authorizer, caller, attributes);

  const isTemplate = (name: string) => {
    const labels = (deps.roles.role(name)?.body.metadata as Raw)?.labels;
    return labels?.[ROLE_TEMPLATE_LABEL] !== undefined;
  };

  /** The rules the role will have, once the caller is found to hold them. */
  const rulesFor = async (caller: UserInfo, request: GlobalRoleRequest) => {
    const templates = (request.templates ?? []).map((name) => {
      const template = deps.roles.role(name);
      if (!template || !isTemplate(name)) throw notFound(name, 'role template');
      return template.body;
    });
    const rules = request.templates ? aggregatedRules(templates) : request.rules;
    await confirmNoEscalation(
      deps.authorizer,
      caller,
      rules,
      { verb: 'escalate', group: IAM_GROUP, resource: 'globalroles' },
      `global role "${request.name}"`,
    );
    return rules;
  };

  const write = (method: 'POST' | 'PATCH', path: string, body: unknown, name: string) =>
    asKapi(
      deps.client,
      { method, path, body, ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}) },
      details(name),
    );

  const handle = withCaller;

  mountOperation(
    router,
    '',
    createGlobalRole,
    jsonBody,
    handle(async (caller, req, res) => {
      await requireRight(caller, { verb: 'create', group: IAM_GROUP, resource: 'globalroles' });
      const request = globalRoleRequestFrom(req.body);
      const rules = await rulesFor(caller, request);
      const created = await write(
        'POST',
        GLOBAL_ROLES_PATH,
        {
          apiVersion: 'iam.kapi.io/v1alpha2',
          kind: 'GlobalRole',
          metadata: { name: request.name, annotations: { ...request.annotations, 'kapi.io/creator': caller.username } },
          rules,
        },
        request.name,
      );
      deps.logger.info('global role created', { audit: 'globalrole', role: request.name, by: caller.username });
      res.status(201).json(created);
    }),
  );

  mountOperation(
    router,
    '',
    updateGlobalRole,
    jsonBody,
    handle(async (caller, req, res) => {
      const name = String(req.params.name);
      await requireRight(caller, { verb: 'update', group: IAM_GROUP, resource: 'globalroles', name });
      const request = globalRoleRequestFrom(req.body, name);
      if (!deps.roles.role(name) || isTemplate(name)) throw notFound(name);
      const rules = await rulesFor(caller, request);
      const updated = await write(
        'PATCH',
        `${GLOBAL_ROLES_PATH}/${encodeURIComponent(name)}`,
        { metadata: { annotations: request.annotations }, rules },
        name,
      );
      deps.logger.info('global role changed', { audit: 'globalrole', role: name, by: caller.username });
      res.json(updated);
    }),
  );

  mountOperation(
    router,
    '',
    deleteGlobalRole,
    handle(async (caller, req, res) => {
      const name = String(req.params.name);
      await requireRight(caller, { verb: 'delete', group: IAM_GROUP, resource: 'globalroles', name });
      if (!deps.roles.role(name) || isTemplate(name)) throw notFound(name);
      // the bindings as kube-apiserver has them now, not as kapi's watch last saw them: a binding made a moment ago
      // (on any replica) still holds the role
      const bindings = await deps.client.request<{ items?: Raw[] }>({
        path: GLOBAL_ROLE_BINDINGS_PATH,
        timeoutMs: TIMEOUT_MS,
      });
      const holders = (bindings?.items ?? []).filter(
        (binding) => binding?.roleRef?.kind === 'GlobalRole' && binding.roleRef.name === name,
      ).length;
      if (holders > 0)
        throw new ApiError(
          409,
          'Conflict',
          `globalroles.iam.kapi.io "${name}" is given by ${holders} binding(s): give their users another role first`,
          details(name),
        );
      try {
        await deps.client.request({
          method: 'DELETE',
          path: `${GLOBAL_ROLES_PATH}/${encodeURIComponent(name)}`,
          timeoutMs: TIMEOUT_MS,
        });
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 404) throw notFound(name);
        throw err;
      }
      deps.logger.info('global role deleted', { audit: 'globalrole', role: name, by: caller.username });
      res.json(deletedStatus(name, IAM_GROUP, 'globalroles'));
    }),
  );
  return router;
}
