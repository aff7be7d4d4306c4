import type { FieldValueOf, KubeObject, ResourceType } from './resource-types.js';
import type { FieldError } from './status.js';

/**
 * What the built-in kinds' strategies share: reading plain JSON defensively, field-selector extractors, the type
 * defaults, and the defaulting and validation of containers and pod templates (kube's pkg/apis/core defaults).
 */
export type Obj = Record<string, unknown>;
// Read once: field values are extracted for every stored object, and global lookups are slow in VM contexts.
const isArray = Array.isArray;
const EMPTY: Obj = Object.freeze({}) as Obj;

/** For reading: a shared empty object when the value is not an object. */
export function record(value: unknown): Obj {
  return value !== null && typeof value === 'object' && !isArray(value) ? (value as Obj) : EMPTY;
}

/** For writing: the object itself, or a fresh one. */
export function writable(value: unknown): Obj {
  return value !== null && typeof value === 'object' && !isArray(value) ? (value as Obj) : {};
}

export function path(obj: KubeObject, ...keys: string[]): unknown {
  let current: unknown = obj;
  for (const key of keys) current = record(current)[key];
  return current;
}

export const text =
  (...keys: string[]): FieldValueOf =>
  (obj) => {
    const value = path(obj, ...keys);
    return value === undefined || value === null ? '' : String(value);
  };

export const flag =
  (...keys: string[]): FieldValueOf =>
  (obj) =>
    String(path(obj, ...keys) === true);

/**
 * kube's answer to a field selector on a field a kind does not offer, for kinds without field label conversions of
 * their own (only metadata.name and metadata.namespace): apps, batch/cronjobs, configmaps, RBAC, storage...
 */
export function onlyMetadataFields(field: string): string {
  return `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`;
}

export function base(
  partial: Pick<ResourceType, 'resource' | 'singular' | 'kind' | 'namespaced'> & Partial<ResourceType>,
): ResourceType {
  return {
    group: '',
    versions: ['v1'],
    listKind: `${partial.kind}List`,
    shortNames: [],
    categories: [],
    subresources: [],
    fieldLabels: {},
    builtin: true,
    tracksGeneration: false,
    returnsDeletedObject: false,
    nameRule: 'subdomain',
    strategy: {},
    ...partial,
  };
}

function imagePullPolicy(image: unknown): string {
  const ref = String(image ?? '');
  if (ref.includes('@')) return 'IfNotPresent';
  const tag = /:([^/:]+)$/.exec(ref)?.[1];
  return !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

export function defaultContainers(list: unknown): void {
  if (!Array.isArray(list)) return;
  for (const item of list) {
    const container = writable(item);
    container.imagePullPolicy ??= imagePullPolicy(container.image);
    container.terminationMessagePath ??= '/dev/termination-log';
    container.terminationMessagePolicy ??= 'File';
    container.resources ??= {};
  }
}

export function containerErrors(field: string, list: unknown, required: boolean): FieldError[] {
  if (list === undefined && !required) return [];
  if (!Array.isArray(list) || (required && list.length === 0)) return [{ type: 'Required', field }];
  const errors: FieldError[] = [];
  list.forEach((item, i) => {
    const container = record(item);
    if (!container.name) errors.push({ type: 'Required', field: `${field}[${i}].name` });
    else if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(String(container.name))) {
      errors.push({
        type: 'Invalid',
        field: `${field}[${i}].name`,
        value: container.name,
        detail:
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
      });
    }
    if (!container.image) errors.push({ type: 'Required', field: `${field}[${i}].image` });
  });
  return errors;
}

/**
 * The defaults kube gives a pod template's spec (SetDefaults_PodSpec and the containers'), as a workload read back
 * shows them: what admission adds to pods (service account, priority, enableServiceLinks) is not there.
 */
export function defaultPodTemplate(template: unknown, restartPolicy = 'Always'): Obj {
  const tpl = writable(template);
  const metadata = writable(tpl.metadata);
  metadata.creationTimestamp ??= null;
  tpl.metadata = metadata;
  const spec = writable(tpl.spec);
  spec.restartPolicy ??= restartPolicy;
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  defaultContainers(spec.containers);
  defaultContainers(spec.initContainers);
  tpl.spec = spec;
  return tpl;
}

export function podTemplateErrors(field: string, template: unknown): FieldError[] {
  const spec = record(record(template).spec);
  return [
    ...containerErrors(`${field}.spec.containers`, spec.containers, true),
    ...containerErrors(`${field}.spec.initContainers`, spec.initContainers, false),
  ];
}
