import { describe, expect, it } from '@jest/globals';
import { guardDecision, guardRules, type GuardCheck, type GuardedWrite } from '../../src/tenant-guard/rules.js';

// The TypeScript half of the guard's rules, as a table: who may touch which field. (The CEL half is the same table
// run against a real kube-apiserver: test/e2e/tenant-guard.test.ts.)
const rules = guardRules();
const bob = { username: 'bob', groups: ['system:authenticated'] };
const ns = (workspace?: string, annotations?: Record<string, string>) => ({
  metadata: {
    name: 'a-dev',
    ...(workspace && { labels: { 'kapi.io/workspace': workspace } }),
    ...(annotations && { annotations }),
  },
});
const template = (manager?: string) => ({
  metadata: { name: 'ws-a' },
  spec: { template: { spec: manager ? { manager } : {} } },
});
const wrb = (workspace: string, subject = 'bob', role = `${workspace}-admin`) => ({
  metadata: { name: `${subject}-${role}`, labels: { 'kapi.io/workspace': workspace } },
  roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: role },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: subject }],
});
const groupBinding = (workspace: string, group: string, users: string[]) => ({
  metadata: { name: 'b', labels: workspace ? { 'kapi.io/workspace': workspace } : {} },
  groupRef: { apiGroup: 'iam.kapi.io', kind: 'Group', name: group },
  users,
});
const department = (workspace: string) => ({
  metadata: { name: 'dev12345', generateName: 'dev', labels: workspace ? { 'kapi.io/workspace': workspace } : {} },
});
const grb = (role: string, subject = 'bob') => ({
  metadata: { name: `${subject}-${role}` },
  roleRef: { apiGroup: 'iam.kapi.io', kind: 'GlobalRole', name: role },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: subject }],
});
const role = (rules: unknown[], template = false) => ({
  metadata: { name: 'r', ...(template && { labels: { 'iam.kapi.io/role-template': 'true' } }) },
  rules,
});
const user = (groups?: string[]) => ({ metadata: { name: 'u' }, spec: { email: 'u@x', ...(groups && { groups }) } });

const write = (group: string, resource: string, object: unknown, oldObject?: unknown): GuardedWrite => ({
  operation: oldObject === undefined ? 'CREATE' : 'UPDATE',
  group,
  resource,
  object,
  ...(oldObject !== undefined && { oldObject }),
  user: bob,
});
const key = (check: GuardCheck) =>
  `${check.verb} ${check.group}/${check.resource}${check.subresource ? `/${check.subresource}` : ''}` +
  `${check.name ? ` ${check.name}` : ''}${check.namespace ? ` in ${check.namespace}` : ''}`;
/** What a namespace's own admin holds there: the right to give a workspace's admins everything in it. */
const bindInProject = 'bind rbac.authorization.k8s.io/clusterroles kapi:workspace-namespace:admin in a-dev';

describe('the tenant guard’s rules', () => {
  it.each([
    // [what, write, rights bob holds, allowed, rule that refuses]
    [
      'a namespace edited without touching a guarded field',
      write('', 'namespaces', ns('ws-a', { x: '1' }), ns('ws-a')),
      [],
      true,
      '',
    ],
    ['a namespace created outside any workspace', write('', 'namespaces', ns()), [], true, ''],
    [
      'a project created in ws-a by one who may create its projects',
      write('', 'namespaces', ns('ws-a')),
      ['create tenant.kapi.io/workspacetemplates/namespaces ws-a'],
      true,
      '',
    ],
    [
      'a project created in ws-a by one who may not',
      write('', 'namespaces', ns('ws-a')),
      [],
      false,
      'project-created-in-workspace',
    ],
    [
      'a project moved by the admin of both workspaces',
      write('', 'namespaces', ns('ws-b'), ns('ws-a')),
      [
        'update tenant.kapi.io/workspacetemplates/namespaces ws-a',
        'update tenant.kapi.io/workspacetemplates/namespaces ws-b',
        bindInProject,
      ],
      true,
      '',
    ],
    [
      'a project moved into a workspace its mover does not administer',
      write('', 'namespaces', ns('ws-b'), ns('ws-a')),
      ['update tenant.kapi.io/workspacetemplates/namespaces ws-a'],
      false,
      'project-joins-workspace',
    ],
    [
      'a project moved out of a workspace its mover does not administer',
      write('', 'namespaces', ns('ws-b'), ns('ws-a')),
      ['update tenant.kapi.io/workspacetemplates/namespaces ws-b'],
      false,
      'project-leaves-workspace',
    ],
    [
      'a project taken out of its workspace by its admin',
      write('', 'namespaces', ns(), ns('ws-a')),
      ['update tenant.kapi.io/workspacetemplates/namespaces ws-a'],
      true,
      '',
    ],
    [
      'a namespace put in a workspace by one who may only create projects there',
      write('', 'namespaces', ns('ws-a'), ns()),
      ['create tenant.kapi.io/workspacetemplates/namespaces ws-a'],
      false,
      'project-joins-workspace',
    ],
    [
      'a pending creator set by anyone but kapi',
      write('', 'namespaces', ns('ws-a', { 'tenant.kapi.io/creator-pending': 'bob' }), ns('ws-a')),
      ['update tenant.kapi.io/workspacetemplates/namespaces ws-a'],
      false,
      'project-creator',
    ],
    [
      'a pending creator taken off by anyone but kapi (the controller completes it)',
      write('', 'namespaces', ns('ws-a'), ns('ws-a', { 'tenant.kapi.io/creator-pending': 'carol' })),
      [],
      false,
      'project-creator',
    ],
    [
      'a workspace whose manager is its writer',
      write('tenant.kapi.io', 'workspacetemplates', template('bob')),
      [],
      true,
      '',
    ],
    [
      'a workspace whose manager becomes someone else, without bind',
      write('tenant.kapi.io', 'workspacetemplates', template('carol'), template('alice')),
      [],
      false,
      'workspace-manager',
    ],
    [
      'a workspace whose manager becomes someone else, with bind',
      write('tenant.kapi.io', 'workspacetemplates', template('carol'), template('alice')),
      ['bind tenant.kapi.io/workspacetemplates ws-a'],
      true,
      '',
    ],
    [
      'a workspace whose writer makes himself its manager later, without bind',
      write('tenant.kapi.io', 'workspacetemplates', template('bob'), template('alice')),
      [],
      false,
      'workspace-manager',
    ],
    [
      'an unlabelled namespace put in a workspace by that workspace’s admin who holds nothing in it',
      write('', 'namespaces', ns('ws-a'), ns()),
      ['update tenant.kapi.io/workspacetemplates/namespaces ws-a'],
      false,
      'project-joins-workspace',
    ],
    [
      'an unlabelled namespace put in a workspace by its own admin who administers the workspace',
      write('', 'namespaces', ns('ws-a'), ns()),
      ['update tenant.kapi.io/workspacetemplates/namespaces ws-a', bindInProject],
      true,
      '',
    ],
    [
      'a project’s workspace stamp written by anyone but kapi',
      write(
        '',
        'namespaces',
        ns('ws-a', { 'tenant.kapi.io/workspace-uid': 'ws-a/u2' }),
        ns('ws-a', { 'tenant.kapi.io/workspace-uid': 'ws-a/u1' }),
      ),
      ['update tenant.kapi.io/workspacetemplates/namespaces ws-a', bindInProject],
      false,
      'project-workspace-uid',
    ],
    [
      'a project’s workspace stamp removed by anyone but kapi',
      write('', 'namespaces', ns('ws-a'), ns('ws-a', { 'tenant.kapi.io/workspace-uid': 'ws-a/u1' })),
      [],
      false,
      'project-workspace-uid',
    ],
    [
      'a membership naming bindings kapi is to delete as replaced',
      write(
        'iam.kapi.io',
        'workspacerolebindings',
        { ...wrb('ws-a'), metadata: { ...wrb('ws-a').metadata, annotations: { 'iam.kapi.io/supersedes': '[]' } } },
        wrb('ws-a'),
      ),
      ['bind tenant.kapi.io/workspacetemplates/workspaceroles ws-a'],
      false,
      'workspace-membership-supersedes',
    ],
    [
      'a user’s password hash written in its object without the password right',
      write('iam.kapi.io', 'users', { ...user(), spec: { password: '$2b$10$x' } }, user()),
      ['update iam.kapi.io/users'],
      false,
      'user-credentials',
    ],
    [
      'a user’s password hash written in its object with the password right',
      write('iam.kapi.io', 'users', { ...user(), spec: { password: '$2b$10$x' } }, user()),
      ['update iam.kapi.io/users/password u'],
      true,
      '',
    ],
    [
      'a user linked to an upstream identity by hand without the password right',
      write(
        'iam.kapi.io',
        'users',
        {
          ...user(),
          metadata: {
            name: 'u',
            labels: { 'iam.kapi.io/identity-provider': 'corp' },
            annotations: { 'iam.kapi.io/upstream-user-id': 'x' },
          },
        },
        user(),
      ),
      [],
      false,
      'user-credentials',
    ],
    [
      'a password hash taken out of a user',
      write('iam.kapi.io', 'users', user(), { ...user(), spec: { password: '$2b$10$x' } }),
      [],
      true,
      '',
    ],
    [
      'a platform role made a template by an empty label value',
      write(
        'iam.kapi.io',
        'globalroles',
        { ...role([]), metadata: { name: 'r', labels: { 'iam.kapi.io/role-template': '' } } },
        role([]),
      ),
      [],
      false,
      'platform-role-rules',
    ],
    [
      'a workspace whose manager is cleared',
      write('tenant.kapi.io', 'workspacetemplates', template(), template('alice')),
      [],
      true,
      '',
    ],
    [
      'a membership written without bind on the workspace’s roles',
      write('iam.kapi.io', 'workspacerolebindings', wrb('ws-a')),
      ['create tenant.kapi.io/workspacetemplates/workspacemembers ws-a'],
      false,
      'workspace-membership',
    ],
    [
      'a membership written with bind on the workspace’s roles',
      write('iam.kapi.io', 'workspacerolebindings', wrb('ws-a')),
      ['bind tenant.kapi.io/workspacetemplates/workspaceroles ws-a'],
      true,
      '',
    ],
    [
      'a membership moved to another workspace with bind on the new one only',
      write('iam.kapi.io', 'workspacerolebindings', wrb('ws-b', 'bob', 'ws-a-admin'), wrb('ws-a')),
      ['bind tenant.kapi.io/workspacetemplates/workspaceroles ws-b'],
      false,
      'workspace-membership',
    ],
    [
      'a membership relabelled elsewhere',
      write(
        'iam.kapi.io',
        'workspacerolebindings',
        { ...wrb('ws-a'), metadata: { ...wrb('ws-a').metadata, annotations: { a: 'b' } } },
        wrb('ws-a'),
      ),
      [],
      true,
      '',
    ],
    [
      'a GroupBinding written without the right to administer the workspace’s departments',
      write('iam.kapi.io', 'groupbindings', groupBinding('ws-a', 'dev12345', ['mallory'])),
      ['create iam.kapi.io/groupbindings'],
      false,
      'department-membership',
    ],
    [
      'a GroupBinding written by an admin of the workspace’s departments',
      write('iam.kapi.io', 'groupbindings', groupBinding('ws-a', 'dev12345', ['bob'])),
      ['update tenant.kapi.io/workspacetemplates/groups ws-a'],
      true,
      '',
    ],
    [
      'a GroupBinding without a workspace, by an admin of one workspace’s departments',
      write('iam.kapi.io', 'groupbindings', groupBinding('', 'dev12345', ['bob'])),
      ['update tenant.kapi.io/workspacetemplates/groups ws-a'],
      false,
      'department-membership',
    ],
    [
      'a user added to a GroupBinding of another workspace',
      write(
        'iam.kapi.io',
        'groupbindings',
        groupBinding('ws-b', 'dev12345', ['bob', 'mallory']),
        groupBinding('ws-b', 'dev12345', ['bob']),
      ),
      ['update tenant.kapi.io/workspacetemplates/groups ws-a'],
      false,
      'department-membership',
    ],
    [
      'a GroupBinding moved from ws-a to ws-b by an admin of ws-b’s departments only',
      write(
        'iam.kapi.io',
        'groupbindings',
        groupBinding('ws-b', 'dev12345', ['bob']),
        groupBinding('ws-a', 'dev12345', ['bob']),
      ),
      ['update tenant.kapi.io/workspacetemplates/groups ws-b'],
      false,
      'department-membership',
    ],
    [
      'a GroupBinding relabelled elsewhere than its workspace',
      write(
        'iam.kapi.io',
        'groupbindings',
        {
          ...groupBinding('ws-a', 'dev12345', ['bob']),
          metadata: { name: 'b', labels: { 'kapi.io/workspace': 'ws-a', x: 'y' } },
        },
        groupBinding('ws-a', 'dev12345', ['bob']),
      ),
      [],
      true,
      '',
    ],
    [
      'a department made in a workspace without the right',
      write('iam.kapi.io', 'groups', department('ws-a')),
      ['create iam.kapi.io/groups'],
      false,
      'department-workspace',
    ],
    [
      'a department’s workspace stamp written by anyone but kapi',
      write(
        'iam.kapi.io',
        'groups',
        { metadata: { ...department('ws-a').metadata, annotations: { 'tenant.kapi.io/workspace-uid': 'ws-a/u2' } } },
        department('ws-a'),
      ),
      ['update tenant.kapi.io/workspacetemplates/groups ws-a'],
      false,
      'department-workspace-uid',
    ],
    ['a department made in no workspace', write('iam.kapi.io', 'groups', department('')), [], true, ''],
    [
      'a department moved into a workspace by its departments’ admin',
      write('iam.kapi.io', 'groups', department('ws-a'), department('')),
      ['update tenant.kapi.io/workspacetemplates/groups ws-a'],
      true,
      '',
    ],
    [
      'a platform role binding without bind on the role',
      write('iam.kapi.io', 'globalrolebindings', grb('platform-admin')),
      [],
      false,
      'platform-role-binding',
    ],
    [
      'a platform role binding with bind on the role',
      write('iam.kapi.io', 'globalrolebindings', grb('platform-admin')),
      ['bind iam.kapi.io/globalroles platform-admin'],
      true,
      '',
    ],
    [
      'a platform role’s rules without escalate',
      write('iam.kapi.io', 'globalroles', role([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])),
      [],
      false,
      'platform-role-rules',
    ],
    [
      'a platform role’s rules with escalate',
      write('iam.kapi.io', 'globalroles', role([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])),
      ['escalate iam.kapi.io/globalroles r'],
      true,
      '',
    ],
    [
      'a role template turned into a role with the same rules',
      write('iam.kapi.io', 'globalroles', role([]), role([], true)),
      [],
      false,
      'platform-role-rules',
    ],
    [
      'a platform role’s annotations edited',
      write('iam.kapi.io', 'globalroles', { ...role([]), metadata: { name: 'r', annotations: { a: 'b' } } }, role([])),
      [],
      true,
      '',
    ],
    ['a user given a group', write('iam.kapi.io', 'users', user(['admins']), user([])), [], false, 'user-groups'],
    [
      'a user given a group by one who may act as any group',
      write('iam.kapi.io', 'users', user(['admins']), user([])),
      ['impersonate /groups'],
      true,
      '',
    ],
    ['a user losing a group', write('iam.kapi.io', 'users', user([]), user(['admins'])), [], true, ''],
    ['a user created with an empty group list', write('iam.kapi.io', 'users', user([])), [], true, ''],
    [
      'a login session written by anyone but kapi',
      write('iam.kapi.io', 'loginsessions', { metadata: { name: 's' }, spec: { username: 'bob' } }),
      ['impersonate /groups'],
      false,
      'login-session',
    ],
  ] as const)('when %s, then the guard %s', (_what, guarded, held, allowed, rule) => {
    const asked: string[] = [];
    const decision = guardDecision(rules, guarded, (check) => {
      asked.push(key(check));
      return (held as readonly string[]).includes(key(check));
    });
    expect(decision.allowed).toBe(allowed);
    if (!decision.allowed) {
      expect(decision.rule).toBe(rule);
      expect(decision.message).toContain(`[${rule}]`);
    }
  });

  it('when a rule names no right, then no one but kapi touches its field: it asks nothing and refuses', () => {
    const asked: GuardCheck[] = [];
    const decision = guardDecision(
      rules,
      write('', 'namespaces', ns(undefined, { 'tenant.kapi.io/creator-pending': 'x' })),
      (c) => {
        asked.push(c);
        return true;
      },
    );
    expect(decision).toMatchObject({ allowed: false, rule: 'project-creator' });
    expect(asked).toEqual([]);
  });

  it('when the rules are read, then each has CEL for what it touches and at most two authorizer checks (kube-apiserver’s cost limit)', () => {
    for (const rule of rules) {
      expect(rule.touchesCel.length).toBeGreaterThan(0);
      const checks = rule.requiresCel.join(' ').match(/\.check\(/g) ?? [];
      expect(checks.length).toBeLessThanOrEqual(2);
      expect(rule.message.length).toBeGreaterThan(20);
    }
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
  });
});
