import type { FieldValue } from '../../../../kube/compact/object-table.js';
import { nodeStatus, NODE_STATUSES } from '../node-status.js';
import { podStatus, POD_STATUSES } from './pod-status.js';

/**
 * Every kind the listing serves, in one table: where it lives in the Kubernetes API, where kapi reads it from, and
 * KubeSphere 3.4.1's semantics for it (pkg/models/resources/v1alpha3, with v1alpha2 for the kinds v1alpha3 falls back
 * to): its own `sortBy` fields, its `status` values and how an object's status is derived, and its own filters.
 * Everything else about a listing (parsing, authorization, filtering, sorting, paging) is the same for every kind.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export interface KindStatus {
  /** The values `status=` accepts, and that a derived status is one of. */
  readonly values: readonly string[];
  /** KubeSphere compares some with strings.EqualFold (claims, volumes): any case is accepted. */
  readonly caseInsensitive?: boolean;
  readonly description: string;
  /** The index of the object's status in `values`; -1 for none. */
  of(raw: Raw): number;
}

export interface KindTime {
  /** The `sortBy` values that sort by it (KubeSphere's name and its alias). */
  readonly sortBy: readonly string[];
  readonly description: string;
  /** ms since the epoch; NaN when the object has none. */
  of(raw: Raw): number;
}

export interface KindField {
  /** The query parameter. */
  readonly parameter: string;
  readonly description: string;
  of(raw: Raw): FieldValue;
  /** Matched in any case, as KubeSphere matches it (`strings.EqualFold`). */
  readonly caseInsensitive?: true;
}

/** Where a kind's objects come from. */
export type KindSource =
  /** a watch of its own, started on first use and stopped when idle */
  | 'watch'
  /**
   * a watch kapi always holds (pods: the node listing's allocations; namespaces: authorization and logs), the
   * listing's records added to it on demand
   */
  | 'shared'
  /** the node listing's own cache (allocation annotations), always watched */
  | 'nodes'
  /** never cached: listed from kube-apiserver as the caller, per request (secrets) */
  | 'passthrough';

export interface KindDefinition {
  /** The resource name in URLs: `pods`. */
  readonly resource: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly source: KindSource;
  readonly status?: KindStatus;
  /** Sort times of the kind's own beyond the creation time (a Deployment's last update). */
  readonly times: readonly KindTime[];
  /** KubeSphere sorts Jobs by their status text too. */
  readonly sortByStatus?: boolean;
  readonly fields: readonly KindField[];
  /** A text the `name` filter also matches (a CRD's kind, as KubeSphere's filter does). */
  readonly alsoNamed?: (raw: Raw) => string | undefined;
  /** What KubeSphere does differently for this kind, or what is kapi's own, for the document. */
  readonly notes?: string;
  /** The object as it may be answered, when parts of it never may (a User's password hash). */
  readonly answered?: (raw: Raw) => Raw;
  /**
   * A kind of an API a cluster may not serve (volume snapshots, applications): where kube-apiserver does not serve it,
   * its list is empty and its objects are not found, at once, with no watch started.
   */
  readonly optionalApi?: boolean;
}

const time = (value: unknown): number => (typeof value === 'string' ? Date.parse(value) : Number.NaN);

/** The latest of the creation time and the given condition times (KubeSphere's lastUpdateTime). */
function latest(raw: Raw, conditionTime: 'lastUpdateTime' | 'lastTransitionTime'): number {
  let result = time(raw?.metadata?.creationTimestamp);
  for (const condition of raw?.status?.conditions ?? []) {
    const at = time(condition?.[conditionTime]);
    if (!Number.isNaN(at) && (Number.isNaN(result) || at > result)) result = at;
  }
  return result;
}

const WORKLOAD_STATUSES = ['running', 'updating', 'stopped'] as const;
const workloadStatus = (ready: number, desired: number): number => {
  if (ready === 0 && desired === 0) return 2;
  return ready === desired ? 0 : 1;
};
const count = (value: unknown): number => (typeof value === 'number' ? value : 0);
const workload = (description: string, of: (raw: Raw) => number): KindStatus => ({
  values: WORKLOAD_STATUSES,
  description,
  of,
});

const LAST_UPDATE: readonly string[] = ['lastUpdateTimestamp', 'updateTime'];

function indexOf(values: readonly string[], value: unknown, caseInsensitive = false): number {
  if (typeof value !== 'string') return -1;
  return caseInsensitive ? values.indexOf(value.toLowerCase()) : values.indexOf(value);
}

const phase = (values: readonly string[], description: string): KindStatus => ({
  values,
  caseInsensitive: true,
  description,
  of: (raw) => indexOf(values, raw?.status?.phase, true),
});

const storageClassField: KindField = {
  parameter: 'storageClassName',
  description: 'Exact `spec.storageClassName`.',
  of: (raw) => (typeof raw?.spec?.storageClassName === 'string' ? raw.spec.storageClassName : undefined),
};

function kind(partial: Omit<KindDefinition, 'times' | 'fields' | 'source'> & Partial<KindDefinition>): KindDefinition {
  return { source: 'watch', times: [], fields: [], ...partial };
}

const stringAt = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const labelAt = (raw: Raw, key: string) => stringAt(raw?.metadata?.labels?.[key]);
/** A binding's subjects, as `User:<name>` or `Group:<name>` (kapi's filter: who holds what it binds). */
const subjectField: KindField = {
  parameter: 'subject',
  description: 'A subject it binds, as `User:<name>` or `Group:<name>`.',
  of: (raw) =>
    (Array.isArray(raw?.subjects) ? raw.subjects : [])
      .filter((s: Raw) => (s?.kind === 'User' || s?.kind === 'Group') && typeof s.name === 'string')
      .map((s: Raw) => `${s.kind}:${s.name}`),
};

/** KubeSphere's statuses of a VolumeSnapshot. */
export const SNAPSHOT_STATUSES = ['creating', 'ready', 'deleting'] as const;

function snapshotStatus(raw: Raw): (typeof SNAPSHOT_STATUSES)[number] {
  if (raw?.metadata?.deletionTimestamp) return 'deleting';
  return raw?.status?.readyToUse === true ? 'ready' : 'creating';
}

export const KINDS: readonly KindDefinition[] = [
  kind({
    resource: 'nodes',
    group: '',
    version: 'v1',
    kind: 'Node',
    namespaced: false,
    source: 'nodes',
    status: {
      values: NODE_STATUSES,
      description:
        'running: Ready and schedulable; unschedulable: cordoned; warning: neither (not Ready, or under pressure).',
      of: (raw) => NODE_STATUSES.indexOf(nodeStatus(raw)),
    },
  }),
  kind({
    resource: 'namespaces',
    group: '',
    version: 'v1',
    kind: 'Namespace',
    namespaced: false,
    source: 'shared',
    status: {
      values: ['Active', 'Terminating'],
      description: 'The namespace’s `status.phase`.',
      of: (raw) => indexOf(['Active', 'Terminating'], raw?.status?.phase),
    },
  }),
  kind({
    resource: 'pods',
    group: '',
    version: 'v1',
    kind: 'Pod',
    namespaced: true,
    source: 'shared',
    times: [
      {
        sortBy: ['startTime'],
        description:
          'KubeSphere 3.4.1’s console orders pods by it by default; KubeSphere sorts it as the creation time.',
        of: (raw) => time(raw?.metadata?.creationTimestamp),
      },
    ],
    status: {
      values: POD_STATUSES,
      description:
        'KubeSphere’s kind of state, from the reason `kubectl get pods` prints: Running; Completed; Error ' +
        '(Failed, Error, OutOf…); Waiting (anything else: Pending, ContainerCreating, CrashLoopBackOff, Terminating…).',
      of: (raw) => POD_STATUSES.indexOf(podStatus(raw)),
    },
    fields: [
      {
        parameter: 'nodeName',
        description: 'Exact `spec.nodeName`.',
        of: (raw) => (typeof raw?.spec?.nodeName === 'string' ? raw.spec.nodeName : undefined),
      },
      {
        parameter: 'pvcName',
        description: 'A PersistentVolumeClaim the pod mounts.',
        of: (raw) => {
          const claims: string[] = [];
          for (const volume of raw?.spec?.volumes ?? []) {
            const claim = volume?.persistentVolumeClaim?.claimName;
            if (typeof claim === 'string') claims.push(claim);
          }
          return claims.length > 0 ? claims : undefined;
        },
      },
      {
        parameter: 'phase',
        description: 'Exact `status.phase` (Pending, Running, Succeeded, Failed, Unknown).',
        of: (raw) => (typeof raw?.status?.phase === 'string' ? raw.status.phase : undefined),
      },
    ],
    notes:
      '`serviceName` selects the pods the named Service (in each pod’s namespace) selects; a Service without a ' +
      'selector selects none.',
  }),
  kind({
    resource: 'deployments',
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    namespaced: true,
    status: workload(
      'stopped: no replicas and none ready; running: every replica ready; updating: otherwise (`status.replicas`, ' +
        '`status.readyReplicas`).',
      (raw) => workloadStatus(count(raw?.status?.readyReplicas), count(raw?.status?.replicas)),
    ),
    times: [
      {
        sortBy: LAST_UPDATE,
        description: 'The latest `status.conditions[].lastUpdateTime`, or the creation time.',
        of: (raw) => latest(raw, 'lastUpdateTime'),
      },
    ],
  }),
  kind({
    resource: 'statefulsets',
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    namespaced: true,
    status: workload(
      'stopped: `spec.replicas` 0 and none ready (or no `spec.replicas`); running: every replica ready; updating: ' +
        'otherwise.',
      (raw) =>
        typeof raw?.spec?.replicas === 'number'
          ? workloadStatus(count(raw?.status?.readyReplicas), raw.spec.replicas as number)
          : 2,
    ),
  }),
  kind({
    resource: 'daemonsets',
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    namespaced: true,
    status: workload(
      'stopped: none desired and none ready; running: every desired pod ready; updating: otherwise ' +
        '(`status.desiredNumberScheduled`, `status.numberReady`).',
      (raw) => workloadStatus(count(raw?.status?.numberReady), count(raw?.status?.desiredNumberScheduled)),
    ),
  }),
  kind({
    resource: 'replicasets',
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    namespaced: true,
    status: workload(
      'As a Deployment’s (KubeSphere has no ReplicaSet listing): `status.replicas`, `status.readyReplicas`.',
      (raw) => workloadStatus(count(raw?.status?.readyReplicas), count(raw?.status?.replicas)),
    ),
    notes: 'Not in KubeSphere 3.4: kapi’s own, with the Deployment’s status rule.',
  }),
  kind({
    resource: 'jobs',
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    namespaced: true,
    status: {
      values: ['running', 'completed', 'failed'],
      description: 'completed or failed: the first Complete or Failed condition that is True; running: otherwise.',
      of: (raw) => {
        for (const condition of raw?.status?.conditions ?? []) {
          if (condition?.type === 'Complete' && condition?.status === 'True') return 1;
          if (condition?.type === 'Failed' && condition?.status === 'True') return 2;
        }
        return 0;
      },
    },
    times: [
      {
        sortBy: LAST_UPDATE,
        description: 'The latest `status.conditions[].lastTransitionTime`, or the creation time.',
        of: (raw) => latest(raw, 'lastTransitionTime'),
      },
    ],
    sortByStatus: true,
  }),
  kind({
    resource: 'cronjobs',
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    namespaced: true,
    status: {
      values: ['running', 'paused'],
      description: 'paused: `spec.suspend` is true; running: otherwise.',
      of: (raw) => (raw?.spec?.suspend === true ? 1 : 0),
    },
    times: [
      {
        sortBy: ['lastScheduleTime'],
        description: '`status.lastScheduleTime` (never scheduled: the oldest).',
        of: (raw) => time(raw?.status?.lastScheduleTime),
      },
    ],
  }),
  kind({ resource: 'services', group: '', version: 'v1', kind: 'Service', namespaced: true }),
  kind({ resource: 'ingresses', group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', namespaced: true }),
  kind({
    resource: 'networkpolicies',
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'NetworkPolicy',
    namespaced: true,
  }),
  kind({ resource: 'configmaps', group: '', version: 'v1', kind: 'ConfigMap', namespaced: true }),
  kind({
    resource: 'secrets',
    group: '',
    version: 'v1',
    kind: 'Secret',
    namespaced: true,
    source: 'passthrough',
    notes:
      'Never cached: each answer lists the secrets from kube-apiserver as the caller (impersonated), so kapi holds ' +
      'no secret and needs no right to read them. `fieldSelector` is kube-apiserver’s (`type`, `metadata.name`, ' +
      '`metadata.namespace`); KubeSphere evaluated any JSON path.',
  }),
  kind({
    resource: 'persistentvolumeclaims',
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    status: phase(['bound', 'pending', 'lost'], 'The claim’s `status.phase`, in any case.'),
    fields: [storageClassField],
  }),
  kind({
    resource: 'persistentvolumes',
    group: '',
    version: 'v1',
    kind: 'PersistentVolume',
    namespaced: false,
    status: phase(['available', 'bound', 'released', 'failed', 'pending'], 'The volume’s `status.phase`, in any case.'),
    fields: [storageClassField],
  }),
  kind({
    resource: 'storageclasses',
    group: 'storage.k8s.io',
    version: 'v1',
    kind: 'StorageClass',
    namespaced: false,
  }),
  kind({ resource: 'serviceaccounts', group: '', version: 'v1', kind: 'ServiceAccount', namespaced: true }),
  kind({ resource: 'roles', group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', namespaced: true }),
  kind({
    resource: 'rolebindings',
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'RoleBinding',
    namespaced: true,
    fields: [subjectField],
    notes: '`subject` is kapi’s filter.',
  }),
  kind({
    resource: 'clusterroles',
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRole',
    namespaced: false,
  }),
  kind({
    resource: 'clusterrolebindings',
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    namespaced: false,
    fields: [subjectField],
    notes: '`subject` is kapi’s filter.',
  }),
  kind({
    resource: 'customresourcedefinitions',
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    alsoNamed: (raw) => (typeof raw?.spec?.names?.kind === 'string' ? raw.spec.names.kind : undefined),
    notes: '`name` also matches the CRD’s kind (`spec.names.kind`), as KubeSphere’s does.',
  }),
  kind({
    resource: 'users',
    group: 'iam.kapi.io',
    version: 'v1beta1',
    kind: 'User',
    namespaced: false,
    source: 'shared',
    status: {
      values: ['Active', 'Disabled', 'AuthLimitExceeded'],
      description: 'The user’s `status.state` (absent: Active).',
      of: (raw) =>
        raw?.status?.state === undefined ? 0 : indexOf(['Active', 'Disabled', 'AuthLimitExceeded'], raw.status.state),
    },
    times: [
      {
        sortBy: ['lastLoginTime'],
        description: 'The user’s last login (`status.lastLoginTime`); never logged in sorts as the oldest.',
        of: (raw) => time(raw?.status?.lastLoginTime),
      },
    ],
    fields: [
      {
        parameter: 'email',
        description: 'Exact `spec.email`.',
        of: (raw) => (typeof raw?.spec?.email === 'string' ? raw.spec.email : undefined),
      },
    ],
    answered: userAsAnswered,
    notes: 'Never answers `spec.password` (a hash) or `status.failedLogins`.',
  }),
  kind({
    resource: 'globalroles',
    group: 'iam.kapi.io',
    version: 'v1alpha2',
    kind: 'GlobalRole',
    namespaced: false,
    source: 'shared',
  }),
  kind({
    resource: 'workspacetemplates',
    group: 'tenant.kapi.io',
    version: 'v1alpha2',
    kind: 'WorkspaceTemplate',
    namespaced: false,
    fields: [
      {
        parameter: 'manager',
        description: 'Exact manager (`spec.template.spec.manager`).',
        of: (raw) =>
          typeof raw?.spec?.template?.spec?.manager === 'string' ? raw.spec.template.spec.manager : undefined,
      },
    ],
    notes: '`manager` is kapi’s own filter.',
  }),
  kind({
    resource: 'volumesnapshots',
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshot',
    namespaced: true,
    optionalApi: true,
    status: {
      values: SNAPSHOT_STATUSES,
      description: 'deleting: being deleted; ready: `status.readyToUse`; creating: otherwise.',
      of: (raw) => SNAPSHOT_STATUSES.indexOf(snapshotStatus(raw)),
    },
    fields: [
      {
        parameter: 'volumeSnapshotClassName',
        description: 'Exact `spec.volumeSnapshotClassName`.',
        of: (raw) => stringAt(raw?.spec?.volumeSnapshotClassName),
      },
      {
        parameter: 'persistentVolumeClaimName',
        description: 'Exact `spec.source.persistentVolumeClaimName` (the volume it was taken of).',
        of: (raw) => stringAt(raw?.spec?.source?.persistentVolumeClaimName),
      },
    ],
    notes: 'Empty where the cluster serves no `snapshot.storage.k8s.io/v1`.',
  }),
  kind({
    resource: 'volumesnapshotclasses',
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshotClass',
    namespaced: false,
    optionalApi: true,
    fields: [
      {
        parameter: 'deletionPolicy',
        description: '`deletionPolicy`, in any case.',
        of: (raw) => stringAt(raw?.deletionPolicy),
        caseInsensitive: true,
      },
      {
        parameter: 'driver',
        description: '`driver`, in any case.',
        of: (raw) => stringAt(raw?.driver),
        caseInsensitive: true,
      },
    ],
    notes:
      'Empty where the cluster serves no `snapshot.storage.k8s.io/v1`. Each listed class carries the annotation ' +
      '`kapi.io/snapshot-count`: how many VolumeSnapshots of every namespace name it, as KubeSphere counts them.',
  }),
  kind({
    resource: 'volumesnapshotcontents',
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    kind: 'VolumeSnapshotContent',
    namespaced: false,
    optionalApi: true,
    fields: [
      {
        parameter: 'volumeSnapshotClassName',
        description: '`spec.volumeSnapshotClassName`, in any case.',
        caseInsensitive: true,
        of: (raw) => stringAt(raw?.spec?.volumeSnapshotClassName),
      },
      {
        parameter: 'volumeSnapshotName',
        description: '`spec.volumeSnapshotRef.name`, in any case.',
        caseInsensitive: true,
        of: (raw) => stringAt(raw?.spec?.volumeSnapshotRef?.name),
      },
      {
        parameter: 'volumeSnapshotNamespace',
        description: '`spec.volumeSnapshotRef.namespace`, in any case.',
        caseInsensitive: true,
        of: (raw) => stringAt(raw?.spec?.volumeSnapshotRef?.namespace),
      },
      {
        parameter: 'readyToUse',
        description: '`true` or `false`, in any case: `status.readyToUse` (absent: false).',
        caseInsensitive: true,
        of: (raw) => String(raw?.status?.readyToUse === true),
      },
    ],
    notes: 'Empty where the cluster serves no `snapshot.storage.k8s.io/v1`.',
  }),
  kind({
    resource: 'applications',
    group: 'app.k8s.io',
    version: 'v1beta1',
    kind: 'Application',
    namespaced: true,
    optionalApi: true,
    times: [
      {
        sortBy: ['updateTime', 'lastUpdateTimestamp'],
        description: 'The latest of the creation time and the conditions’ `lastUpdateTime`.',
        of: (raw) => latest(raw, 'lastUpdateTime'),
      },
    ],
    notes:
      'The project’s composed applications (`app.k8s.io`); empty where the cluster serves no `app.k8s.io/v1beta1`.',
  }),
  kind({
    resource: 'dashboards',
    group: 'monitoring.kapi.io',
    version: 'v1alpha2',
    kind: 'Dashboard',
    namespaced: true,
    notes: 'A project’s custom monitoring dashboards (KubeSphere’s `monitoring.kubesphere.io` Dashboard).',
  }),
  kind({
    resource: 'clusterdashboards',
    group: 'monitoring.kapi.io',
    version: 'v1alpha2',
    kind: 'ClusterDashboard',
    namespaced: false,
    notes: 'The cluster’s custom monitoring dashboards (KubeSphere’s `monitoring.kubesphere.io` ClusterDashboard).',
  }),
  kind({
    resource: 'workspacerolebindings',
    group: 'iam.kapi.io',
    version: 'v1alpha2',
    kind: 'WorkspaceRoleBinding',
    namespaced: false,
    fields: [
      {
        parameter: 'workspace',
        description: 'Exact workspace (the label `kapi.io/workspace`).',
        of: (raw) => {
          const workspace = raw?.metadata?.labels?.['kapi.io/workspace'];
          return typeof workspace === 'string' ? workspace : undefined;
        },
      },
      subjectField,
      {
        parameter: 'workspacerole',
        description: 'Exact workspace role (`roleRef.name`).',
        of: (raw) => (typeof raw?.roleRef?.name === 'string' ? raw.roleRef.name : undefined),
      },
    ],
    notes:
      'kapi’s own kind: workspace memberships (SPEC §18); `workspace`, `subject` and `workspacerole` are kapi’s filters.',
  }),
  kind({
    resource: 'groups',
    group: 'iam.kapi.io',
    version: 'v1alpha2',
    kind: 'Group',
    namespaced: false,
    fields: [
      {
        parameter: 'workspace',
        description: 'Exact workspace (the label `kapi.io/workspace`).',
        of: (raw) => labelAt(raw, 'kapi.io/workspace'),
      },
    ],
    notes: 'A workspace’s departments (KubeSphere’s Groups), each named after its display name (`generateName`).',
  }),
  kind({
    resource: 'groupbindings',
    group: 'iam.kapi.io',
    version: 'v1alpha2',
    kind: 'GroupBinding',
    namespaced: false,
    fields: [
      {
        parameter: 'workspace',
        description: 'Exact workspace (the label `kapi.io/workspace`).',
        of: (raw) => labelAt(raw, 'kapi.io/workspace'),
      },
      {
        parameter: 'user',
        description: 'A user it puts in the department (`users`).',
        of: (raw) => (Array.isArray(raw?.users) ? raw.users.filter((u: unknown) => typeof u === 'string') : []),
      },
    ],
    notes: 'Users of a department; `user` is KubeSphere’s filter.',
  }),
  kind({
    resource: 'events',
    group: '',
    version: 'v1',
    kind: 'Event',
    namespaced: true,
    status: {
      values: ['normal', 'warning'],
      caseInsensitive: true,
      description: 'The event’s `type` (Normal, Warning), in any case.',
      of: (raw) => indexOf(['normal', 'warning'], raw?.type, true),
    },
    times: [
      {
        sortBy: ['lastTimestamp'],
        description: '`lastTimestamp`, else `eventTime`, else the creation time.',
        of: (raw) => {
          const last = time(raw?.lastTimestamp);
          if (!Number.isNaN(last)) return last;
          const at = time(raw?.eventTime);
          return Number.isNaN(at) ? time(raw?.metadata?.creationTimestamp) : at;
        },
      },
    ],
    fields: [
      {
        parameter: 'involvedObjectKind',
        description: 'Exact `involvedObject.kind`.',
        of: (raw) => (typeof raw?.involvedObject?.kind === 'string' ? raw.involvedObject.kind : undefined),
      },
      {
        parameter: 'involvedObjectName',
        description: 'Exact `involvedObject.name`.',
        of: (raw) => (typeof raw?.involvedObject?.name === 'string' ? raw.involvedObject.name : undefined),
      },
      {
        parameter: 'reason',
        description: 'Exact `reason`.',
        of: (raw) => (typeof raw?.reason === 'string' ? raw.reason : undefined),
      },
    ],
    notes: 'Not in KubeSphere 3.4: kapi’s own (status from `type`, sort by `lastTimestamp`, involved-object filters).',
  }),
];

/**
 * A User without what no answer may carry: its password hash, the addresses of its failed logins, and kubectl's
 * last-applied-configuration (a copy of the object as applied: hash included, and an old hash after a change).
 */
export function userAsAnswered(raw: Raw): Raw {
  const spec = raw?.spec;
  const status = raw?.status;
  const annotations = raw?.metadata?.annotations;
  const keepSpec = !spec || typeof spec !== 'object' || !('password' in spec);
  const keepStatus = !status || typeof status !== 'object' || !('failedLogins' in status);
  const keepAnnotations = !annotations || typeof annotations !== 'object' || !(LAST_APPLIED in annotations);
  if (keepSpec && keepStatus && keepAnnotations) return raw;
  const { password: _password, ...shownSpec } = keepSpec ? {} : spec;
  const { failedLogins: _failed, ...shownStatus } = keepStatus ? {} : status;
  const { [LAST_APPLIED]: _applied, ...shownAnnotations } = keepAnnotations ? {} : annotations;
  return {
    ...raw,
    ...(!keepAnnotations && { metadata: { ...raw.metadata, annotations: shownAnnotations } }),
    ...(!keepSpec && { spec: shownSpec }),
    ...(!keepStatus && { status: shownStatus }),
  };
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export const KINDS_BY_RESOURCE: ReadonlyMap<string, KindDefinition> = new Map(
  KINDS.map((definition) => [definition.resource, definition]),
);

/** `sortBy` values every kind accepts (KubeSphere's DefaultObjectMetaCompare). */
export const COMMON_SORT_BY = ['creationTimestamp', 'createTime', 'name'] as const;

export function sortByValues(definition: KindDefinition): string[] {
  return [
    ...COMMON_SORT_BY,
    ...definition.times.flatMap((t) => t.sortBy),
    ...(definition.sortByStatus ? ['status'] : []),
  ];
}

/** The API version of a kind (`v1`, `apps/v1`). */
export function apiVersionOf(definition: KindDefinition): string {
  return definition.group ? `${definition.group}/${definition.version}` : definition.version;
}

/** The collection path at kube-apiserver: `/api/v1/pods`, `/apis/apps/v1/namespaces/{ns}/deployments`. */
export function kubePath(definition: KindDefinition, namespace?: string): string {
  const prefix = definition.group ? `/apis/${definition.group}/${definition.version}` : `/api/${definition.version}`;
  const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${prefix}${scope}/${definition.resource}`;
}
