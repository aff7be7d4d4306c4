import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError, UnauthorizedError } from '../../server/errors.js';
import type { AccessGuard, Authorizer, ResourceAttributes } from '../identity.js';

/**
 * The guard routes use to demand a right: the authorizer decides for `req.user`; a denial is a 403 Status worded as
 * kube-apiserver words it, so clients and people see the same message from kapi and from the cluster.
 */
export function accessGuard(authorizer: Authorizer): AccessGuard {
  return (attributes) => (req: Request, _res: Response, next: NextFunction) => {
    const user = req.user;
    if (!user) {
      next(new UnauthorizedError());
      return;
    }
    let wanted: ResourceAttributes;
    try {
      wanted = typeof attributes === 'function' ? attributes(req) : attributes;
    } catch (err) {
      next(err);
      return;
    }
    authorizer.authorize(user, wanted).then((decision) => {
      if (decision.allowed) next();
      else next(forbidden(user.username, wanted, decision.reason));
    }, next);
  };
}

/** kube-apiserver's message: `nodes is forbidden: User "x" cannot list resource "nodes" in API group "" at the cluster scope`. */
export function forbidden(username: string, a: ResourceAttributes, reason?: string): ForbiddenError {
  const group = a.group ?? '';
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const qualified = group ? `${a.resource}.${group}` : a.resource;
  const subject = a.name ? `${qualified} "${a.name}"` : qualified;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  let message = `${subject} is forbidden: User "${username}" cannot ${a.verb} resource "${resource}" in API group "${group}" ${scope}`;
  if (reason) message += `: ${reason}`;
  const details: { kind: string; group: string; name?: string } = { kind: a.resource, group };
  if (a.name) details.name = a.name;
  return new ForbiddenError(message, details);
}
