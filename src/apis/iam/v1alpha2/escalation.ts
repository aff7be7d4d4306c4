import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import { ForbiddenError } from '../../../server/errors.js';
import type { PolicyRule } from '../../../controllers/platform-rbac/realize.js';

/** A role whose rights take more reviews than this to confirm is refused rather than checked at length. */
export const MAX_RIGHTS_CHECKED = 512;

/**
 * The rights a role grants, as the questions a SubjectAccessReview asks (pure): one per verb × API group × resource
 * (× name), or per verb × non-resource URL, without repeats. Asked of the cluster's authorizer for a caller, they
 * apply RBAC's rule that no one grants what they do not hold: a wildcard is asked as a wildcard, which only a
 * wildcard grant answers yes to, as kube-apiserver's own escalation check compares rules.
 */
export function rightsOf(rules: readonly PolicyRule[]): ResourceAttributes[] {
  const rights = new Map<string, ResourceAttributes>();
  const add = (right: ResourceAttributes) => rights.set(JSON.stringify(right), right);
  for (const rule of rules) {
    for (const verb of rule.verbs) {
      for (const path of rule.nonResourceURLs ?? []) add({ verb, resource: '', path });
      for (const group of rule.apiGroups ?? (rule.resources ? [''] : [])) {
        for (const combined of rule.resources ?? []) {
          const slash = combined.indexOf('/');
          const resource = slash < 0 ? combined : combined.slice(0, slash);
          const subresource = slash < 0 ? undefined : combined.slice(slash + 1);
          const base: ResourceAttributes = { verb, group, resource, ...(subresource ? { subresource } : {}) };
          if (rule.resourceNames && rule.resourceNames.length > 0) {
            for (const name of rule.resourceNames) add({ ...base, name });
          } else add(base);
        }
      }
    }
  }
  return [...rights.values()];
}

/** How a right reads in a refusal: `delete namespaces`, `get pods/log "web"`, `get /metrics`. */
export function describeRight(right: ResourceAttributes): string {
  if (right.path !== undefined) return `${right.verb} ${right.path}`;
  const resource = right.subresource ? `${right.resource}/${right.subresource}` : right.resource;
  const qualified = right.group ? `${resource}.${right.group}` : resource;
  return `${right.verb} ${qualified}${right.name ? ` "${right.name}"` : ''}`;
}

/**
 * RBAC's rule against escalation for a role kapi binds on a caller's behalf (kapi's own credentials may bind
 * anything): the caller may `bind` the role (`bind`), or holds every right its `rules` grant. `what` names the role
 * in the refusal.
 */
export async function confirmNoEscalation(
  authorizer: Authorizer,
  caller: UserInfo,
  rules: readonly PolicyRule[],
  bind: ResourceAttributes,
  what: string,
): Promise<void> {
  if ((await authorizer.authorize(caller, bind)).allowed) return;
  const rights = rightsOf(rules);
  if (rights.length > MAX_RIGHTS_CHECKED)
    throw new ForbiddenError(
      `${what} grants more than ${MAX_RIGHTS_CHECKED} distinct rights: only one who may bind it can give it`,
    );
  const decisions = await Promise.all(rights.map((right) => authorizer.authorize(caller, right)));
  const missing = rights.find((_, i) => !decisions[i]!.allowed);
  if (missing)
    throw new ForbiddenError(
      `user "${caller.username}" cannot give ${what}: it grants ${describeRight(missing)}, which ` +
        `"${caller.username}" does not hold (nor may bind it)`,
      { name: bind.name ?? '', group: bind.group ?? '', kind: bind.resource },
    );
}
