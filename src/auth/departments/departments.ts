/**
 * A workspace's departments (KubeSphere's Groups) as identities (pure): a user in a department is asserted, toward
 * kube-apiserver and in kapi's SubjectAccessReviews, the RBAC group `kapi:department:<group>`, so a workspace role or
 * a project role given to the department (a binding of that Group subject) is the user's.
 *
 * The group is kapi's, never a name anyone else can claim: `kapi:` is reserved like `system:` (a User's `spec.groups`
 * and a directory's or OpenID provider's groups never carry it), so a department cannot borrow the rights of a
 * directory group of the same name, nor a directory group a department's.
 *
 * A GroupBinding counts only while its workspace label is its Group's: the tenant guard holds that label to the
 * workspace's department administrators, so no one makes a user a member of another workspace's department.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const DEPARTMENT_GROUP_PREFIX = 'kapi:department:';
export const WORKSPACE_LABEL = 'kapi.io/workspace';
export const GROUP_REF_LABEL = 'iam.kapi.io/group-ref';
export const GROUP_PARENT_LABEL = 'iam.kapi.io/group-parent';
/** `<workspace>/<uid>` of the workspace a department was made in (kapi's, held by the tenant guard). */
export const WORKSPACE_UID_ANNOTATION = 'tenant.kapi.io/workspace-uid';

/**
 * Whether a department is its workspace's: the workspace exists (`uids`: each workspace's uid) and the department was
 * made in it, not in an earlier workspace of the name (its stamp, when it has one, names this one's uid).
 */
export function ofLiveWorkspace(group: Raw, uids: ReadonlyMap<string, string>): boolean {
  const workspace = group?.metadata?.labels?.[WORKSPACE_LABEL];
  const uid = typeof workspace === 'string' ? uids.get(workspace) : undefined;
  if (uid === undefined) return false;
  const stamp = group?.metadata?.annotations?.[WORKSPACE_UID_ANNOTATION];
  return stamp === undefined || stamp === `${workspace}/${uid}`;
}

/** The RBAC group a department is asserted as. */
export const departmentGroup = (group: string) => `${DEPARTMENT_GROUP_PREFIX}${group}`;

/** The department a `kapi:department:` group names; undefined for any other group. */
export const departmentOf = (rbacGroup: string) =>
  rbacGroup.startsWith(DEPARTMENT_GROUP_PREFIX) ? rbacGroup.slice(DEPARTMENT_GROUP_PREFIX.length) : undefined;

const workspaceOf = (raw: Raw): string | undefined => {
  const workspace = raw?.metadata?.labels?.[WORKSPACE_LABEL];
  return typeof workspace === 'string' && workspace !== '' ? workspace : undefined;
};
const live = (raw: Raw) => typeof raw?.metadata?.name === 'string' && !raw.metadata.deletionTimestamp;

/**
 * Each user's departments (their names, sorted): the Groups (of a workspace that exists, not being deleted) that
 * GroupBindings of the same workspace put the user in. `uids`: each workspace's uid.
 */
export function departmentsByUser(
  groups: readonly Raw[],
  bindings: readonly Raw[],
  uids: ReadonlyMap<string, string>,
): Map<string, string[]> {
  const workspaceOfGroup = new Map<string, string>();
  for (const group of groups) {
    const workspace = workspaceOf(group);
    if (live(group) && workspace && ofLiveWorkspace(group, uids)) workspaceOfGroup.set(group.metadata.name, workspace);
  }
  const byUser = new Map<string, Set<string>>();
  for (const binding of bindings) {
    const group = binding?.groupRef?.name;
    if (!live(binding) || typeof group !== 'string') continue;
    const workspace = workspaceOf(binding);
    if (!workspace || workspaceOfGroup.get(group) !== workspace) continue;
    for (const user of Array.isArray(binding.users) ? binding.users : []) {
      if (typeof user !== 'string' || user === '') continue;
      let set = byUser.get(user);
      if (!set) byUser.set(user, (set = new Set()));
      set.add(group);
    }
  }
  return new Map([...byUser].map(([user, set]) => [user, [...set].sort()]));
}
