import type { NextFunction, Request, Response } from 'express';
import { forbidden } from '../../../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import { UnauthorizedError } from '../../../server/errors.js';

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
