import type { SandboxUser } from './identity.js';
import type {
  AccessAttributes,
  Authorizer,
  NonResourceRuleInfo,
  PolicyDecision,
  ResourceRuleInfo,
  RuleSet,
} from './policy.js';
import {
  describeSubject,
  rbacRuleAllows,
  subjectUsername,
  type RbacPolicyRule,
  type RbacSubject,
  type RoleRef,
} from './rbac-rules.js';

/**
 * RBAC objects compiled for lookup: every binding resolved to its role's rules once and filed under each subject
 * (user name or group), cluster-wide for ClusterRoleBindings and per namespace for RoleBindings. A decision then
 * looks up the user's name and groups instead of walking every binding, as kube's rule resolver does per request.
 * Immutable: a change to any RBAC object means compiling a new index (rbac-authorizer.ts).
 *
 * Semantics as kube's RBAC authorizer: a ClusterRoleBinding grants its ClusterRole's rules everywhere (and is the
 * only way to non-resource URLs); a RoleBinding grants its Role (same namespace) or ClusterRole only inside its own
 * namespace. A binding whose role is missing grants nothing. A ClusterRole with an aggregationRule grants its rules
 * and those of every ClusterRole its selectors' `matchLabels` pick, as kube's aggregation controller fills them in
 * (the sandbox evaluates it here instead of writing the rules into the object).
 */
export interface RoleObject {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> | null };
  rules?: RbacPolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string> | null }[] | null } | null;
}

export interface BindingObject {
  metadata: { name?: string; namespace?: string };
  roleRef?: RoleRef;
  subjects?: RbacSubject[] | null;
}

export interface RbacObjects {
  clusterRoles: readonly RoleObject[];
  roles: readonly RoleObject[];
  clusterRoleBindings: readonly BindingObject[];
  roleBindings: readonly BindingObject[];
}

interface Grant {
  readonly rules: readonly RbacPolicyRule[];
  /** `ClusterRoleBinding "b" of ClusterRole "r" to User "alice"`, kube's allow reason. */
  readonly source: string;
  /** The rule resolver's error when the role is missing (the grant then has no rules). */
  readonly error?: string;
}

type GrantsBySubject = Map<string, Grant[]>;

const userKey = (name: string): string => `user:${name}`;
const groupKey = (name: string): string => `group:${name}`;

function subjectKey(subject: RbacSubject, bindingNamespace: string): string | undefined {
  if (subject.kind === 'Group') return subject.name ? groupKey(subject.name) : undefined;
  const username = subjectUsername(subject, bindingNamespace);
  return username ? userKey(username) : undefined;
}

function file(into: GrantsBySubject, key: string, grant: Grant): void {
  const list = into.get(key);
  if (list) list.push(grant);
  else into.set(key, [grant]);
}

function byName(objects: readonly RoleObject[]): Map<string, readonly RbacPolicyRule[]> {
  const map = new Map<string, readonly RbacPolicyRule[]>();
  for (const role of objects) {
    const key = role.metadata.namespace ? `${role.metadata.namespace}/${role.metadata.name}` : role.metadata.name;
    map.set(key ?? '', role.rules ?? []);
  }
  return map;
}

/**
 * The ClusterRoles with the rules of those each aggregationRule selects (matchLabels) added, through chains as kube's
 * controller builds them (view's labelled roles reach edit and admin); a cycle stops where it closes.
 */
function aggregated(clusterRoles: readonly RoleObject[]): RoleObject[] {
  const done = new Map<RoleObject, readonly RbacPolicyRule[]>();
  const visiting = new Set<RoleObject>();
  const rulesOf = (role: RoleObject): readonly RbacPolicyRule[] => {
    const known = done.get(role);
    if (known) return known;
    const own = role.rules ?? [];
    const selectors = role.aggregationRule?.clusterRoleSelectors ?? [];
    if (selectors.length === 0 || visiting.has(role)) return own;
    visiting.add(role);
    const picks = (other: RoleObject) =>
      other !== role &&
      selectors.some((selector) => {
        const wanted = Object.entries(selector.matchLabels ?? {});
        return wanted.length > 0 && wanted.every(([key, value]) => other.metadata.labels?.[key] === value);
      });
    const rules = [...own, ...clusterRoles.filter(picks).flatMap(rulesOf)];
    visiting.delete(role);
    done.set(role, rules);
    return rules;
  };
  return clusterRoles.map((role) => ({ ...role, rules: [...rulesOf(role)] }));
}

export class RbacIndex implements Authorizer {
  private constructor(
    private readonly cluster: GrantsBySubject,
    private readonly namespaced: ReadonlyMap<string, GrantsBySubject>,
  ) {}

  static compile(objects: RbacObjects): RbacIndex {
    const clusterRoles = byName(aggregated(objects.clusterRoles));
    const roles = byName(objects.roles);
    const cluster: GrantsBySubject = new Map();
    const namespaced = new Map<string, GrantsBySubject>();

    const resolve = (
      ref: RoleRef | undefined,
      namespace: string,
    ): { rules: readonly RbacPolicyRule[]; error?: string } => {
      const name = ref?.name ?? '';
      if (ref?.kind === 'ClusterRole') {
        const rules = clusterRoles.get(name);
        return rules ? { rules } : { rules: [], error: `clusterrole.rbac.authorization.k8s.io "${name}" not found` };
      }
      if (ref?.kind === 'Role' && namespace) {
        const rules = roles.get(`${namespace}/${name}`);
        return rules ? { rules } : { rules: [], error: `role.rbac.authorization.k8s.io "${name}" not found` };
      }
      return { rules: [], error: `unknown roleRef kind "${ref?.kind ?? ''}"` };
    };

    const add = (binding: BindingObject, namespace: string): void => {
      const into = namespace ? (namespaced.get(namespace) ?? new Map()) : cluster;
      if (namespace) namespaced.set(namespace, into);
      const ref = binding.roleRef;
      const { rules, error } = resolve(ref, namespace);
      const bindingName = namespace ? `${binding.metadata.name}/${namespace}` : (binding.metadata.name ?? '');
      const bindingKind = namespace ? 'RoleBinding' : 'ClusterRoleBinding';
      for (const subject of binding.subjects ?? []) {
        const key = subjectKey(subject, namespace);
        if (!key) continue;
        const source = `${bindingKind} "${bindingName}" of ${ref?.kind ?? ''} "${ref?.name ?? ''}" to ${describeSubject(subject, namespace)}`;
        file(into, key, error ? { rules, source, error } : { rules, source });
      }
    };
    for (const binding of objects.clusterRoleBindings) add(binding, '');
    for (const binding of objects.roleBindings) {
      if (binding.metadata.namespace) add(binding, binding.metadata.namespace);
    }
    return new RbacIndex(cluster, namespaced);
  }

  /** The grants that name the user or one of its groups, cluster-wide and then in the namespace. */
  private *grantsFor(user: SandboxUser, namespace: string): Generator<Grant> {
    const scopes = namespace ? [this.cluster, this.namespaced.get(namespace)] : [this.cluster];
    for (const scope of scopes) {
      if (!scope || scope.size === 0) continue;
      yield* scope.get(userKey(user.username)) ?? [];
      for (const group of user.groups) yield* scope.get(groupKey(group)) ?? [];
    }
  }

  decide(user: SandboxUser, attributes: AccessAttributes): PolicyDecision {
    // Non-resource URLs have no namespace: only ClusterRoleBindings reach them.
    const namespace = attributes.resource === undefined ? '' : (attributes.namespace ?? '');
    for (const grant of this.grantsFor(user, namespace)) {
      for (const rule of grant.rules) {
        if (rbacRuleAllows(rule, attributes)) return { allowed: true, reason: `RBAC: allowed by ${grant.source}` };
      }
    }
    return { allowed: false, reason: '' };
  }

  rulesFor(user: SandboxUser, namespace: string): RuleSet {
    const set: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationErrors: [] };
    for (const grant of this.grantsFor(user, namespace)) {
      if (grant.error) {
        set.incomplete = true;
        set.evaluationErrors.push(grant.error);
      }
      for (const rule of grant.rules) {
        if (rule.resources?.length) set.resourceRules.push(resourceRuleInfo(rule));
        if (rule.nonResourceURLs?.length) set.nonResourceRules.push(nonResourceRuleInfo(rule));
      }
    }
    return set;
  }
}

function resourceRuleInfo(rule: RbacPolicyRule): ResourceRuleInfo {
  const info: ResourceRuleInfo = { verbs: rule.verbs ?? [] };
  if (rule.apiGroups?.length) info.apiGroups = rule.apiGroups;
  if (rule.resources?.length) info.resources = rule.resources;
  if (rule.resourceNames?.length) info.resourceNames = rule.resourceNames;
  return info;
}

function nonResourceRuleInfo(rule: RbacPolicyRule): NonResourceRuleInfo {
  return { verbs: rule.verbs ?? [], nonResourceURLs: rule.nonResourceURLs ?? [] };
}
