import type { FieldError } from './status.js';

/** A Kubernetes object as plain JSON. */
export type KubeObject = { [key: string]: unknown; metadata: ObjectMeta };

export interface ObjectMeta {
  [key: string]: unknown;
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

/** Reads one field-selector value (`spec.nodeName`) from an object; kube renders booleans as "true"/"false". */
export type FieldValueOf = (obj: KubeObject) => string;

/**
 * How names are validated: kube uses a DNS subdomain for most kinds, a DNS label or RFC 1035 label for some, and a
 * path segment (anything without '/' or '%', not '.' or '..') for RBAC kinds, whose names hold ':' (`system:basic-user`).
 */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'pathSegment';

/** Per-kind behaviour on writes, the sandbox's counterpart of a registry strategy. */
export interface ObjectStrategy {
  /** Defaults and resets on create (kube's PrepareForCreate + defaulting), before validation. */
  prepareForCreate?(obj: KubeObject): void;
  /** Defaults and resets on update of the main resource; `old` is a private copy that may be read, not kept. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  /** Defaults of a status written through the `status` subresource. */
  prepareForStatusUpdate?(obj: KubeObject): void;
  /**
   * Whether a write of the `status` subresource keeps the labels and annotations it sends (kube's namespace status
   * strategy resets only the spec); otherwise it changes the status alone (custom resources, most kinds).
   */
  statusWritesMetadata?: boolean;
  /** Kind-specific validation beyond metadata; an empty list means valid. */
  validate?(obj: KubeObject, old: KubeObject | undefined): FieldError[];
}

export type Subresource = 'status' | 'log' | 'exec' | 'attach' | 'portforward';

export interface ResourceType {
  readonly group: string;
  /** Served versions; the first is the storage and preferred version. */
  readonly versions: readonly string[];
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly subresources: readonly Subresource[];
  /** Field-selector labels beyond metadata.name and metadata.namespace. */
  readonly fieldLabels: Readonly<Record<string, FieldValueOf>>;
  /**
   * kube's message for a field selector on any other field; default `field label not supported: <field>` (kinds with
   * field label conversions of their own, and custom resources).
   */
  readonly unsupportedField?: (field: string) => string;
  /** Built-in kinds are typed lists in kube: their list items carry no kind/apiVersion. Custom resources do. */
  readonly builtin: boolean;
  readonly tracksGeneration: boolean;
  /** Whether DELETE answers with the deleted object (pods, namespaces, custom resources) or a success `Status`. */
  readonly returnsDeletedObject: boolean;
  readonly nameRule: NameRule;
  readonly strategy: ObjectStrategy;
  /** The CRD that defined this type, for custom resources. */
  readonly crdName?: string;
}

export const STANDARD_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
] as const;

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export function typeKey(group: string, resource: string): string {
  return `${group}/${resource}`;
}

/** The resource types the sandbox serves, built-in and from CRDs; the single place paths resolve to types. */
export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>();
  private revisionValue = 0;

  register(type: ResourceType): void {
    this.types.set(typeKey(type.group, type.resource), type);
    this.revisionValue++;
  }

  unregister(group: string, resource: string): void {
    if (this.types.delete(typeKey(group, resource))) this.revisionValue++;
  }

  /** The type served at `/apis/<group>/<version>/<resource>`, or undefined when that version is not served. */
  find(group: string, version: string, resource: string): ResourceType | undefined {
    const type = this.types.get(typeKey(group, resource));
    return type && type.versions.includes(version) ? type : undefined;
  }

  byGroupResource(group: string, resource: string): ResourceType | undefined {
    return this.types.get(typeKey(group, resource));
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Bumped on every change, so discovery documents can be cached between changes. */
  get revision(): number {
    return this.revisionValue;
  }
}
