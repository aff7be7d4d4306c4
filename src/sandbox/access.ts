import type { IncomingMessage } from 'node:http';
import { ANONYMOUS, bearerToken, type SandboxUser, type TokenAuthenticator } from './identity.js';
import { impersonate } from './impersonation.js';
import { denialMessage, type AccessAttributes, type Authorizer } from './policy.js';
import type { RequestInfo } from './request-info.js';
import { denied, unauthorized } from './status.js';

/**
 * The front of every request, in kube-apiserver's filter order: authentication (bearer token → identity; an unknown
 * token is 401, no credentials at all is `system:anonymous`, as kube-apiserver's default --anonymous-auth=true has it),
 * impersonation (only with `impersonate` rights, else 403), authorization (the default policy or RBAC objects,
 * else 403 with kube's message). Pure over its inputs apart from the token lookup.
 */
export interface Identity {
  user: SandboxUser;
  impersonatedBy?: SandboxUser;
}

const UPGRADE_SUBRESOURCES = new Set(['exec', 'attach', 'portforward']);

export function authenticate(req: IncomingMessage, tokens: TokenAuthenticator, authorizer: Authorizer): Identity {
  const token = bearerToken(req.headers);
  const requestor = token ? tokens.authenticate(token) : ANONYMOUS;
  if (!requestor) throw unauthorized();
  const impersonation = impersonate(req, requestor, (attributes) => authorizer.decide(requestor, attributes).allowed);
  return impersonation
    ? { user: impersonation.user, impersonatedBy: impersonation.impersonatedBy }
    : { user: requestor };
}

/** The authorizer's view of a request. Exec, attach and port-forward need `create`, whatever the HTTP method. */
export function accessAttributes(info: RequestInfo): AccessAttributes {
  if (!info.isResourceRequest) return { verb: info.verb, path: info.path };
  const attributes: AccessAttributes = { verb: info.verb, apiGroup: info.apiGroup, resource: info.resource };
  if (info.subresource) attributes.subresource = info.subresource;
  if (UPGRADE_SUBRESOURCES.has(info.subresource)) attributes.verb = 'create';
  if (info.namespace) attributes.namespace = info.namespace;
  if (info.name) attributes.name = info.name;
  return attributes;
}

export function authorize(user: SandboxUser, info: RequestInfo, authorizer: Authorizer): void {
  const attributes = accessAttributes(info);
  if (authorizer.decide(user, attributes).allowed) return;
  throw denied(
    info.isResourceRequest ? { group: info.apiGroup, resource: info.resource } : undefined,
    info.name || undefined,
    denialMessage(user.username, attributes),
  );
}
