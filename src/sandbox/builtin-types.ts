import { clusterTypes } from './cluster-types.js';
import { NEWEST_KUBERNETES_MINOR } from './discovery.js';
import { rbacTypes } from './rbac-types.js';
import type { KubeObject, ObjectStrategy, ResourceType } from './resource-types.js';
import { badRequest, forbidden, type FieldError } from './status.js';
import {
  base,
  containerErrors,
  defaultContainers,
  flag,
  onlyMetadataFields,
  record,
  text,
  writable,
  type Obj,
} from './type-helpers.js';
import { workloadTypes } from './workload-types.js';

/**
 * The built-in kinds the sandbox serves, with the defaulting and validation of kube's registry strategies that a
 * client can notice (pods start Pending, namespaces carry their name label, Secret stringData folds into data,
 * Services get a cluster IP, ...). Deliberately not a full port: enough to behave like a fresh cluster.
 */
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

function dataKeyErrors(field: string, data: unknown): FieldError[] {
  if (data === undefined) return [];
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return [{ type: 'Invalid', field, value: data, detail: 'must be a map of strings' }];
  }
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(data)) {
    if (!CONFIG_KEY.test(key) || key.length > 253) {
      errors.push({
        type: 'Invalid',
        field: `${field}[${key}]`,
        value: key,
        detail:
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      });
    }
    if (typeof value !== 'string')
      errors.push({ type: 'Invalid', field: `${field}[${key}]`, value, detail: 'must be a string' });
  }
  return errors;
}

const namespaceStrategy: ObjectStrategy = {
  prepareForCreate(obj) {
    const name = obj.metadata.name as string;
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': name };
    obj.spec = { finalizers: ['kubernetes'], ...record(obj.spec) };
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name as string };
    obj.spec = old.spec;
  },
  // kube's namespace status strategy resets the spec only: labels and annotations sent with a status write are kept
  statusWritesMetadata: true,
  prepareForStatusUpdate(obj) {
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name as string };
  },
};

/** QoS class from the containers' requests and limits, as kube computes it. */
export function qosClass(spec: Obj): string {
  const containers = [...((spec.containers as Obj[]) ?? []), ...((spec.initContainers as Obj[]) ?? [])];
  let any = false;
  let guaranteed = true;
  for (const container of containers) {
    const resources = record(container.resources);
    const requests = record(resources.requests);
    const limits = record(resources.limits);
    if (Object.keys(requests).length || Object.keys(limits).length) any = true;
    for (const name of ['cpu', 'memory']) {
      if (limits[name] === undefined || (requests[name] !== undefined && requests[name] !== limits[name]))
        guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** The priority classes every cluster has (kube-apiserver creates them at start); the sandbox serves no others. */
const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  'system-node-critical': 2_000_001_000,
  'system-cluster-critical': 2_000_000_000,
};

/**
 * The Priority admission plugin: the priority comes from priorityClassName (0 without one); a class that does not
 * exist, or an integer priority other than the computed one, is refused (403).
 */
function admitPriority(obj: KubeObject, spec: Obj): void {
  const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  const computed = className ? SYSTEM_PRIORITY_CLASSES[className] : 0;
  const name = String(obj.metadata.name ?? '');
  const pods = { group: '', resource: 'pods' };
  if (computed === undefined) throw forbidden(pods, name, `no PriorityClass with name ${className} was found`);
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== computed) {
    throw forbidden(
      pods,
      name,
      `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; ` +
        `priority admission controller computed ${computed} from the given PriorityClass name`,
    );
  }
  spec.priority = computed;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
}

/** The DefaultTolerationSeconds admission plugin: five minutes on a not-ready or unreachable node. */
function defaultTolerations(spec: Obj): void {
  const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as Obj[]) : [];
  const added = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']
    .filter(
      (key) =>
        !tolerations.some(
          (t) => (t.key === key || (t.operator === 'Exists' && !t.key)) && (!t.effect || t.effect === 'NoExecute'),
        ),
    )
    .map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }));
  if (added.length > 0) spec.tolerations = [...tolerations, ...added];
}

const podStrategy: ObjectStrategy = {
  prepareForCreate(obj) {
    const spec = writable(obj.spec);
    obj.spec = spec;
    admitPriority(obj, spec);
    defaultTolerations(spec);
    spec.restartPolicy ??= 'Always';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.serviceAccountName ??= 'default';
    spec.serviceAccount ??= spec.serviceAccountName;
    spec.securityContext ??= {};
    spec.schedulerName ??= 'default-scheduler';
    spec.enableServiceLinks ??= true;
    defaultContainers(spec.containers);
    defaultContainers(spec.initContainers);
    obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
  },
  prepareForUpdate(obj, old) {
    obj.status = old.status;
  },
  validate(obj) {
    const spec = record(obj.spec);
    return [
      ...containerErrors('spec.containers', spec.containers, true),
      ...containerErrors('spec.initContainers', spec.initContainers, false),
    ];
  },
};

function foldStringData(obj: KubeObject): void {
  const data: Obj = { ...record(obj.data) };
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
      throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data in data[${key}]`);
    }
  }
  for (const [key, value] of Object.entries(record(obj.stringData))) {
    data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  }
  delete obj.stringData;
  if (Object.keys(data).length > 0 || obj.data !== undefined) obj.data = data;
}

const secretStrategy: ObjectStrategy = {
  prepareForCreate(obj) {
    foldStringData(obj);
    obj.type ??= 'Opaque';
  },
  prepareForUpdate(obj) {
    foldStringData(obj);
    obj.type ??= 'Opaque';
  },
  validate(obj, old) {
    const errors = dataKeyErrors('data', obj.data);
    if (old && old.type !== obj.type) {
      errors.push({ type: 'Invalid', field: 'type', value: obj.type, detail: 'field is immutable' });
    }
    return errors;
  },
};

const configMapStrategy: ObjectStrategy = {
  validate(obj) {
    return dataKeyErrors('data', obj.data);
  },
};

/** Services get a cluster IP from 10.96.0.0/12, as the default service CIDR hands them out. */
function serviceStrategy(): ObjectStrategy {
  let next = 10;
  const allocate = (): string => {
    const n = next++;
    return `10.${96 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;
  };
  return {
    prepareForCreate(obj) {
      const spec = writable(obj.spec);
      obj.spec = spec;
      spec.type ??= 'ClusterIP';
      if (spec.type !== 'ExternalName') {
        if (spec.clusterIP === undefined || spec.clusterIP === '') spec.clusterIP = allocate();
        spec.clusterIPs ??= [spec.clusterIP];
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
        spec.internalTrafficPolicy ??= 'Cluster';
      }
      spec.sessionAffinity ??= 'None';
      if (Array.isArray(spec.ports)) {
        for (const item of spec.ports) {
          const port = writable(item);
          port.protocol ??= 'TCP';
          port.targetPort ??= port.port;
        }
      }
      obj.status = { loadBalancer: {} };
    },
    prepareForUpdate(obj, old) {
      const spec = writable(obj.spec);
      const oldSpec = record(old.spec);
      obj.spec = spec;
      if (spec.clusterIP === undefined || spec.clusterIP === '') spec.clusterIP = oldSpec.clusterIP;
      if (spec.clusterIPs === undefined) spec.clusterIPs = oldSpec.clusterIPs;
      obj.status = old.status;
    },
    validate(obj, old) {
      const spec = record(obj.spec);
      const errors: FieldError[] = [];
      const headless = spec.clusterIP === 'None' || spec.type === 'ExternalName';
      if (!headless && (!Array.isArray(spec.ports) || spec.ports.length === 0)) {
        errors.push({ type: 'Required', field: 'spec.ports' });
      }
      if (old && record(old.spec).clusterIP !== spec.clusterIP) {
        errors.push({
          type: 'Invalid',
          field: 'spec.clusterIPs[0]',
          value: spec.clusterIP,
          detail: 'may not change once set',
        });
      }
      return errors;
    },
  };
}

/** The node status fields Go always prints (no omitempty): an absent kubelet port is 0, absent node info "". */
const NODE_INFO_FIELDS = [
  'machineID',
  'systemUUID',
  'bootID',
  'kernelVersion',
  'osImage',
  'containerRuntimeVersion',
  'kubeletVersion',
  'kubeProxyVersion',
  'operatingSystem',
  'architecture',
];

function defaultNodeStatus(obj: KubeObject): void {
  const status = writable(obj.status);
  const endpoints = writable(status.daemonEndpoints);
  endpoints.kubeletEndpoint = { Port: 0, ...record(endpoints.kubeletEndpoint) };
  status.daemonEndpoints = endpoints;
  const nodeInfo = record(status.nodeInfo);
  status.nodeInfo = { ...Object.fromEntries(NODE_INFO_FIELDS.map((field) => [field, ''])), ...nodeInfo };
  obj.status = status;
}

const NOT_READY_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

const nodeStrategy: ObjectStrategy = {
  prepareForCreate(obj) {
    // The TaintNodesByCondition admission plugin: a new node is not ready until its kubelet says so.
    const spec = writable(obj.spec);
    const taints = Array.isArray(spec.taints) ? (spec.taints as Obj[]) : [];
    if (!taints.some((taint) => taint.key === NOT_READY_TAINT.key && taint.effect === NOT_READY_TAINT.effect)) {
      spec.taints = [...taints, { ...NOT_READY_TAINT }];
    }
    obj.spec = spec;
    defaultNodeStatus(obj);
  },
  prepareForUpdate(obj, old) {
    // The main resource keeps the status; only the status subresource writes it.
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  },
  prepareForStatusUpdate: defaultNodeStatus,
};

/**
 * Fresh type objects per sandbox: strategies may hold per-sandbox state (the cluster-IP allocator), and defaults that
 * changed between releases follow the minor release the sandbox plays.
 */
export function builtinTypes(kubernetesMinor: number = NEWEST_KUBERNETES_MINOR): ResourceType[] {
  return [
    base({
      resource: 'namespaces',
      singular: 'namespace',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      subresources: ['status'],
      fieldLabels: { 'status.phase': text('status', 'phase') },
      returnsDeletedObject: true,
      nameRule: 'label',
      strategy: namespaceStrategy,
    }),
    base({
      resource: 'nodes',
      singular: 'node',
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      subresources: ['status'],
      fieldLabels: { 'spec.unschedulable': flag('spec', 'unschedulable') },
      strategy: nodeStrategy,
    }),
    base({
      resource: 'pods',
      singular: 'pod',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      subresources: ['status', 'log', 'exec', 'attach', 'portforward'],
      fieldLabels: {
        'spec.nodeName': text('spec', 'nodeName'),
        'spec.restartPolicy': text('spec', 'restartPolicy'),
        'spec.schedulerName': text('spec', 'schedulerName'),
        'spec.serviceAccountName': text('spec', 'serviceAccountName'),
        'spec.hostNetwork': flag('spec', 'hostNetwork'),
        'status.phase': text('status', 'phase'),
        'status.podIP': text('status', 'podIP'),
        'status.nominatedNodeName': text('status', 'nominatedNodeName'),
      },
      // metadata.generation of pods came with 1.33 (pod generation tracking); 1.26 and 1.32 have none, as their kits show.
      tracksGeneration: kubernetesMinor >= 33,
      returnsDeletedObject: true,
      strategy: podStrategy,
    }),
    base({
      resource: 'secrets',
      singular: 'secret',
      kind: 'Secret',
      namespaced: true,
      fieldLabels: { type: text('type') },
      strategy: secretStrategy,
    }),
    base({
      resource: 'configmaps',
      singular: 'configmap',
      kind: 'ConfigMap',
      namespaced: true,
      shortNames: ['cm'],
      unsupportedField: onlyMetadataFields,
      strategy: configMapStrategy,
    }),
    // what replicas elect a leader by (kube-controller-manager, kapi's controllers)
    base({
      resource: 'leases',
      singular: 'lease',
      kind: 'Lease',
      group: 'coordination.k8s.io',
      versions: ['v1'],
      namespaced: true,
    }),
    base({
      resource: 'services',
      singular: 'service',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      subresources: ['status'],
      fieldLabels: { 'spec.clusterIP': text('spec', 'clusterIP'), 'spec.type': text('spec', 'type') },
      nameRule: 'dns1035',
      strategy: serviceStrategy(),
    }),
    base({
      resource: 'serviceaccounts',
      singular: 'serviceaccount',
      kind: 'ServiceAccount',
      namespaced: true,
      shortNames: ['sa'],
      unsupportedField: onlyMetadataFields,
    }),
    ...rbacTypes(),
    ...workloadTypes(kubernetesMinor),
    ...clusterTypes(),
  ];
}
