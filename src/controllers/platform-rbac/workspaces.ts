import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REALIZES_LABEL,
  type OwnerReference,
  type PolicyRule,
  type Realized,
  type Subject,
} from './realize.js';

/**
 * Workspaces realized in Kubernetes RBAC (SPEC §18, pure), so kube-apiserver, and every SubjectAccessReview kapi asks,
 * decides what a workspace member may do:
 *
 * - a member's rights **on the workspace** (read it, its members, its roles, its projects, its departments; manage
 *   them) are RBAC rules on `tenant.kapi.io` `workspacetemplates` and its pseudo-subresources
 *   `workspacetemplates/workspacemembers`, `/workspaceroles`, `/namespaces` and `/groups`, restricted to the
 *   workspace's name: one ClusterRole and one ClusterRoleBinding per workspace and role held
 *   (`kapi:workspace:<ws>:<role>`), all its holders as subjects (a binding per member would be 10,000
 *   ClusterRoleBindings at SPEC §18's scale, and kube-apiserver's authorizer walks them all per request);
 * - a member's rights **in the workspace's namespaces** (admin: everything; viewer: read) are one RoleBinding per
 *   namespace and role (`kapi:workspace:<ws>:<role>`, the same subjects) to a ClusterRole every workspace shares
 *   (`kapi:workspace-namespace:<role>`); regular members and self-provisioners hold none there (a project they make is
 *   theirs by its own binding);
 * - the project roles `admin`, `operator` and `viewer` are ClusterRoles every namespace shares
 *   (`kapi:namespace-role:<role>`), bound by a project's member bindings.
 *
 * Members are the workspace's manager (its admin, always) and the subjects of its WorkspaceRoleBindings. Every
 * workspace role also reads the workspace's metrics (`monitoring.kapi.io` `workspaces`, its name).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

import { WORKSPACE_LABEL } from '../../kube/namespace-cache.js';
import { WORKSPACE_UID_ANNOTATION } from '../../tenant-guard/rules.js';

export { WORKSPACE_LABEL, WORKSPACE_UID_ANNOTATION };
export const TENANT_GROUP = 'tenant.kapi.io';
export const MONITORING_GROUP = 'monitoring.kapi.io';
const RBAC = 'rbac.authorization.k8s.io';
export const WORKSPACE_ROLE_BASES = ['admin', 'regular', 'viewer', 'self-provisioner'] as const;
export type WorkspaceRoleBase = (typeof WORKSPACE_ROLE_BASES)[number];
export const NAMESPACE_ROLES = ['admin', 'operator', 'viewer'] as const;
export type NamespaceRole = (typeof NAMESPACE_ROLES)[number];

/** The workspace role `<ws>-<base>` of a workspace. */
export const workspaceRoleName = (workspace: string, base: WorkspaceRoleBase) => `${workspace}-${base}`;
/** The base of a workspace role name of `workspace`, or undefined when it names none. */
export function baseOf(workspace: string, role: string): WorkspaceRoleBase | undefined {
  if (!role.startsWith(`${workspace}-`)) return undefined;
  const base = role.slice(workspace.length + 1);
  return (WORKSPACE_ROLE_BASES as readonly string[]).includes(base) ? (base as WorkspaceRoleBase) : undefined;
}

/** The ClusterRole and ClusterRoleBinding of a workspace role's rights on the workspace; its RoleBindings' name. */
export const workspaceRbacName = (workspace: string, base: WorkspaceRoleBase) => `kapi:workspace:${workspace}:${base}`;
/** The ClusterRole a workspace role's RoleBindings in the workspace's namespaces refer to. */
export const workspaceNamespaceRole = (base: WorkspaceRoleBase) => `kapi:workspace-namespace:${base}`;
/** The ClusterRole a project role (`admin`, `operator`, `viewer`) is. */
export const namespaceRoleClusterRole = (role: NamespaceRole) => `kapi:namespace-role:${role}`;

const WORKSPACE = 'workspacetemplates';
/** Each workspace role's rights on its workspace (kapi's table: KubeSphere's templates, in RBAC terms). */
export const WORKSPACE_RIGHTS: Record<WorkspaceRoleBase, readonly (readonly [string, readonly string[]])[]> = {
  admin: [
    [WORKSPACE, ['get', 'patch', 'update', 'delete']],
    [`${WORKSPACE}/workspacemembers`, ['get', 'list', 'create', 'update', 'delete']],
    [`${WORKSPACE}/workspaceroles`, ['get', 'list']],
    [`${WORKSPACE}/namespaces`, ['get', 'list', 'create', 'update', 'patch', 'delete']],
    // its departments (Groups) and who is in them
    [`${WORKSPACE}/groups`, ['get', 'list', 'create', 'update', 'patch', 'delete']],
    // its quota: read, not raised (the platform's limit on it; who manages workspaces sets it)
    [`${WORKSPACE}/resourcequotas`, ['get']],
  ],
  viewer: [
    [WORKSPACE, ['get']],
    [`${WORKSPACE}/workspacemembers`, ['get', 'list']],
    [`${WORKSPACE}/workspaceroles`, ['get', 'list']],
    [`${WORKSPACE}/namespaces`, ['get', 'list']],
    [`${WORKSPACE}/groups`, ['get', 'list']],
    [`${WORKSPACE}/resourcequotas`, ['get']],
  ],
  regular: [
    [WORKSPACE, ['get']],
    [`${WORKSPACE}/workspacemembers`, ['get', 'list']],
  ],
  'self-provisioner': [
    [WORKSPACE, ['get']],
    [`${WORKSPACE}/workspacemembers`, ['get', 'list']],
    [`${WORKSPACE}/namespaces`, ['create']],
  ],
};

const everything: PolicyRule = { apiGroups: ['*'], resources: ['*'], verbs: ['*'] };
const readEverything: PolicyRule = { apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] };

/** Each workspace role's rights in every namespace of its workspace (KubeSphere: admin `*`, viewer read, else none). */
export const WORKSPACE_NAMESPACE_RULES: Partial<Record<WorkspaceRoleBase, readonly PolicyRule[]>> = {
  admin: [everything],
  viewer: [readEverything],
};

/**
 * What a project `operator` may write: the project's workloads and their configuration, never the project itself (the
 * Namespace object, whose labels place it in a workspace), its members and roles, its quotas, limit ranges or network
 * isolation (KubeSphere's operator: app workloads, volumes, configuration; project settings stay the admin's). RBAC has
 * no exceptions, so the core group's resources are named one by one.
 */
const OPERATOR_CORE_RESOURCES = [
  'pods',
  'pods/attach',
  'pods/exec',
  'pods/log',
  'pods/portforward',
  'pods/proxy',
  'pods/eviction',
  'pods/ephemeralcontainers',
  'services',
  'services/proxy',
  'endpoints',
  'configmaps',
  'secrets',
  'persistentvolumeclaims',
  'serviceaccounts',
  'events',
  'replicationcontrollers',
  'replicationcontrollers/scale',
  'podtemplates',
];

/** The project roles (KubeSphere 3.4.1's RoleBases `admin`, `operator`, `viewer`, over the groups kapi's clusters have). */
export const NAMESPACE_ROLE_RULES: Record<NamespaceRole, readonly PolicyRule[]> = {
  admin: [everything],
  operator: [
    readEverything,
    { apiGroups: [''], resources: OPERATOR_CORE_RESOURCES, verbs: ['*'] },
    { apiGroups: ['apps', 'extensions', 'batch', 'autoscaling'], resources: ['*'], verbs: ['*'] },
    { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['*'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['*'] },
    // the project's custom monitoring dashboards (KubeSphere's operator edits them)
    { apiGroups: [MONITORING_GROUP], resources: ['dashboards'], verbs: ['*'] },
  ],
  viewer: [readEverything],
};

/**
 * The rules of a workspace role's ClusterRole on its workspace. None reaches the User objects themselves: whom to
 * invite, an admin picks from kapi's own users listing, which answers one who may add members to a workspace with each
 * user's name and e-mail only (not with `list users.iam.kapi.io`, which `/apis` would answer with every User whole).
 */
export function workspaceRules(workspace: string, base: WorkspaceRoleBase): PolicyRule[] {
  return [
    ...WORKSPACE_RIGHTS[base].map(([resource, verbs]) => ({
      apiGroups: [TENANT_GROUP],
      resources: [resource],
      resourceNames: [workspace],
      verbs: [...verbs],
    })),
    // the workspace's charts (SPEC §19), of the projects each member may see
    { apiGroups: [MONITORING_GROUP], resources: ['workspaces'], resourceNames: [workspace], verbs: ['get'] },
  ];
}

/**
 * Who administers a workspace's projects (moves one in or out, adopts or releases one): `update` on its
 * `workspacetemplates/namespaces`, which the workspace's admin role holds and no other built-in workspace role does. The
 * tenant guard (admission) asks the same of whoever relabels a namespace directly.
 */
export const ADMINISTER_PROJECTS_VERB = 'update';

/** A member of a workspace with a role (pure input). */
export interface Membership {
  workspace: string;
  base: WorkspaceRoleBase;
  subject: { kind: 'User' | 'Group'; name: string };
}

/**
 * The memberships WorkspaceRoleBindings and managers give: each binding's User and Group subjects with its role,
 * where the role is one of the workspace's (named by the binding's `kapi.io/workspace` label) and the workspace exists;
 * each workspace's manager as its admin.
 */
export function membershipsOf(templates: readonly Raw[], bindings: readonly Raw[]): Membership[] {
  const workspaces = new Set<string>(templates.map((t) => t?.metadata?.name).filter((n): n is string => !!n));
  const result: Membership[] = [];
  for (const template of templates) {
    const manager = template?.spec?.template?.spec?.manager;
    if (typeof manager === 'string' && manager !== '' && template?.metadata?.name)
      result.push({ workspace: template.metadata.name, base: 'admin', subject: { kind: 'User', name: manager } });
  }
  for (const binding of bindings) {
    const workspace = binding?.metadata?.labels?.[WORKSPACE_LABEL];
    if (typeof workspace !== 'string' || !workspaces.has(workspace)) continue;
    if (binding?.roleRef?.kind !== 'WorkspaceRole' || typeof binding.roleRef.name !== 'string') continue;
    const base = baseOf(workspace, binding.roleRef.name);
    if (!base) continue;
    for (const s of Array.isArray(binding.subjects) ? binding.subjects : []) {
      if ((s?.kind === 'User' || s?.kind === 'Group') && typeof s.name === 'string' && s.name !== '')
        result.push({ workspace, base, subject: { kind: s.kind, name: s.name } });
    }
  }
  return result;
}

const labels = (source: 'workspace' | 'scoped-role', workspace?: string): Record<string, string> => ({
  [MANAGED_BY_LABEL]: MANAGED_BY,
  [REALIZES_LABEL]: source,
  ...(workspace && { [WORKSPACE_LABEL]: workspace }),
});

/** The ClusterRoles every workspace and project shares. */
export function sharedRoles(): Realized[] {
  const roles: Realized[] = [];
  for (const base of WORKSPACE_ROLE_BASES) {
    const rules = WORKSPACE_NAMESPACE_RULES[base];
    if (rules)
      roles.push({
        kind: 'ClusterRole',
        name: workspaceNamespaceRole(base),
        labels: labels('scoped-role'),
        rules: [...rules],
      });
  }
  for (const role of NAMESPACE_ROLES) {
    roles.push({
      kind: 'ClusterRole',
      name: namespaceRoleClusterRole(role),
      labels: labels('scoped-role'),
      rules: [...NAMESPACE_ROLE_RULES[role]],
    });
  }
  return roles;
}

/**
 * What should exist for the workspaces: the shared ClusterRoles, and for each workspace and role someone holds, its
 * ClusterRole and ClusterRoleBinding on the workspace and a RoleBinding in each namespace labelled into it. Subjects
 * are sorted (so the answer does not depend on the order things were read in). Each object is owned by its
 * WorkspaceTemplate (a garbage collector, where one runs, removes them with it; the controller does anyway).
 * `kapiNamespace`, kapi's own (its signing key, the users' password hashes), takes no workspace's RoleBindings
 * whatever its label says: no workspace role may reach it.
 */
export function desiredWorkspaceRbac(
  templates: readonly Raw[],
  bindings: readonly Raw[],
  namespaces: readonly Raw[],
  kapiNamespace?: string,
): Realized[] {
  const desired = sharedRoles();
  const owners = new Map<string, OwnerReference>();
  for (const template of templates) {
    const { name, uid } = template?.metadata ?? {};
    if (typeof name === 'string' && typeof uid === 'string' && name && uid)
      owners.set(name, {
        apiVersion: `${TENANT_GROUP}/v1alpha2`,
        kind: 'WorkspaceTemplate',
        name,
        uid,
        controller: true,
        blockOwnerDeletion: false,
      });
  }
  const holders = new Map<string, Map<string, Subject>>();
  for (const m of membershipsOf(templates, bindings)) {
    if (!owners.has(m.workspace)) continue;
    const key = `${m.workspace}\u0000${m.base}`;
    let subjects = holders.get(key);
    if (!subjects) holders.set(key, (subjects = new Map()));
    subjects.set(`${m.subject.kind}/${m.subject.name}`, { kind: m.subject.kind, apiGroup: RBAC, name: m.subject.name });
  }
  const namespacesOf = new Map<string, string[]>();
  for (const ns of namespaces) {
    const workspace = ns?.metadata?.labels?.[WORKSPACE_LABEL];
    const name = ns?.metadata?.name;
    if (typeof workspace !== 'string' || typeof name !== 'string' || !owners.has(workspace)) continue;
    if (name === kapiNamespace) continue;
    // put in this workspace, not in one deleted before it of the same name
    if (ns?.metadata?.annotations?.[WORKSPACE_UID_ANNOTATION] !== workspaceStamp(workspace, owners.get(workspace)!.uid))
      continue;
    if (ns?.metadata?.deletionTimestamp) continue; // a namespace being deleted takes no new objects
    const list = namespacesOf.get(workspace) ?? [];
    list.push(name);
    namespacesOf.set(workspace, list);
  }
  for (const [key, found] of [...holders].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [workspace, base] = key.split('\u0000') as [string, WorkspaceRoleBase];
    const owner = owners.get(workspace) as OwnerReference;
    const subjects = [...found.values()].sort((a, b) =>
      a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind < b.kind ? -1 : 1,
    );
    const name = workspaceRbacName(workspace, base);
    const own = labels('workspace', workspace);
    desired.push({ kind: 'ClusterRole', name, labels: own, owner, rules: workspaceRules(workspace, base) });
    desired.push({
      kind: 'ClusterRoleBinding',
      name,
      labels: own,
      owner,
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name },
      subjects,
    });
    if (!WORKSPACE_NAMESPACE_RULES[base]) continue;
    for (const namespace of (namespacesOf.get(workspace) ?? []).sort()) {
      desired.push({
        kind: 'RoleBinding',
        name,
        namespace,
        labels: own,
        owner,
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: workspaceNamespaceRole(base) },
        subjects,
      });
    }
  }
  return desired;
}

/**
 * Which workspace, by uid, a namespace was put in: the annotation `WORKSPACE_UID_ANNOTATION` (`<workspace>/<uid>`),
 * which only kapi writes (the tenant guard). A namespace's label names its workspace; the stamp says it is that
 * workspace and not one deleted before under the same name, whose admin would otherwise inherit its projects.
 */
export const workspaceStamp = (workspace: string, uid: string) => `${workspace}/${uid}`;

export type StampChange =
  | { namespace: string; stamp: string }
  /** Stamped by a workspace of that name that is gone: the namespace leaves it (label and stamp removed). */
  | { namespace: string; release: true };

/**
 * What to do about the namespaces' stamps (pure): a namespace labelled into an existing workspace with no stamp, or
 * one of the workspace it came from (a move straight to kube-apiserver, which the guard let its admin make), gets
 * that workspace's; one stamped by an earlier workspace of the same name leaves it, as kapi's deletion of a workspace
 * takes its projects out of it. A namespace whose workspace does not exist yet is left as it is.
 */
export function stampChanges(
  templates: readonly Raw[],
  namespaces: readonly Raw[],
  kapiNamespace?: string,
): StampChange[] {
  const uids = new Map<string, string>();
  for (const template of templates) {
    const { name, uid } = template?.metadata ?? {};
    if (typeof name === 'string' && typeof uid === 'string') uids.set(name, uid);
  }
  const changes: StampChange[] = [];
  for (const ns of namespaces) {
    const name = ns?.metadata?.name;
    const workspace = ns?.metadata?.labels?.[WORKSPACE_LABEL];
    if (typeof name !== 'string' || typeof workspace !== 'string' || name === kapiNamespace) continue;
    if (ns?.metadata?.deletionTimestamp) continue;
    const uid = uids.get(workspace);
    if (uid === undefined) continue;
    const stamp: unknown = ns?.metadata?.annotations?.[WORKSPACE_UID_ANNOTATION];
    if (stamp === workspaceStamp(workspace, uid)) continue;
    const stampedBy = typeof stamp === 'string' ? stamp.slice(0, stamp.lastIndexOf('/')) : undefined;
    if (stampedBy === workspace) changes.push({ namespace: name, release: true });
    else changes.push({ namespace: name, stamp: workspaceStamp(workspace, uid) });
  }
  return changes;
}

/** WorkspaceRoleBindings whose workspace is gone (it was deleted; a replica killed before deleting them left them). */
export function orphanedMemberships(templates: readonly Raw[], bindings: readonly Raw[]): Raw[] {
  const workspaces = new Set<string>(templates.map((t) => t?.metadata?.name));
  return bindings.filter((binding) => {
    const workspace = binding?.metadata?.labels?.[WORKSPACE_LABEL];
    return typeof workspace === 'string' && !workspaces.has(workspace) && typeof binding.metadata.name === 'string';
  });
}

/** On every member binding kapi writes: the role it gives (as KubeSphere 4 labels them), and whose it is. */
export const ROLE_REF_LABEL = 'iam.kapi.io/role-ref';
export const USER_REF_LABEL = 'iam.kapi.io/user-ref';

/** A project member's RoleBinding `<user>-<role>` in its namespace, to the project role's ClusterRole. */
export function namespaceMemberBinding(namespace: string, user: string, role: NamespaceRole): Record<string, unknown> {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: {
      name: `${user}-${role}`,
      namespace,
      labels: { [USER_REF_LABEL]: user, [ROLE_REF_LABEL]: role },
    },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: namespaceRoleClusterRole(role) },
    subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
  };
}

/** A workspace member's WorkspaceRoleBinding `<user>-<ws>-<base>`. */
export function workspaceMemberBinding(
  workspace: string,
  user: string,
  base: WorkspaceRoleBase,
): Record<string, unknown> {
  const role = workspaceRoleName(workspace, base);
  return {
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'WorkspaceRoleBinding',
    metadata: {
      name: `${user}-${role}`,
      labels: { [WORKSPACE_LABEL]: workspace, [USER_REF_LABEL]: user, [ROLE_REF_LABEL]: role },
    },
    roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: role },
    subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
  };
}
