import { apiVersionOf, type FieldValueOf, type KubeObject, type ResourceType } from './resource-types.js';

/**
 * An object as the store keeps it: serialized once, plus the few values lists and selectors need. The JSON is split
 * into a type header (`{"kind":"Pod","apiVersion":"v1",`) and the body after it, so a response can put any served
 * version in front, and typed lists can drop the header, without parsing or re-serializing anything. Stored objects
 * are immutable; a write replaces the whole record.
 */
export interface StoredObject {
  readonly key: string;
  readonly name: string;
  /** '' for cluster-scoped objects. */
  readonly namespace: string;
  readonly uid: string;
  readonly rv: number;
  readonly labels: Readonly<Record<string, string>> | undefined;
  /** Values of the type's extra field-selector labels. */
  readonly fields: Readonly<Record<string, string>>;
  /** The JSON after the type header: `"metadata":{...},...}`. */
  readonly body: string;
}

export function objectKey(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

// Read once: serialization runs for every stored object, and global lookups are slow in VM contexts (jest).
const stringify = JSON.stringify;
const parse = JSON.parse;

const headers = new WeakMap<ResourceType, Map<string, string>>();

/** `{"kind":"Pod","apiVersion":"v1",` for a type at a version, built once. */
export function typeHeader(type: ResourceType, version: string): string {
  let byVersion = headers.get(type);
  if (!byVersion) {
    byVersion = new Map();
    headers.set(type, byVersion);
  }
  let header = byVersion.get(version);
  if (header === undefined) {
    const kind = `"kind":${JSON.stringify(type.kind)}`;
    const apiVersion = `"apiVersion":${JSON.stringify(apiVersionOf(type.group, version))}`;
    // Built-in kinds print in their Go struct's order; custom resources are maps, which Go prints sorted by key.
    header = type.builtin ? `{${kind},${apiVersion},` : `{${apiVersion},${kind},`;
    byVersion.set(version, header);
  }
  return header;
}

/** metav1.ObjectMeta's fields in its Go struct's order, the order kube-apiserver prints them in. */
const OBJECT_META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];
const META_RANK = new Map(OBJECT_META_ORDER.map((field, i) => [field, i]));

/**
 * The top-level fields of the built-in kinds after metadata, in their structs' order (ConfigMap: immutable, data,
 * binaryData; Secret: immutable, data, type; RBAC: rules, aggregationRule, subjects, roleRef; ServiceAccount: secrets,
 * imagePullSecrets, automountServiceAccountToken; most kinds: spec, status). Others keep the order they came in.
 */
const TOP_RANK = new Map(
  [
    'immutable',
    'data',
    'binaryData',
    'type',
    'spec',
    'status',
    'rules',
    'aggregationRule',
    'subjects',
    'roleRef',
    'secrets',
    'imagePullSecrets',
    'automountServiceAccountToken',
  ].map((field, i) => [field, i]),
);

function inRankOrder(value: Record<string, unknown>, rank: ReadonlyMap<string, number>): Record<string, unknown> {
  const keys = Object.keys(value);
  const ranked = keys.filter((key) => rank.has(key)).sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  const out: Record<string, unknown> = {};
  for (const key of ranked) out[key] = value[key];
  for (const key of keys) if (!rank.has(key)) out[key] = value[key];
  return out;
}

/** A JSON value with every object's keys sorted, as Go's encoding/json prints a map. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** The whole object as JSON, at a served version. */
export function objectJson(type: ResourceType, version: string, stored: StoredObject): string {
  return typeHeader(type, version) + stored.body;
}

/** A list item: typed (built-in) lists carry no kind/apiVersion per item, custom-resource lists do. */
export function listItemJson(type: ResourceType, version: string, stored: StoredObject): string {
  return type.builtin ? `{${stored.body}` : typeHeader(type, version) + stored.body;
}

/** A private, mutable copy of the object, at the storage version. */
export function parseStored(type: ResourceType, stored: StoredObject): KubeObject {
  return parse(typeHeader(type, type.versions[0] as string) + stored.body) as KubeObject;
}

/** Serializes an object whose metadata (name, namespace, uid, resourceVersion) is final. */
export function toStored(type: ResourceType, obj: KubeObject): StoredObject {
  // Fields in the order kube-apiserver prints them; kind and apiVersion live in the header.
  const { kind: _kind, apiVersion: _apiVersion, metadata, ...rest } = obj;
  const json = stringify(
    type.builtin
      ? { metadata: inRankOrder(metadata, META_RANK), ...inRankOrder(rest, TOP_RANK) }
      : sortedKeys({ metadata, ...rest }),
  );
  const name = metadata.name as string;
  const namespace = type.namespaced ? (metadata.namespace as string) : '';
  const fields: Record<string, string> = {};
  for (const label in type.fieldLabels) fields[label] = (type.fieldLabels[label] as FieldValueOf)(obj);
  return {
    key: objectKey(namespace, name),
    name,
    namespace,
    uid: metadata.uid as string,
    rv: Number(metadata.resourceVersion),
    labels: metadata.labels,
    fields,
    body: json.slice(1),
  };
}

/** The same object with another resourceVersion (a deletion event carries the deletion's version). */
export function withResourceVersion(type: ResourceType, stored: StoredObject, rv: number): StoredObject {
  const obj = parseStored(type, stored);
  obj.metadata.resourceVersion = String(rv);
  return toStored(type, obj);
}
