import { guardRules, type GuardRule } from './rules.js';

/**
 * The tenant guard as kube-apiserver runs it (pure): a ValidatingAdmissionPolicy of the rules in rules.ts and its
 * binding. Where the cluster's admission policies have CEL's `authorizer` (admissionregistration.k8s.io v1, and
 * v1beta1 where it is served), a write that touches a guarded field passes when the writer holds the right the rule
 * names, as kapi's own routes check it; on v1alpha1 (1.26 and 1.27, behind a feature gate) there is no authorizer, so
 * only kapi and `system:masters` may touch them, and everyone else goes through kapi's routes. kapi's own writes are
 * not evaluated: it checked the caller's rights before writing.
 *
 * Only writes that touch a guarded field are refused when the policy cannot decide (failurePolicy Fail): every
 * validation is `!touches || allowed`, and nothing else about a namespace, a workspace or a role is looked at.
 */

export const GUARD_NAME = 'kapi-tenant-guard';
export const GUARD_API_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'] as const;
export type GuardApiVersion = (typeof GUARD_API_VERSIONS)[number];
const GROUP = 'admissionregistration.k8s.io';

/**
 * Whose writes the guard does not evaluate: the users kapi's own requests reach kube-apiserver as (its ServiceAccount's
 * `system:serviceaccount:<ns>:<name>`; normally one, more where replicas run with other credentials). kapi adds its
 * own when it finds it missing; the list is also in the policy's annotation `EXEMPT_ANNOTATION`, sorted.
 */
export interface GuardIdentity {
  kapiUsernames: readonly string[];
}

export const EXEMPT_ANNOTATION = 'tenant.kapi.io/exempt-users';

/** The exempt users a stored policy names in its annotation (pure); none when it names none. */
export function exemptUsersOf(policy: unknown): string[] {
  const text = (policy as { metadata?: { annotations?: Record<string, string> } })?.metadata?.annotations?.[
    EXEMPT_ANNOTATION
  ];
  try {
    const list: unknown = JSON.parse(text ?? '[]');
    return Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string' && item !== '') : [];
  } catch {
    return [];
  }
}

const usersOf = (identity: GuardIdentity) => [...new Set(identity.kapiUsernames)].sort();
const celList = (identity: GuardIdentity) => `[${usersOf(identity).map(quote).join(', ')}]`;

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Whether the version's policies have CEL's `authorizer` (v1alpha1 has not). */
export const hasAuthorizer = (version: GuardApiVersion) => version !== 'v1alpha1';

/** A rule's denial at a policy version: what it guards, the right it needs (none there without an authorizer), its id. */
export function guardMessage(rule: GuardRule, version: GuardApiVersion): string {
  const message = hasAuthorizer(version)
    ? rule.message
    : `${rule.message}; this cluster's admission policies (${version}) cannot ask its authorizer, so here only kapi ` +
      `and system:masters change it: use kapi's API`;
  return `${message} [${rule.id}]`;
}

function validationOf(rule: GuardRule, version: GuardApiVersion, identity: GuardIdentity) {
  const resource = `request.resource.group == '${rule.group}' && request.resource.resource == '${rule.resource}'`;
  const trusted =
    `request.userInfo.username in ${celList(identity)} || ` +
    `(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g == 'system:masters'))`;
  const allowed = !hasAuthorizer(version)
    ? trusted
    : rule.requiresCel.length === 0
      ? 'false'
      : rule.requiresCel.map((expression) => `(${expression})`).join(' && ');
  return {
    expression: `!(${resource}) || !(${rule.touchesCel}) || ${allowed}`,
    message: guardMessage(rule, version),
    reason: 'Forbidden',
  };
}

/** The resources the rules guard, each with the operations that can touch a guarded field. */
function resourceRules(rules: readonly GuardRule[]) {
  const byGroup = new Map<string, Set<string>>();
  for (const rule of rules) {
    const resources = byGroup.get(rule.group) ?? new Set<string>();
    resources.add(rule.resource);
    byGroup.set(rule.group, resources);
  }
  // and their subresources that write metadata too: kube-apiserver keeps a label changed through a namespace's
  // status or finalize (and a custom resource's status), and a rule on a resource does not match its subresources
  const withSubresources = (resource: string) =>
    resource === 'namespaces'
      ? [resource, `${resource}/finalize`, `${resource}/status`]
      : [resource, `${resource}/status`];
  return [...byGroup].map(([group, resources]) => ({
    apiGroups: [group],
    apiVersions: ['*'],
    operations: ['CREATE', 'UPDATE'],
    resources: [...resources].sort().flatMap(withSubresources),
    scope: '*',
  }));
}

export interface GuardObjects {
  policy: Record<string, unknown>;
  binding: Record<string, unknown>;
}

export function guardObjects(version: GuardApiVersion, identity: GuardIdentity): GuardObjects {
  const rules = guardRules();
  const labels = { 'app.kubernetes.io/part-of': 'kapi' };
  const spec: Record<string, unknown> = {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: resourceRules(rules), matchPolicy: 'Equivalent' },
    validations: rules.map((rule) => validationOf(rule, version, identity)),
  };
  if (hasAuthorizer(version))
    spec.matchConditions = [{ name: 'not-kapi', expression: `!(request.userInfo.username in ${celList(identity)})` }];
  return {
    policy: {
      apiVersion: `${GROUP}/${version}`,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: GUARD_NAME, labels, annotations: { [EXEMPT_ANNOTATION]: JSON.stringify(usersOf(identity)) } },
      spec,
    },
    binding: {
      apiVersion: `${GROUP}/${version}`,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: GUARD_NAME, labels },
      spec: {
        policyName: GUARD_NAME,
        // v1alpha1 knows no validationActions: a binding there always denies
        ...(version !== 'v1alpha1' && { validationActions: ['Deny'] }),
      },
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** JSON equality, key order ignored. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a as object);
  if (keys.length !== Object.keys(b as object).length) return false;
  return keys.every((key) => same((a as Raw)[key], (b as Raw)[key]));
}

const emptySelector = (selector: Raw) =>
  selector === undefined || (Object.keys(selector).length === 0 && typeof selector === 'object');

/**
 * How the cluster's policy and binding differ from kapi's (pure): each field kapi sets must be as it sets it (what
 * kube-apiserver defaults, it may add), and nothing may narrow what the guard applies to. Empty: they are kapi's.
 */
export function guardDrift(expected: GuardObjects, policy: Raw, binding: Raw): string[] {
  const drift: string[] = [];
  if (!policy) return ['the ValidatingAdmissionPolicy is missing'];
  const want = expected.policy.spec as Raw;
  const have = policy.spec ?? {};
  for (const field of ['failurePolicy', 'validations', 'matchConditions'] as const)
    if (!same(want[field], have[field])) drift.push(`spec.${field} differs`);
  if (have.paramKind) drift.push('spec.paramKind is set');
  const constraints = have.matchConstraints ?? {};
  if (!same(want.matchConstraints.resourceRules, constraints.resourceRules))
    drift.push('spec.matchConstraints.resourceRules differ');
  if (constraints.matchPolicy !== want.matchConstraints.matchPolicy) drift.push('spec.matchConstraints.matchPolicy');
  if (!emptySelector(constraints.namespaceSelector) || !emptySelector(constraints.objectSelector))
    drift.push('spec.matchConstraints selects objects');
  if (constraints.excludeResourceRules?.length) drift.push('spec.matchConstraints.excludeResourceRules is set');
  if (!binding) return [...drift, 'the ValidatingAdmissionPolicyBinding is missing'];
  const bound = binding.spec ?? {};
  const wantBinding = expected.binding.spec as Raw;
  if (bound.policyName !== wantBinding.policyName) drift.push('the binding names another policy');
  if (wantBinding.validationActions && !same(bound.validationActions, wantBinding.validationActions))
    drift.push('the binding does not deny');
  if (bound.paramRef) drift.push('the binding has a paramRef');
  const matching = bound.matchResources;
  if (
    matching &&
    (matching.resourceRules?.length ||
      matching.excludeResourceRules?.length ||
      !emptySelector(matching.namespaceSelector) ||
      !emptySelector(matching.objectSelector))
  )
    drift.push('the binding narrows what it matches');
  return drift;
}
