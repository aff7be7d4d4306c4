import type { NextFunction, Request, Response } from 'express';
import { forbidden } from '../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../auth/identity.js';
import { jsonBody } from '../auth/account/account-routes.js';
import { impersonationHeaders } from '../proxy/forward-headers.js';
import { KubeApiError, type KubeClient, type KubeRequest } from '../kube/client.js';
import { ApiError, BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../server/errors.js';

/** A handler of an authenticated request: `work` gets the caller; what it throws is the answer (a Status). */
export const withCaller =
  (work: (caller: UserInfo, req: Request, res: Response) => Promise<void>) =>
  (req: Request, res: Response, next: NextFunction): void => {
    const caller = req.user;
    if (!caller) return next(new UnauthorizedError());
    work(caller, req, res).catch(next);
  };

/** Goes on once the cluster's RBAC allows the caller `attributes` (a SubjectAccessReview); a 403 Status otherwise. */
export async function requireRight(
  authorizer: Authorizer,
  caller: UserInfo,
  attributes: ResourceAttributes,
): Promise<void> {
  const decision = await authorizer.authorize(caller, attributes);
  if (!decision.allowed) throw forbidden(caller.username, attributes, decision.reason);
}

/** The Status kube-apiserver answers for a deletion it finished. */
export function deletedStatus(name: string, group: string, kind: string, uid?: string): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    message: `${kind}.${group} "${name}" deleted`,
    details: { name, group, kind, ...(uid ? { uid } : {}) },
  };
}

/**
 * The headers that make a request of kapi's to kube-apiserver the caller's (Impersonate-User, -Uid, -Group): for what
 * kube-apiserver itself must decide for the caller. Undefined when the identity cannot travel in headers.
 */
export function callerHeaders(user: UserInfo): Record<string, string | string[]> | undefined {
  const pairs = impersonationHeaders(user);
  if (!pairs) return undefined;
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i] as string;
    const value = pairs[i + 1] as string;
    const before = headers[name];
    headers[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
  }
  return headers;
}

/** A patch body: JSON sent as application/json, a merge patch or a JSON patch (the console mixes them up). */
export function patchBody(req: Request, res: Response, next: NextFunction): void {
  const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/merge-patch+json' || type === 'application/json-patch+json')
    req.headers['content-type'] = 'application/json';
  jsonBody(req, res, next);
}

/** An optional JSON body (a DELETE's DeleteOptions): none is `undefined`. */
export function optionalJsonBody(req: Request, res: Response, next: NextFunction): void {
  const length = req.headers['content-length'];
  if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) {
    req.body = undefined;
    next();
    return;
  }
  jsonBody(req, res, next);
}

/** What kapi writes or reads on a caller's behalf, to name it in an answer: `name` of `kind` (plural) in `group`. */
export interface ObjectRef {
  name: string;
  group: string;
  kind: string;
}

const refDetails = (ref: ObjectRef) => ({ name: ref.name, group: ref.group, kind: ref.kind });

/**
 * A request kapi makes with its own credentials once the caller's rights are checked; the object answered without
 * its managedFields. kube-apiserver's refusals become the caller's Status: 404 NotFound, 409 AlreadyExists, and
 * 400 naming the refused fields only (kube's message quotes the values, and one may be a password's hash).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function asKapi(client: KubeClient, request: KubeRequest, ref: ObjectRef): Promise<any> {
  const qualified = `${ref.group ? `${ref.kind}.${ref.group}` : ref.kind} "${ref.name}"`;
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const answered = await client.request<any>({ timeoutMs: KAPI_REQUEST_TIMEOUT_MS, ...request });
    if (!answered?.metadata) return answered;
    const { managedFields: _managed, ...metadata } = answered.metadata;
    return { ...answered, metadata };
  } catch (err) {
    if (!(err instanceof KubeApiError)) throw err;
    if (err.code === 404) throw new NotFoundError(`${qualified} not found`, refDetails(ref));
    if (err.code === 409) throw new ApiError(409, 'AlreadyExists', `${qualified} already exists`, refDetails(ref));
    if (err.code === 400 || err.code === 422) {
      const fields = (err.status?.details?.causes ?? []).flatMap((cause) => (cause.field ? [cause.field] : []));
      throw new BadRequestError(
        `kube-apiserver refused ${qualified}${fields.length > 0 ? ` (${fields.join(', ')})` : ''}`,
      );
    }
    throw err;
  }
}

/**
 * A request to kube-apiserver as the caller (impersonated), for what kube-apiserver's own RBAC must decide for them
 * (its escalation rule, a project admin's own rights); answered as `asKapi`, its refusal (403) the caller's with kube's
 * reason, or `forbiddenMessage` when given.
 */
export async function asCaller(
  client: KubeClient,
  caller: UserInfo,
  request: KubeRequest,
  ref: ObjectRef,
  forbiddenMessage?: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  const headers = callerHeaders(caller);
  if (!headers)
    throw new ForbiddenError(`the identity of "${caller.username}" cannot be passed to the cluster`, refDetails(ref));
  try {
    return await asKapi(client, { ...request, headers: { ...request.headers, ...headers } }, ref);
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 403)
      throw new ForbiddenError(
        forbiddenMessage ?? err.status?.message ?? `user "${caller.username}" may not do this`,
        refDetails(ref),
      );
    throw err;
  }
}

const KAPI_REQUEST_TIMEOUT_MS = 10_000;
