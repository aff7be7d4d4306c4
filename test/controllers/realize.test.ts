import { describe, expect, test } from '@jest/globals';
import {
  desiredRbac,
  manifestOf,
  plan,
  realizedFrom,
  withoutNewGrants,
  type Realized,
} from '../../src/controllers/platform-rbac/realize.js';

const role = (name: string, rules: unknown[], labels: Record<string, string> = {}) => ({
  apiVersion: 'iam.kapi.io/v1alpha2',
  kind: 'GlobalRole',
  metadata: { name, uid: `uid-${name}`, labels },
  rules,
});
const binding = (name: string, roleName: string, users: string[], groups: string[] = []) => ({
  apiVersion: 'iam.kapi.io/v1alpha2',
  kind: 'GlobalRoleBinding',
  metadata: { name, uid: `uid-${name}`, labels: { 'iam.kapi.io/user-ref': users[0] ?? '' } },
  roleRef: { apiGroup: 'iam.kapi.io', kind: 'GlobalRole', name: roleName },
  subjects: [
    ...users.map((user) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user })),
    ...groups.map((group) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group })),
  ],
});
const everything = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
const readUsers = [{ apiGroups: ['iam.kapi.io'], resources: ['users'], verbs: ['get', 'list'] }];
/** What the cluster would hold after writing `objects` (their manifests read back). */
const written = (objects: Realized[]) => objects.map((o) => realizedFrom(manifestOf(o), o.kind));
const names = (objects: Realized[]) => objects.map((o) => `${o.kind}/${o.name}`).sort();

describe('desiredRbac', () => {
  test('when roles and bindings exist, then each role is a ClusterRole and each binding a ClusterRoleBinding, owned', () => {
    const desired = desiredRbac(
      [role('platform-admin', everything), role('viewer', readUsers)],
      [binding('alice-platform-admin', 'platform-admin', ['alice']), binding('team-viewer', 'viewer', [], ['team'])],
    );
    expect(names(desired)).toEqual([
      'ClusterRole/kapi:globalrole:platform-admin',
      'ClusterRole/kapi:globalrole:viewer',
      'ClusterRoleBinding/kapi:globalrolebinding:alice-platform-admin',
      'ClusterRoleBinding/kapi:globalrolebinding:team-viewer',
    ]);
    const alice = desired.find((o) => o.name === 'kapi:globalrolebinding:alice-platform-admin');
    expect(alice).toMatchObject({
      owner: {
        kind: 'GlobalRoleBinding',
        name: 'alice-platform-admin',
        uid: 'uid-alice-platform-admin',
        controller: true,
      },
      roleRef: { kind: 'ClusterRole', name: 'kapi:globalrole:platform-admin' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
      // not a cluster membership: the binding's user-ref label is not copied
      labels: { 'app.kubernetes.io/managed-by': 'kapi-apiserver', 'iam.kapi.io/realizes': 'globalrolebinding' },
    });
    expect(desired.find((o) => o.name === 'kapi:globalrole:viewer')).toMatchObject({ rules: readUsers });
  });

  test.each([
    ['a role template', [role('role-template-view-users', readUsers, { 'iam.kapi.io/role-template': 'true' })], []],
    ['a binding of a missing role', [], [binding('b', 'gone', ['alice'])]],
    [
      'a binding of a template',
      [role('t', readUsers, { 'iam.kapi.io/role-template': 'true' })],
      [binding('b', 't', ['u'])],
    ],
    ['a binding without subjects', [role('r', readUsers)], [binding('b', 'r', [])]],
  ])('when there is %s, then it is not realized', (_case, roles, bindings) => {
    const desired = desiredRbac(roles, bindings);
    expect(desired.filter((o) => o.kind === 'ClusterRoleBinding')).toEqual([]);
    expect(
      desired.filter((o) => o.name.startsWith('kapi:globalrole:role-template') || o.name === 'kapi:globalrole:t'),
    ).toEqual([]);
  });

  test('when a subject is a ServiceAccount or has no name, then it is left out', () => {
    const odd = {
      ...binding('b', 'r', ['u']),
      subjects: [
        { kind: 'ServiceAccount', name: 'sa', namespace: 'x' },
        { kind: 'User', name: '' },
        { kind: 'User', name: 'u' },
      ],
    };
    const desired = desiredRbac([role('r', readUsers)], [odd]);
    expect(desired.find((o) => o.kind === 'ClusterRoleBinding')).toMatchObject({
      subjects: [{ kind: 'User', name: 'u' }],
    });
  });
});

describe('plan', () => {
  const roles = [role('platform-admin', everything), role('viewer', readUsers)];
  const bindings = [binding('alice-viewer', 'viewer', ['alice'])];
  const desired = desiredRbac(roles, bindings);

  test.each<[string, () => Realized[], (result: ReturnType<typeof plan>) => void]>([
    ['nothing exists: everything is created', () => [], (r) => expect(r.create).toHaveLength(3)],
    [
      'all is as it should be: nothing to do',
      () => written(desired),
      (r) => expect([r.create, r.update, r.delete]).toEqual([[], [], []]),
    ],
    [
      'a realized role was edited by hand: it is put back',
      () =>
        written(desired).map((o) =>
          o.name === 'kapi:globalrole:viewer' && o.kind === 'ClusterRole' ? { ...o, rules: everything } : o,
        ),
      (r) => expect(names(r.update)).toEqual(['ClusterRole/kapi:globalrole:viewer']),
    ],
    [
      'a realized binding was deleted by hand: it comes back',
      () => written(desired).filter((o) => o.kind !== 'ClusterRoleBinding'),
      (r) => expect(names(r.create)).toEqual(['ClusterRoleBinding/kapi:globalrolebinding:alice-viewer']),
    ],
    [
      'a binding’s source is gone: its realization goes',
      () => [...written(desired), ...written(desiredRbac(roles, [binding('bob-viewer', 'viewer', ['bob'])]))],
      (r) => expect(names(r.delete)).toEqual(['ClusterRoleBinding/kapi:globalrolebinding:bob-viewer']),
    ],
    [
      'a binding now names another role: deleted and made again (a roleRef cannot change)',
      () => written(desiredRbac(roles, [binding('alice-viewer', 'platform-admin', ['alice'])])),
      (r) => {
        expect(names(r.delete)).toEqual(['ClusterRoleBinding/kapi:globalrolebinding:alice-viewer']);
        expect(names(r.create)).toEqual(['ClusterRoleBinding/kapi:globalrolebinding:alice-viewer']);
      },
    ],
    [
      'a subject was added by hand: it is taken off again',
      () =>
        written(desired).map((o) =>
          o.kind === 'ClusterRoleBinding'
            ? {
                ...o,
                subjects: [...o.subjects, { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'mallory' }],
              }
            : o,
        ),
      (r) => expect(names(r.update)).toEqual(['ClusterRoleBinding/kapi:globalrolebinding:alice-viewer']),
    ],
    [
      'a role was recreated (another uid): its realization is owned by the new one',
      () =>
        written(
          desiredRbac(
            [
              role('platform-admin', everything),
              { ...role('viewer', readUsers), metadata: { name: 'viewer', uid: 'old', labels: {} } },
            ],
            bindings,
          ),
        ),
      (r) => expect(names(r.update)).toEqual(['ClusterRole/kapi:globalrole:viewer']),
    ],
  ])('when %s', (_case, existing, check) => {
    check(plan(desired, existing()));
  });

  test('when an object of the realized kinds is not kapi’s, then it is never deleted', () => {
    const foreign = { ...written(desired)[0]!, name: 'someone-elses', labels: {} };
    // a copy of a realized role saved under another name keeps kapi's labels, and is still not kapi's
    const copy = { ...written(desired)[0]!, name: 'my-copy-of-admin' };
    expect(plan(desired, [...written(desired), foreign, copy]).delete).toEqual([]);
  });
});

describe('withoutNewGrants (the tenant guard not in place)', () => {
  const it = test;
  const binding = (
    name: string,
    subjects: string[],
    labels: Record<string, string> = { 'iam.kapi.io/realizes': 'workspace' },
  ) => ({
    kind: 'ClusterRoleBinding' as const,
    name,
    labels: { 'app.kubernetes.io/managed-by': 'kapi-apiserver', ...labels },
    owner: {
      apiVersion: 'tenant.kapi.io/v1alpha2',
      kind: 'WorkspaceTemplate',
      name: 'ws',
      uid: 'u',
      controller: true,
      blockOwnerDeletion: false,
    },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole' as const, name },
    subjects: subjects.map((s) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: s })),
  });
  const role = (
    name: string,
    verbs: string[][],
    labels: Record<string, string> = { 'iam.kapi.io/realizes': 'globalrole' },
    owned = true,
  ) => ({
    kind: 'ClusterRole' as const,
    name,
    labels: { 'app.kubernetes.io/managed-by': 'kapi-apiserver', ...labels },
    ...(owned && {
      owner: {
        apiVersion: 'iam.kapi.io/v1alpha2',
        kind: 'GlobalRole',
        name,
        uid: 'u',
        controller: true,
        blockOwnerDeletion: false,
      },
    }),
    rules: verbs.map((v) => ({ apiGroups: [''], resources: ['pods'], verbs: v })),
  });

  it('when a binding would gain a subject and lose another, then it only loses', () => {
    const existing = [binding('kapi:workspace:ws:admin', ['alice', 'bob'])];
    const todo = plan([binding('kapi:workspace:ws:admin', ['alice', 'eve'])], existing);
    expect(
      withoutNewGrants(todo, existing).update.map((o) =>
        o.kind === 'ClusterRole' ? [] : o.subjects.map((s) => s.name),
      ),
    ).toEqual([['alice']]);
  });

  it('when every subject of a binding would be new, then the binding goes; new objects are not made', () => {
    const existing = [binding('kapi:workspace:ws:admin', ['alice'])];
    const todo = plan(
      [binding('kapi:workspace:ws:admin', ['eve']), binding('kapi:workspace:ws:viewer', ['eve'])],
      existing,
    );
    const safe = withoutNewGrants(todo, existing);
    expect(safe.create).toEqual([]);
    expect(safe.update).toEqual([]);
    expect(safe.delete.map((o) => o.name)).toEqual(['kapi:workspace:ws:admin']);
  });

  it('when a role would get a rule it has not, then it is left as it is; one losing rules is updated', () => {
    const existing = [role('more', [['get']]), role('less', [['get'], ['list']])];
    const todo = plan([role('more', [['get'], ['delete']]), role('less', [['get']])], existing);
    expect(withoutNewGrants(todo, existing).update.map((o) => o.name)).toEqual(['less']);
  });

  it('when kapi’s own shared roles are missing, then they are still made (no one’s field, kapi’s table)', () => {
    const shared = role('kapi:namespace-role:viewer', [['get']], { 'iam.kapi.io/realizes': 'scoped-role' }, false);
    expect(withoutNewGrants(plan([shared], []), []).create.map((o) => o.name)).toEqual(['kapi:namespace-role:viewer']);
  });

  it('when things are only deleted, then the deletions stay', () => {
    const existing = [binding('kapi:workspace:ws:admin', ['alice'])];
    expect(withoutNewGrants(plan([], existing), existing).delete.map((o) => o.name)).toEqual([
      'kapi:workspace:ws:admin',
    ]);
  });
});
