import { matchesLabelSelector, parseLabelSelector } from '../kube/label-selector.js';
import type { KubeObject, ObjectStrategy, ResourceType } from './resource-types.js';
import type { FieldError } from './status.js';
import {
  base,
  defaultPodTemplate,
  onlyMetadataFields,
  podTemplateErrors,
  record,
  writable,
  type Obj,
} from './type-helpers.js';

/**
 * apps/v1 (Deployment, StatefulSet, DaemonSet, ReplicaSet) and batch/v1 (Job, CronJob) with the defaults and the
 * validation a client notices on a fresh cluster (checked against kube-apiserver 1.32 and 1.26): spec defaults, pod
 * template defaults, the status a new object starts with (no controller runs here, so it stays so), selectors that
 * must match the template's labels, a Job's generated selector and labels, the restart policies a Job allows.
 */
const APPS = 'apps';
const BATCH = 'batch';

/** A status a new object of the kind starts with, kept on updates of the main resource (the status subresource changes it). */
function withStatus(initial: () => Obj, create?: (obj: KubeObject) => void): ObjectStrategy {
  return {
    prepareForCreate(obj) {
      create?.(obj);
      obj.status = initial();
    },
    prepareForUpdate(obj, old) {
      create?.(obj);
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    },
  };
}

/** A label selector object (matchLabels, matchExpressions) as a parsed selector; undefined when absent. */
function selectorOf(value: unknown): ReturnType<typeof parseLabelSelector> | undefined {
  const selector = record(value);
  if (value === undefined || value === null) return undefined;
  const terms: string[] = [];
  for (const [key, v] of Object.entries(record(selector.matchLabels))) terms.push(`${key}=${String(v)}`);
  for (const item of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    const e = record(item);
    const values = Array.isArray(e.values) ? e.values.map(String).join(',') : '';
    switch (e.operator) {
      case 'In':
        terms.push(`${String(e.key)} in (${values})`);
        break;
      case 'NotIn':
        terms.push(`${String(e.key)} notin (${values})`);
        break;
      case 'Exists':
        terms.push(String(e.key));
        break;
      case 'DoesNotExist':
        terms.push(`!${String(e.key)}`);
        break;
    }
  }
  try {
    return parseLabelSelector(terms.join(','));
  } catch {
    return undefined;
  }
}

/** The selector every apps/v1 workload needs, and that must select its own template. */
function selectorErrors(spec: Obj): FieldError[] {
  const errors: FieldError[] = [];
  const labels = record(record(record(spec.template).metadata).labels) as Record<string, string>;
  const selector = selectorOf(spec.selector);
  if (spec.selector === undefined || spec.selector === null) {
    errors.push({ type: 'Required', field: 'spec.selector' });
  }
  if (!selector || !matchesLabelSelector(selector, labels) || selector.requirements.length === 0) {
    errors.push({
      type: 'Invalid',
      field: 'spec.template.metadata.labels',
      value: labels,
      detail: '`selector` does not match template `labels`',
    });
  }
  return errors;
}

function workloadStrategy(
  defaults: (spec: Obj) => void,
  initialStatus: () => Obj,
  restartPolicy = 'Always',
): ObjectStrategy {
  const applyDefaults = (obj: KubeObject) => {
    const spec = writable(obj.spec);
    obj.spec = spec;
    defaults(spec);
    spec.template = defaultPodTemplate(spec.template, restartPolicy);
  };
  return {
    ...withStatus(initialStatus, applyDefaults),
    validate(obj) {
      const spec = record(obj.spec);
      return [...selectorErrors(spec), ...podTemplateErrors('spec.template', spec.template)];
    },
  };
}

const deploymentStrategy = workloadStrategy(
  (spec) => {
    spec.replicas ??= 1;
    spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
  },
  () => ({}),
);

const replicaSetStrategy = workloadStrategy(
  (spec) => {
    spec.replicas ??= 1;
  },
  () => ({ replicas: 0 }),
);

/** The claim retention policy is defaulted from 1.27, when its feature gate went beta. */
const statefulSetStrategy = (minor: number) =>
  workloadStrategy(
    (spec) => {
      spec.replicas ??= 1;
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
      spec.revisionHistoryLimit ??= 10;
      if (minor >= 27) spec.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' };
    },
    () => ({ replicas: 0, availableReplicas: 0 }),
  );

const daemonSetStrategy = workloadStrategy(
  (spec) => {
    spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
    spec.revisionHistoryLimit ??= 10;
  },
  () => ({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }),
);

const JOB_RESTART_POLICIES = ['OnFailure', 'Never'];

/** The errors of a Job spec (also a CronJob's job template), under `field`. */
function jobSpecErrors(field: string, spec: Obj): FieldError[] {
  const errors = podTemplateErrors(`${field}.template`, spec.template);
  const restartPolicy = record(record(spec.template).spec).restartPolicy;
  if (restartPolicy === undefined || restartPolicy === '') {
    errors.push({
      type: 'Required',
      field: `${field}.template.spec.restartPolicy`,
      detail: 'valid values: "OnFailure", "Never"',
    });
  } else if (!JOB_RESTART_POLICIES.includes(String(restartPolicy))) {
    errors.push({
      type: 'NotSupported',
      field: `${field}.template.spec.restartPolicy`,
      value: restartPolicy,
      detail: 'supported values: "OnFailure", "Never"',
    });
  }
  return errors;
}

function defaultJobSpec(spec: Obj): void {
  spec.parallelism ??= 1;
  spec.completions ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= 'TerminatingOrFailed';
  // kube leaves restartPolicy unset here: a template without one is refused, not defaulted.
  const template = writable(spec.template);
  const restartPolicy = record(template.spec).restartPolicy;
  spec.template = defaultPodTemplate(template, '');
  const templateSpec = record(record(spec.template).spec);
  if (restartPolicy === undefined) delete templateSpec.restartPolicy;
}

/**
 * A Job gets the controller-uid selector and labels kube generates (unless `manualSelector`) on its template, and
 * the template's labels when it has none of its own, as the batch strategy does on create. From 1.27 the labels also
 * come with the `batch.kubernetes.io/` prefix (the selector uses it) and `manualSelector: false` is written.
 */
function jobStrategy(minor: number): ObjectStrategy {
  const prefixed = minor >= 27;
  return {
    prepareForCreate(obj) {
      const spec = writable(obj.spec);
      obj.spec = spec;
      defaultJobSpec(spec);
      const uid = obj.metadata.uid as string;
      const name = obj.metadata.name as string;
      if (spec.manualSelector !== true) {
        if (prefixed) spec.manualSelector = false;
        const generated: Record<string, string> = prefixed
          ? {
              'batch.kubernetes.io/controller-uid': uid,
              'batch.kubernetes.io/job-name': name,
              'controller-uid': uid,
              'job-name': name,
            }
          : { 'controller-uid': uid, 'job-name': name };
        spec.selector = {
          matchLabels: prefixed ? { 'batch.kubernetes.io/controller-uid': uid } : { 'controller-uid': uid },
        };
        const template = writable(spec.template);
        const metadata = writable(template.metadata);
        metadata.labels = { ...(metadata.labels as Obj | undefined), ...generated };
        template.metadata = metadata;
        spec.template = template;
      }
      const labels = obj.metadata.labels;
      if (labels === undefined || Object.keys(labels).length === 0) {
        obj.metadata.labels = { ...(record(record(spec.template).metadata).labels as Record<string, string>) };
      }
      obj.status = {};
    },
    prepareForUpdate(obj, old) {
      const spec = writable(obj.spec);
      obj.spec = spec;
      defaultJobSpec(spec);
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    },
    validate(obj) {
      return jobSpecErrors('spec', record(obj.spec));
    },
  };
}

const cronJobStrategy: ObjectStrategy = {
  ...withStatus(
    () => ({}),
    (obj) => {
      const spec = writable(obj.spec);
      obj.spec = spec;
      spec.concurrencyPolicy ??= 'Allow';
      spec.suspend ??= false;
      spec.successfulJobsHistoryLimit ??= 3;
      spec.failedJobsHistoryLimit ??= 1;
      const jobTemplate = writable(spec.jobTemplate);
      const metadata = writable(jobTemplate.metadata);
      metadata.creationTimestamp ??= null;
      jobTemplate.metadata = metadata;
      const jobSpec = writable(jobTemplate.spec);
      const restartPolicy = record(record(jobSpec.template).spec).restartPolicy;
      jobSpec.template = defaultPodTemplate(jobSpec.template, '');
      if (restartPolicy === undefined) delete record(record(jobSpec.template).spec).restartPolicy;
      jobTemplate.spec = jobSpec;
      spec.jobTemplate = jobTemplate;
    },
  ),
  validate(obj) {
    const spec = record(obj.spec);
    const errors: FieldError[] = [];
    if (typeof spec.schedule !== 'string' || spec.schedule === '') {
      errors.push({ type: 'Required', field: 'spec.schedule' });
    }
    errors.push(...jobSpecErrors('spec.jobTemplate.spec', record(record(spec.jobTemplate).spec)));
    return errors;
  },
};

function appsType(resource: string, kind: string, shortNames: string[], strategy: ObjectStrategy): ResourceType {
  return base({
    group: APPS,
    resource,
    singular: resource.replace(/s$/, ''),
    kind,
    namespaced: true,
    shortNames,
    categories: ['all'],
    subresources: ['status'],
    tracksGeneration: true,
    unsupportedField: onlyMetadataFields,
    strategy,
  });
}

export function workloadTypes(kubernetesMinor: number): ResourceType[] {
  return [
    appsType('deployments', 'Deployment', ['deploy'], deploymentStrategy),
    appsType('statefulsets', 'StatefulSet', ['sts'], statefulSetStrategy(kubernetesMinor)),
    appsType('daemonsets', 'DaemonSet', ['ds'], daemonSetStrategy),
    appsType('replicasets', 'ReplicaSet', ['rs'], replicaSetStrategy),
    base({
      group: BATCH,
      resource: 'jobs',
      singular: 'job',
      kind: 'Job',
      namespaced: true,
      categories: ['all'],
      subresources: ['status'],
      tracksGeneration: true,
      // kube's batch/v1 conversion offers one field beyond the metadata, and words its refusal its own way.
      fieldLabels: { 'status.successful': (obj) => String(Number(record(obj.status).succeeded ?? 0)) },
      unsupportedField: (field) => `field label "${field}" not supported for Job`,
      strategy: jobStrategy(kubernetesMinor),
    }),
    base({
      group: BATCH,
      resource: 'cronjobs',
      singular: 'cronjob',
      kind: 'CronJob',
      namespaced: true,
      shortNames: ['cj'],
      categories: ['all'],
      subresources: ['status'],
      tracksGeneration: true,
      unsupportedField: onlyMetadataFields,
      strategy: cronJobStrategy,
    }),
  ];
}
