import { KubeApiError, type KubeClient } from '../../src/kube/client.js';
import { RUN_LABEL, waitFor, type E2E } from './harness.js';
import type { KindSample } from './kind-samples.js';

/**
 * APIs a cluster may not serve (SPEC §13's optional kinds): the external snapshotter's `snapshot.storage.k8s.io/v1`
 * kinds and `app.k8s.io/v1beta1` Applications, as CRDs a test installs and removes (a bare kube-apiserver and the
 * sandbox serve neither), each with a schema that keeps any field, as their own CRDs' objects would be read.
 */
const OPTIONAL_CRDS: { group: string; version: string; kind: string; plural: string; scope: string }[] = [
  {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshot',
    plural: 'volumesnapshots',
    scope: 'Namespaced',
  },
  {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshotClass',
    plural: 'volumesnapshotclasses',
    scope: 'Cluster',
  },
  {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshotContent',
    plural: 'volumesnapshotcontents',
    scope: 'Cluster',
  },
  { group: 'app.k8s.io', version: 'v1beta1', kind: 'Application', plural: 'applications', scope: 'Namespaced' },
];

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
/** The approvals the projects' own CRDs carry. */
const APPROVAL: Record<string, string> = {
  'snapshot.storage.k8s.io': 'https://github.com/kubernetes-csi/external-snapshotter/pull/419',
  'app.k8s.io': 'https://github.com/kubernetes-sigs/application/pull/2',
};

/** Installs the optional APIs' CRDs (those not there), and waits until kube-apiserver serves each. */
export async function installOptionalApis(admin: KubeClient): Promise<void> {
  for (const crd of OPTIONAL_CRDS) {
    await admin
      .request({
        method: 'POST',
        path: CRDS,
        body: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          // Kubernetes' groups are protected: their own CRDs carry the approval of their API (as here)
          metadata: {
            name: `${crd.plural}.${crd.group}`,
            annotations: { 'api-approved.kubernetes.io': APPROVAL[crd.group] },
          },
          spec: {
            group: crd.group,
            scope: crd.scope,
            names: {
              kind: crd.kind,
              listKind: `${crd.kind}List`,
              plural: crd.plural,
              singular: crd.kind.toLowerCase(),
            },
            versions: [
              {
                name: crd.version,
                served: true,
                storage: true,
                schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
            ],
          },
        },
      })
      .catch((error: unknown) => {
        if (!(error instanceof KubeApiError && error.code === 409)) throw error;
      });
  }
  for (const crd of OPTIONAL_CRDS)
    await waitFor(async () => {
      const discovery = await admin
        .request<{ resources?: { name: string }[] }>({ path: `/apis/${crd.group}/${crd.version}` })
        .catch(() => ({ resources: [] }));
      return (discovery.resources ?? []).some((resource) => resource.name === crd.plural);
    });
}

/** Removes the optional APIs' CRDs (their objects go with them). */
export async function removeOptionalApis(admin: KubeClient): Promise<void> {
  for (const crd of OPTIONAL_CRDS)
    await admin.request({ method: 'DELETE', path: `${CRDS}/${crd.plural}.${crd.group}` }).catch(() => undefined);
}

/** One object of each optional kind, in the run's namespace where namespaced (a ready snapshot of the sample claim). */
export function optionalApiSamples(e2e: E2E, namespace = e2e.runId): KindSample[] {
  const className = `${e2e.runId}-snapclass`;
  const labels = { [RUN_LABEL]: e2e.runId };
  return [
    {
      resource: 'volumesnapshotclasses',
      collection: '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses',
      name: className,
      namespace: undefined,
      body: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: { name: className, labels },
        driver: 'hostpath.csi.k8s.io',
        deletionPolicy: 'Delete',
      },
    },
    {
      resource: 'volumesnapshots',
      collection: `/apis/snapshot.storage.k8s.io/v1/namespaces/${namespace}/volumesnapshots`,
      name: 'sample-snap',
      namespace,
      body: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name: 'sample-snap', labels },
        spec: { volumeSnapshotClassName: className, source: { persistentVolumeClaimName: 'sample-pvc' } },
        status: { readyToUse: true, restoreSize: '1Gi' },
      },
    },
    {
      resource: 'volumesnapshotcontents',
      collection: '/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents',
      name: `${e2e.runId}-snapcontent`,
      namespace: undefined,
      body: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotContent',
        metadata: { name: `${e2e.runId}-snapcontent`, labels },
        spec: {
          volumeSnapshotClassName: className,
          volumeSnapshotRef: { name: 'sample-snap', namespace },
          driver: 'hostpath.csi.k8s.io',
          deletionPolicy: 'Delete',
          source: { snapshotHandle: 'sample' },
        },
      },
    },
    {
      resource: 'applications',
      collection: `/apis/app.k8s.io/v1beta1/namespaces/${namespace}/applications`,
      name: 'sample-app',
      namespace,
      body: {
        apiVersion: 'app.k8s.io/v1beta1',
        kind: 'Application',
        metadata: { name: 'sample-app', labels },
        spec: { selector: { matchLabels: { app: 'd' } }, componentKinds: [{ group: 'apps', kind: 'Deployment' }] },
      },
    },
  ];
}
