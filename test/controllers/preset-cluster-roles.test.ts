import { describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { aggregatedRules } from '../../src/apis/iam/v1alpha2/global-role-admin.js';
import {
  CLUSTER_ADMIN_MARKS,
  CLUSTER_ROLE_TEMPLATES,
  markedClusterAdmin,
} from '../../src/controllers/platform-rbac/preset-cluster-roles.js';
import { readPlatformObjects } from '../../src/sandbox/platform-objects.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;
const shipped = readPlatformObjects(join(process.cwd(), 'charts/kapi-apiserver/files/platform.yaml')) as Raw[];
const clusterRoles = new Map<string, Raw>(
  shipped.filter((o) => o.kind === 'ClusterRole').map((o) => [o.metadata.name as string, o]),
);
const templateNames = [...clusterRoles.values()]
  .filter((role) => role.metadata.labels?.['iam.kapi.io/role-template'] === 'true')
  .map((role) => role.metadata.name as string);

describe('the cluster roles the chart ships', () => {
  test('when cluster-admin is marked, then it is made of every cluster role template the chart ships', () => {
    expect([...CLUSTER_ROLE_TEMPLATES].sort()).toEqual([...templateNames].sort());
  });

  test('when cluster-viewer is read, then its rules are exactly those of the view templates it names', () => {
    const viewer = clusterRoles.get('cluster-viewer');
    const names = JSON.parse(viewer.metadata.annotations['iam.kapi.io/aggregation-roles']) as string[];
    expect(names).toEqual(templateNames.filter((name) => name.startsWith('role-template-view-')));
    expect(viewer.rules).toEqual(aggregatedRules(names.map((name) => clusterRoles.get(name))));
    expect(viewer.metadata.annotations['kapi.io/creator']).toBe('system');
  });

  test.each(templateNames.filter((name) => name.startsWith('role-template-view-')))(
    'when the view template %s is read, then it only reads, and never Secrets',
    (name) => {
      for (const rule of clusterRoles.get(name).rules as Raw[]) {
        expect(rule.verbs).toEqual(['get', 'list', 'watch']);
        expect(rule.resources).not.toContain('secrets');
        expect(rule.apiGroups).not.toContain('*');
      }
    },
  );

  test.each(templateNames)('when the template %s is read, then it names its module and the menus it opens', (name) => {
    const annotations = clusterRoles.get(name).metadata.annotations;
    expect(annotations['iam.kapi.io/module']).toEqual(expect.any(String));
    expect(Object.values(JSON.parse(annotations['iam.kapi.io/role-template-rules']))).toEqual(
      expect.arrayContaining([name.startsWith('role-template-view-') ? 'view' : 'manage']),
    );
    for (const dependency of JSON.parse(annotations['iam.kapi.io/dependencies'] ?? '[]'))
      expect(templateNames).toContain(dependency);
  });
});

describe('markedClusterAdmin', () => {
  const clusterAdmin = (annotations?: Record<string, string>) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: 'cluster-admin',
      resourceVersion: '7',
      ...(annotations && { annotations }),
    },
    rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
  });

  test.each([
    ['Kubernetes’ own (no marks)', clusterAdmin({ 'rbac.authorization.kubernetes.io/autoupdate': 'true' })],
    ['without annotations', clusterAdmin()],
    [
      'with an older list of templates',
      clusterAdmin({ ...CLUSTER_ADMIN_MARKS, 'iam.kapi.io/aggregation-roles': '[]' }),
    ],
  ])('when cluster-admin is %s, then the marks are added, and nothing else changes', (_case, stored) => {
    const marked = markedClusterAdmin(stored);
    expect(marked.metadata.annotations).toEqual({ ...stored.metadata.annotations, ...CLUSTER_ADMIN_MARKS });
    expect({ ...marked, metadata: { ...marked.metadata, annotations: undefined } }).toEqual({
      ...stored,
      metadata: { ...stored.metadata, annotations: undefined },
    });
  });

  test('when cluster-admin carries every mark, then there is nothing to write', () => {
    expect(markedClusterAdmin(clusterAdmin({ other: 'x', ...CLUSTER_ADMIN_MARKS }))).toBeUndefined();
  });
});
