/**
 * The tenant guard's rules (SPEC §18, pure): every field a grant that kapi writes with its own credentials follows,
 * and who may write it. kapi's routes check the same rights before writing; the guard makes kube-apiserver check them
 * for every other writer, so the field cannot be changed through forwarding or with kubectl straight to
 * kube-apiserver by anyone not entitled to the grant it leads to.
 *
 * Each rule says, once in CEL (for the ValidatingAdmissionPolicy kube-apiserver evaluates, policy.ts) and once in
 * TypeScript (the same decision, for the sandbox, which evaluates no CEL), when a write touches its field and what
 * the writer must be allowed. The two are kept side by side so a change to one is a change to the other; the e2e
 * attack suite runs against the sandbox and real kube-apiservers alike, so a difference between them fails it.
 *
 * Costs: kube-apiserver charges a CEL `authorizer` check 350,000 of an expression's 1,000,000, so no rule asks more
 * than two (a role's rules cannot be checked one by one: a writer without `escalate` writes roles through kapi's
 * route, which does).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export const WORKSPACE_LABEL = 'kapi.io/workspace';
export const CREATOR_PENDING_ANNOTATION = 'tenant.kapi.io/creator-pending';
export const ROLE_TEMPLATE_LABEL = 'iam.kapi.io/role-template';
/** `<workspace>/<uid>` of the workspace a namespace was put in: a workspace made later under the name is not it. */
export const WORKSPACE_UID_ANNOTATION = 'tenant.kapi.io/workspace-uid';
export const SUPERSEDES_ANNOTATION = 'iam.kapi.io/supersedes';
export const IDENTITY_PROVIDER_LABEL = 'iam.kapi.io/identity-provider';
export const UPSTREAM_USER_ID_ANNOTATION = 'iam.kapi.io/upstream-user-id';
/** The ClusterRole a workspace's admins hold in each of its namespaces (controllers/platform-rbac/workspaces.ts). */
const WORKSPACE_NAMESPACE_ADMIN = 'kapi:workspace-namespace:admin';

/** A write as the guard sees it: kube-apiserver's admission request, reduced. */
export interface GuardedWrite {
  operation: 'CREATE' | 'UPDATE';
  group: string;
  resource: string;
  object: Raw;
  /** Absent on CREATE. */
  oldObject?: Raw;
  user: { username: string; groups: readonly string[] };
}

/** What the writer must be allowed, as a SubjectAccessReview asks it. */
export interface GuardCheck {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
  namespace?: string;
}

export interface GuardRule {
  /** Stable, named in denials and logs. */
  id: string;
  group: string;
  resource: string;
  /** Whether the write touches the guarded field (CEL, over `object`, `oldObject`, `request`). */
  touchesCel: string;
  touches(write: GuardedWrite): boolean;
  /**
   * What the writer must be allowed, all of them: CEL expressions over `authorizer` (at most two), and the same checks
   * as values. Empty: no one but kapi may make the change.
   */
  requiresCel: string[];
  requires(write: GuardedWrite): GuardCheck[];
  /** The denial: names the field and the right it needs. */
  message: string;
}

// ---- field readers, in CEL and in TypeScript ------------------------------------------------------------------

/** `obj` is `object` or `oldObject` (null on CREATE). */
const nullable = (obj: string) => (obj === 'oldObject' ? `${obj} != null && ` : '');
const labelCel = (obj: string, key: string) =>
  `(${nullable(obj)}has(${obj}.metadata.labels) && '${key}' in ${obj}.metadata.labels ? ${obj}.metadata.labels['${key}'] : '')`;
const hasLabelCel = (obj: string, key: string) =>
  `(${nullable(obj)}has(${obj}.metadata.labels) && '${key}' in ${obj}.metadata.labels)`;
const annotationCel = (obj: string, key: string) =>
  `(${nullable(obj)}has(${obj}.metadata.annotations) && '${key}' in ${obj}.metadata.annotations ? ${obj}.metadata.annotations['${key}'] : '')`;
const managerCel = (obj: string) =>
  `(${nullable(obj)}has(${obj}.spec) && has(${obj}.spec.template) && has(${obj}.spec.template.spec) && ` +
  `has(${obj}.spec.template.spec.manager) ? ${obj}.spec.template.spec.manager : '')`;
const passwordCel = (obj: string) =>
  `(${nullable(obj)}has(${obj}.spec) && has(${obj}.spec.password) ? ${obj}.spec.password : '')`;
/** Whether a top-level field (`rules`, `roleRef`, `subjects`) differs between the two, absent counting as a value. */
const fieldChangedCel = (field: string) =>
  `!((has(object.${field}) == (oldObject != null && has(oldObject.${field}))) && ` +
  `(!has(object.${field}) || object.${field} == oldObject.${field}))`;
/** Whether the User gains a group (`spec.groups`) it did not have: a group lost grants nothing. */
const groupsOf = (obj: string) =>
  `(${nullable(obj)}has(${obj}.spec) && has(${obj}.spec.groups) ? ${obj}.spec.groups : [])`;
const groupGainedCel = `${groupsOf('object')}.exists(g, !(g in ${groupsOf('oldObject')}))`;

const text = (value: unknown) => (typeof value === 'string' ? value : '');
const label = (o: Raw, key: string) => text(o?.metadata?.labels?.[key]);
const annotation = (o: Raw, key: string) => text(o?.metadata?.annotations?.[key]);
const manager = (o: Raw) => text(o?.spec?.template?.spec?.manager);
const password = (o: Raw) => text(o?.spec?.password);
/** JSON equality as CEL's `==` on values decoded from JSON (absent and absent equal; key order ignored). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameValue(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length && keys.every((key) => key in right && sameValue(left[key], right[key]))
  );
}
const fieldChanged = (write: GuardedWrite, read: (o: Raw) => unknown) =>
  !sameValue(read(write.object), write.oldObject === undefined ? undefined : read(write.oldObject));

const check = (
  verb: string,
  group: string,
  resource: string,
  subresource: string,
  name: string,
  namespace = '',
): GuardCheck => ({
  verb,
  group,
  resource,
  ...(subresource && { subresource }),
  ...(name && { name }),
  ...(namespace && { namespace }),
});
/** `name` and `namespace` are CEL expressions. */
const checkCel = (verb: string, group: string, resource: string, subresource: string, name: string, namespace = '') =>
  `authorizer.group('${group}').resource('${resource}')` +
  (subresource ? `.subresource('${subresource}')` : '') +
  (namespace ? `.namespace(${namespace})` : '') +
  (name ? `.name(${name})` : '') +
  `.check('${verb}').allowed()`;

const TENANT = 'tenant.kapi.io';
const IAM = 'iam.kapi.io';
const RBAC = 'rbac.authorization.k8s.io';
/** Who administers a workspace's projects (workspaces.ts ADMINISTER_PROJECTS_VERB): the verb asked of both sides. */
const ADMINISTER = 'update';

const newWorkspace = labelCel('object', WORKSPACE_LABEL);
const oldWorkspace = labelCel('oldObject', WORKSPACE_LABEL);

/** A field only kapi writes: any change by someone else is refused. */
function kapiOnlyAnnotation(id: string, group: string, resource: string, key: string, message: string): GuardRule {
  return {
    id,
    group,
    resource,
    touchesCel: `${annotationCel('object', key)} != ${annotationCel('oldObject', key)}`,
    touches: (w) => annotation(w.object, key) !== annotation(w.oldObject, key),
    requiresCel: [],
    requires: () => [],
    message,
  };
}

/**
 * A department's (iam.kapi.io Group) or its users' (GroupBinding) field: a change of `fields` or of the workspace
 * label needs the right to administer the departments of the workspace it names, and of the one it leaves.
 */
function departmentRule(
  id: string,
  resource: string,
  fields: ((o: Raw) => unknown)[],
  fieldsCel: string[],
  message: string,
): GuardRule {
  return {
    id,
    group: IAM,
    resource,
    touchesCel: [...fieldsCel, `${newWorkspace} != ${oldWorkspace}`].join(' || '),
    touches: (w) =>
      fields.some((read) => fieldChanged(w, read)) ||
      label(w.object, WORKSPACE_LABEL) !== label(w.oldObject, WORKSPACE_LABEL),
    requiresCel: [
      checkCel(ADMINISTER, TENANT, 'workspacetemplates', 'groups', newWorkspace),
      `${oldWorkspace} == '' || ${oldWorkspace} == ${newWorkspace} || ` +
        checkCel(ADMINISTER, TENANT, 'workspacetemplates', 'groups', oldWorkspace),
    ],
    requires: (w) => {
      const now = label(w.object, WORKSPACE_LABEL);
      const before = label(w.oldObject, WORKSPACE_LABEL);
      return [
        check(ADMINISTER, TENANT, 'workspacetemplates', 'groups', now),
        ...(before !== '' && before !== now ? [check(ADMINISTER, TENANT, 'workspacetemplates', 'groups', before)] : []),
      ];
    },
    message,
  };
}

/** The rules. */
export function guardRules(): GuardRule[] {
  return [
    {
      id: 'project-created-in-workspace',
      group: '',
      resource: 'namespaces',
      touchesCel: `request.operation == 'CREATE' && ${newWorkspace} != ''`,
      touches: (w) => w.operation === 'CREATE' && label(w.object, WORKSPACE_LABEL) !== '',
      requiresCel: [checkCel('create', TENANT, 'workspacetemplates', 'namespaces', newWorkspace)],
      requires: (w) => [check('create', TENANT, 'workspacetemplates', 'namespaces', label(w.object, WORKSPACE_LABEL))],
      message:
        `a namespace created in a workspace (label ${WORKSPACE_LABEL}) needs create on ` +
        `workspacetemplates/namespaces (${TENANT}) of that workspace`,
    },
    {
      id: 'project-leaves-workspace',
      group: '',
      resource: 'namespaces',
      touchesCel: `request.operation == 'UPDATE' && ${oldWorkspace} != '' && ${newWorkspace} != ${oldWorkspace}`,
      touches: (w) =>
        w.operation === 'UPDATE' &&
        label(w.oldObject, WORKSPACE_LABEL) !== '' &&
        label(w.object, WORKSPACE_LABEL) !== label(w.oldObject, WORKSPACE_LABEL),
      requiresCel: [checkCel(ADMINISTER, TENANT, 'workspacetemplates', 'namespaces', oldWorkspace)],
      requires: (w) => [
        check(ADMINISTER, TENANT, 'workspacetemplates', 'namespaces', label(w.oldObject, WORKSPACE_LABEL)),
      ],
      message:
        `moving a namespace out of its workspace (label ${WORKSPACE_LABEL}) needs ${ADMINISTER} on ` +
        `workspacetemplates/namespaces (${TENANT}) of the workspace it leaves (its admin role)`,
    },
    {
      id: 'project-joins-workspace',
      group: '',
      resource: 'namespaces',
      touchesCel: `request.operation == 'UPDATE' && ${newWorkspace} != '' && ${newWorkspace} != ${oldWorkspace}`,
      touches: (w) =>
        w.operation === 'UPDATE' &&
        label(w.object, WORKSPACE_LABEL) !== '' &&
        label(w.object, WORKSPACE_LABEL) !== label(w.oldObject, WORKSPACE_LABEL),
      // the admin of the workspace it joins, and one who may give that workspace's admins everything in it (a
      // project's own admin may; an `update namespaces` alone does not make one)
      requiresCel: [
        checkCel(ADMINISTER, TENANT, 'workspacetemplates', 'namespaces', newWorkspace),
        checkCel('bind', RBAC, 'clusterroles', '', `'${WORKSPACE_NAMESPACE_ADMIN}'`, 'object.metadata.name'),
      ],
      requires: (w) => [
        check(ADMINISTER, TENANT, 'workspacetemplates', 'namespaces', label(w.object, WORKSPACE_LABEL)),
        check('bind', RBAC, 'clusterroles', '', WORKSPACE_NAMESPACE_ADMIN, text(w.object?.metadata?.name)),
      ],
      message:
        `moving a namespace into a workspace (label ${WORKSPACE_LABEL}) needs ${ADMINISTER} on ` +
        `workspacetemplates/namespaces (${TENANT}) of the workspace it joins (its admin role), and bind on ` +
        `clusterroles ${WORKSPACE_NAMESPACE_ADMIN} in the namespace (its admins get everything there)`,
    },
    kapiOnlyAnnotation(
      'project-creator',
      '',
      'namespaces',
      CREATOR_PENDING_ANNOTATION,
      `the annotation ${CREATOR_PENDING_ANNOTATION} names whom kapi makes the project's admin: only kapi writes ` +
        `it (create the project through kapi's tenant API)`,
    ),
    kapiOnlyAnnotation(
      'project-workspace-uid',
      '',
      'namespaces',
      WORKSPACE_UID_ANNOTATION,
      `the annotation ${WORKSPACE_UID_ANNOTATION} names the workspace (by uid) a project was put in: only kapi ` +
        `writes it`,
    ),
    {
      id: 'workspace-manager',
      group: TENANT,
      resource: 'workspacetemplates',
      // a new workspace's manager may be its creator; any other naming, and any change later, is a grant
      touchesCel:
        `${managerCel('object')} != '' && ${managerCel('object')} != ${managerCel('oldObject')} && ` +
        `(request.operation == 'UPDATE' || ${managerCel('object')} != request.userInfo.username)`,
      touches: (w) =>
        manager(w.object) !== '' &&
        manager(w.object) !== manager(w.oldObject) &&
        (w.operation === 'UPDATE' || manager(w.object) !== w.user.username),
      requiresCel: [checkCel('bind', TENANT, 'workspacetemplates', '', 'object.metadata.name')],
      requires: (w) => [check('bind', TENANT, 'workspacetemplates', '', text(w.object?.metadata?.name))],
      message:
        `naming a workspace's manager (spec.template.spec.manager, its admin), other than its creator at creation, ` +
        `needs bind on workspacetemplates (${TENANT}) of that workspace`,
    },
    {
      id: 'workspace-membership',
      group: IAM,
      resource: 'workspacerolebindings',
      touchesCel: `${fieldChangedCel('roleRef')} || ${fieldChangedCel('subjects')} || ${newWorkspace} != ${oldWorkspace}`,
      touches: (w) =>
        fieldChanged(w, (o) => o?.roleRef) ||
        fieldChanged(w, (o) => o?.subjects) ||
        label(w.object, WORKSPACE_LABEL) !== label(w.oldObject, WORKSPACE_LABEL),
      requiresCel: [
        checkCel('bind', TENANT, 'workspacetemplates', 'workspaceroles', newWorkspace),
        `${oldWorkspace} == '' || ${oldWorkspace} == ${newWorkspace} || ` +
          checkCel('bind', TENANT, 'workspacetemplates', 'workspaceroles', oldWorkspace),
      ],
      requires: (w) => {
        const now = label(w.object, WORKSPACE_LABEL);
        const before = label(w.oldObject, WORKSPACE_LABEL);
        return [
          check('bind', TENANT, 'workspacetemplates', 'workspaceroles', now),
          ...(before !== '' && before !== now
            ? [check('bind', TENANT, 'workspacetemplates', 'workspaceroles', before)]
            : []),
        ];
      },
      message:
        `a WorkspaceRoleBinding's role, subjects or workspace (label ${WORKSPACE_LABEL}) is written through kapi's ` +
        `workspace members API, or by one with bind on workspacetemplates/workspaceroles (${TENANT}) of the workspace`,
    },
    kapiOnlyAnnotation(
      'workspace-membership-supersedes',
      IAM,
      'workspacerolebindings',
      SUPERSEDES_ANNOTATION,
      `the annotation ${SUPERSEDES_ANNOTATION} names the bindings kapi deletes as replaced: only kapi writes it`,
    ),
    departmentRule(
      'department-membership',
      'groupbindings',
      [(o) => o?.groupRef, (o) => o?.users],
      [fieldChangedCel('groupRef'), fieldChangedCel('users')],
      `a GroupBinding's users, department or workspace (label ${WORKSPACE_LABEL}) are who kapi asserts a ` +
        `department's group for: written through kapi's departments API, or by one with ${ADMINISTER} on ` +
        `workspacetemplates/groups (${TENANT}) of the workspace`,
    ),
    kapiOnlyAnnotation(
      'department-workspace-uid',
      IAM,
      'groups',
      WORKSPACE_UID_ANNOTATION,
      `the annotation ${WORKSPACE_UID_ANNOTATION} names the workspace (by uid) a department was made in: only kapi ` +
        `writes it`,
    ),
    departmentRule(
      'department-workspace',
      'groups',
      [],
      [],
      `a department's workspace (label ${WORKSPACE_LABEL}) decides whose GroupBindings count: set through kapi's ` +
        `departments API, or by one with ${ADMINISTER} on workspacetemplates/groups (${TENANT}) of the workspace`,
    ),
    {
      id: 'platform-role-binding',
      group: IAM,
      resource: 'globalrolebindings',
      touchesCel: `${fieldChangedCel('roleRef')} || ${fieldChangedCel('subjects')}`,
      touches: (w) => fieldChanged(w, (o) => o?.roleRef) || fieldChanged(w, (o) => o?.subjects),
      requiresCel: [
        checkCel(
          'bind',
          IAM,
          'globalroles',
          '',
          `has(object.roleRef) && has(object.roleRef.name) ? object.roleRef.name : ''`,
        ),
      ],
      requires: (w) => [check('bind', IAM, 'globalroles', '', text(w.object?.roleRef?.name))],
      message:
        `a GlobalRoleBinding's role or subjects are written through kapi's users API, or by one with bind on the ` +
        `globalrole (${IAM}) it names`,
    },
    kapiOnlyAnnotation(
      'platform-role-binding-supersedes',
      IAM,
      'globalrolebindings',
      SUPERSEDES_ANNOTATION,
      `the annotation ${SUPERSEDES_ANNOTATION} names the bindings kapi deletes as replaced: only kapi writes it`,
    ),
    {
      id: 'platform-role-rules',
      group: IAM,
      resource: 'globalroles',
      // whether it is a role template is the label's presence, whatever its value (as kapi's controller reads it)
      touchesCel:
        `${fieldChangedCel('rules')} || ` +
        `${hasLabelCel('object', ROLE_TEMPLATE_LABEL)} != (oldObject != null && ${hasLabelCel('oldObject', ROLE_TEMPLATE_LABEL)})`,
      touches: (w) =>
        fieldChanged(w, (o) => o?.rules) ||
        (w.object?.metadata?.labels?.[ROLE_TEMPLATE_LABEL] !== undefined) !==
          (w.oldObject?.metadata?.labels?.[ROLE_TEMPLATE_LABEL] !== undefined),
      requiresCel: [checkCel('escalate', IAM, 'globalroles', '', 'object.metadata.name')],
      requires: (w) => [check('escalate', IAM, 'globalroles', '', text(w.object?.metadata?.name))],
      message:
        `a GlobalRole's rules (and whether it is a role template) are written through kapi's platform roles API, ` +
        `which checks the writer holds them, or by one with escalate on globalroles (${IAM})`,
    },
    {
      id: 'user-groups',
      group: IAM,
      resource: 'users',
      touchesCel: groupGainedCel,
      touches: (w) => {
        const groups = (o: Raw): unknown[] => (Array.isArray(o?.spec?.groups) ? o.spec.groups : []);
        const before = groups(w.oldObject);
        return groups(w.object).some((group) => !before.includes(group));
      },
      requiresCel: [checkCel('impersonate', '', 'groups', '', '')],
      requires: () => [check('impersonate', '', 'groups', '', '')],
      message:
        `a User's groups (spec.groups) are what kapi asserts to kube-apiserver for it: adding one needs impersonate ` +
        `on every group (groups, core API group)`,
    },
    {
      id: 'user-credentials',
      group: IAM,
      resource: 'users',
      // a hash in the User (kapi moves it to the user's password Secret), or a link to an upstream identity: either
      // decides who logs in as the user, as setting its password does
      touchesCel:
        `(${passwordCel('object')} != '' && ${passwordCel('object')} != ${passwordCel('oldObject')}) || ` +
        `${labelCel('object', IDENTITY_PROVIDER_LABEL)} != ${labelCel('oldObject', IDENTITY_PROVIDER_LABEL)} || ` +
        `${annotationCel('object', UPSTREAM_USER_ID_ANNOTATION)} != ${annotationCel('oldObject', UPSTREAM_USER_ID_ANNOTATION)}`,
      touches: (w) =>
        (password(w.object) !== '' && password(w.object) !== password(w.oldObject)) ||
        label(w.object, IDENTITY_PROVIDER_LABEL) !== label(w.oldObject, IDENTITY_PROVIDER_LABEL) ||
        annotation(w.object, UPSTREAM_USER_ID_ANNOTATION) !== annotation(w.oldObject, UPSTREAM_USER_ID_ANNOTATION),
      requiresCel: [checkCel('update', IAM, 'users', 'password', 'object.metadata.name')],
      requires: (w) => [check('update', IAM, 'users', 'password', text(w.object?.metadata?.name))],
      message:
        `a User's password hash (spec.password) or its link to an upstream identity (label ${IDENTITY_PROVIDER_LABEL}, ` +
        `annotation ${UPSTREAM_USER_ID_ANNOTATION}) needs update on users/password (${IAM}) of that user, as setting ` +
        `its password does`,
    },
    {
      id: 'login-session',
      group: IAM,
      resource: 'loginsessions',
      touchesCel: 'true',
      touches: () => true,
      requiresCel: [],
      requires: () => [],
      message: `LoginSessions carry the groups kapi asserts for a session: only kapi writes them`,
    },
  ];
}

/**
 * The decision the guard takes on a write (the sandbox's admission; pure but for `authorize`, the cluster's
 * authorization decision): the first rule whose field the write touches and whose rights the writer lacks refuses it.
 */
export function guardDecision(
  rules: readonly GuardRule[],
  write: GuardedWrite,
  authorize: (check: GuardCheck) => boolean,
  messageOf: (rule: GuardRule) => string = (rule) => `${rule.message} [${rule.id}]`,
): { allowed: true } | { allowed: false; rule: string; message: string } {
  for (const rule of rules) {
    if (rule.group !== write.group || rule.resource !== write.resource || !rule.touches(write)) continue;
    const checks = rule.requires(write);
    if (checks.length === 0 || !checks.every(authorize))
      return { allowed: false, rule: rule.id, message: messageOf(rule) };
  }
  return { allowed: true };
}
