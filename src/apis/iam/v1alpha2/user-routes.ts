import { Router } from 'express';
import { jsonBody } from '../../../auth/account/account-routes.js';
import { deletedStatus, patchBody, requireRight as requireCallerRight, withCaller } from '../../caller.js';
import { hashPassword } from '../../../auth/account/password-change.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import { USERS_PATH } from '../../../auth/users/user-record.js';
import type { PasswordPolicy } from '../../../config/account-settings.js';
import { ROLE_TEMPLATE_LABEL, rulesOf } from '../../../controllers/platform-rbac/realize.js';
import { KubeApiError, type KubeClient } from '../../../kube/client.js';
import type { Logger } from '../../../observability/logger.js';
import { mountOperation } from '../../../openapi/operation.js';
import { ApiError, BadRequestError, NotFoundError } from '../../../server/errors.js';
import { isObjectName } from '../../../auth/kube-names.js';
import { KINDS_BY_RESOURCE, userAsAnswered, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../../resources/v1alpha3/listing/resource-listing.js';
import { confirmNoEscalation } from './escalation.js';
import type { GlobalRoleDirectory } from './global-roles.js';
import { createPlatformUser, deletePlatformUser, patchPlatformUser, updatePlatformUser } from './operations.js';
import { platformUser } from './platform-user.js';
import type { UserRoleBindings } from './role-bindings.js';
import { finalizerRemoval, realizedGrantsOf, removeUserTraces } from '../../../controllers/users/user-cleanup.js';
import {
  editsAccess,
  newUserFrom,
  specPatchOf,
  statusPatchOf,
  userEditFrom,
  userObject,
  type UserEdit,
} from './user-admin.js';

export interface UserAdminDeps {
  listing: ResourceListing;
  roles: GlobalRoleDirectory;
  authorizer: Authorizer;
  /** kapi's own client: it writes Users and bindings once the caller's rights are checked. */
  client: KubeClient;
  bindings: UserRoleBindings;
  passwordPolicy: () => PasswordPolicy;
  /** Ends a user's login sessions; how many ended. */
  endSessions: (user: string) => Promise<number>;
  /** Makes a hash the password of a User (its Secret in kapi's namespace, never the User object). */
  setPasswordHash: (user: string, uid: string, hash: string) => Promise<void>;
  /** kapi's namespace, where a deleted user's password Secret is. */
  kapiNamespace: string;
  logger: Logger;
  clock?: () => number;
}

const IAM_GROUP = 'iam.kapi.io';
const TIMEOUT_MS = 10_000;
/** How long deleting a user waits for kapi's controller to take its realized grants away. */
const REALIZED_GRANTS_WAIT_MS = 10_000;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const userDetails = (name: string) => ({ name, group: IAM_GROUP, kind: 'users' });
const userNotFound = (name: string) => new NotFoundError(`users.iam.kapi.io "${name}" not found`, userDetails(name));

/**
 * The users' administration of `iam.kapi.io/v1alpha2` (SPEC §17): create, update, patch, delete. Each request is
 * authorized by a SubjectAccessReview of the caller on `users`; a platform role given passes RBAC's rule against
 * escalation; then kapi writes with its own credentials.
 */
export function userAdminRoutes(deps: UserAdminDeps): Router {
  const router = Router();
  const users = KINDS_BY_RESOURCE.get('users') as KindDefinition;
  const clock = deps.clock ?? Date.now;

  const requireRight = (caller: UserInfo, attributes: ResourceAttributes) =>
    requireCallerRight(deps.authorizer, caller, attributes);

  /** The platform role `role`, if the caller may give it: it exists, is no template, and grants nothing more. */
  const requireGivable = async (caller: UserInfo, role: string) => {
    const found = deps.roles.role(role);
    const labels = (found?.body.metadata as Raw)?.labels;
    if (!found || labels?.[ROLE_TEMPLATE_LABEL] !== undefined)
      throw new NotFoundError(`globalroles.iam.kapi.io "${role}" not found`, {
        name: role,
        group: IAM_GROUP,
        kind: 'globalroles',
      });
    // whom RBAC lets bind the role may give it whatever it grants, as with RBAC's own roles
    await confirmNoEscalation(
      deps.authorizer,
      caller,
      rulesOf(found.body),
      { verb: 'bind', group: IAM_GROUP, resource: 'globalroles', name: role },
      `platform role "${role}"`,
    );
  };

  const requireFreeEmail = async (email: string, user: string) => {
    const holders = await deps.listing.cachedNamesWithField(users, 'email', email);
    holders.delete(user);
    if (holders.size > 0)
      throw new ApiError(409, 'Conflict', `the e-mail address of user "${user}" is another user's`, userDetails(user));
  };

  const readStored = async (name: string): Promise<Raw> => {
    // a name no object can have ("..", "a/b") is no user, and never becomes a path of kube-apiserver's
    if (!isObjectName(name)) throw userNotFound(name);
    try {
      return await deps.client.request<Raw>({
        path: `${USERS_PATH}/${encodeURIComponent(name)}`,
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) throw userNotFound(name);
      throw err;
    }
  };

  const answered = (stored: Raw, role: string | undefined) => {
    const { managedFields: _managed, ...metadata } = stored?.metadata ?? {};
    return platformUser(userAsAnswered({ ...stored, metadata }), role);
  };

  const handle = withCaller;
  /** Takes kapi's finalizer off a User being deleted (its cleanup done): it goes. */
  const releaseUser = async (name: string, uid: string | undefined) => {
    const path = `${USERS_PATH}/${encodeURIComponent(name)}`;
    for (let attempt = 1; attempt <= 5; attempt++) {
      const user = await deps.client.request<Raw>({ path, timeoutMs: TIMEOUT_MS }).catch((err: unknown) => {
        if (err instanceof KubeApiError && err.code === 404) return undefined;
        throw err;
      });
      if (!user || (uid && user.metadata?.uid !== uid)) return;
      const removal = finalizerRemoval(user);
      if (!removal) return;
      try {
        await deps.client.request({
          method: 'PATCH',
          path,
          contentType: 'application/json-patch+json',
          body: removal,
          timeoutMs: TIMEOUT_MS,
        });
        return;
      } catch (err) {
        // gone meanwhile (a controller finished the same cleanup): done
        if (err instanceof KubeApiError && err.code === 404) return;
        // changed in between (another finalizer, the controller): read again
        if (!(err instanceof KubeApiError && (err.code === 409 || err.code === 422))) throw err;
      }
    }
  };
  /** Waits, a few seconds at most, until no realized RBAC binding names the user; whether none does. */
  const untilNoRealizedGrant = async (name: string) => {
    const deadline = Date.now() + REALIZED_GRANTS_WAIT_MS;
    for (;;) {
      if ((await realizedGrantsOf(deps.client, name)).length === 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const removeCreated = async (name: string) => {
    await deps.client
      .request({ method: 'DELETE', path: `${USERS_PATH}/${encodeURIComponent(name)}`, timeoutMs: TIMEOUT_MS })
      .catch(() => undefined);
    await releaseUser(name, undefined).catch(() => undefined);
  };

  mountOperation(
    router,
    '',
    createPlatformUser,
    jsonBody,
    handle(async (caller, req, res) => {
      await requireRight(caller, { verb: 'create', group: IAM_GROUP, resource: 'users' });
      const user = newUserFrom(req.body, deps.passwordPolicy());
      await requireGivable(caller, user.globalRole);
      await requireFreeEmail(user.email, user.name);
      const hash = await hashPassword(user.password);
      let created: Raw;
      try {
        created = await deps.client.request<Raw>({
          method: 'POST',
          path: USERS_PATH,
          body: userObject(user, caller.username),
          timeoutMs: TIMEOUT_MS,
        });
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 409)
          throw new ApiError(
            409,
            'AlreadyExists',
            `users.iam.kapi.io "${user.name}" already exists`,
            userDetails(user.name),
          );
        throw refusedByCluster(err, user.name);
      }
      try {
        await deps.setPasswordHash(user.name, String(created?.metadata?.uid), hash);
      } catch (err) {
        // a user who could never log in is no user made: it goes again (its finalizer with it: nothing to clean)
        await removeCreated(user.name);
        throw err;
      }
      await deps.bindings.assign(user.name, user.globalRole);
      deps.logger.info('user created', { audit: 'user', user: user.name, by: caller.username, role: user.globalRole });
      res.status(201).json(answered(created, user.globalRole));
    }),
  );

  const edit = (mode: 'replace' | 'merge') =>
    handle(async (caller, req, res) => {
      const name = String(req.params.name);
      const change = userEditFrom(req.body, name, mode);
      if (caller.username !== name || editsAccess(change))
        await requireRight(caller, {
          verb: mode === 'replace' ? 'update' : 'patch',
          group: IAM_GROUP,
          resource: 'users',
          name,
        });
      let stored = await readStored(name);
      const currentRole = deps.roles.roleOf(name);
      const newRole =
        change.globalRole !== undefined && change.globalRole !== currentRole ? change.globalRole : undefined;
      if (newRole) await requireGivable(caller, newRole);
      if (change.email !== undefined && change.email !== stored?.spec?.email)
        await requireFreeEmail(change.email, name);
      stored = await applyEdit(deps.client, name, change, stored, caller.username, clock());
      if (newRole) await deps.bindings.assign(name, newRole);
      if (change.state === 'Disabled') await deps.endSessions(name);
      deps.logger.info('user changed', {
        audit: 'user',
        user: name,
        by: caller.username,
        ...(newRole ? { role: newRole } : {}),
        ...(change.state ? { state: change.state } : {}),
      });
      res.json(answered(stored, newRole ?? currentRole));
    });
  mountOperation(router, '', updatePlatformUser, jsonBody, edit('replace'));
  mountOperation(router, '', patchPlatformUser, patchBody, edit('merge'));

  mountOperation(
    router,
    '',
    deletePlatformUser,
    handle(async (caller, req, res) => {
      const name = String(req.params.name);
      await requireRight(caller, { verb: 'delete', group: IAM_GROUP, resource: 'users', name });
      if (!isObjectName(name)) throw userNotFound(name);
      let uid: string | undefined;
      try {
        // marked for deletion first (its finalizer keeps it): it has no access left while its traces go
        const deleted = await deps.client.request<Raw>({
          method: 'DELETE',
          path: `${USERS_PATH}/${encodeURIComponent(name)}`,
          timeoutMs: TIMEOUT_MS,
        });
        uid = typeof deleted?.metadata?.uid === 'string' ? deleted.metadata.uid : undefined;
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 404) throw userNotFound(name);
        throw err;
      }
      // in the same operation: the workspaces it managed lose it as manager (a new user of the name would be their
      // admin), its bindings, sessions and password go; then the User itself
      const outcome = await removeUserTraces(deps.client, deps.kapiNamespace, name);
      // the name is free once no realized grant names it (kapi's controller follows at once; if it has not within the
      // wait, the User stays, marked for deletion, and the controller lets it go later)
      if (await untilNoRealizedGrant(name)) await releaseUser(name, uid);
      deps.logger.info('user deleted', {
        audit: 'user',
        user: name,
        by: caller.username,
        bindings: outcome.bindings,
        sessions: outcome.sessions,
        managerOf: outcome.workspaces,
      });
      res.json(deletedStatus(name, IAM_GROUP, 'users', uid));
    }),
  );
  return router;
}

/** Writes what `change` sets of the User and its state; answers the User as last written. */
async function applyEdit(
  client: KubeClient,
  name: string,
  change: UserEdit,
  stored: Raw,
  by: string,
  nowMs: number,
): Promise<Raw> {
  const path = `${USERS_PATH}/${encodeURIComponent(name)}`;
  const patch = async (target: string, body: Record<string, unknown>) => {
    try {
      return await client.request<Raw>({
        method: 'PATCH',
        path: target,
        contentType: 'application/merge-patch+json',
        body,
        timeoutMs: TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) throw userNotFound(name);
      throw refusedByCluster(err, name);
    }
  };
  let written = stored;
  const specPatch = specPatchOf(change);
  if (specPatch) written = await patch(path, specPatch);
  const state = stored?.status?.state ?? 'Active';
  if (change.state !== undefined && change.state !== state)
    written = await patch(`${path}/status`, statusPatchOf(change.state, by, nowMs));
  return written;
}

/** kube-apiserver's refusal of a User kapi wrote (its schema's rules): the caller's 400, with kube's reason. */
function refusedByCluster(err: unknown, name: string): unknown {
  if (err instanceof KubeApiError && (err.code === 422 || err.code === 400)) {
    // the fields only: kube's message quotes the values refused, and one of them may be the password's hash
    const fields = (err.status?.details?.causes ?? []).flatMap((cause) => (cause.field ? [cause.field] : []));
    return new BadRequestError(
      `kube-apiserver refused the User "${name}"${fields.length > 0 ? ` (${fields.join(', ')})` : ''}`,
    );
  }
  return err;
}
