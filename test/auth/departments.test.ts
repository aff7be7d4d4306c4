/**
 * Who is in which department (pure): a GroupBinding counts while its workspace is its Group's and neither is being
 * deleted; the groups kapi asserts are `kapi:department:<name>`, a prefix no User, directory or OpenID provider brings.
 */
import { describe, expect, it } from '@jest/globals';
import { departmentGroup, departmentOf, departmentsByUser } from '../../src/auth/departments/departments.js';
import { isReservedGroup, userRecordFrom } from '../../src/auth/users/user-record.js';
import { sessionGroups } from '../../src/auth/providers/user-link.js';

const group = (name: string, workspace?: string, deleting = false) => ({
  metadata: {
    name,
    labels: workspace ? { 'kapi.io/workspace': workspace } : {},
    ...(deleting && { deletionTimestamp: '2026-11-29T00:00:00Z' }),
  },
});
const binding = (name: string, groupName: string, users: unknown[], workspace?: string, deleting = false) => ({
  metadata: {
    name,
    labels: workspace ? { 'kapi.io/workspace': workspace } : {},
    ...(deleting && { deletionTimestamp: '2026-11-29T00:00:00Z' }),
  },
  groupRef: { name: groupName },
  users,
});

describe('departmentsByUser', () => {
  it.each([
    [
      'a binding of the group’s workspace',
      [group('dev', 'ws')],
      [binding('b', 'dev', ['bob'], 'ws')],
      { bob: ['dev'] },
    ],
    ['a binding labelled with another workspace', [group('dev', 'ws')], [binding('b', 'dev', ['bob'], 'other')], {}],
    ['a binding without a workspace', [group('dev', 'ws')], [binding('b', 'dev', ['bob'])], {}],
    ['a group without a workspace', [group('dev')], [binding('b', 'dev', ['bob'], 'ws')], {}],
    ['a group being deleted', [group('dev', 'ws', true)], [binding('b', 'dev', ['bob'], 'ws')], {}],
    ['a binding being deleted', [group('dev', 'ws')], [binding('b', 'dev', ['bob'], 'ws', true)], {}],
    ['a binding of a group that is not there', [], [binding('b', 'dev', ['bob'], 'ws')], {}],
    [
      'two departments and odd entries',
      [group('dev', 'ws'), group('ops', 'ws')],
      [
        binding('b1', 'ops', ['bob', '', 7], 'ws'),
        binding('b2', 'dev', ['bob', 'carol'], 'ws'),
        binding('b3', 'dev', ['bob'], 'ws'),
      ],
      { bob: ['dev', 'ops'], carol: ['dev'] },
    ],
  ])('%s', (_, groups, bindings, expected) => {
    expect(Object.fromEntries(departmentsByUser(groups, bindings, new Map([['ws', 'uid-1']])))).toEqual(expected);
  });

  it('when the workspace is gone, or is a later one of the name, then its departments count for no one', () => {
    const stamped = (uid: string) => ({
      ...group('dev', 'ws'),
      metadata: { ...group('dev', 'ws').metadata, annotations: { 'tenant.kapi.io/workspace-uid': `ws/${uid}` } },
    });
    const bindings = [binding('b', 'dev', ['bob'], 'ws')];
    expect(departmentsByUser([stamped('uid-1')], bindings, new Map([['ws', 'uid-1']])).get('bob')).toEqual(['dev']);
    expect(departmentsByUser([stamped('uid-1')], bindings, new Map([['ws', 'uid-2']])).size).toBe(0);
    expect(departmentsByUser([stamped('uid-1')], bindings, new Map()).size).toBe(0);
  });
});

describe('the department’s group', () => {
  it('is kapi’s, and reserved: a User’s spec.groups and a provider’s groups never bring it', () => {
    expect(departmentGroup('dev12345')).toBe('kapi:department:dev12345');
    expect(departmentOf('kapi:department:dev12345')).toBe('dev12345');
    expect(departmentOf('dev12345')).toBeUndefined();
    expect(isReservedGroup('kapi:department:dev12345')).toBe(true);
    expect(isReservedGroup('system:masters')).toBe(true);
    expect(isReservedGroup('developers')).toBe(false);
    const user = userRecordFrom({
      metadata: { name: 'carol', uid: 'u' },
      spec: { groups: ['kapi:department:dev12345', 'system:masters', 'developers'] },
    });
    expect(user.groups).toEqual(['developers']);
    expect(sessionGroups(['kapi:department:dev12345', 'developers'], '')).toEqual(['developers']);
  });
});
