import type { RbacPolicyRule } from './rbac-rules.js';
import { RBAC_GROUP } from './rbac-rules.js';
import type { KubeObject } from './resource-types.js';

/**
 * The user-facing ClusterRoles every cluster has (cluster-admin, admin, edit, view) and the cluster-admin binding of
 * system:masters, so `kubectl create rolebinding --clusterrole=view` and the chart's binding to cluster-admin work as
 * on a real cluster. admin, edit and view carry their aggregationRule, with the rules kube's aggregation controller
 * would have filled in for the API groups a fresh cluster serves (the sandbox does not aggregate; see rbac-index.ts).
 * The system:* roles for discovery and reviews are not objects here: the default policy (policy.ts) grants them.
 */
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const ALL = [...READ, ...WRITE];

const rule = (verbs: string[], apiGroups: string[], resources: string[]): RbacPolicyRule => ({
  apiGroups,
  resources,
  verbs,
});

const VIEW_CORE = [
  'configmaps',
  'endpoints',
  'persistentvolumeclaims',
  'persistentvolumeclaims/status',
  'pods',
  'replicationcontrollers',
  'replicationcontrollers/scale',
  'serviceaccounts',
  'services',
  'services/status',
  'bindings',
  'events',
  'limitranges',
  'namespaces/status',
  'pods/log',
  'pods/status',
  'replicationcontrollers/status',
  'resourcequotas',
  'resourcequotas/status',
  'namespaces',
];
const APPS = [
  'controllerrevisions',
  'daemonsets',
  'daemonsets/status',
  'deployments',
  'deployments/scale',
  'deployments/status',
  'replicasets',
  'replicasets/scale',
  'replicasets/status',
  'statefulsets',
  'statefulsets/scale',
  'statefulsets/status',
];
const BATCH = ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'];
const AUTOSCALING = ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'];
const POLICY = ['poddisruptionbudgets', 'poddisruptionbudgets/status'];
const NETWORKING = ['ingresses', 'ingresses/status', 'networkpolicies'];

function viewRules(): RbacPolicyRule[] {
  return [
    rule(READ, [''], VIEW_CORE),
    rule(READ, ['apps'], APPS),
    rule(READ, ['batch'], BATCH),
    rule(READ, ['autoscaling'], AUTOSCALING),
    rule(READ, ['policy'], POLICY),
    rule(READ, ['networking.k8s.io'], NETWORKING),
    rule(READ, ['discovery.k8s.io'], ['endpointslices']),
  ];
}

function editRules(): RbacPolicyRule[] {
  return [...editOwnRules(), ...viewRules()];
}

/** What edit adds to view (kube's system:aggregate-to-edit). */
function editOwnRules(): RbacPolicyRule[] {
  return [
    rule(READ, [''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
    rule(['impersonate'], [''], ['serviceaccounts']),
    rule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
    rule(['create'], [''], ['pods/eviction']),
    rule(
      WRITE,
      [''],
      [
        'configmaps',
        'events',
        'persistentvolumeclaims',
        'replicationcontrollers',
        'replicationcontrollers/scale',
        'secrets',
        'serviceaccounts',
        'services',
        'services/proxy',
      ],
    ),
    rule(['create'], [''], ['serviceaccounts/token']),
    rule(
      WRITE,
      ['apps'],
      APPS.filter((r) => !r.endsWith('/status') && r !== 'controllerrevisions'),
    ),
    rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
    rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
    rule(WRITE, ['policy'], ['poddisruptionbudgets']),
    rule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
    rule(WRITE, ['discovery.k8s.io'], ['endpointslices']),
  ];
}

function adminRules(): RbacPolicyRule[] {
  return [...adminOwnRules(), ...editRules()];
}

/** What admin adds to edit (kube's system:aggregate-to-admin). */
function adminOwnRules(): RbacPolicyRule[] {
  return [
    rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
    rule(ALL, [RBAC_GROUP], ['rolebindings', 'roles']),
  ];
}

const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const AUTOUPDATE = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

interface Stamp {
  created: string;
  uid: () => string;
}

function clusterRole(
  name: string,
  rules: RbacPolicyRule[],
  stamp: Stamp,
  aggregateFrom?: string,
  labels: Record<string, string> = {},
): KubeObject {
  const role: KubeObject = {
    metadata: {
      name,
      uid: stamp.uid(),
      creationTimestamp: stamp.created,
      labels: { ...BOOTSTRAP_LABELS, ...labels },
      annotations: { ...AUTOUPDATE },
    },
    rules,
  };
  if (aggregateFrom) {
    role.aggregationRule = {
      clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${aggregateFrom}`]: 'true' } }],
    };
  }
  return role;
}

export interface BootstrapRbac {
  clusterRoles: KubeObject[];
  clusterRoleBindings: KubeObject[];
}

/** Fresh objects, stamped with a creation time and a uid from `stamp.uid`. */
export function bootstrapRbac(stamp: Stamp): BootstrapRbac {
  const clusterRoles = [
    clusterRole(
      'cluster-admin',
      [
        { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
        { nonResourceURLs: ['*'], verbs: ['*'] },
      ],
      stamp,
    ),
    clusterRole('admin', adminRules(), stamp, 'admin'),
    clusterRole('edit', editRules(), stamp, 'edit', { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' }),
    clusterRole('view', viewRules(), stamp, 'view', { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' }),
    // as kube-apiserver's bootstrap: the aggregated roles' own rules live in these, so a role aggregated in later
    // (kapi's monitoring view) adds to view's rules instead of replacing them
    clusterRole('system:aggregate-to-admin', adminOwnRules(), stamp, undefined, {
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    }),
    clusterRole('system:aggregate-to-edit', editOwnRules(), stamp, undefined, {
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
    }),
    clusterRole('system:aggregate-to-view', viewRules(), stamp, undefined, {
      'rbac.authorization.k8s.io/aggregate-to-view': 'true',
    }),
  ];
  const clusterRoleBindings: KubeObject[] = [
    {
      metadata: {
        name: 'cluster-admin',
        uid: stamp.uid(),
        creationTimestamp: stamp.created,
        labels: { ...BOOTSTRAP_LABELS },
        annotations: { ...AUTOUPDATE },
      },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: RBAC_GROUP, kind: 'Group', name: 'system:masters' }],
    },
  ];
  return { clusterRoles, clusterRoleBindings };
}
