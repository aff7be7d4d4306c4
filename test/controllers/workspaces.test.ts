import { describe, expect, it } from '@jest/globals';
import { plan, type Realized } from '../../src/controllers/platform-rbac/realize.js';
import {
  NAMESPACE_ROLE_RULES,
  desiredWorkspaceRbac,
  membershipsOf,
  orphanedMemberships,
  stampChanges,
} from '../../src/controllers/platform-rbac/workspaces.js';
import { rbacRuleAllows } from '../../src/sandbox/rbac-rules.js';
import { supersedesValue, supersededBindings } from '../../src/controllers/platform-rbac/superseded.js';

const template = (name: string, manager?: string) => ({
  metadata: { name, uid: `uid-${name}` },
  spec: { template: { spec: manager ? { manager } : {} } },
});
const binding = (
  workspace: string,
  role: string,
  subject: { kind: string; name: string },
  name = `${subject.name}-${role}`,
) => ({
  metadata: { name, labels: { 'kapi.io/workspace': workspace } },
  roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: role },
  subjects: [{ ...subject, apiGroup: 'rbac.authorization.k8s.io' }],
});
/** A namespace put in `workspace` (stamped with the uid `template` gives it), or in none. */
const namespace = (name: string, workspace?: string, stamp = workspace && `${workspace}/uid-${workspace}`) => ({
  metadata: {
    name,
    ...(workspace && { labels: { 'kapi.io/workspace': workspace } }),
    ...(stamp && { annotations: { 'tenant.kapi.io/workspace-uid': stamp } }),
  },
});
const summary = (objects: Realized[]) =>
  objects
    .filter((o) => o.owner)
    .map((o) =>
      o.kind === 'ClusterRole'
        ? `${o.kind} ${o.name}`
        : `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name} -> ${o.roleRef.name} [${o.subjects.map((s) => `${s.kind}:${s.name}`).join(',')}]`,
    );

describe('workspaces realized in RBAC (pure)', () => {
  it.each([
    ['no workspace: only the shared roles', [], [], [], []],
    [
      'a manager is its workspace’s admin, in each of its namespaces',
      [template('ws', 'alice')],
      [],
      [namespace('a', 'ws'), namespace('other')],
      [
        'ClusterRole kapi:workspace:ws:admin',
        'ClusterRoleBinding kapi:workspace:ws:admin -> kapi:workspace:ws:admin [User:alice]',
        'RoleBinding a/kapi:workspace:ws:admin -> kapi:workspace-namespace:admin [User:alice]',
      ],
    ],
    [
      'viewers and a directory group share one binding per role; regular members have none in namespaces',
      [template('ws')],
      [
        binding('ws', 'ws-viewer', { kind: 'User', name: 'bob' }),
        binding('ws', 'ws-viewer', { kind: 'Group', name: 'devs' }),
        binding('ws', 'ws-regular', { kind: 'User', name: 'carol' }),
      ],
      [namespace('a', 'ws')],
      [
        'ClusterRole kapi:workspace:ws:regular',
        'ClusterRoleBinding kapi:workspace:ws:regular -> kapi:workspace:ws:regular [User:carol]',
        'ClusterRole kapi:workspace:ws:viewer',
        'ClusterRoleBinding kapi:workspace:ws:viewer -> kapi:workspace:ws:viewer [Group:devs,User:bob]',
        'RoleBinding a/kapi:workspace:ws:viewer -> kapi:workspace-namespace:viewer [Group:devs,User:bob]',
      ],
    ],
    [
      'a binding of another workspace’s role, of a missing workspace, or of no workspace role gives nothing',
      [template('ws')],
      [
        binding('ws', 'other-admin', { kind: 'User', name: 'eve' }),
        binding('gone', 'gone-admin', { kind: 'User', name: 'eve' }),
        binding('ws', 'ws-owner', { kind: 'User', name: 'eve' }),
      ],
      [namespace('a', 'ws')],
      [],
    ],
  ])('%s', (_case, templates, bindings, namespaces, expected) => {
    expect(summary(desiredWorkspaceRbac(templates, bindings, namespaces))).toEqual(expected);
  });

  it('when a workspace role’s rules are realized, then they name only that workspace', () => {
    const admin = desiredWorkspaceRbac([template('ws', 'alice')], [], []).find(
      (o) => o.kind === 'ClusterRole' && o.name === 'kapi:workspace:ws:admin',
    );
    const rules = admin?.kind === 'ClusterRole' ? admin.rules : [];
    expect(
      rules.filter((r) => r.apiGroups?.includes('tenant.kapi.io')).every((r) => r.resourceNames?.join() === 'ws'),
    ).toBe(true);
    // and nothing outside its workspace: not the User objects (their hashes, failed logins), not through /apis; its
    // charts only
    expect(rules.filter((r) => !r.apiGroups?.includes('tenant.kapi.io'))).toEqual([
      { apiGroups: ['monitoring.kapi.io'], resources: ['workspaces'], resourceNames: ['ws'], verbs: ['get'] },
    ]);
  });

  it('when a member is removed, then the plan updates the binding and the namespace’s; when the workspace goes, everything of it is deleted', () => {
    const before = desiredWorkspaceRbac(
      [template('ws', 'alice')],
      [binding('ws', 'ws-viewer', { kind: 'User', name: 'bob' })],
      [namespace('a', 'ws')],
    );
    const removed = plan(desiredWorkspaceRbac([template('ws', 'alice')], [], [namespace('a', 'ws')]), before);
    expect(removed.create).toEqual([]);
    expect(removed.delete.map((o) => `${o.kind} ${o.namespace ?? ''} ${o.name}`)).toEqual([
      'ClusterRole  kapi:workspace:ws:viewer',
      'ClusterRoleBinding  kapi:workspace:ws:viewer',
      'RoleBinding a kapi:workspace:ws:viewer',
    ]);
    const gone = plan(desiredWorkspaceRbac([], [], [namespace('a', 'ws')]), before);
    expect(gone.delete.filter((o) => o.owner).length).toBe(before.filter((o) => o.owner).length);
    expect(gone.update).toEqual([]);
  });

  it('when a namespace moves, then the old workspace’s RoleBinding goes and the new one’s comes', () => {
    const templates = [template('ws', 'alice'), template('ws2', 'bob')];
    const before = desiredWorkspaceRbac(templates, [], [namespace('a', 'ws')]);
    const after = plan(desiredWorkspaceRbac(templates, [], [namespace('a', 'ws2')]), before);
    expect(after.delete.map((o) => `${o.namespace}/${o.name}`)).toEqual(['a/kapi:workspace:ws:admin']);
    expect(after.create.map((o) => `${o.namespace}/${o.name}`)).toEqual(['a/kapi:workspace:ws2:admin']);
  });

  it('when memberships name a workspace that is gone, then they are the orphans to delete; the manager counts as admin', () => {
    const bindings = [
      binding('gone', 'gone-viewer', { kind: 'User', name: 'x' }),
      binding('ws', 'ws-viewer', { kind: 'User', name: 'y' }),
    ];
    expect(orphanedMemberships([template('ws', 'm')], bindings).map((b) => b.metadata.name)).toEqual(['x-gone-viewer']);
    expect(membershipsOf([template('ws', 'm')], bindings)).toEqual([
      { workspace: 'ws', base: 'admin', subject: { kind: 'User', name: 'm' } },
      { workspace: 'ws', base: 'viewer', subject: { kind: 'User', name: 'y' } },
    ]);
  });

  describe('the project roles, as RBAC matches their rules', () => {
    const allows = (
      role: keyof typeof NAMESPACE_ROLE_RULES,
      verb: string,
      apiGroup: string,
      resource: string,
      subresource = '',
    ) =>
      NAMESPACE_ROLE_RULES[role].some((rule) =>
        rbacRuleAllows(rule, {
          verb,
          apiGroup,
          resource,
          subresource,
          namespace: 'a-dev',
          name: 'x',
          user: { username: 'bob', groups: [] },
        } as never),
      );

    it.each([
      ['update', 'namespaces', ''],
      ['patch', 'namespaces', ''],
      ['delete', 'namespaces', ''],
      ['create', 'rolebindings', ''],
      ['update', 'resourcequotas', ''],
      ['create', 'limitranges', ''],
    ])(
      'when an operator would %s %s, then the role does not allow it (the project and its settings are the admin’s)',
      (verb, resource) => {
        const group = resource === 'rolebindings' ? 'rbac.authorization.k8s.io' : '';
        expect(allows('operator', verb, group, resource)).toBe(false);
        expect(allows('admin', verb, group, resource)).toBe(true);
      },
    );

    it.each([
      ['create', '', 'pods', ''],
      ['create', '', 'pods', 'exec'],
      ['update', '', 'secrets', ''],
      ['patch', 'apps', 'deployments', 'scale'],
      ['create', 'batch', 'jobs', ''],
      ['get', '', 'namespaces', ''],
    ])('when an operator would %s %s/%s %s, then the role allows it', (verb, group, resource, subresource) => {
      expect(allows('operator', verb, group, resource, subresource)).toBe(true);
    });
  });
});

describe('supersededBindings', () => {
  const member = (
    name: string,
    uid: string,
    supersedes?: { name: string; uid: string }[],
    extra: { user?: string; namespace?: string; workspace?: string } = {},
  ) => ({
    metadata: {
      name,
      uid,
      ...(extra.namespace && { namespace: extra.namespace }),
      labels: {
        'iam.kapi.io/user-ref': extra.user ?? 'bob',
        ...(extra.workspace !== undefined ? { 'kapi.io/workspace': extra.workspace } : {}),
      },
      ...(supersedes && { annotations: { 'iam.kapi.io/supersedes': supersedesValue(supersedes) } }),
    },
  });
  const names = (list: { metadata: { name: string } }[]) => list.map((b) => b.metadata.name).sort();

  it('when a demotion was cut between its two writes, then the old binding is what to delete', () => {
    const admin = member('bob-ws-admin', 'u1', undefined, { workspace: 'ws' });
    const viewer = member('bob-ws-viewer', 'u2', [{ name: 'bob-ws-admin', uid: 'u1' }], { workspace: 'ws' });
    expect(names(supersededBindings([admin, viewer]))).toEqual(['bob-ws-admin']);
  });

  it('when the user was promoted back (a new binding of the old name), then the older claim names nothing that exists', () => {
    const viewer = member('bob-ws-viewer', 'u2', [{ name: 'bob-ws-admin', uid: 'u1' }], { workspace: 'ws' });
    const adminAgain = member('bob-ws-admin', 'u3', [{ name: 'bob-ws-viewer', uid: 'u2' }], { workspace: 'ws' });
    expect(names(supersededBindings([viewer, adminAgain]))).toEqual(['bob-ws-viewer']);
  });

  it('when a binding names one of another user, namespace or workspace, then nothing is deleted', () => {
    const carols = member('carol-admin', 'c1', undefined, { user: 'carol', namespace: 'a' });
    const otherNamespace = member('bob-admin', 'b1', undefined, { namespace: 'b' });
    const claim = member(
      'bob-viewer',
      'b2',
      [
        { name: 'carol-admin', uid: 'c1' },
        { name: 'bob-admin', uid: 'b1' },
      ],
      { namespace: 'a' },
    );
    expect(supersededBindings([carols, otherNamespace, claim])).toEqual([]);
    const wsA = member('bob-a-admin', 'w1', undefined, { workspace: 'a' });
    const wsB = member('bob-b-viewer', 'w2', [{ name: 'bob-a-admin', uid: 'w1' }], { workspace: 'b' });
    expect(supersededBindings([wsA, wsB])).toEqual([]);
  });

  it('when an annotation is not JSON, then it names nothing', () => {
    const odd = member('bob-viewer', 'u2');
    (odd.metadata as { annotations?: Record<string, string> }).annotations = { 'iam.kapi.io/supersedes': '{' };
    expect(supersededBindings([member('bob-admin', 'u1'), odd])).toEqual([]);
  });
});

describe('which workspace a namespace is in, by uid', () => {
  const roleBindingsIn = (templates: unknown[], namespaces: unknown[]) =>
    desiredWorkspaceRbac(templates, [], namespaces)
      .filter((o) => o.kind === 'RoleBinding')
      .map((o) => `${o.namespace}/${o.name}`);

  it('when a namespace is labelled into a workspace but not stamped by it, then the workspace’s roles do not reach it', () => {
    const ws = [template('finance', 'mallory')];
    expect(roleBindingsIn(ws, [namespace('prod', 'finance')])).toEqual(['prod/kapi:workspace:finance:admin']);
    expect(roleBindingsIn(ws, [namespace('prod', 'finance', '')])).toEqual([]);
    // stamped by an earlier workspace of the name (another uid): not this one's
    expect(roleBindingsIn(ws, [namespace('prod', 'finance', 'finance/uid-of-the-deleted-one')])).toEqual([]);
  });

  it('when stamps are looked at, then an unstamped or moved namespace gets its workspace’s, and one of a deleted namesake leaves', () => {
    const templates = [template('finance'), template('ops')];
    expect(
      stampChanges(
        templates,
        [
          namespace('fresh', 'finance', ''),
          namespace('moved', 'finance', 'ops/uid-ops'),
          namespace('inherited', 'finance', 'finance/uid-old'),
          namespace('settled', 'ops'),
          namespace('no-workspace-yet', 'hr', ''),
          namespace('kapi-system', 'ops', ''),
        ],
        'kapi-system',
      ),
    ).toEqual([
      { namespace: 'fresh', stamp: 'finance/uid-finance' },
      { namespace: 'moved', stamp: 'finance/uid-finance' },
      { namespace: 'inherited', release: true },
    ]);
  });
});
