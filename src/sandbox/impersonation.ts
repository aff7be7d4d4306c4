import type { IncomingMessage } from 'node:http';
import { withAuthenticatedGroup, type SandboxUser } from './identity.js';
import { denialMessage, type AccessAttributes } from './policy.js';
import { badRequest, forbidden } from './status.js';

/**
 * kube-apiserver's impersonation filter: Impersonate-User, Impersonate-Group (repeated), Impersonate-Uid and
 * Impersonate-Extra-<key> switch the request's identity, each only if the caller may `impersonate` that user
 * (or service account), group, uid or extra value. The new identity gets system:authenticated, as kube adds it.
 */
export interface Impersonation {
  user: SandboxUser;
  impersonatedBy: SandboxUser;
}

const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;
const EXTRA_PREFIX = 'impersonate-extra-';

function headerValues(req: IncomingMessage, name: string): string[] {
  return req.headersDistinct[name] ?? [];
}

/** Whether the request asks to impersonate at all (any Impersonate-* header). */
export function wantsImpersonation(req: IncomingMessage): boolean {
  return Object.keys(req.headers).some((h) => h.startsWith('impersonate-'));
}

/** The impersonated identity, or undefined without impersonation headers; throws 403 (or 400) when not allowed. */
export function impersonate(
  req: IncomingMessage,
  requestor: SandboxUser,
  allowed: (attributes: AccessAttributes) => boolean,
): Impersonation | undefined {
  if (!wantsImpersonation(req)) return undefined;
  const username = headerValues(req, 'impersonate-user')[0] ?? '';
  const groups = headerValues(req, 'impersonate-group');
  const uid = headerValues(req, 'impersonate-uid')[0];
  const extra: Record<string, string[]> = {};
  for (const header of Object.keys(req.headersDistinct)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    let key = header.slice(EXTRA_PREFIX.length).toLowerCase();
    try {
      key = decodeURIComponent(key);
    } catch {
      // kube keeps keys it cannot unescape as they are
    }
    extra[key] = [...(extra[key] ?? []), ...headerValues(req, header)];
  }
  if (!username) {
    if (groups.length > 0 || uid !== undefined || Object.keys(extra).length > 0) {
      throw badRequest('requested impersonation of groups, uid or extra without impersonating a user');
    }
    return undefined;
  }

  const check = (attributes: AccessAttributes): void => {
    if (!allowed(attributes)) {
      throw forbidden(
        { group: attributes.apiGroup ?? '', resource: attributes.resource ?? '' },
        attributes.name,
        denialMessage(requestor.username, attributes),
      );
    }
  };

  let impliedGroups: string[] = [];
  const serviceAccount = SERVICE_ACCOUNT.exec(username);
  if (serviceAccount) {
    const [, namespace, name] = serviceAccount as unknown as [string, string, string];
    check({ verb: 'impersonate', apiGroup: '', resource: 'serviceaccounts', namespace, name });
    impliedGroups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
  } else {
    check({ verb: 'impersonate', apiGroup: '', resource: 'users', name: username });
  }
  for (const group of groups) check({ verb: 'impersonate', apiGroup: '', resource: 'groups', name: group });
  if (uid !== undefined) check({ verb: 'impersonate', apiGroup: 'authentication.k8s.io', resource: 'uids', name: uid });
  for (const [key, values] of Object.entries(extra)) {
    for (const value of values) {
      check({
        verb: 'impersonate',
        apiGroup: 'authentication.k8s.io',
        resource: 'userextras',
        subresource: key,
        name: value,
      });
    }
  }

  const effectiveGroups = groups.length > 0 ? groups : impliedGroups;
  const user: SandboxUser = {
    username,
    groups:
      username === 'system:anonymous' || effectiveGroups.includes('system:unauthenticated')
        ? effectiveGroups
        : withAuthenticatedGroup(effectiveGroups),
  };
  if (uid !== undefined) user.uid = uid;
  if (Object.keys(extra).length > 0) user.extra = extra;
  return { user, impersonatedBy: requestor };
}
