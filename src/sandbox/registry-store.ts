import { randomUUID } from 'node:crypto';
import { matchesFilter, type ObjectFilter } from './object-filter.js';
import { applyPatch, type PatchType } from './patch.js';
import { apiVersionOf, typeKey, type KubeObject, type ResourceType } from './resource-types.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  MODIFIED_CONFLICT,
  notFound,
  StatusError,
  type GroupResource,
} from './status.js';
import type { ObjectStore } from './store.js';
import { objectKey, parseStored, type StoredObject } from './stored-object.js';
import { kindMismatchMessage } from './decode-errors.js';
import { generateName, validateObjectMeta } from './validation.js';
import type { AdmittedWrite } from './admission.js';
import type { SandboxUser } from './identity.js';

/**
 * Create, update, patch and delete with kube-apiserver's semantics (its generic registry store): name generation,
 * uid/creationTimestamp/generation bookkeeping, optimistic concurrency on resourceVersion, the status subresource,
 * no-op updates that keep the resourceVersion, finalizers that turn a delete into setting deletionTimestamp, and
 * per-kind lifecycle hooks (namespaces, CRDs).
 */
export interface TypeLifecycle {
  afterCreate?(type: ResourceType, stored: StoredObject, obj: KubeObject): void;
  afterUpdate?(type: ResourceType, stored: StoredObject, obj: KubeObject): void;
  /** May refuse (throw) or clean up dependants before the object goes. */
  beforeDelete?(type: ResourceType, stored: StoredObject): void;
  afterDelete?(type: ResourceType, stored: StoredObject): void;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** The served version the request used, to check the body's apiVersion. */
  version?: string;
  /** Who writes: a request's user goes through validating admission; the sandbox's own writes (seed) do not. */
  user?: SandboxUser;
}

/** Validating admission (admission.ts): throws the Status that refuses a write. */
export interface WriteAdmission {
  admit(write: AdmittedWrite): void;
}

export interface DeleteOptions {
  dryRun?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  object: StoredObject;
  /** false: finalizers keep the object; it now carries a deletionTimestamp. */
  deleted: boolean;
}

export function groupResource(type: ResourceType): GroupResource {
  return { group: type.group, resource: type.resource };
}

export function nowTimestamp(now = Date.now()): string {
  return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** JSON with sorted keys, to tell a real change from a reordering. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

function withoutMetaAndStatus(obj: KubeObject, dropStatus: boolean): unknown {
  const { metadata: _m, kind: _k, apiVersion: _a, ...rest } = obj;
  if (dropStatus) delete rest.status;
  return rest;
}

export class RegistryStore {
  private readonly lifecycles = new Map<string, TypeLifecycle>();
  private admission: WriteAdmission | undefined;

  constructor(
    readonly store: ObjectStore,
    /** Namespaced writes need the namespace to exist; answers whether it does. */
    private readonly namespaceExists: (name: string) => boolean,
  ) {}

  setAdmission(admission: WriteAdmission): void {
    this.admission = admission;
  }

  setLifecycle(group: string, resource: string, lifecycle: TypeLifecycle): void {
    this.lifecycles.set(typeKey(group, resource), lifecycle);
  }

  private lifecycle(type: ResourceType): TypeLifecycle | undefined {
    return this.lifecycles.get(typeKey(type.group, type.resource));
  }

  has(type: ResourceType, namespace: string, name: string): boolean {
    return this.store.collection(type).get(objectKey(type.namespaced ? namespace : '', name)) !== undefined;
  }

  get(type: ResourceType, namespace: string, name: string): StoredObject {
    const stored = this.store.collection(type).get(objectKey(type.namespaced ? namespace : '', name));
    if (!stored) throw notFound(groupResource(type), name);
    return stored;
  }

  /** The body as an object of this type, or a 400 like kube's decoder gives. */
  private decode(type: ResourceType, body: unknown, version: string | undefined): KubeObject {
    if (!isObject(body)) throw badRequest(`the body of the request must be a JSON object of kind ${type.kind}`);
    if (body.kind !== undefined && body.kind !== '' && body.kind !== type.kind) {
      const bodyKind = String(body.kind);
      if (!type.builtin) {
        // Custom resources are unstructured: kube validates the kind field like any other.
        const name = isObject(body.metadata) ? String(body.metadata.name ?? '') : '';
        throw invalid({ group: type.group, kind: bodyKind }, name, [
          { type: 'Invalid', field: 'kind', value: bodyKind, detail: `must be ${type.kind}` },
        ]);
      }
      const bodyVersion =
        String(body.apiVersion ?? '')
          .split('/')
          .pop() ||
        (version ?? type.versions[0] ?? 'v1');
      throw badRequest(kindMismatchMessage(bodyKind, bodyVersion, type.group, type.kind));
    }
    if (body.apiVersion !== undefined && body.apiVersion !== '') {
      const served = type.versions.map((v) => apiVersionOf(type.group, v));
      const wanted = version ? apiVersionOf(type.group, version) : undefined;
      if (wanted ? body.apiVersion !== wanted : !served.includes(String(body.apiVersion))) {
        throw badRequest(
          `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${wanted ?? served[0]})`,
        );
      }
    }
    if (body.metadata === undefined) body.metadata = {};
    if (!isObject(body.metadata)) throw badRequest('metadata must be an object');
    const obj = body as KubeObject;
    delete obj.kind;
    delete obj.apiVersion;
    delete obj.metadata.managedFields;
    delete obj.metadata.selfLink;
    return obj;
  }

  private checkNamespace(type: ResourceType, obj: KubeObject, namespace: string): void {
    if (!type.namespaced) {
      delete obj.metadata.namespace;
      return;
    }
    const given = obj.metadata.namespace;
    if (given && given !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    obj.metadata.namespace = namespace;
  }

  private validate(type: ResourceType, obj: KubeObject, old: KubeObject | undefined): void {
    const errors = [...validateObjectMeta(type, obj), ...(type.strategy.validate?.(obj, old) ?? [])];
    if (errors.length > 0) throw invalid({ group: type.group, kind: type.kind }, obj.metadata.name ?? '', errors);
  }

  create(type: ResourceType, namespace: string, body: unknown, options: WriteOptions = {}): StoredObject {
    const obj = this.decode(type, body, options.version);
    this.checkNamespace(type, obj, namespace);
    const meta = obj.metadata;
    if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    if (type.namespaced && !this.namespaceExists(namespace))
      throw notFound({ group: '', resource: 'namespaces' }, namespace);
    const collection = this.store.collection(type);
    if (!meta.name && meta.generateName) {
      for (let attempt = 0; attempt < 8; attempt++) {
        meta.name = generateName(meta.generateName);
        if (!collection.get(objectKey(type.namespaced ? namespace : '', meta.name))) break;
      }
    }
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (type.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (type.subresources.includes('status') && !type.builtin) delete obj.status;
    type.strategy.prepareForCreate?.(obj);
    this.validate(type, obj, undefined);
    if (options.user)
      this.admission?.admit({ operation: 'CREATE', type, subresource: '', object: obj, user: options.user });
    const key = objectKey(type.namespaced ? namespace : '', meta.name as string);
    if (collection.get(key)) throw alreadyExists(groupResource(type), meta.name as string);
    if (options.dryRun) return { ...toDryRun(type, obj), key };
    const stored = this.store.create(type, obj);
    this.lifecycle(type)?.afterCreate?.(type, stored, obj);
    return stored;
  }

  /** PUT of the object or of its status subresource. */
  update(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    subresource: '' | 'status',
    options: WriteOptions = {},
  ): StoredObject {
    const obj = this.decode(type, body, options.version);
    if (obj.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`,
      );
    }
    this.checkNamespace(type, obj, namespace);
    const old = this.get(type, namespace, name);
    return this.applyUpdate(type, old, obj, subresource, options);
  }

  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    patchType: PatchType,
    patch: unknown,
    subresource: '' | 'status',
    options: WriteOptions = {},
  ): StoredObject {
    const old = this.get(type, namespace, name);
    const current = parseStored(type, old);
    current.apiVersion = apiVersionOf(type.group, options.version ?? (type.versions[0] as string));
    current.kind = type.kind;
    const patched = applyPatch(patchType, current, patch);
    const obj = this.decode(type, patched, options.version);
    if (obj.metadata.name !== name) {
      throw invalid({ group: type.group, kind: type.kind }, name, [
        { type: 'Invalid', field: 'metadata.name', value: obj.metadata.name, detail: 'field is immutable' },
      ]);
    }
    this.checkNamespace(type, obj, namespace);
    return this.applyUpdate(type, old, obj, subresource, options);
  }

  private applyUpdate(
    type: ResourceType,
    old: StoredObject,
    given: KubeObject,
    subresource: '' | 'status',
    options: WriteOptions,
  ): StoredObject {
    const gr = groupResource(type);
    const givenRv = given.metadata.resourceVersion;
    if (givenRv !== undefined && givenRv !== '' && givenRv !== String(old.rv))
      throw conflict(gr, old.name, MODIFIED_CONFLICT);
    if (given.metadata.uid && given.metadata.uid !== old.uid) {
      throw conflict(
        gr,
        old.name,
        `Precondition failed: UID in precondition: ${given.metadata.uid}, UID in object meta: ${old.uid}`,
      );
    }
    const previous = parseStored(type, old);
    let obj: KubeObject;
    if (subresource === 'status') {
      // A status write changes the status and nothing else.
      obj = parseStored(type, old);
      if (given.status === undefined) delete obj.status;
      else obj.status = given.status;
      if (type.strategy.statusWritesMetadata) {
        if (given.metadata.labels === undefined) delete obj.metadata.labels;
        else obj.metadata.labels = given.metadata.labels;
        if (given.metadata.annotations === undefined) delete obj.metadata.annotations;
        else obj.metadata.annotations = given.metadata.annotations;
      }
      type.strategy.prepareForStatusUpdate?.(obj);
    } else {
      obj = given;
      const meta = obj.metadata;
      meta.uid = old.uid;
      meta.creationTimestamp = previous.metadata.creationTimestamp;
      if (previous.metadata.deletionTimestamp) {
        meta.deletionTimestamp = previous.metadata.deletionTimestamp;
        meta.deletionGracePeriodSeconds = previous.metadata.deletionGracePeriodSeconds;
      } else {
        delete meta.deletionTimestamp;
        delete meta.deletionGracePeriodSeconds;
      }
      if (type.subresources.includes('status')) {
        if (previous.status === undefined) delete obj.status;
        else obj.status = structuredClone(previous.status);
      }
      type.strategy.prepareForUpdate?.(obj, parseStored(type, old));
    }
    const hasStatus = type.subresources.includes('status');
    if (type.tracksGeneration) {
      const before = previous.metadata.generation ?? 1;
      const changed =
        canonicalJson(withoutMetaAndStatus(obj, hasStatus)) !==
        canonicalJson(withoutMetaAndStatus(previous, hasStatus));
      obj.metadata.generation = changed ? before + 1 : before;
    } else {
      delete obj.metadata.generation;
    }
    this.validate(type, obj, previous);
    if (options.user)
      this.admission?.admit({
        operation: 'UPDATE',
        type,
        subresource,
        object: obj,
        oldObject: previous,
        user: options.user,
      });

    obj.metadata.resourceVersion = String(old.rv);
    if (
      canonicalJson({ ...obj, kind: undefined, apiVersion: undefined }) ===
      canonicalJson({ ...previous, kind: undefined, apiVersion: undefined })
    ) {
      return old; // a no-op write keeps the resourceVersion and sends no event
    }
    if (options.dryRun) return { ...toDryRun(type, obj), key: old.key };
    const stored = this.store.replace(type, obj, old);
    if (obj.metadata.deletionTimestamp && !(obj.metadata.finalizers ?? []).length) {
      // The last finalizer is gone from an object being deleted: now it really goes.
      return this.remove(type, stored);
    }
    this.lifecycle(type)?.afterUpdate?.(type, stored, obj);
    return stored;
  }

  delete(type: ResourceType, namespace: string, name: string, options: DeleteOptions = {}): DeleteResult {
    const old = this.get(type, namespace, name);
    const gr = groupResource(type);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== old.uid) {
      throw conflict(gr, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.uid}`);
    }
    if (resourceVersion && resourceVersion !== String(old.rv)) {
      throw conflict(
        gr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${old.rv}`,
      );
    }
    if (options.dryRun) return { object: old, deleted: true };
    const obj = parseStored(type, old);
    if ((obj.metadata.finalizers ?? []).length > 0) {
      if (obj.metadata.deletionTimestamp) return { object: old, deleted: false };
      obj.metadata.deletionTimestamp = nowTimestamp();
      obj.metadata.deletionGracePeriodSeconds = 0;
      return { object: this.store.replace(type, obj, old), deleted: false };
    }
    return { object: this.remove(type, old), deleted: true };
  }

  private remove(type: ResourceType, old: StoredObject): StoredObject {
    const lifecycle = this.lifecycle(type);
    lifecycle?.beforeDelete?.(type, old);
    const current = this.store.collection(type).get(old.key) ?? old;
    const deleted = this.store.remove(type, current);
    lifecycle?.afterDelete?.(type, deleted);
    return deleted;
  }

  /** Deletes every object matching the filter in a namespace ('' = all); answers what was deleted. */
  deleteCollection(
    type: ResourceType,
    namespace: string,
    filter: ObjectFilter | undefined,
    options: DeleteOptions = {},
  ): StoredObject[] {
    const collection = this.store.collection(type);
    const prefix = type.namespaced && namespace ? `${namespace}/` : '';
    const targets = collection
      .sortedKeys()
      .filter((key) => key.startsWith(prefix))
      .map((key) => collection.get(key) as StoredObject)
      .filter((stored) => matchesFilter(filter, stored));
    const results: StoredObject[] = [];
    for (const target of targets) {
      try {
        results.push(this.delete(type, target.namespace, target.name, { dryRun: options.dryRun }).object);
      } catch (err) {
        if (!(err instanceof StatusError && err.code === 404)) throw err;
      }
    }
    return results;
  }
}

/** What a dry-run write answers: the object as it would be stored, without a resourceVersion. */
function toDryRun(type: ResourceType, obj: KubeObject): Omit<StoredObject, 'key'> {
  const { kind: _k, apiVersion: _a, metadata, ...rest } = obj;
  const meta = { ...metadata };
  delete meta.resourceVersion;
  return {
    name: metadata.name as string,
    namespace: type.namespaced ? (metadata.namespace as string) : '',
    uid: metadata.uid as string,
    rv: 0,
    labels: metadata.labels,
    fields: {},
    body: JSON.stringify({ metadata: meta, ...rest }).slice(1),
  };
}
