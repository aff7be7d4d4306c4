import {
  DEPARTMENT_GROUP_PREFIX,
  GROUP_PARENT_LABEL,
  GROUP_REF_LABEL,
  WORKSPACE_LABEL,
  departmentGroup,
} from '../../../auth/departments/departments.js';
import { createHash } from 'node:crypto';
import { mergePatch } from '../../../kube/merge-patch.js';

/**
 * The departments API's pure part: a Group as kapi writes it from the console's body (only what a department may
 * hold: its display name, its parent in the workspace, the console's annotations), the tree below a department, and
 * the bindings that put users in departments and give departments roles.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export { DEPARTMENT_GROUP_PREFIX, GROUP_PARENT_LABEL, GROUP_REF_LABEL, WORKSPACE_LABEL, departmentGroup };
export const USER_REF_LABEL = 'iam.kapi.io/user-ref';
export const IAM_VERSION = 'iam.kapi.io/v1alpha2';
const RBAC = 'rbac.authorization.k8s.io';

/**
 * The annotations a department keeps from the console: its alias, a description, and the console's own records of the
 * roles it gave it (which it reads back to edit them; the roles themselves are the bindings). Others are dropped.
 */
export const DEPARTMENT_ANNOTATIONS = [
  'kapi.io/alias-name',
  'kapi.io/description',
  'kapi.io/workspace-role',
  'kapi.io/project-roles',
  'kapi.io/devops-roles',
] as const;
const MAX_ANNOTATION_BYTES = 8 * 1024;
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** A department's name ends in five random characters and is a label value (`iam.kapi.io/group-ref`): 58 at most. */
const DISPLAY_NAME = /^[a-z0-9]([-a-z0-9]{0,56}[a-z0-9])?$/;

function keptAnnotations(from: Raw): Record<string, string> | { error: string } {
  const annotations: Record<string, string> = {};
  const given = from?.metadata?.annotations;
  if (given === undefined || given === null) return annotations;
  if (typeof given !== 'object' || Array.isArray(given)) return { error: 'metadata.annotations must be an object' };
  for (const key of DEPARTMENT_ANNOTATIONS) {
    const value = (given as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return { error: `metadata.annotations["${key}"] must be a string` };
    if (Buffer.byteLength(value) > MAX_ANNOTATION_BYTES)
      return { error: `metadata.annotations["${key}"] is longer than ${MAX_ANNOTATION_BYTES} bytes` };
    annotations[key] = value;
  }
  return annotations;
}

/** The parent a body names, kept only when it is a department of the workspace (the console may name `root`). */
function parentOf(from: Raw, departments: ReadonlySet<string>): string | undefined {
  const parent = from?.metadata?.labels?.[GROUP_PARENT_LABEL];
  return typeof parent === 'string' && departments.has(parent) ? parent : undefined;
}

/** The Group kapi creates for a POST: `generateName` required; the workspace label and the creator kapi's to set. */
export function departmentToCreate(
  body: Raw,
  workspace: string,
  departments: ReadonlySet<string>,
  creator: string,
): Raw | { error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: 'the body must be a Group' };
  const generateName = body.metadata?.generateName;
  if (typeof generateName !== 'string' || !DISPLAY_NAME.test(generateName))
    return {
      error:
        'metadata.generateName (the display name) is required: 1 to 58 lower-case letters, digits and hyphens, ' +
        'starting and ending with a letter or digit',
    };
  const annotations = keptAnnotations(body);
  if ('error' in annotations) return annotations;
  const parent = parentOf(body, departments);
  return {
    apiVersion: IAM_VERSION,
    kind: 'Group',
    metadata: {
      generateName,
      labels: { [WORKSPACE_LABEL]: workspace, ...(parent && { [GROUP_PARENT_LABEL]: parent }) },
      annotations: { ...annotations, 'kapi.io/creator': creator },
    },
  };
}

/**
 * A department changed by a PUT (the body as it should be) or a merge PATCH (changes): only its kept annotations and
 * its parent can change; everything else stays as stored. A parent that is the department itself or one of its own
 * sub-departments is dropped (the tree stays a tree).
 */
export function departmentChanged(
  stored: Raw,
  body: Raw,
  how: 'replace' | 'merge',
  departments: ReadonlySet<string>,
  below: ReadonlySet<string>,
): Raw | { error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: 'the body must be a Group' };
  const name = stored.metadata.name as string;
  if (body.metadata?.name !== undefined && body.metadata.name !== name)
    return { error: `the name of the body (${String(body.metadata.name)}) is not the URL's (${name})` };
  const current = { metadata: { annotations: keptOnly(stored), labels: parentLabel(stored) } };
  // a merge patch changes only what it names: an absent key keeps the stored value
  const named: Raw = {};
  for (const key of ['annotations', 'labels'] as const)
    if (body.metadata && key in body.metadata) named[key] = body.metadata[key];
  const wanted = how === 'merge' ? (mergePatch(current, { metadata: named }) as Raw) : body;
  const annotations = keptAnnotations(wanted);
  if ('error' in annotations) return annotations;
  const parent = parentOf(wanted, departments);
  const keptParent = parent && parent !== name && !below.has(parent) ? parent : undefined;
  const otherAnnotations = Object.fromEntries(
    Object.entries((stored.metadata.annotations ?? {}) as Record<string, string>).filter(
      ([key]) => !(DEPARTMENT_ANNOTATIONS as readonly string[]).includes(key),
    ),
  );
  const { [GROUP_PARENT_LABEL]: _parent, ...otherLabels } = (stored.metadata.labels ?? {}) as Record<string, string>;
  return {
    ...stored,
    metadata: {
      ...stored.metadata,
      labels: { ...otherLabels, ...(keptParent && { [GROUP_PARENT_LABEL]: keptParent }) },
      annotations: { ...otherAnnotations, ...annotations },
    },
  };
}

const keptOnly = (stored: Raw) =>
  Object.fromEntries(
    Object.entries((stored.metadata?.annotations ?? {}) as Record<string, string>).filter(([key]) =>
      (DEPARTMENT_ANNOTATIONS as readonly string[]).includes(key),
    ),
  );
const parentLabel = (stored: Raw) => {
  const parent = stored.metadata?.labels?.[GROUP_PARENT_LABEL];
  return typeof parent === 'string' ? { [GROUP_PARENT_LABEL]: parent } : {};
};

/** Every department below `name` in the tree of `groups` (one workspace's), nearest first. */
export function departmentsBelow(groups: readonly Raw[], name: string): string[] {
  const children = new Map<string, string[]>();
  for (const group of groups) {
    const parent = group?.metadata?.labels?.[GROUP_PARENT_LABEL];
    if (typeof parent !== 'string') continue;
    children.set(parent, [...(children.get(parent) ?? []), group.metadata.name as string]);
  }
  const below: string[] = [];
  const seen = new Set([name]);
  for (let i = -1; i < below.length; i++) {
    for (const child of children.get(i < 0 ? name : (below[i] as string)) ?? []) {
      if (seen.has(child)) continue; // a loop written by hand ends here
      seen.add(child);
      below.push(child);
    }
  }
  return below;
}

/**
 * The name of the GroupBinding that puts `user` in `group`: one per pair, so two adds at once make one (the second
 * finds the first), and taking the user out is deleting it. A name too long for an object ends in a digest instead.
 */
export function departmentMembershipName(group: string, user: string): string {
  const plain = `${group}-${user}`;
  if (plain.length <= 253) return plain;
  return `${group}-${createHash('sha256').update(user).digest('hex').slice(0, 32)}`;
}

/** The GroupBinding that puts `user` in the department. */
export function departmentMembership(workspace: string, group: string, user: string): Raw {
  return {
    apiVersion: IAM_VERSION,
    kind: 'GroupBinding',
    metadata: {
      name: departmentMembershipName(group, user),
      labels: {
        [WORKSPACE_LABEL]: workspace,
        [GROUP_REF_LABEL]: group,
        // a name longer than a label value is found by its users instead
        ...(LABEL_VALUE.test(user) && { [USER_REF_LABEL]: user }),
      },
    },
    groupRef: { apiGroup: 'iam.kapi.io', kind: 'Group', name: group },
    users: [user],
  };
}

/** The entries of a body of `[{userName, groupName}]`, or why not. */
export function membershipEntries(body: unknown, max = 100): { user: string; group: string }[] | { error: string } {
  if (!Array.isArray(body) || body.length === 0 || body.length > max)
    return { error: `the body must be a list of 1 to ${max} entries {userName, groupName}` };
  const entries: { user: string; group: string }[] = [];
  for (const [i, entry] of body.entries()) {
    const user = (entry as Raw)?.userName;
    const group = (entry as Raw)?.groupName;
    if (typeof user !== 'string' || user === '' || typeof group !== 'string' || group === '')
      return { error: `[${i}]: userName and groupName are required` };
    entries.push({ user, group });
  }
  return entries;
}

/**
 * The department a binding of the console names (its first subject, a `Group`) and its role, or why not: the
 * console's WorkspaceRoleBinding and RoleBinding bodies alike.
 */
export function departmentRoleEntries(body: unknown, max = 100): { group: string; role: string }[] | { error: string } {
  if (!Array.isArray(body) || body.length === 0 || body.length > max)
    return { error: `the body must be a list of 1 to ${max} bindings` };
  const entries: { group: string; role: string }[] = [];
  for (const [i, binding] of body.entries()) {
    const subject = Array.isArray((binding as Raw)?.subjects) ? (binding as Raw).subjects[0] : undefined;
    const role = (binding as Raw)?.roleRef?.name;
    if (subject?.kind !== 'Group' || typeof subject.name !== 'string' || subject.name === '')
      return { error: `[${i}].subjects[0]: a department (kind Group) is required` };
    if (typeof role !== 'string' || role === '') return { error: `[${i}].roleRef.name is required` };
    // the console names the department itself; a client that read kapi's binding names its RBAC group
    const group = subject.name.startsWith(DEPARTMENT_GROUP_PREFIX)
      ? subject.name.slice(DEPARTMENT_GROUP_PREFIX.length)
      : subject.name;
    entries.push({ group, role });
  }
  return entries;
}

/** A department's WorkspaceRoleBinding `<group>-<role>`. */
export function departmentWorkspaceBinding(workspace: string, group: string, role: string): Raw {
  return {
    apiVersion: IAM_VERSION,
    kind: 'WorkspaceRoleBinding',
    metadata: {
      name: `${group}-${role}`.slice(0, 253),
      labels: { [WORKSPACE_LABEL]: workspace, [GROUP_REF_LABEL]: group, 'iam.kapi.io/role-ref': role },
    },
    roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: role },
    subjects: [{ kind: 'Group', apiGroup: RBAC, name: departmentGroup(group) }],
  };
}

/** A department's RoleBinding `<group>-<role>` in a project, to the project role's ClusterRole. */
export function departmentProjectBinding(namespace: string, group: string, role: string, clusterRole: string): Raw {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: {
      name: `${group}-${role}`.slice(0, 253),
      namespace,
      labels: { [GROUP_REF_LABEL]: group, 'iam.kapi.io/role-ref': role },
    },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: clusterRole },
    subjects: [{ kind: 'Group', apiGroup: RBAC, name: departmentGroup(group) }],
  };
}
