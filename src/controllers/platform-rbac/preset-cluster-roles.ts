// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** Kubernetes' own cluster-admin: the platform's preset cluster role, as KubeSphere re-applies it with its marks. */
export const CLUSTER_ADMIN = 'cluster-admin';

/** The cluster role templates the chart ships (files/platform.yaml), each of which cluster-admin holds. */
export const CLUSTER_ROLE_TEMPLATES: readonly string[] = [
  'role-template-view-crds',
  'role-template-manage-crds',
  'role-template-view-components',
  'role-template-view-nodes',
  'role-template-manage-nodes',
  'role-template-view-projects',
  'role-template-manage-projects',
  'role-template-view-project-resources',
  'role-template-manage-project-resources',
  'role-template-view-members',
  'role-template-manage-members',
  'role-template-view-roles',
  'role-template-manage-roles',
  'role-template-view-network-resources',
  'role-template-manage-network-resources',
  'role-template-view-storageclasses',
  'role-template-manage-storageclasses',
  'role-template-view-volumes',
  'role-template-manage-volumes',
  'role-template-view-volume-snapshots',
  'role-template-manage-volume-snapshots',
  'role-template-view-volume-snapshot-classes',
  'role-template-manage-volume-snapshot-classes',
  'role-template-view-cluster-monitoring',
  'role-template-manage-cluster-monitoring',
];

/**
 * The marks that list cluster-admin among the platform's cluster roles (the console's Cluster Roles page and member
 * form list roles carrying `kapi.io/creator`) and tell which templates it is made of (its permissions tab). The
 * chart cannot carry them: the object is kube-apiserver's, which keeps annotations others add when it reconciles its
 * bootstrap roles.
 */
export const CLUSTER_ADMIN_MARKS: Readonly<Record<string, string>> = {
  'kapi.io/creator': 'system',
  'kapi.io/description': 'Cluster administrator: every resource of the cluster.',
  'iam.kapi.io/aggregation-roles': JSON.stringify(CLUSTER_ROLE_TEMPLATES),
};

/** cluster-admin with the marks it lacks, to write back (pure); undefined when it has them all. */
export function markedClusterAdmin(stored: Raw): Raw | undefined {
  const annotations: Record<string, string> = stored?.metadata?.annotations ?? {};
  if (Object.entries(CLUSTER_ADMIN_MARKS).every(([key, value]) => annotations[key] === value)) return undefined;
  return { ...stored, metadata: { ...stored.metadata, annotations: { ...annotations, ...CLUSTER_ADMIN_MARKS } } };
}
