/**
 * The departments API's pure part: a Group written from the console's body keeps only a department's fields, a change
 * touches only its annotations and parent (never making the tree a loop), the tree below a department, and the
 * console's bodies of memberships and role bindings read or refused.
 */
import { describe, expect, it } from '@jest/globals';
import {
  departmentChanged,
  departmentProjectBinding,
  departmentRoleEntries,
  departmentToCreate,
  departmentWorkspaceBinding,
  departmentsBelow,
  membershipEntries,
} from '../../../src/apis/iam/v1alpha2/departments.js';
import { departmentWatchOf } from '../../../src/apis/iam/v1alpha2/department-watch.js';

const tree = [
  { metadata: { name: 'dev', labels: {} } },
  { metadata: { name: 'ops', labels: { 'iam.kapi.io/group-parent': 'dev' } } },
  { metadata: { name: 'sre', labels: { 'iam.kapi.io/group-parent': 'ops' } } },
  { metadata: { name: 'qa', labels: { 'iam.kapi.io/group-parent': 'dev' } } },
  { metadata: { name: 'x', labels: { 'iam.kapi.io/group-parent': 'y' } } },
  { metadata: { name: 'y', labels: { 'iam.kapi.io/group-parent': 'x' } } },
];

describe('departmentToCreate', () => {
  it('keeps the display name, a parent of the workspace and the console’s annotations; sets the workspace and creator', () => {
    const body = {
      metadata: {
        name: 'ignored',
        generateName: 'dev',
        labels: { 'kapi.io/workspace': 'elsewhere', 'iam.kapi.io/group-parent': 'ops', other: 'dropped' },
        annotations: {
          'kapi.io/alias-name': 'Dev',
          'kapi.io/creator': 'forged',
          'kapi.io/project-roles': '[]',
          x: 'y',
        },
        finalizers: ['dropped'],
      },
      spec: { anything: true },
    };
    expect(departmentToCreate(body, 'ws', new Set(['ops']), 'alice')).toEqual({
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'Group',
      metadata: {
        generateName: 'dev',
        labels: { 'kapi.io/workspace': 'ws', 'iam.kapi.io/group-parent': 'ops' },
        annotations: { 'kapi.io/alias-name': 'Dev', 'kapi.io/project-roles': '[]', 'kapi.io/creator': 'alice' },
      },
    });
  });

  it.each([
    [{}, 'metadata.generateName'],
    [{ metadata: { generateName: 'Dev' } }, 'metadata.generateName'],
    [{ metadata: { generateName: 'a'.repeat(59) } }, 'metadata.generateName'],
    [{ metadata: { generateName: 'dev-' } }, 'metadata.generateName'],
    [{ metadata: { generateName: 'dev', annotations: [] } }, 'metadata.annotations must be an object'],
    [{ metadata: { generateName: 'dev', annotations: { 'kapi.io/alias-name': 7 } } }, 'must be a string'],
    [[], 'the body must be a Group'],
  ])('refuses %j', (body, error) => {
    expect((departmentToCreate(body, 'ws', new Set(), 'alice') as { error: string }).error).toContain(error);
  });
});

describe('departmentChanged', () => {
  const stored = {
    metadata: {
      name: 'qa',
      uid: 'u',
      resourceVersion: '7',
      labels: { 'kapi.io/workspace': 'ws', 'iam.kapi.io/group-parent': 'dev' },
      annotations: { 'kapi.io/alias-name': 'QA', 'kapi.io/creator': 'alice' },
    },
    spec: {},
  };
  const all = new Set(tree.map((g) => g.metadata.name));

  it('merges annotations and moves the parent; the workspace, creator and version stay', () => {
    const changed = departmentChanged(
      stored,
      {
        metadata: {
          annotations: { 'kapi.io/alias-name': 'Quality', 'kapi.io/creator': 'mallory' },
          labels: { 'iam.kapi.io/group-parent': 'ops', 'kapi.io/workspace': 'other' },
        },
      },
      'merge',
      all,
      new Set(departmentsBelow(tree, 'qa')),
    );
    expect(changed).toEqual({
      ...stored,
      metadata: {
        ...stored.metadata,
        labels: { 'kapi.io/workspace': 'ws', 'iam.kapi.io/group-parent': 'ops' },
        annotations: { 'kapi.io/alias-name': 'Quality', 'kapi.io/creator': 'alice' },
      },
    });
  });

  it('a merge patch of the annotations only (the console’s edit) keeps the parent; one of the labels keeps the alias', () => {
    const alias = departmentChanged(
      stored,
      { metadata: { annotations: { 'kapi.io/alias-name': 'Q' } } },
      'merge',
      all,
      new Set(),
    );
    expect((alias as typeof stored).metadata.labels).toEqual(stored.metadata.labels);
    const moved = departmentChanged(
      stored,
      { metadata: { labels: { 'iam.kapi.io/group-parent': 'ops' } } },
      'merge',
      all,
      new Set(),
    );
    expect((moved as typeof stored).metadata.annotations).toEqual(stored.metadata.annotations);
    expect(departmentChanged(stored, {}, 'merge', all, new Set())).toEqual(stored);
  });

  it('a merge patch of null removes an annotation; a PUT without the parent moves it to the top', () => {
    const removed = departmentChanged(
      stored,
      { metadata: { annotations: { 'kapi.io/alias-name': null } } },
      'merge',
      all,
      new Set(),
    );
    expect((removed as typeof stored).metadata.annotations).toEqual({ 'kapi.io/creator': 'alice' });
    const top = departmentChanged(stored, { metadata: { name: 'qa' } }, 'replace', all, new Set());
    expect((top as typeof stored).metadata.labels).toEqual({ 'kapi.io/workspace': 'ws' });
  });

  it('never makes a loop: a parent that is itself or below it is dropped', () => {
    const below = new Set(departmentsBelow(tree, 'dev'));
    const self = departmentChanged(
      { ...stored, metadata: { ...stored.metadata, name: 'dev' } },
      { metadata: { labels: { 'iam.kapi.io/group-parent': 'dev' } } },
      'merge',
      all,
      below,
    );
    expect((self as typeof stored).metadata.labels).toEqual({ 'kapi.io/workspace': 'ws' });
    const child = departmentChanged(
      { ...stored, metadata: { ...stored.metadata, name: 'dev' } },
      { metadata: { labels: { 'iam.kapi.io/group-parent': 'sre' } } },
      'merge',
      all,
      below,
    );
    expect((child as typeof stored).metadata.labels).toEqual({ 'kapi.io/workspace': 'ws' });
  });

  it('refuses a body naming another department', () => {
    expect(departmentChanged(stored, { metadata: { name: 'dev' } }, 'replace', all, new Set())).toEqual({
      error: "the name of the body (dev) is not the URL's (qa)",
    });
  });
});

describe('departmentsBelow', () => {
  it('walks the tree nearest first, and stops at a loop written by hand', () => {
    expect(departmentsBelow(tree, 'dev')).toEqual(['ops', 'qa', 'sre']);
    expect(departmentsBelow(tree, 'sre')).toEqual([]);
    expect(departmentsBelow(tree, 'x')).toEqual(['y']);
  });
});

describe('the console’s bodies', () => {
  it('reads memberships, refusing an empty list, too many or a missing name', () => {
    expect(membershipEntries([{ userName: 'bob', groupName: 'dev' }])).toEqual([{ user: 'bob', group: 'dev' }]);
    expect(membershipEntries([])).toHaveProperty('error');
    expect(membershipEntries(Array.from({ length: 101 }, () => ({ userName: 'b', groupName: 'g' })))).toHaveProperty(
      'error',
    );
    expect(membershipEntries([{ userName: 'bob' }])).toEqual({ error: '[0]: userName and groupName are required' });
  });

  it('reads a department’s role bindings by their Group subject, named by the console or by kapi', () => {
    const binding = (kind: string, name: string) => ({ subjects: [{ kind, name }], roleRef: { name: 'ws-viewer' } });
    expect(departmentRoleEntries([binding('Group', 'dev'), binding('Group', 'kapi:department:ops')])).toEqual([
      { group: 'dev', role: 'ws-viewer' },
      { group: 'ops', role: 'ws-viewer' },
    ]);
    expect(departmentRoleEntries([binding('User', 'bob')])).toEqual({
      error: '[0].subjects[0]: a department (kind Group) is required',
    });
  });

  it('writes bindings whose subject is the department’s reserved group', () => {
    expect(departmentWorkspaceBinding('ws', 'dev', 'ws-viewer').subjects).toEqual([
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'kapi:department:dev' },
    ]);
    expect(departmentProjectBinding('p', 'dev', 'viewer', 'kapi:namespace-role:viewer')).toMatchObject({
      metadata: { name: 'dev-viewer', namespace: 'p', labels: { 'iam.kapi.io/group-ref': 'dev' } },
      roleRef: { kind: 'ClusterRole', name: 'kapi:namespace-role:viewer' },
    });
  });
});

describe('departmentWatchOf', () => {
  it.each([
    ['/apis/iam.kapi.io/v1alpha2/watch/groups?labelSelector=kapi.io/workspace=ws-a', 'ws-a'],
    ['/apis/iam.kapi.io/v1alpha2/groups?watch=true&labelSelector=kapi.io%2Fworkspace%3D%3Dws-a', 'ws-a'],
    ['/apis/iam.kapi.io/v1alpha2/watch/groups', undefined],
    ['/apis/iam.kapi.io/v1alpha2/watch/groups?labelSelector=kapi.io/workspace=ws-a,x=y', undefined],
    ['/apis/iam.kapi.io/v1alpha2/watch/groups?labelSelector=kapi.io/workspace=ws-a&fieldSelector=a=b', undefined],
    ['/apis/iam.kapi.io/v1alpha2/groups?labelSelector=kapi.io/workspace=ws-a', undefined],
    ['/apis/iam.kapi.io/v1alpha2/watch/groupbindings?labelSelector=kapi.io/workspace=ws-a', undefined],
  ])('%s → %s', (url, expected) => {
    expect(departmentWatchOf(url)).toBe(expected);
  });
});
