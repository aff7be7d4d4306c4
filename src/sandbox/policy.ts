import type { SandboxUser } from './identity.js';

/**
 * The sandbox's default policy: a short, ordered list of allow rules (a flattened RBAC) modelling the bootstrap
 * roles and the chart's bindings. A request is allowed when any rule names its user or one of its groups and covers
 * its verb and target, or when an RBAC object grants it (rbac-authorizer.ts); otherwise it is denied.
 *
 * Matching (as RBAC, plus one convenience):
 * - verbs, apiGroups, resources, nonResourceURLs accept "*";
 * - resources: "pods", "pods/log" (a subresource), "*\/status" (that subresource of anything), and, beyond RBAC,
 *   "userextras/*" (every subresource of one resource);
 * - apiGroups defaults to every group; "" is the core group;
 * - namespaces (sandbox addition): the rule only applies in those namespaces, never at the cluster scope;
 * - resourceNames: only requests naming one of these objects (a list has no name, so it does not match);
 * - nonResourceURLs: exact paths, or a prefix ending in "*" ("/apis/*").
 * A rule covers resource requests when it has `resources`, non-resource requests when it has `nonResourceURLs`.
 */
export interface PolicyRule {
  users?: string[];
  groups?: string[];
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  namespaces?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** What is being asked, in authorizer.Attributes terms. A request with `resource` set is a resource request. */
export interface AccessAttributes {
  verb: string;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** For non-resource requests (/version, /apis). */
  path?: string;
}

export interface PolicyDecision {
  allowed: boolean;
  /** Which rule allowed it; empty when denied (kube's RBAC gives no reason for a denial either). */
  reason: string;
}

/** A rule as SelfSubjectRulesReview reports it (authorization.k8s.io/v1 ResourceRule / NonResourceRule). */
export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs: string[];
}

/** What a user may do in a namespace; `incomplete` when some rules could not be resolved (a missing role). */
export interface RuleSet {
  resourceRules: ResourceRuleInfo[];
  nonResourceRules: NonResourceRuleInfo[];
  incomplete: boolean;
  evaluationErrors: string[];
}

/** One source of authorization decisions; the sandbox asks its sources in turn (see authorizer.ts). */
export interface Authorizer {
  decide(user: SandboxUser, attributes: AccessAttributes): PolicyDecision;
  /** The rules that apply to the user in a namespace, for SelfSubjectRulesReview. */
  rulesFor(user: SandboxUser, namespace: string): RuleSet;
}

export const KAPI_SERVICE_ACCOUNT = 'system:serviceaccount:kapi-system:kapi-apiserver';

/** The kinds kapi's listings watch (the chart's ClusterRole grants list and watch of them). */
const LISTED_KINDS: [string, string[]][] = [
  ['', ['services', 'configmaps', 'serviceaccounts', 'persistentvolumeclaims', 'persistentvolumes', 'events']],
  ['apps', ['deployments', 'statefulsets', 'daemonsets', 'replicasets']],
  ['batch', ['jobs', 'cronjobs']],
  ['networking.k8s.io', ['ingresses', 'networkpolicies']],
  ['storage.k8s.io', ['storageclasses']],
  ['rbac.authorization.k8s.io', ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']],
  ['apiextensions.k8s.io', ['customresourcedefinitions']],
  ['iam.kapi.io', ['globalroles', 'globalrolebindings', 'workspacerolebindings']],
  ['tenant.kapi.io', ['workspacetemplates']],
  ['monitoring.kapi.io', ['dashboards', 'clusterdashboards']],
  ['snapshot.storage.k8s.io', ['volumesnapshots', 'volumesnapshotclasses', 'volumesnapshotcontents']],
  ['app.k8s.io', ['applications']],
];

/** The default rules; see src/sandbox/README.md for why each exists. */
export function defaultRules(): PolicyRule[] {
  const everything: PolicyRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'] };
  const everyPath: PolicyRule = { verbs: ['*'], nonResourceURLs: ['*'] };
  const kapi = [KAPI_SERVICE_ACCOUNT];
  return [
    { ...everything, groups: ['system:masters'] },
    { ...everyPath, groups: ['system:masters'] },
    // The chart binds the kapi admin User to cluster-admin.
    { ...everything, users: ['admin'] },
    { ...everyPath, users: ['admin'] },
    { users: kapi, verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['nodes', 'pods', 'namespaces'] },
    { users: kapi, verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
    // the controllers' leader election, in kapi's namespace
    {
      users: kapi,
      verbs: ['get', 'create', 'update'],
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      namespaces: ['kapi-system'],
    },
    // platform roles realized in RBAC: kapi writes ClusterRoles and ClusterRoleBindings (escalate and bind: the
    // roles it realizes may hold more than kapi's own rules); cluster roles written through its API are patched
    {
      users: kapi,
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'escalate', 'bind'],
      apiGroups: ['rbac.authorization.k8s.io'],
      resources: ['clusterroles', 'clusterrolebindings'],
    },
    // the workspace label of namespaces: system-workspace's, and a deleted workspace's namespaces leaving it
    { users: kapi, verbs: ['patch', 'create', 'delete'], apiGroups: [''], resources: ['namespaces'] },
    // workspaces written through kapi's API
    {
      users: kapi,
      verbs: ['get', 'create', 'patch', 'delete'],
      apiGroups: ['tenant.kapi.io'],
      resources: ['workspacetemplates'],
    },
    // The listings' on-demand caches, as the chart's ClusterRole: list and watch, secrets excepted.
    ...LISTED_KINDS.map(([group, resources]) => ({
      users: kapi,
      verbs: ['list', 'watch'],
      apiGroups: [group],
      resources,
    })),
    {
      users: kapi,
      verbs: ['get', 'list', 'watch'],
      apiGroups: [''],
      resources: ['secrets'],
      namespaces: ['kapi-system'],
    },
    // the users' password hashes, in Secrets of kapi's namespace that no one else reads
    {
      users: kapi,
      verbs: ['create', 'update', 'patch', 'delete'],
      apiGroups: [''],
      resources: ['secrets'],
      namespaces: ['kapi-system'],
    },
    // the tenant guard (SPEC §18): kapi reads its policy and puts it back when it was changed or deleted
    {
      users: kapi,
      verbs: ['get', 'create', 'update'],
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'],
    },
    { users: kapi, verbs: ['get', 'list', 'watch'], apiGroups: ['iam.kapi.io'], resources: ['users', 'loginsessions'] },
    {
      users: kapi,
      verbs: ['get', 'list', 'watch'],
      apiGroups: ['installer.kapi.io'],
      resources: ['clusterconfigurations'],
    },
    {
      users: kapi,
      verbs: ['create', 'update', 'patch', 'delete'],
      apiGroups: ['iam.kapi.io'],
      resources: ['loginsessions'],
    },
    { users: kapi, verbs: ['list', 'create', 'delete'], apiGroups: ['iam.kapi.io'], resources: ['coderedemptions'] },
    { users: kapi, verbs: ['update', 'patch'], apiGroups: ['iam.kapi.io'], resources: ['users/status'] },
    { users: kapi, verbs: ['create', 'patch', 'delete'], apiGroups: ['iam.kapi.io'], resources: ['users'] },
    // the users' administration: a user's platform role, and a deleted user's bindings
    { users: kapi, verbs: ['create', 'delete'], apiGroups: ['iam.kapi.io'], resources: ['globalrolebindings'] },
    { users: kapi, verbs: ['create', 'patch', 'delete'], apiGroups: ['iam.kapi.io'], resources: ['globalroles'] },
    {
      users: kapi,
      verbs: ['create', 'update', 'delete'],
      apiGroups: ['rbac.authorization.k8s.io'],
      resources: ['rolebindings'],
    },
    { users: kapi, verbs: ['create', 'delete'], apiGroups: ['iam.kapi.io'], resources: ['workspacerolebindings'] },
    {
      users: kapi,
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      apiGroups: ['iam.kapi.io'],
      resources: ['groups', 'groupbindings'],
    },
    // workspace quotas: the pod webhook's charges, the quota API's writes, the controller's recounts
    {
      users: kapi,
      verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
      apiGroups: ['quota.kapi.io'],
      resources: ['resourcequotas', 'resourcequotas/status'],
    },
    {
      users: kapi,
      verbs: ['get', 'list', 'create', 'update', 'delete'],
      apiGroups: ['iam.kapi.io'],
      resources: ['loginhistories'],
    },
    {
      users: kapi,
      verbs: ['update', 'patch'],
      apiGroups: ['installer.kapi.io'],
      resources: ['clusterconfigurations/status'],
    },
    { users: kapi, verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'] },
    { users: kapi, verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] },
    {
      users: kapi,
      verbs: ['impersonate'],
      apiGroups: ['', 'authentication.k8s.io'],
      resources: ['users', 'groups', 'uids', 'userextras/*'],
    },
    // system:discovery, system:public-info-viewer and system:basic-user.
    {
      groups: ['system:authenticated'],
      verbs: ['get'],
      nonResourceURLs: [
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
        '/version',
        '/version/',
        '/openapi',
        '/openapi/*',
        '/healthz',
        '/livez',
        '/readyz',
      ],
    },
    // system:public-info-viewer is bound to system:unauthenticated too: anonymous callers may read these.
    {
      groups: ['system:unauthenticated'],
      verbs: ['get'],
      nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'],
    },
    {
      groups: ['system:authenticated'],
      verbs: ['create'],
      apiGroups: ['authentication.k8s.io'],
      resources: ['selfsubjectreviews'],
    },
    {
      groups: ['system:authenticated'],
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    },
  ];
}

function includesOrStar(list: readonly string[] | undefined, value: string): boolean {
  return list !== undefined && (list.includes('*') || list.includes(value));
}

function appliesTo(rule: PolicyRule, user: SandboxUser): boolean {
  if (rule.users?.includes(user.username)) return true;
  return rule.groups !== undefined && rule.groups.some((g) => user.groups.includes(g));
}

function resourceMatches(patterns: readonly string[], resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const pattern of patterns) {
    if (pattern === '*' || pattern === combined) return true;
    if (subresource && (pattern === `*/${subresource}` || pattern === `${resource}/*`)) return true;
  }
  return false;
}

function pathMatches(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => p === '*' || p === path || (p.endsWith('*') && path.startsWith(p.slice(0, -1))));
}

export function ruleAllows(rule: PolicyRule, user: SandboxUser, attributes: AccessAttributes): boolean {
  if (!appliesTo(rule, user) || !includesOrStar(rule.verbs, attributes.verb)) return false;
  if (attributes.resource === undefined) {
    return rule.nonResourceURLs !== undefined && pathMatches(rule.nonResourceURLs, attributes.path ?? '');
  }
  if (!rule.resources) return false;
  if (rule.apiGroups && !includesOrStar(rule.apiGroups, attributes.apiGroup ?? '')) return false;
  if (!resourceMatches(rule.resources, attributes.resource, attributes.subresource ?? '')) return false;
  if (rule.namespaces && !(attributes.namespace && rule.namespaces.includes(attributes.namespace))) return false;
  if (rule.resourceNames && !(attributes.name && rule.resourceNames.includes(attributes.name))) return false;
  return true;
}

/** The pure decision over a rule list. */
export function decide(rules: readonly PolicyRule[], user: SandboxUser, attributes: AccessAttributes): PolicyDecision {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as PolicyRule;
    if (ruleAllows(rule, user, attributes)) {
      const subject = rule.users?.includes(user.username)
        ? `user "${user.username}"`
        : `group "${rule.groups?.find((g) => user.groups.includes(g))}"`;
      return { allowed: true, reason: `sandbox policy: rule ${i} allows ${subject}` };
    }
  }
  return { allowed: false, reason: '' };
}

/** kube's wording of a denial: `User "x" cannot list resource "nodes" in API group "" at the cluster scope`. */
export function denialMessage(username: string, attributes: AccessAttributes): string {
  if (attributes.resource === undefined) {
    return `User "${username}" cannot ${attributes.verb} path "${attributes.path ?? ''}"`;
  }
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  const scope = attributes.namespace ? `in the namespace "${attributes.namespace}"` : 'at the cluster scope';
  return `User "${username}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup ?? ''}" ${scope}`;
}

function validateRule(rule: PolicyRule): void {
  if (!rule.users?.length && !rule.groups?.length) throw new Error('a policy rule needs users or groups');
  if (!rule.verbs?.length) throw new Error('a policy rule needs verbs');
  if (!rule.resources?.length && !rule.nonResourceURLs?.length) {
    throw new Error('a policy rule needs resources or nonResourceURLs');
  }
}

/** The rules of a list that name the user and apply in a namespace, as SelfSubjectRulesReview reports them. */
export function rulesFor(rules: readonly PolicyRule[], user: SandboxUser, namespace: string): RuleSet {
  const set: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationErrors: [] };
  for (const rule of rules) {
    if (!appliesTo(rule, user)) continue;
    if (rule.resources && !(rule.namespaces && !rule.namespaces.includes(namespace))) {
      const entry: ResourceRuleInfo = {
        verbs: rule.verbs,
        apiGroups: rule.apiGroups ?? ['*'],
        resources: rule.resources,
      };
      if (rule.resourceNames) entry.resourceNames = rule.resourceNames;
      set.resourceRules.push(entry);
    }
    if (rule.nonResourceURLs) set.nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs });
  }
  return set;
}

/**
 * The live rule list of a sandbox, one of its authorizers beside RBAC objects: tests add rules with `allow` and
 * restore the defaults with `reset` (RBAC objects stay; they are API state).
 */
export class SandboxPolicy implements Authorizer {
  private list: PolicyRule[] = defaultRules();

  get rules(): readonly PolicyRule[] {
    return this.list;
  }

  allow(rule: PolicyRule): void {
    validateRule(rule);
    this.list = [...this.list, structuredClone(rule)];
  }

  reset(): void {
    this.list = defaultRules();
  }

  decide(user: SandboxUser, attributes: AccessAttributes): PolicyDecision {
    return decide(this.list, user, attributes);
  }

  rulesFor(user: SandboxUser, namespace: string): RuleSet {
    return rulesFor(this.list, user, namespace);
  }
}
