import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isValidName } from './validation.js';
import type { TypeLifecycle } from './registry-store.js';
import type { FieldValueOf, KubeObject, ObjectStrategy, ResourceRegistry, ResourceType } from './resource-types.js';
import type { FieldError } from './status.js';
import type { ObjectStore } from './store.js';
import { parseStored } from './stored-object.js';
import { onlyMetadataFields } from './type-helpers.js';

/**
 * CustomResourceDefinitions (apiextensions.k8s.io/v1): the CRD objects themselves, and the resource types they
 * register. A created CRD is immediately Established (no controller delay); deleting it deletes its custom
 * resources first, as kube's finalizer does, and ends their watches.
 */
type Obj = Record<string, unknown>;

function record(value: unknown): Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  status: boolean;
  selectableFields: string[];
}

function versionsOf(spec: Obj): CrdVersion[] {
  return (Array.isArray(spec.versions) ? spec.versions : []).map((item) => {
    const v = record(item);
    return {
      name: String(v.name ?? ''),
      served: v.served !== false,
      storage: v.storage === true,
      status: record(v.subresources).status !== undefined,
      selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields : [])
        .map((f) => String(record(f).jsonPath ?? ''))
        .filter((p) => p.startsWith('.')),
    };
  });
}

const API_APPROVED = 'api-approved.kubernetes.io';
const PROTECTED_GROUP = /(^|\.)(k8s\.io|kubernetes\.io)$/;

function validateCrd(obj: KubeObject): FieldError[] {
  const spec = record(obj.spec);
  const names = record(spec.names);
  const errors: FieldError[] = [];
  const group = String(spec.group ?? '');
  if (!group) errors.push({ type: 'Required', field: 'spec.group' });
  else if (!group.includes('.') || !isValidName(group, 'subdomain')) {
    errors.push({
      type: 'Invalid',
      field: 'spec.group',
      value: group,
      detail: 'should be a domain with at least one dot',
    });
  }
  for (const key of ['plural', 'kind']) {
    if (!names[key]) errors.push({ type: 'Required', field: `spec.names.${key}` });
  }
  if (names.plural && !isValidName(String(names.plural), 'label')) {
    errors.push({
      type: 'Invalid',
      field: 'spec.names.plural',
      value: names.plural,
      detail: 'a lowercase RFC 1123 label',
    });
  }
  if (obj.metadata.name !== `${String(names.plural)}.${group}`) {
    errors.push({
      type: 'Invalid',
      field: 'metadata.name',
      value: obj.metadata.name,
      detail: 'must be spec.names.plural+"."+spec.group',
    });
  }
  // Kubernetes' own groups are protected: a CRD in one says who approved its API (KEP 1111), as kube-apiserver asks
  if (PROTECTED_GROUP.test(group) && !obj.metadata.annotations?.[API_APPROVED]) {
    errors.push({
      type: 'Required',
      field: `metadata.annotations[${API_APPROVED}]`,
      detail: `protected groups must have approval annotation "${API_APPROVED}", see https://github.com/kubernetes/enhancements/pull/1111`,
    });
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push({
      type: 'NotSupported',
      field: 'spec.scope',
      value: spec.scope,
      detail: 'supported values: "Cluster", "Namespaced"',
    });
  }
  const versions = versionsOf(spec);
  if (versions.length === 0) errors.push({ type: 'Required', field: 'spec.versions' });
  else if (versions.filter((v) => v.storage).length !== 1) {
    errors.push({
      type: 'Invalid',
      field: 'spec.versions',
      value: versions.map((v) => v.name),
      detail: 'must have exactly one version marked as storage version',
    });
  }
  versions.forEach((v, i) => {
    if (!isValidName(v.name, 'dns1035')) {
      errors.push({ type: 'Invalid', field: `spec.versions[${i}].name`, value: v.name, detail: 'a DNS-1035 label' });
    }
  });
  return errors;
}

function acceptedNames(spec: Obj): Obj {
  const names = record(spec.names);
  const kind = String(names.kind ?? '');
  return {
    plural: names.plural,
    singular: names.singular ?? kind.toLowerCase(),
    ...(strings(names.shortNames).length ? { shortNames: strings(names.shortNames) } : {}),
    kind,
    listKind: names.listKind ?? `${kind}List`,
    ...(strings(names.categories).length ? { categories: strings(names.categories) } : {}),
  };
}

function established(obj: KubeObject, now: string): void {
  const spec = record(obj.spec);
  spec.names = acceptedNames(spec);
  spec.conversion ??= { strategy: 'None' };
  const storage = versionsOf(spec).find((v) => v.storage)?.name;
  const condition = (type: string, reason: string, message: string): Obj => ({
    type,
    status: 'True',
    lastTransitionTime: now,
    reason,
    message,
  });
  obj.status = {
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    acceptedNames: spec.names,
    storedVersions: storage ? [storage] : [],
  };
}

function jsonPathValue(path: string): FieldValueOf {
  const keys = path.slice(1).split('.');
  return (obj) => {
    let current: unknown = obj;
    for (const key of keys) current = record(current)[key];
    return current === undefined || current === null ? '' : String(current);
  };
}

/** The resource type a CRD defines (its served versions, storage version first). */
export function customResourceType(crd: KubeObject): ResourceType | undefined {
  const spec = record(crd.spec);
  const names = acceptedNames(spec);
  const versions = versionsOf(spec).filter((v) => v.served);
  const storage = versions.find((v) => v.storage) ?? versions[0];
  if (!storage) return undefined;
  const fieldLabels: Record<string, FieldValueOf> = {};
  for (const path of storage.selectableFields) fieldLabels[path.slice(1)] = jsonPathValue(path);
  return {
    group: String(spec.group),
    versions: [storage.name, ...versions.filter((v) => v !== storage).map((v) => v.name)],
    resource: String(names.plural),
    singular: String(names.singular),
    kind: String(names.kind),
    listKind: String(names.listKind),
    namespaced: spec.scope === 'Namespaced',
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
    subresources: storage.status ? ['status'] : [],
    fieldLabels,
    builtin: false,
    tracksGeneration: true,
    returnsDeletedObject: true,
    nameRule: 'subdomain',
    strategy: {},
    crdName: crd.metadata.name as string,
  };
}

const crdStrategy: ObjectStrategy = {
  prepareForCreate(obj) {
    established(obj, new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'));
  },
  prepareForUpdate(obj, old) {
    const status = record(old.status);
    established(obj, String(record(record(status.conditions)[0]).lastTransitionTime ?? new Date().toISOString()));
  },
  validate: (obj) => validateCrd(obj),
};

export function crdType(): ResourceType {
  return {
    group: 'apiextensions.k8s.io',
    versions: ['v1'],
    resource: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    kind: 'CustomResourceDefinition',
    listKind: 'CustomResourceDefinitionList',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    subresources: ['status'],
    fieldLabels: {},
    unsupportedField: onlyMetadataFields,
    builtin: true,
    tracksGeneration: true,
    returnsDeletedObject: true,
    nameRule: 'subdomain',
    strategy: crdStrategy,
  };
}

/** Keeps the registry in step with the stored CRDs. */
export function crdLifecycle(deps: {
  registry: ResourceRegistry;
  store: ObjectStore;
  /** Ends the open watches of a type that goes away. */
  closeWatches(type: ResourceType): void;
}): TypeLifecycle {
  const register = (crd: KubeObject): void => {
    const type = customResourceType(crd);
    if (!type) return;
    const previous = deps.registry.byGroupResource(type.group, type.resource);
    deps.registry.register(type);
    deps.store.collection(type);
    if (previous && previous.kind !== type.kind) deps.closeWatches(previous);
  };
  return {
    afterCreate: (_type, _stored, obj) => register(obj),
    afterUpdate: (_type, _stored, obj) => register(obj),
    beforeDelete: (crdResource, stored) => {
      const type = customResourceType(parseStored(crdResource, stored));
      if (!type) return;
      const registered = deps.registry.byGroupResource(type.group, type.resource) ?? type;
      const collection = deps.store.collection(registered);
      for (const key of [...collection.sortedKeys()]) {
        const object = collection.get(key);
        if (object) deps.store.remove(registered, object);
      }
      deps.closeWatches(registered);
      deps.registry.unregister(type.group, type.resource);
      deps.store.dropCollection(registered);
    },
  };
}

/** Every CustomResourceDefinition document in the *.yaml / *.yml files of a directory (none if it is missing). */
export async function readCrdDirectory(dir: string): Promise<{ file: string; crd: KubeObject }[]> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  // yaml is only needed here; loading it lazily keeps it off the path of a server that never starts a sandbox.
  const { parseAllDocuments } = await import('yaml');
  const found: { file: string; crd: KubeObject }[] = [];
  for (const name of files) {
    const file = join(dir, name);
    for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
      const value = doc.toJS() as unknown;
      if (record(value).kind === 'CustomResourceDefinition') found.push({ file, crd: value as KubeObject });
    }
  }
  return found;
}
