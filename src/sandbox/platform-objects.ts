import { existsSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { globalRoleBindingObject } from '../apis/iam/v1alpha2/role-bindings.js';

/**
 * The built-in platform roles, role templates and system-workspace the chart installs (its files/platform.yaml, the
 * one source), as objects: for the sandbox's seed and for the e2e suites, which apply them to real clusters.
 */
export interface PlatformObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** <repo>/charts/kapi-apiserver/files/platform.yaml, from the repository's crds/ beside it. */
export function platformFileBeside(crdDir: string): string {
  return `${crdDir.replace(/\/crds\/?$/, '')}/charts/kapi-apiserver/files/platform.yaml`;
}

export function readPlatformObjects(file: string): PlatformObject[] {
  if (!existsSync(file)) return [];
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => document.toJSON() as PlatformObject | null)
    .filter((object): object is PlatformObject => object !== null && typeof object?.kind === 'string');
}

/** The binding of a user's platform role as kapi names and labels it (`<user>-<role>`, `iam.kapi.io/user-ref`). */
export function globalRoleBinding(user: string, role: string): PlatformObject {
  return globalRoleBindingObject(user, role) as PlatformObject;
}

/** The chart's binding of its admin to cluster-admin (admin-clusterrolebinding.yaml): a cluster membership. */
export function adminClusterMembership(user: string): PlatformObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `kapi-${user}-cluster-admin`, labels: { 'iam.kapi.io/user-ref': user } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  };
}
