import type { AccessAttributes } from './policy.js';

/**
 * RBAC's rule matching, as k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac (RuleAllows) and
 * pkg/apis/rbac/v1 (VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches, NonResourceURLMatches)
 * define it. Pure, over the JSON shapes of rbac.authorization.k8s.io/v1.
 */
export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface RbacPolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface RbacSubject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

function hasOrStar(list: readonly string[] | undefined, value: string): boolean {
  if (!list) return false;
  for (const item of list) if (item === '*' || item === value) return true;
  return false;
}

/** "*", the exact "resource/subresource", or "*\/subresource". "pods/*" is not a pattern in RBAC. */
export function resourceMatches(rule: RbacPolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const pattern of rule.resources ?? []) {
    if (pattern === '*' || pattern === combined) return true;
    if (subresource && pattern === `*/${subresource}`) return true;
  }
  return false;
}

/** No resourceNames means every name; otherwise the request must name one of them (a list or create has none). */
export function resourceNameMatches(rule: RbacPolicyRule, name: string): boolean {
  if (!rule.resourceNames?.length) return true;
  return rule.resourceNames.includes(name);
}

/** "*", the exact path, or a prefix ending in "*" ("/apis/*" also covers "/apis/"). */
export function nonResourceURLMatches(rule: RbacPolicyRule, path: string): boolean {
  for (const pattern of rule.nonResourceURLs ?? []) {
    if (pattern === '*' || pattern === path) return true;
    if (pattern.endsWith('*') && path.startsWith(pattern.replace(/\*+$/, ''))) return true;
  }
  return false;
}

export function rbacRuleAllows(rule: RbacPolicyRule, attributes: AccessAttributes): boolean {
  if (!hasOrStar(rule.verbs, attributes.verb)) return false;
  if (attributes.resource === undefined) return nonResourceURLMatches(rule, attributes.path ?? '');
  return (
    hasOrStar(rule.apiGroups, attributes.apiGroup ?? '') &&
    resourceMatches(rule, attributes.resource, attributes.subresource ?? '') &&
    resourceNameMatches(rule, attributes.name ?? '')
  );
}

/**
 * The user name a subject stands for, or undefined for a group or a subject that can match nobody. A ServiceAccount
 * without a namespace takes the binding's (RoleBindings only; a ClusterRoleBinding's has none).
 */
export function subjectUsername(subject: RbacSubject, bindingNamespace: string): string | undefined {
  if (subject.kind === 'User') return subject.name;
  if (subject.kind !== 'ServiceAccount') return undefined;
  const namespace = subject.namespace || bindingNamespace;
  return namespace && subject.name ? `system:serviceaccount:${namespace}:${subject.name}` : undefined;
}

/** As kube's describeSubject: `User "alice"`, `ServiceAccount "name/namespace"`. */
export function describeSubject(subject: RbacSubject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') {
    return `ServiceAccount "${subject.name ?? ''}/${subject.namespace || bindingNamespace}"`;
  }
  return `${subject.kind ?? ''} "${subject.name ?? ''}"`;
}
