import type { ObjectStrategy, ResourceType } from './resource-types.js';
import type { FieldError } from './status.js';
import { base, onlyMetadataFields, record, text, writable, type Obj } from './type-helpers.js';

/**
 * networking.k8s.io/v1 (Ingress, NetworkPolicy), storage.k8s.io/v1 (StorageClass), and core v1
 * PersistentVolumeClaim, PersistentVolume, ResourceQuota, LimitRange and Event, with the defaults, initial status and
 * validation a client sees on a fresh kube-apiserver (checked against 1.32 and 1.26). The storage-protection finalizers kube's admission adds
 * to claims and volumes are left out: no controller here would ever remove them (src/sandbox/README.md).
 */
const NETWORKING = 'networking.k8s.io';
const STORAGE = 'storage.k8s.io';

/** Status set on create and kept on updates of the main resource. */
function keepingStatus(initial: (() => Obj) | undefined, defaults: (obj: Obj) => void): ObjectStrategy {
  return {
    prepareForCreate(obj) {
      defaults(obj);
      if (initial) obj.status = initial();
    },
    prepareForUpdate(obj, old) {
      defaults(obj);
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    },
  };
}

const ingressStrategy: ObjectStrategy = {
  ...keepingStatus(
    () => ({ loadBalancer: {} }),
    () => undefined,
  ),
  validate(obj) {
    const spec = record(obj.spec);
    const errors: FieldError[] = [];
    const rules = Array.isArray(spec.rules) ? spec.rules : [];
    if (rules.length === 0 && spec.defaultBackend === undefined) {
      errors.push({
        type: 'Invalid',
        field: 'spec',
        value: null,
        detail: 'either `defaultBackend` or `rules` must be specified',
      });
    }
    rules.forEach((rule, r) => {
      const paths = record(record(rule).http).paths;
      (Array.isArray(paths) ? paths : []).forEach((item, p) => {
        if (!record(item).pathType) {
          errors.push({ type: 'Required', field: `spec.rules[${r}].http.paths[${p}].pathType` });
        }
      });
    });
    return errors;
  },
};

const networkPolicyStrategy: ObjectStrategy = {
  prepareForCreate: defaultPolicyTypes,
  prepareForUpdate: defaultPolicyTypes,
};

/** Ingress always, Egress when egress rules are given (kube's SetDefaults_NetworkPolicy). */
function defaultPolicyTypes(obj: Obj): void {
  const spec = writable(obj.spec);
  obj.spec = spec;
  spec.podSelector ??= {};
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

const claimStrategy: ObjectStrategy = {
  ...keepingStatus(
    () => ({ phase: 'Pending' }),
    (obj) => {
      const spec = writable(obj.spec);
      obj.spec = spec;
      spec.volumeMode ??= 'Filesystem';
    },
  ),
  validate(obj) {
    const spec = record(obj.spec);
    const errors: FieldError[] = [];
    if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0) {
      errors.push({ type: 'Required', field: 'spec.accessModes', detail: 'at least 1 access mode is required' });
    }
    if (record(record(spec.resources).requests).storage === undefined) {
      errors.push({ type: 'Required', field: 'spec.resources[storage]' });
    }
    return errors;
  },
};

const volumeStrategy: ObjectStrategy = {
  prepareForCreate(obj) {
    defaultVolume(obj);
    obj.status = { phase: 'Pending', lastPhaseTransitionTime: obj.metadata.creationTimestamp };
  },
  prepareForUpdate(obj, old) {
    defaultVolume(obj);
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  },
  validate(obj) {
    const spec = record(obj.spec);
    const errors: FieldError[] = [];
    if (record(spec.capacity).storage === undefined) errors.push({ type: 'Required', field: 'spec.capacity' });
    if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0) {
      errors.push({ type: 'Required', field: 'spec.accessModes' });
    }
    return errors;
  },
};

function defaultVolume(obj: Obj): void {
  const spec = writable(obj.spec);
  obj.spec = spec;
  spec.persistentVolumeReclaimPolicy ??= 'Retain';
  spec.volumeMode ??= 'Filesystem';
  const hostPath = spec.hostPath;
  if (hostPath !== null && typeof hostPath === 'object') (hostPath as Obj).type ??= '';
}

const storageClassStrategy: ObjectStrategy = {
  prepareForCreate: defaultStorageClass,
  prepareForUpdate: defaultStorageClass,
  validate(obj) {
    return obj.provisioner ? [] : [{ type: 'Required', field: 'provisioner' }];
  },
};

function defaultStorageClass(obj: Obj): void {
  obj.reclaimPolicy ??= 'Delete';
  obj.volumeBindingMode ??= 'Immediate';
}

/** The empty values kube fills into an Event that did not give them. */
const eventStrategy: ObjectStrategy = {
  prepareForCreate: defaultEvent,
  prepareForUpdate: defaultEvent,
  validate(obj) {
    const involved = record(obj.involvedObject);
    const errors: FieldError[] = [];
    if (obj.metadata.namespace && involved.namespace && involved.namespace !== obj.metadata.namespace) {
      errors.push({
        type: 'Invalid',
        field: 'involvedObject.namespace',
        value: involved.namespace,
        detail: 'does not match event.namespace',
      });
    }
    return errors;
  },
};

function defaultEvent(obj: Obj): void {
  obj.involvedObject ??= {};
  obj.source ??= {};
  obj.firstTimestamp ??= null;
  obj.lastTimestamp ??= null;
  obj.eventTime ??= null;
  obj.reportingComponent ??= '';
  obj.reportingInstance ??= '';
}

function eventFields(): ResourceType['fieldLabels'] {
  const involved = (field: string) => text('involvedObject', field);
  return {
    'involvedObject.kind': involved('kind'),
    'involvedObject.namespace': involved('namespace'),
    'involvedObject.name': involved('name'),
    'involvedObject.uid': involved('uid'),
    'involvedObject.apiVersion': involved('apiVersion'),
    'involvedObject.resourceVersion': involved('resourceVersion'),
    'involvedObject.fieldPath': involved('fieldPath'),
    reason: text('reason'),
    reportingComponent: text('reportingComponent'),
    source: text('source', 'component'),
    type: text('type'),
  };
}

/**
 * A quota's status is the quota controller's (kube-controller-manager's, which a bare cluster lacks): empty on create,
 * kept by updates of the quota, written through `/status`.
 */
const quotaStrategy: ObjectStrategy = keepingStatus(
  () => ({}),
  () => undefined,
);

export function clusterTypes(): ResourceType[] {
  return [
    base({
      group: NETWORKING,
      resource: 'ingresses',
      singular: 'ingress',
      kind: 'Ingress',
      namespaced: true,
      shortNames: ['ing'],
      subresources: ['status'],
      tracksGeneration: true,
      unsupportedField: onlyMetadataFields,
      strategy: ingressStrategy,
    }),
    base({
      group: NETWORKING,
      resource: 'networkpolicies',
      singular: 'networkpolicy',
      kind: 'NetworkPolicy',
      namespaced: true,
      shortNames: ['netpol'],
      tracksGeneration: true,
      unsupportedField: onlyMetadataFields,
      strategy: networkPolicyStrategy,
    }),
    base({
      group: STORAGE,
      resource: 'storageclasses',
      singular: 'storageclass',
      kind: 'StorageClass',
      namespaced: false,
      shortNames: ['sc'],
      unsupportedField: onlyMetadataFields,
      strategy: storageClassStrategy,
    }),
    base({
      resource: 'persistentvolumeclaims',
      singular: 'persistentvolumeclaim',
      kind: 'PersistentVolumeClaim',
      namespaced: true,
      shortNames: ['pvc'],
      subresources: ['status'],
      unsupportedField: onlyMetadataFields,
      strategy: claimStrategy,
    }),
    base({
      resource: 'persistentvolumes',
      singular: 'persistentvolume',
      kind: 'PersistentVolume',
      namespaced: false,
      shortNames: ['pv'],
      subresources: ['status'],
      unsupportedField: onlyMetadataFields,
      strategy: volumeStrategy,
    }),
    base({
      resource: 'resourcequotas',
      singular: 'resourcequota',
      kind: 'ResourceQuota',
      namespaced: true,
      shortNames: ['quota'],
      subresources: ['status'],
      unsupportedField: onlyMetadataFields,
      strategy: quotaStrategy,
    }),
    base({
      resource: 'limitranges',
      singular: 'limitrange',
      kind: 'LimitRange',
      namespaced: true,
      shortNames: ['limits'],
      unsupportedField: onlyMetadataFields,
    }),
    // kube-apiserver serves them (its endpoints controller fills them; the sandbox has none): a project's pages read them
    base({
      resource: 'endpoints',
      singular: 'endpoints',
      kind: 'Endpoints',
      namespaced: true,
      shortNames: ['ep'],
      unsupportedField: onlyMetadataFields,
    }),
    base({
      resource: 'events',
      singular: 'event',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      fieldLabels: eventFields(),
      strategy: eventStrategy,
    }),
  ];
}
