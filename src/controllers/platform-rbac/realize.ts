/**
 * The platform's roles realized in Kubernetes RBAC (SPEC §17, pure): every GlobalRole that is a role (not a role
 * template) becomes a ClusterRole with its rules, and every GlobalRoleBinding of such a role a ClusterRoleBinding of
 * its subjects, so kube-apiserver itself, and every SubjectAccessReview kapi asks, decides what a platform role allows.
 * Each realized object is labelled as kapi's and owned by what it realizes; `plan` compares what should exist with
 * what does and says what to create, update and delete, so a realized object changed or deleted by hand is put back
 * and one whose source is gone is removed (also where no garbage collector runs).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'kapi-apiserver';
/** What a realized object stands for: `globalrole` or `globalrolebinding`. */
export const REALIZES_LABEL = 'iam.kapi.io/realizes';
export const ROLE_TEMPLATE_LABEL = 'iam.kapi.io/role-template';
const RBAC = 'rbac.authorization.k8s.io';
const IAM_VERSION = 'iam.kapi.io/v1alpha2';

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

export interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

export interface RealizedRole {
  kind: 'ClusterRole';
  name: string;
  namespace?: undefined;
  labels: Record<string, string>;
  /** What it stands for; none for the roles every workspace shares (they stand for kapi's own table). */
  owner?: OwnerReference;
  rules: PolicyRule[];
}

export interface RealizedBinding {
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  name: string;
  /** A RoleBinding's. */
  namespace?: string;
  labels: Record<string, string>;
  owner?: OwnerReference;
  roleRef: { apiGroup: string; kind: 'ClusterRole'; name: string };
  subjects: Subject[];
}

export type Realized = RealizedRole | RealizedBinding;

/** The values of REALIZES_LABEL kapi writes, each for one kind of source. */
export const REALIZED_SOURCES = ['globalrole', 'globalrolebinding', 'workspace', 'scoped-role'] as const;

/** The ClusterRole a GlobalRole is realized as. */
export const clusterRoleOf = (globalRole: string) => `kapi:globalrole:${globalRole}`;
/** The ClusterRoleBinding a GlobalRoleBinding is realized as. */
export const clusterRoleBindingOf = (binding: string) => `kapi:globalrolebinding:${binding}`;

const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : undefined;

/** The rules of a (Global)Role as stored, cleaned to the shape RBAC takes (rules without verbs dropped). */
export function rulesOf(raw: Raw): PolicyRule[] {
  if (!Array.isArray(raw?.rules)) return [];
  return raw.rules.flatMap((rule: Raw) => {
    const verbs = strings(rule?.verbs);
    if (!verbs || verbs.length === 0) return [];
    const shaped: PolicyRule = { verbs };
    for (const field of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const values = strings(rule[field]);
      if (values && values.length > 0) shaped[field] = values;
    }
    return [shaped];
  });
}

function ownerOf(raw: Raw, kind: 'GlobalRole' | 'GlobalRoleBinding'): OwnerReference | undefined {
  const { name, uid } = raw?.metadata ?? {};
  if (typeof name !== 'string' || typeof uid !== 'string' || !name || !uid) return undefined;
  return { apiVersion: IAM_VERSION, kind, name, uid, controller: true, blockOwnerDeletion: false };
}

const isTemplate = (raw: Raw) => raw?.metadata?.labels?.[ROLE_TEMPLATE_LABEL] !== undefined;

/** What should exist, from the GlobalRoles and GlobalRoleBindings as stored. */
export function desiredRbac(globalRoles: readonly Raw[], bindings: readonly Raw[]): Realized[] {
  const roles = new Map<string, Raw>();
  for (const role of globalRoles) {
    if (!isTemplate(role) && ownerOf(role, 'GlobalRole')) roles.set(role.metadata.name, role);
  }
  const desired: Realized[] = [];
  for (const [name, role] of roles) {
    desired.push({
      kind: 'ClusterRole',
      name: clusterRoleOf(name),
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REALIZES_LABEL]: 'globalrole' },
      owner: ownerOf(role, 'GlobalRole') as OwnerReference,
      rules: rulesOf(role),
    });
  }
  for (const binding of bindings) {
    const owner = ownerOf(binding, 'GlobalRoleBinding');
    const role = binding?.roleRef?.name;
    if (!owner || binding?.roleRef?.kind !== 'GlobalRole' || typeof role !== 'string' || !roles.has(role)) continue;
    const subjects: Subject[] = (Array.isArray(binding.subjects) ? binding.subjects : [])
      .filter((s: Raw) => (s?.kind === 'User' || s?.kind === 'Group') && typeof s.name === 'string' && s.name !== '')
      .map((s: Raw) => ({ kind: s.kind, apiGroup: RBAC, name: s.name }));
    if (subjects.length === 0) continue;
    desired.push({
      kind: 'ClusterRoleBinding',
      name: clusterRoleBindingOf(binding.metadata.name),
      // not the binding's iam.kapi.io/user-ref: that label marks cluster memberships, which this is not
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REALIZES_LABEL]: 'globalrolebinding' },
      owner,
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: clusterRoleOf(role) },
      subjects,
    });
  }
  return desired;
}

/** A realized object as found in the cluster (labelled as kapi's), read into the shape `desiredRbac` makes. */
export function realizedFrom(raw: Raw, kind: Realized['kind']): Realized {
  const metadata = raw?.metadata ?? {};
  const owner = (metadata.ownerReferences ?? [])[0];
  const base = {
    name: String(metadata.name ?? ''),
    labels: { ...(metadata.labels ?? {}) },
    ...(owner && {
      owner: {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        name: owner.name,
        uid: owner.uid,
        controller: owner.controller === true,
        blockOwnerDeletion: owner.blockOwnerDeletion === true,
      },
    }),
  };
  if (kind === 'ClusterRole') return { kind, ...base, rules: rulesOf(raw) };
  return {
    kind,
    ...(kind === 'RoleBinding' && { namespace: String(metadata.namespace ?? '') }),
    ...base,
    roleRef: { apiGroup: raw?.roleRef?.apiGroup, kind: 'ClusterRole', name: raw?.roleRef?.name },
    subjects: (raw?.subjects ?? []).map((s: Raw) => ({ kind: s.kind, apiGroup: s.apiGroup, name: s.name })),
  };
}

export interface RbacPlan {
  create: Realized[];
  update: Realized[];
  delete: Realized[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function differs(want: Realized, have: Realized): boolean {
  const labels = Object.entries(want.labels).some(([key, value]) => have.labels[key] !== value);
  if (labels || !same(want.owner, have.owner)) return true;
  if (want.kind === 'ClusterRole' && have.kind === 'ClusterRole') return !same(want.rules, have.rules);
  if (want.kind !== 'ClusterRole' && have.kind !== 'ClusterRole') return !same(want.subjects, have.subjects);
  return true;
}

/** Where an object is, to match what should exist with what does. */
export const keyOf = (object: Realized) => `${object.kind}/${object.namespace ?? ''}/${object.name}`;

/**
 * What to do so that what exists is what should: create the missing, update the changed, delete the realized objects
 * nothing stands for (only kapi's own: labelled, named and owned as it makes them). A binding whose role changed is
 * deleted and made again (a roleRef cannot change).
 */
export function plan(desired: readonly Realized[], existing: readonly Realized[]): RbacPlan {
  const have = new Map(existing.map((object) => [keyOf(object), object]));
  const result: RbacPlan = { create: [], update: [], delete: [] };
  const wanted = new Set<string>();
  for (const want of desired) {
    const key = keyOf(want);
    wanted.add(key);
    const found = have.get(key);
    if (!found) result.create.push(want);
    else if (want.kind !== 'ClusterRole' && found.kind !== 'ClusterRole' && !same(want.roleRef, found.roleRef)) {
      result.delete.push(found);
      result.create.push(want);
    } else if (differs(want, found)) result.update.push(want);
  }
  for (const [key, found] of have) {
    if (!wanted.has(key) && isRealized(found)) result.delete.push(found);
  }
  return result;
}

/** One of kapi's: its labels, its name and its owner's kind all say so (a copy saved under another name is not). */
function isRealized(object: Realized): boolean {
  if (object.labels[MANAGED_BY_LABEL] !== MANAGED_BY) return false;
  const source = object.labels[REALIZES_LABEL];
  const owner = object.owner?.kind;
  switch (source) {
    case 'globalrole':
      return object.kind === 'ClusterRole' && object.name.startsWith(clusterRoleOf('')) && owner === 'GlobalRole';
    case 'globalrolebinding':
      return (
        object.kind === 'ClusterRoleBinding' &&
        object.name.startsWith(clusterRoleBindingOf('')) &&
        owner === 'GlobalRoleBinding'
      );
    case 'workspace':
      return object.name.startsWith('kapi:workspace:') && owner === 'WorkspaceTemplate';
    case 'scoped-role':
      return object.kind === 'ClusterRole' && object.name.startsWith('kapi:') && owner === undefined;
    default:
      return false;
  }
}

/** The object to write for a realized one. */
export function manifestOf(object: Realized, resourceVersion?: string): Record<string, unknown> {
  const metadata = {
    name: object.name,
    ...(object.namespace && { namespace: object.namespace }),
    labels: object.labels,
    ...(object.owner && { ownerReferences: [object.owner] }),
    ...(resourceVersion && { resourceVersion }),
  };
  if (object.kind === 'ClusterRole')
    return { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata, rules: object.rules };
  return {
    apiVersion: `${RBAC}/v1`,
    kind: object.kind,
    metadata,
    roleRef: object.roleRef,
    subjects: object.subjects,
  };
}

/** A rule list that holds no rule `existing` does not (a role only losing rules). */
const onlyFewerRules = (want: readonly PolicyRule[], existing: readonly PolicyRule[]) =>
  want.every((rule) => existing.some((held) => same(rule, held)));

/**
 * The part of a plan that grants nothing new (pure), for when the tenant guard is not in place and the fields the
 * desired objects follow cannot be trusted: deletions stay; a binding keeps only subjects it already had (none left:
 * deleted); a role is updated only to fewer rules; nothing is created. kapi's shared roles (`scoped-role`: kapi's own
 * tables, no field of anyone's) are exempt.
 */
export function withoutNewGrants(todo: RbacPlan, existing: readonly Realized[]): RbacPlan {
  const have = new Map(existing.map((object) => [keyOf(object), object]));
  const kapisOwn = (object: Realized) => object.labels[REALIZES_LABEL] === 'scoped-role' && !object.owner;
  const result: RbacPlan = { create: todo.create.filter(kapisOwn), update: [], delete: [...todo.delete] };
  for (const want of todo.update) {
    const found = have.get(keyOf(want));
    if (!found) continue;
    if (kapisOwn(want)) result.update.push(want);
    else if (want.kind === 'ClusterRole' && found.kind === 'ClusterRole') {
      if (onlyFewerRules(want.rules, found.rules)) result.update.push(want);
    } else if (want.kind !== 'ClusterRole' && found.kind !== 'ClusterRole') {
      const subjects = want.subjects.filter((subject) => found.subjects.some((had) => same(subject, had)));
      if (subjects.length === 0) result.delete.push(found);
      else result.update.push({ ...want, subjects });
    }
  }
  return result;
}
