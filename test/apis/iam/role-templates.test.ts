import { describe, expect, test } from '@jest/globals';
import {
  aggregatedRoleNames,
  roleBindingRecordFrom,
  roleOfUser,
  templatesOf,
  type RoleBindingRecord,
} from '../../../src/apis/iam/v1alpha2/role-templates.js';
import { platformUser } from '../../../src/apis/iam/v1alpha2/platform-user.js';

const binding = (name: string, role: string, users: string[], created: string): RoleBindingRecord =>
  roleBindingRecordFrom({
    metadata: { name, creationTimestamp: created },
    roleRef: { apiGroup: 'iam.kapi.io', kind: 'GlobalRole', name: role },
    subjects: users.map((user) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user })),
  });

describe('aggregatedRoleNames', () => {
  test.each([
    ['a JSON array of names', '["a","b"]', ['a', 'b']],
    ['a name twice', '["a","b","a"]', ['a', 'b']],
    ['entries that are not names', '["a",1,null,"",{"x":1}]', ['a']],
    ['malformed JSON', '["a"', []],
    ['an object', '{"a":1}', []],
    ['an empty annotation', '', []],
  ])('when the annotation is %s, then the names are as read', (_case, text, names) => {
    expect(aggregatedRoleNames({ 'iam.kapi.io/aggregation-roles': text })).toEqual(names);
  });

  test('when a role has no annotations, then it has no templates', () => {
    expect(aggregatedRoleNames(undefined)).toEqual([]);
  });
});

describe('templatesOf', () => {
  test('when some named templates exist, then those, in the annotation’s order', () => {
    const known = new Map([
      ['t2', { name: 't2' }],
      ['t1', { name: 't1' }],
    ]);
    const role = { annotations: { 'iam.kapi.io/aggregation-roles': '["t1","gone","t2"]' } };
    expect(templatesOf(role, (name) => known.get(name))).toEqual([{ name: 't1' }, { name: 't2' }]);
    expect(templatesOf(undefined, (name) => known.get(name))).toEqual([]);
  });
});

describe('roleOfUser', () => {
  const exists = (role: string) => role !== 'deleted-role';

  test.each<[string, RoleBindingRecord[], string | undefined]>([
    ['no binding names the user', [binding('b', 'platform-admin', ['other'], '2026-01-01T00:00:00Z')], undefined],
    [
      'one binding names the user',
      [binding('b', 'platform-regular', ['u'], '2026-01-01T00:00:00Z')],
      'platform-regular',
    ],
    [
      'two do: the oldest wins',
      [
        binding('b2', 'platform-admin', ['u'], '2026-02-01T00:00:00Z'),
        binding('b1', 'platform-regular', ['u'], '2026-01-01T00:00:00Z'),
      ],
      'platform-regular',
    ],
    [
      'two of one age: the first by name wins',
      [
        binding('z', 'platform-admin', ['u'], '2026-01-01T00:00:00Z'),
        binding('a', 'platform-regular', ['u'], '2026-01-01T00:00:00Z'),
      ],
      'platform-regular',
    ],
    [
      'the older one’s role is gone: the other',
      [
        binding('old', 'deleted-role', ['u'], '2026-01-01T00:00:00Z'),
        binding('new', 'platform-admin', ['u'], '2026-02-01T00:00:00Z'),
      ],
      'platform-admin',
    ],
  ])('when %s, then the role is as chosen', (_case, bindings, role) => {
    expect(roleOfUser(bindings, 'u', exists)).toBe(role);
  });

  test('when a subject is a group or of another API group, then it names no user', () => {
    const record = roleBindingRecordFrom({
      metadata: { name: 'b' },
      roleRef: { kind: 'GlobalRole', name: 'r' },
      subjects: [
        { kind: 'Group', name: 'u' },
        { kind: 'User', apiGroup: 'example.com', name: 'u' },
        { kind: 'User', name: 'v' },
      ],
    });
    expect(record.users).toEqual(['v']);
  });
});

describe('platformUser', () => {
  const stored = {
    kind: 'User',
    apiVersion: 'iam.kapi.io/v1beta1',
    metadata: { name: 'bob', annotations: { 'iam.kapi.io/globalrole': 'forged', 'kapi.io/description': 'd' } },
    spec: { email: 'bob@example.com' },
  };

  test('when the user has a role, then KubeSphere’s shape carries it, not what the object says, and no state is Active', () => {
    expect(platformUser(stored, 'platform-regular')).toEqual({
      kind: 'User',
      apiVersion: 'iam.kapi.io/v1alpha2',
      metadata: {
        name: 'bob',
        annotations: { 'kapi.io/description': 'd', 'iam.kapi.io/globalrole': 'platform-regular' },
      },
      spec: { email: 'bob@example.com' },
      status: { state: 'Active' },
    });
  });

  test('when the user has a state, then it is answered as stored', () => {
    const disabled = { ...stored, status: { state: 'Disabled', lastLoginTime: '2026-11-28T00:00:00Z' } };
    expect(platformUser(disabled, undefined).status).toEqual(disabled.status);
  });

  test('when the user has none, then no role annotation, and no empty annotations object', () => {
    expect(platformUser(stored, undefined).metadata.annotations).toEqual({ 'kapi.io/description': 'd' });
    expect(platformUser({ metadata: { name: 'x' } }, undefined).metadata).toEqual({ name: 'x' });
  });
});
