import type { NextFunction, Request, Response } from 'express';
import { forbidden } from '../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../auth/identity.js';
import { jsonBody } from '../auth/account/account-routes.js';
import { impersonationHeaders } from '../proxy/forward-headers.js';
import { UnauthorizedError } from '../server/errors.js';

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
