/**
 * Platform roles as KubeSphere 3.4 composes them (pure): a role names the role templates it is made of in the
 * annotation `iam.kapi.io/aggregation-roles` (a JSON array of names), and each template says which console menus it
 * opens in `iam.kapi.io/role-template-rules`. A user's role at a scope is given by a binding naming the user.
 */
export const AGGREGATION_ROLES_ANNOTATION = 'iam.kapi.io/aggregation-roles';
export const ROLE_TEMPLATE_RULES_ANNOTATION = 'iam.kapi.io/role-template-rules';
/** Added to a User in answers (never stored): its platform role. */
export const GLOBAL_ROLE_ANNOTATION = 'iam.kapi.io/globalrole';
/** Added to a cluster member in answers (never stored): its cluster role. */
export const CLUSTER_ROLE_ANNOTATION = 'iam.kapi.io/clusterrole';
/** On every binding kapi writes for a user: whose it is. */
export const USER_REF_LABEL = 'iam.kapi.io/user-ref';
export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** A binding of a role to users, as the lookups need it. */
export interface RoleBindingRecord {
  readonly name: string;
  /** The role it grants (roleRef.name). */
  readonly role: string;
  /** roleRef.kind. */
  readonly roleKind: string;
  /** Its User subjects. */
  readonly users: readonly string[];
  /** ms since the epoch; NaN when missing. */
  readonly created: number;
  readonly labels: Readonly<Record<string, string>>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const asStrings = (value: unknown): Record<string, string> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      )
    : {};

/** A (Global|Cluster)RoleBinding read into what the lookups need; tolerant of missing parts. */
export function roleBindingRecordFrom(raw: Raw): RoleBindingRecord {
  const metadata = raw?.metadata ?? {};
  const subjects: Raw[] = Array.isArray(raw?.subjects) ? raw.subjects : [];
  return {
    name: String(metadata.name ?? ''),
    role: typeof raw?.roleRef?.name === 'string' ? raw.roleRef.name : '',
    roleKind: typeof raw?.roleRef?.kind === 'string' ? raw.roleRef.kind : '',
    users: subjects
      .filter((s) => s?.kind === 'User' && typeof s.name === 'string' && (!s.apiGroup || s.apiGroup === RBAC_GROUP))
      .map((s) => s.name as string),
    created: typeof metadata.creationTimestamp === 'string' ? Date.parse(metadata.creationTimestamp) : Number.NaN,
    labels: asStrings(metadata.labels),
  };
}

/**
 * The role a user holds at a scope from the bindings naming the user. KubeSphere takes the first its cache returns
 * (so which one is arbitrary when several exist); kapi takes the oldest binding whose role exists, by name on a tie,
 * so every replica and every request answer the same.
 */
export function roleOfUser(
  bindings: readonly RoleBindingRecord[],
  user: string,
  roleExists: (name: string) => boolean,
): string | undefined {
  let chosen: RoleBindingRecord | undefined;
  for (const binding of bindings) {
    if (!binding.users.includes(user) || !binding.role || !roleExists(binding.role)) continue;
    if (!chosen || isEarlier(binding, chosen)) chosen = binding;
  }
  return chosen?.role;
}

function isEarlier(a: RoleBindingRecord, b: RoleBindingRecord): boolean {
  const at = Number.isNaN(a.created) ? Infinity : a.created;
  const bt = Number.isNaN(b.created) ? Infinity : b.created;
  return at !== bt ? at < bt : a.name < b.name;
}

/**
 * The template names a role is aggregated from: the annotation's JSON array, strings only, each once, in order. A
 * missing or malformed annotation is no templates (a role written by hand may have none).
 */
export function aggregatedRoleNames(annotations: Readonly<Record<string, string>> | undefined): string[] {
  const text = annotations?.[AGGREGATION_ROLES_ANNOTATION];
  if (!text) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return [...new Set(parsed.filter((name): name is string => typeof name === 'string' && name !== ''))];
}

/**
 * The templates a role is made of, as KubeSphere's `aggregateTo` filter answers them to the console: those that
 * exist, in the annotation's order. (KubeSphere repeats a template named twice; the console merges them anyway.)
 */
export function templatesOf<T>(
  role: { readonly annotations?: Readonly<Record<string, string>> } | undefined,
  lookup: (name: string) => T | undefined,
): T[] {
  if (!role) return [];
  return aggregatedRoleNames(role.annotations).flatMap((name) => {
    const template = lookup(name);
    return template === undefined ? [] : [template];
  });
}
