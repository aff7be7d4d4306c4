/**
 * The kinds a console lists (apps, batch, networking, storage, claims, volumes, events), as kube-apiserver serves them:
 * the same cases run against the sandbox and a real kube-apiserver (KUBECONFIG), so the sandbox's defaults, initial
 * status, validation and field-selector answers are the real ones. No controller runs in either: a Deployment keeps
 * the status it was created with.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeApiError } from '../../src/kube/client.js';
import { RUN_LABEL, deleteIgnoringMissing, startE2E, type E2E } from './harness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let e2e: E2E;
let ns: string;
/** The cluster's minor release: a few defaults changed on the way from 1.26. */
let minor: number;
const clusterScoped: string[] = [];

beforeAll(async () => {
  e2e = await startE2E();
  ns = e2e.runId;
  const version = await e2e.admin.request<{ minor: string }>({ path: '/version' });
  minor = Number.parseInt(version.minor, 10);
});

afterAll(async () => {
  for (const path of clusterScoped) await deleteIgnoringMissing(e2e.admin, path);
  await e2e?.stop();
});

const container = { name: 'main', image: 'nginx:1.27' };
const labels = () => ({ [RUN_LABEL]: e2e.runId });

interface KindCase {
  name: string;
  collection: () => string;
  body: () => Json;
  /** What the object reads back with (a subset). */
  expected: (created: Json) => Json;
}

const cases: KindCase[] = [
  {
    name: 'Deployment',
    collection: () => `/apis/apps/v1/namespaces/${ns}/deployments`,
    body: () => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: labels() },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [container] } },
      },
    }),
    expected: () => ({
      metadata: { generation: 1 },
      spec: {
        replicas: 1,
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        template: {
          metadata: { creationTimestamp: null },
          spec: {
            restartPolicy: 'Always',
            dnsPolicy: 'ClusterFirst',
            schedulerName: 'default-scheduler',
            terminationGracePeriodSeconds: 30,
            securityContext: {},
            containers: [{ ...container, imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }],
          },
        },
      },
      status: {},
    }),
  },
  {
    name: 'StatefulSet',
    collection: () => `/apis/apps/v1/namespaces/${ns}/statefulsets`,
    body: () => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', labels: labels() },
      spec: {
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { containers: [container] } },
      },
    }),
    expected: () => ({
      spec: {
        replicas: 1,
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
        // defaulted from 1.27, when its feature gate went beta
        ...(minor >= 27 && { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' } }),
      },
      status: { replicas: 0, availableReplicas: 0 },
    }),
  },
  {
    name: 'DaemonSet',
    collection: () => `/apis/apps/v1/namespaces/${ns}/daemonsets`,
    body: () => ({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', labels: labels() },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [container] } },
      },
    }),
    expected: () => ({
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } },
      status: { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 },
    }),
  },
  {
    name: 'ReplicaSet',
    collection: () => `/apis/apps/v1/namespaces/${ns}/replicasets`,
    body: () => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-1', labels: labels() },
      spec: {
        selector: { matchLabels: { app: 'web', hash: '1' } },
        template: { metadata: { labels: { app: 'web', hash: '1' } }, spec: { containers: [container] } },
      },
    }),
    expected: () => ({ spec: { replicas: 1 }, status: { replicas: 0 } }),
  },
  {
    name: 'Job',
    collection: () => `/apis/batch/v1/namespaces/${ns}/jobs`,
    body: () => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'report', labels: labels() },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [container] } } },
    }),
    expected: (created) => {
      // 1.27 added the batch.kubernetes.io/ labels (the selector's since then) and writes manualSelector: false
      const uid = created.metadata.uid as string;
      const prefixed = minor >= 27;
      const generated = prefixed
        ? {
            'batch.kubernetes.io/controller-uid': uid,
            'batch.kubernetes.io/job-name': 'report',
            'controller-uid': uid,
            'job-name': 'report',
          }
        : { 'controller-uid': uid, 'job-name': 'report' };
      return {
        // a Job with labels of its own keeps them; only one without gets its template's
        metadata: { labels: labels() },
        spec: {
          parallelism: 1,
          completions: 1,
          backoffLimit: 6,
          completionMode: 'NonIndexed',
          suspend: false,
          ...(prefixed && { manualSelector: false }),
          selector: {
            matchLabels: prefixed ? { 'batch.kubernetes.io/controller-uid': uid } : { 'controller-uid': uid },
          },
          template: { metadata: { labels: generated }, spec: { restartPolicy: 'Never' } },
        },
        status: {},
      };
    },
  },
  {
    name: 'CronJob',
    collection: () => `/apis/batch/v1/namespaces/${ns}/cronjobs`,
    body: () => ({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly', labels: labels() },
      spec: {
        schedule: '0 1 * * *',
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [container] } } } },
      },
    }),
    expected: () => ({
      spec: { concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 },
      status: {},
    }),
  },
  {
    name: 'Ingress',
    collection: () => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
    body: () => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web', labels: labels() },
      spec: {
        rules: [
          {
            host: 'web.example.com',
            http: {
              paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
            },
          },
        ],
      },
    }),
    expected: () => ({ metadata: { generation: 1 }, status: { loadBalancer: {} } }),
  },
  {
    name: 'NetworkPolicy',
    collection: () => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
    body: () => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny', labels: labels() },
      spec: { podSelector: {} },
    }),
    expected: () => ({ spec: { podSelector: {}, policyTypes: ['Ingress'] } }),
  },
  {
    name: 'PersistentVolumeClaim',
    collection: () => `/api/v1/namespaces/${ns}/persistentvolumeclaims`,
    body: () => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', labels: labels() },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    }),
    expected: () => ({ spec: { volumeMode: 'Filesystem' }, status: { phase: 'Pending' } }),
  },
  {
    name: 'PersistentVolume',
    collection: () => '/api/v1/persistentvolumes',
    body: () => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `${e2e.runId}-pv`, labels: labels() },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
    }),
    expected: () => ({
      spec: {
        persistentVolumeReclaimPolicy: 'Retain',
        volumeMode: 'Filesystem',
        hostPath: { path: '/tmp/x', type: '' },
      },
      status: { phase: 'Pending' },
    }),
  },
  {
    name: 'StorageClass',
    collection: () => '/apis/storage.k8s.io/v1/storageclasses',
    body: () => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: `${e2e.runId}-sc`, labels: labels() },
      provisioner: 'kubernetes.io/no-provisioner',
    }),
    expected: () => ({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' }),
  },
  {
    name: 'Event',
    collection: () => `/api/v1/namespaces/${ns}/events`,
    body: () => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1', labels: labels() },
      involvedObject: { kind: 'Deployment', name: 'web', namespace: ns },
      reason: 'ScalingReplicaSet',
      message: 'Scaled up',
      type: 'Normal',
    }),
    expected: () => ({
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: null,
      reportingComponent: '',
      reportingInstance: '',
    }),
  },
];

async function refusal(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (err) {
    if (err instanceof KubeApiError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the request was not refused');
}

describe('when each kind a console lists is created through the Kubernetes API', () => {
  it.each(cases.map((c) => [c.name, c] as const))(
    'then a %s reads back with kube’s defaults and the status a new object starts with',
    async (_name, kindCase) => {
      const created = await e2e.admin.request<Json>({
        method: 'POST',
        path: kindCase.collection(),
        body: kindCase.body(),
      });
      const path = `${kindCase.collection()}/${created.metadata.name as string}`;
      if (!kindCase.collection().includes('/namespaces/')) clusterScoped.push(path);
      const read = await e2e.admin.request<Json>({ path });
      expect(read).toMatchObject(kindCase.expected(created));
      // listed, and found by name with a field selector, as every kind offers
      const listed = await e2e.admin.request<{ items: Json[] }>({
        path: kindCase.collection(),
        query: { fieldSelector: `metadata.name=${created.metadata.name as string}` },
      });
      expect(listed.items.map((item) => item.metadata.name)).toEqual([created.metadata.name]);
    },
  );
});

describe('when a kind’s object is invalid', () => {
  it.each([
    [
      'a Deployment without a selector',
      () => `/apis/apps/v1/namespaces/${ns}/deployments`,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'bad' },
        spec: { template: { metadata: { labels: { app: 'x' } }, spec: { containers: [container] } } },
      },
      ['spec.selector: Required value', '`selector` does not match template `labels`'],
    ],
    [
      'a Job whose template has no restart policy',
      () => `/apis/batch/v1/namespaces/${ns}/jobs`,
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'bad' },
        spec: { template: { spec: { containers: [container] } } },
      },
      ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ],
    [
      'a claim without access modes or size',
      () => `/api/v1/namespaces/${ns}/persistentvolumeclaims`,
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'bad' }, spec: {} },
      [
        'spec.accessModes: Required value: at least 1 access mode is required',
        'spec.resources[storage]: Required value',
      ],
    ],
    [
      'a CronJob without a schedule',
      () => `/apis/batch/v1/namespaces/${ns}/cronjobs`,
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'bad' },
        spec: { jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [container] } } } } },
      },
      ['spec.schedule: Required value'],
    ],
    [
      'an Ingress without rules or a default backend',
      () => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
      { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'bad' }, spec: {} },
      ['either `defaultBackend` or `rules` must be specified'],
    ],
  ])('then %s is refused with 422 and kube’s field messages', async (_what, collection, body, messages) => {
    const refused = await refusal(e2e.admin.request({ method: 'POST', path: collection(), body }));
    expect(refused.code).toBe(422);
    for (const message of messages) expect(refused.message).toContain(message);
  });
});

describe('when a list names a field the kind does not offer', () => {
  it.each([
    [
      '/apis/apps/v1/deployments',
      'status.replicas=1',
      '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
    ],
    [
      '/apis/apps/v1/replicasets',
      'spec.replicas=1',
      '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
    ],
    ['/apis/batch/v1/jobs', 'status.failed=1', 'field label "status.failed" not supported for Job'],
    [
      '/apis/batch/v1/cronjobs',
      'spec.suspend=true',
      '"spec.suspend" is not a known field selector: only "metadata.name", "metadata.namespace"',
    ],
    [
      '/api/v1/persistentvolumeclaims',
      'status.phase=Bound',
      '"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"',
    ],
    [
      '/api/v1/configmaps',
      'data=x',
      '"data" is not a known field selector: only "metadata.name", "metadata.namespace"',
    ],
    ['/api/v1/events', 'related.kind=Pod', 'field label not supported: related.kind'],
  ])('then %s?fieldSelector=%s is a 400 saying so', async (path, selector, message) => {
    const refused = await refusal(e2e.admin.request({ path, query: { fieldSelector: selector } }));
    expect(refused).toEqual({ code: 400, message });
  });

  it.each([
    ['/apis/batch/v1/jobs', 'status.successful=0'],
    ['/api/v1/events', 'involvedObject.kind=Deployment,reason=ScalingReplicaSet,type=Normal'],
  ])('then the fields the kind does offer work: %s?fieldSelector=%s', async (path, selector) => {
    const listed = await e2e.admin.request<{ items: Json[] }>({
      path,
      query: { fieldSelector: selector, labelSelector: `${RUN_LABEL}=${e2e.runId}` },
    });
    expect(listed.items.length).toBeGreaterThan(0);
  });
});
