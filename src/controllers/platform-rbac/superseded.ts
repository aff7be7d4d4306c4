/**
 * One role per scope, even when kapi is killed midway (SPEC §18, pure): a member binding written to change a user's
 * role names, in its annotation `SUPERSEDES_ANNOTATION`, the bindings it replaces (name and uid), which the writer
 * deletes right after it. A replica killed in between leaves both, the old one (say admin, for a demotion to viewer)
 * still granting; the controller deletes what a binding names as superseded once it runs again, so no stale grant
 * outlives the crash. The uid keeps a later binding of the same name (the user promoted back) from being taken for the
 * replaced one; only bindings of the same user (label `iam.kapi.io/user-ref`), scope and workspace are ever named.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const SUPERSEDES_ANNOTATION = 'iam.kapi.io/supersedes';
const USER_REF_LABEL = 'iam.kapi.io/user-ref';
const WORKSPACE_LABEL = 'kapi.io/workspace';

export interface BindingRef {
  name: string;
  uid: string;
}

/** The annotation's value for the bindings a new one replaces. */
export function supersedesValue(replaced: readonly BindingRef[]): string {
  return JSON.stringify(replaced.map(({ name, uid }) => ({ name, uid })));
}

function namedIn(binding: Raw): BindingRef[] {
  try {
    const list: unknown = JSON.parse(binding?.metadata?.annotations?.[SUPERSEDES_ANNOTATION] ?? '[]');
    return Array.isArray(list)
      ? list.filter((ref): ref is BindingRef => typeof ref?.name === 'string' && typeof ref?.uid === 'string')
      : [];
  } catch {
    return [];
  }
}

/** Where a binding is, for matching: its namespace (RoleBindings), its user, its workspace (WorkspaceRoleBindings). */
const scopeOf = (binding: Raw) =>
  [
    binding?.metadata?.namespace ?? '',
    binding?.metadata?.labels?.[USER_REF_LABEL] ?? '',
    binding?.metadata?.labels?.[WORKSPACE_LABEL] ?? '',
  ].join('\u0000');

/**
 * The bindings (of one kind, as listed) that another binding of the same user and scope names as superseded, by name
 * and uid: what to delete.
 */
export function supersededBindings(bindings: readonly Raw[]): Raw[] {
  const byKey = new Map<string, Raw>();
  for (const binding of bindings) {
    const uid = binding?.metadata?.uid;
    if (typeof uid === 'string') byKey.set(`${scopeOf(binding)}\u0000${binding.metadata.name}\u0000${uid}`, binding);
  }
  const found = new Map<string, Raw>();
  for (const binding of bindings) {
    if (binding?.metadata?.labels?.[USER_REF_LABEL] === undefined) continue;
    for (const ref of namedIn(binding)) {
      if (ref.uid === binding.metadata.uid) continue;
      const old = byKey.get(`${scopeOf(binding)}\u0000${ref.name}\u0000${ref.uid}`);
      if (old) found.set(`${old.metadata.namespace ?? ''}/${old.metadata.name}`, old);
    }
  }
  return [...found.values()];
}
