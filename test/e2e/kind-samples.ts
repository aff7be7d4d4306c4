/**
 * One small, valid object of each kind the listing serves, carrying the run label, for cases that need every kind
 * to have something (listing e2e, contract). Namespaced ones go in the run's namespace; cluster-scoped ones are named
 * after the run. Namespaces and CRDs are not made: the run's namespace and kapi's CRDs are there already.
 */
import { RUN_LABEL, type E2E } from './harness.js';

type Json = Record<string, unknown>;

export interface KindSample {
  readonly resource: string;
  /** The collection to POST to. */
  readonly collection: string;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly body: Json;
}

const container = { name: 'main', image: 'nginx:1.27' };

export function kindSamples(e2e: E2E, namespace = e2e.runId): KindSample[] {
  const labels = { [RUN_LABEL]: e2e.runId, tier: 'sample' };
  const ns = (resource: string, group: string, name: string, body: Json): KindSample => ({
    resource,
    collection: `${group ? `/apis/${group}` : '/api/v1'}/namespaces/${namespace}/${resource}`,
    name,
    namespace,
    body: { ...body, metadata: { name, labels, ...(body.metadata as Json | undefined) } },
  });
  const cluster = (resource: string, group: string, body: Json): KindSample => {
    const name = `${e2e.runId}-${resource.slice(0, 20)}`;
    return {
      resource,
      collection: `${group ? `/apis/${group}` : '/api/v1'}/${resource}`,
      name,
      namespace: undefined,
      body: { ...body, metadata: { name, labels } },
    };
  };
  const template = (app: string) => ({
    selector: { matchLabels: { app } },
    template: { metadata: { labels: { app } }, spec: { containers: [container] } },
  });
  return [
    // first: kube-apiserver's ServiceAccount admission refuses a pod whose account does not exist (no controller
    // makes a namespace's `default` one on a bare kube-apiserver)
    ns('serviceaccounts', '', 'sample-sa', { apiVersion: 'v1', kind: 'ServiceAccount' }),
    ns('pods', '', 'sample-pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { serviceAccountName: 'sample-sa', containers: [container] },
    }),
    ns('deployments', 'apps/v1', 'sample-deploy', { apiVersion: 'apps/v1', kind: 'Deployment', spec: template('d') }),
    ns('statefulsets', 'apps/v1', 'sample-sts', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      spec: { serviceName: 'sample', ...template('s') },
    }),
    ns('daemonsets', 'apps/v1', 'sample-ds', { apiVersion: 'apps/v1', kind: 'DaemonSet', spec: template('ds') }),
    ns('replicasets', 'apps/v1', 'sample-rs', { apiVersion: 'apps/v1', kind: 'ReplicaSet', spec: template('rs') }),
    ns('jobs', 'batch/v1', 'sample-job', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      spec: { template: { spec: { restartPolicy: 'Never', containers: [container] } } },
    }),
    ns('cronjobs', 'batch/v1', 'sample-cj', {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      spec: {
        schedule: '0 1 * * *',
        suspend: true,
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [container] } } } },
      },
    }),
    ns('services', '', 'sample-svc', {
      apiVersion: 'v1',
      kind: 'Service',
      spec: { selector: { app: 'd' }, ports: [{ port: 80 }] },
    }),
    ns('ingresses', 'networking.k8s.io/v1', 'sample-ing', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      spec: { defaultBackend: { service: { name: 'sample-svc', port: { number: 80 } } } },
    }),
    ns('networkpolicies', 'networking.k8s.io/v1', 'sample-np', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      spec: { podSelector: {} },
    }),
    ns('configmaps', '', 'sample-cm', { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' } }),
    ns('secrets', '', 'sample-secret', { apiVersion: 'v1', kind: 'Secret', stringData: { token: 'sample-value' } }),
    ns('persistentvolumeclaims', '', 'sample-pvc', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    }),
    ns('roles', 'rbac.authorization.k8s.io/v1', 'sample-role', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    }),
    ns('rolebindings', 'rbac.authorization.k8s.io/v1', 'sample-rb', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'sample-role' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${e2e.runId}-nobody` }],
    }),
    ns('events', '', 'sample-event', {
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { kind: 'Pod', name: 'sample-pod', namespace },
      reason: 'Sampled',
      message: 'made by the e2e suite',
      type: 'Warning',
    }),
    cluster('persistentvolumes', '', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/sample' } },
    }),
    cluster('storageclasses', 'storage.k8s.io/v1', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      provisioner: 'kubernetes.io/no-provisioner',
    }),
    cluster('clusterroles', 'rbac.authorization.k8s.io/v1', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    }),
    cluster('clusterrolebindings', 'rbac.authorization.k8s.io/v1', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${e2e.runId}-clusterroles` },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${e2e.runId}-nobody` }],
    }),
    ns('dashboards', 'monitoring.kapi.io/v1alpha2', 'sample-dash', {
      apiVersion: 'monitoring.kapi.io/v1alpha2',
      kind: 'Dashboard',
      spec: { title: 'Sample', panels: [{ id: 1, type: 'graph', targets: [{ refId: 1, expr: 'up', step: '1m' }] }] },
    }),
    cluster('clusterdashboards', 'monitoring.kapi.io/v1alpha2', {
      apiVersion: 'monitoring.kapi.io/v1alpha2',
      kind: 'ClusterDashboard',
      spec: { title: 'Sample', panels: [{ id: 1, type: 'singlestat', targets: [{ refId: 1, expr: 'up' }] }] },
    }),
    // no workspace label: a membership of no workspace, which kapi's controller neither realizes nor removes
    cluster('workspacerolebindings', 'iam.kapi.io/v1alpha2', {
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'WorkspaceRoleBinding',
      roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: `${e2e.runId}-viewer` },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${e2e.runId}-nobody` }],
    }),
    // a department of no workspace, and a binding to it: kapi honours neither
    cluster('groups', 'iam.kapi.io/v1alpha2', { apiVersion: 'iam.kapi.io/v1alpha2', kind: 'Group' }),
    cluster('groupbindings', 'iam.kapi.io/v1alpha2', {
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'GroupBinding',
      groupRef: { apiGroup: 'iam.kapi.io', kind: 'Group', name: `${e2e.runId}-groups` },
      users: [`${e2e.runId}-nobody`],
    }),
  ];
}

/** Creates the samples; returns the paths of the cluster-scoped ones (the run's namespace takes the others along). */
export async function createKindSamples(e2e: E2E, samples = kindSamples(e2e)): Promise<string[]> {
  const clusterScoped: string[] = [];
  for (const sample of samples) {
    await e2e.admin.request({ method: 'POST', path: sample.collection, body: sample.body });
    if (!sample.namespace) clusterScoped.push(`${sample.collection}/${sample.name}`);
  }
  return clusterScoped;
}

/** The rules that let a user read every listed kind (get, list, watch), secrets included. */
export const READ_EVERY_KIND = [
  {
    apiGroups: [''],
    resources: [
      'nodes',
      'namespaces',
      'pods',
      'services',
      'configmaps',
      'secrets',
      'serviceaccounts',
      'persistentvolumeclaims',
      'persistentvolumes',
      'events',
      'resourcequotas',
    ],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'],
    verbs: ['get', 'list'],
  },
  { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: ['get', 'list'] },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], verbs: ['get', 'list'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list'] },
  {
    apiGroups: ['rbac.authorization.k8s.io'],
    resources: ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'],
    verbs: ['get', 'list'],
  },
  { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list'] },
  {
    apiGroups: ['iam.kapi.io'],
    resources: ['users', 'globalroles', 'workspacerolebindings', 'groups', 'groupbindings'],
    verbs: ['get', 'list'],
  },
  { apiGroups: ['tenant.kapi.io'], resources: ['workspacetemplates'], verbs: ['get', 'list'] },
  { apiGroups: ['monitoring.kapi.io'], resources: ['dashboards', 'clusterdashboards'], verbs: ['get', 'list'] },
  {
    apiGroups: ['snapshot.storage.k8s.io'],
    resources: ['volumesnapshots', 'volumesnapshotclasses', 'volumesnapshotcontents'],
    verbs: ['get', 'list'],
  },
  { apiGroups: ['app.k8s.io'], resources: ['applications'], verbs: ['get', 'list'] },
  { apiGroups: ['resources.kapi.io'], resources: ['components'], verbs: ['get', 'list'] },
  { apiGroups: ['resources.kapi.io'], resources: ['quotas', 'abnormalworkloads'], verbs: ['get'] },
];
