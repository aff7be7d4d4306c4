import { OPENAPI_VERSION, type DocumentInfo } from './document.js';

/**
 * The custom-resource APIs as kube-apiserver publishes a CRD (`/openapi/v3/apis/<group>/<version>`): per served
 * version, the REST paths under `/apis/<group>/<version>/…` — list, watch, create, read, replace, patch, delete,
 * delete collection, and the status subresource — with kube-apiserver's operation ids and `x-kubernetes-action`s,
 * and the version's `openAPIV3Schema` as the kind's schema (metadata referring to ObjectMeta). Pure: it takes the
 * CRD objects (parsed `crds/*.yaml`).
 */
export interface CustomResourceDefinition {
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; listKind?: string; plural: string };
    versions: {
      name: string;
      served: boolean;
      subresources?: { status?: object };
      schema?: { openAPIV3Schema?: Record<string, unknown> };
    }[];
  };
}

type JsonObject = Record<string, unknown>;
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const JSON_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
  'application/apply-patch+cbor',
];

export function buildCrdDocument(info: DocumentInfo, crds: readonly CustomResourceDefinition[]): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const schemas: Record<string, unknown> = { ...META_SCHEMAS };
  const tags = new Set<string>();
  const sorted = [...crds].sort((a, b) => resourceKey(a).localeCompare(resourceKey(b)));
  for (const crd of sorted) {
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      const resource = resourceOf(crd, version.name, version.subresources?.status !== undefined);
      tags.add(resource.tag);
      Object.assign(paths, resourcePaths(resource));
      schemas[resource.schemaName] = kindSchema(resource, version.schema?.openAPIV3Schema ?? { type: 'object' });
      schemas[resource.listSchemaName] = listSchema(resource);
    }
  }
  return {
    openapi: OPENAPI_VERSION,
    info,
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: { BearerToken: { type: 'http', scheme: 'bearer', description: 'A kapi access token.' } },
    },
    security: [{ BearerToken: [] }],
  };
}

interface Resource {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  namespaced: boolean;
  hasStatus: boolean;
  /** `io.kapi.iam.v1beta1.User`, as kube-apiserver names a CRD's schema (the group reversed). */
  schemaName: string;
  listSchemaName: string;
  /** `IamKapiIoV1beta1`: the middle of kube-apiserver's operation ids. */
  idPart: string;
  tag: string;
}

function resourceKey(crd: CustomResourceDefinition): string {
  return `${crd.spec.group}/${crd.spec.names.plural}`;
}

function resourceOf(crd: CustomResourceDefinition, version: string, hasStatus: boolean): Resource {
  const { group, names, scope } = crd.spec;
  const prefix = `${group.split('.').reverse().join('.')}.${version}`;
  const listKind = names.listKind ?? `${names.kind}List`;
  const idPart = [...group.split('.'), version].map((part) => part[0]!.toUpperCase() + part.slice(1)).join('');
  return {
    group,
    version,
    kind: names.kind,
    listKind,
    plural: names.plural,
    namespaced: scope === 'Namespaced',
    hasStatus,
    schemaName: `${prefix}.${names.kind}`,
    listSchemaName: `${prefix}.${listKind}`,
    idPart,
    tag: `${idPart.replace(/V\d.*$/, '')}_${version}`.replace(/^./, (c) => c.toLowerCase()),
  };
}

function resourcePaths(r: Resource): Record<string, JsonObject> {
  const groupVersion = `/apis/${r.group}/${r.version}`;
  const scope = r.namespaced ? `/namespaces/{namespace}` : '';
  const ns = r.namespaced ? 'Namespaced' : '';
  const collection = `${groupVersion}${scope}/${r.plural}`;
  const named = `${collection}/{name}`;
  const pathParameters = (name: boolean) => [
    ...(name ? [pathParameter('name', `name of the ${r.kind}`)] : []),
    ...(r.namespaced ? [pathParameter('namespace', 'object name and auth scope, such as for teams and projects')] : []),
  ];
  const op = (action: string, verb: string, suffix: string, extra: JsonObject): JsonObject => ({
    tags: [r.tag],
    operationId: `${verb}${r.idPart}${ns}${r.kind}${suffix}`,
    ...extra,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: r.group, version: r.version, kind: r.kind },
  });
  const object = ref(r.schemaName);
  const list = ref(r.listSchemaName);

  const paths: Record<string, JsonObject> = {
    [collection]: {
      parameters: [...pathParameters(false), PRETTY],
      get: op('list', 'list', '', {
        description: `list or watch objects of kind ${r.kind}`,
        parameters: LIST_PARAMETERS,
        responses: ok(list, [...JSON_TYPES, 'application/json;stream=watch']),
      }),
      post: op('post', 'create', '', {
        description: `create a ${r.kind}`,
        parameters: WRITE_PARAMETERS,
        requestBody: body(object, JSON_TYPES),
        responses: { ...ok(object), ...response('201', 'Created', object), ...response('202', 'Accepted', object) },
      }),
      delete: op('deletecollection', 'deletecollection', '', {
        description: `delete collection of ${r.kind}`,
        parameters: [...DELETE_PARAMETERS, ...LIST_PARAMETERS.filter((p) => p.name !== 'watch')],
        requestBody: body(ref(`${META}.DeleteOptions`), JSON_TYPES, false),
        responses: ok(ref(`${META}.Status`)),
      }),
    },
    [named]: {
      parameters: [...pathParameters(true), PRETTY],
      get: op('get', 'read', '', {
        description: `read the specified ${r.kind}`,
        parameters: [RESOURCE_VERSION],
        responses: ok(object),
      }),
      put: op('put', 'replace', '', {
        description: `replace the specified ${r.kind}`,
        parameters: WRITE_PARAMETERS,
        requestBody: body(object, JSON_TYPES),
        responses: { ...ok(object), ...response('201', 'Created', object) },
      }),
      patch: op('patch', 'patch', '', {
        description: `partially update the specified ${r.kind}`,
        parameters: [...WRITE_PARAMETERS, FORCE],
        requestBody: body(ref(`${META}.Patch`), PATCH_TYPES),
        responses: { ...ok(object), ...response('201', 'Created', object) },
      }),
      delete: op('delete', 'delete', '', {
        description: `delete a ${r.kind}`,
        parameters: DELETE_PARAMETERS,
        requestBody: body(ref(`${META}.DeleteOptions`), JSON_TYPES, false),
        responses: { ...ok(ref(`${META}.Status`)), ...response('202', 'Accepted', ref(`${META}.Status`)) },
      }),
    },
  };
  if (r.hasStatus) {
    paths[`${named}/status`] = {
      parameters: [...pathParameters(true), PRETTY],
      get: op('get', 'read', 'Status', {
        description: `read status of the specified ${r.kind}`,
        parameters: [RESOURCE_VERSION],
        responses: ok(object),
      }),
      put: op('put', 'replace', 'Status', {
        description: `replace status of the specified ${r.kind}`,
        parameters: WRITE_PARAMETERS,
        requestBody: body(object, JSON_TYPES),
        responses: { ...ok(object), ...response('201', 'Created', object) },
      }),
      patch: op('patch', 'patch', 'Status', {
        description: `partially update status of the specified ${r.kind}`,
        parameters: [...WRITE_PARAMETERS, FORCE],
        requestBody: body(ref(`${META}.Patch`), PATCH_TYPES),
        responses: { ...ok(object), ...response('201', 'Created', object) },
      }),
    };
  }
  if (r.namespaced) {
    paths[`${groupVersion}/${r.plural}`] = {
      parameters: [PRETTY],
      get: op('list', 'list', 'ForAllNamespaces', {
        description: `list or watch objects of kind ${r.kind} in every namespace`,
        parameters: LIST_PARAMETERS,
        responses: ok(list, [...JSON_TYPES, 'application/json;stream=watch']),
      }),
    };
  }
  // The deprecated watch paths kube-apiserver still publishes; `?watch=true` on the list is the current form.
  paths[`${groupVersion}/watch${scope}/${r.plural}`] = {
    parameters: [...pathParameters(false), PRETTY],
    get: op('watchlist', 'watch', 'List', {
      description: `watch individual changes to a list of ${r.kind}. deprecated: use the 'watch' parameter with a list operation instead.`,
      parameters: LIST_PARAMETERS,
      responses: ok(ref(`${META}.WatchEvent`), ['application/json', 'application/json;stream=watch']),
    }),
  };
  paths[`${groupVersion}/watch${scope}/${r.plural}/{name}`] = {
    parameters: [...pathParameters(true), PRETTY],
    get: op('watch', 'watch', '', {
      description: `watch changes to an object of kind ${r.kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
      parameters: LIST_PARAMETERS,
      responses: ok(ref(`${META}.WatchEvent`), ['application/json', 'application/json;stream=watch']),
    }),
  };
  return paths;
}

/** The kind's schema: the CRD's, with apiVersion/kind described and metadata referring to ObjectMeta. */
function kindSchema(r: Resource, schema: Record<string, unknown>): JsonObject {
  const properties = (schema['properties'] ?? {}) as Record<string, unknown>;
  return {
    ...schema,
    properties: {
      ...properties,
      apiVersion: { type: 'string', description: APIVERSION_DESCRIPTION },
      kind: { type: 'string', description: KIND_DESCRIPTION },
      metadata: { allOf: [ref(`${META}.ObjectMeta`)], description: 'Standard object metadata.' },
    },
    'x-kubernetes-group-version-kind': [{ group: r.group, version: r.version, kind: r.kind }],
  };
}

function listSchema(r: Resource): JsonObject {
  return {
    description: `${r.listKind} is a list of ${r.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', description: APIVERSION_DESCRIPTION },
      items: { type: 'array', description: `List of ${r.plural}.`, items: ref(r.schemaName) },
      kind: { type: 'string', description: KIND_DESCRIPTION },
      metadata: { allOf: [ref(`${META}.ListMeta`)], description: 'Standard list metadata.' },
    },
    'x-kubernetes-group-version-kind': [{ group: r.group, version: r.version, kind: r.listKind }],
  };
}

function ok(schema: JsonObject, types = JSON_TYPES): JsonObject {
  return {
    ...response('200', 'OK', schema, types),
    '401': { description: 'Unauthorized' },
  };
}

function response(code: string, description: string, schema: JsonObject, types = JSON_TYPES): JsonObject {
  return { [code]: { description, content: Object.fromEntries(types.map((type) => [type, { schema }])) } };
}

function body(schema: JsonObject, types: readonly string[], required = true): JsonObject {
  return { required, content: Object.fromEntries(types.map((type) => [type, { schema }])) };
}

function pathParameter(name: string, description: string): JsonObject {
  return { name, in: 'path', description, required: true, schema: { type: 'string', uniqueItems: true } };
}

function query(name: string, type: string, description: string): { name: string } & JsonObject {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}

const APIVERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized ' +
  'schemas to the latest internal value, and may reject unrecognized values.';
const KIND_DESCRIPTION =
  'Kind is a string value representing the REST resource this object represents. In CamelCase. Cannot be updated.';

const PRETTY = query('pretty', 'string', "If 'true', then the output is pretty printed.");
const RESOURCE_VERSION = query(
  'resourceVersion',
  'string',
  'resourceVersion sets a constraint on what resource versions a request may be served from.',
);
const LIST_PARAMETERS = [
  query('allowWatchBookmarks', 'boolean', 'requests watch events with type "BOOKMARK".'),
  query('continue', 'string', 'The continue option from a previous list with a limit, to get the next page.'),
  query('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields.'),
  query('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels.'),
  query('limit', 'integer', 'The maximum number of objects to return in one page.'),
  RESOURCE_VERSION,
  query('resourceVersionMatch', 'string', 'How resourceVersion is applied to list calls (Exact, NotOlderThan).'),
  query('sendInitialEvents', 'boolean', 'With watch: begin with synthetic ADDED events of the current state.'),
  query('timeoutSeconds', 'integer', 'Timeout for the list/watch call, regardless of activity.'),
  query('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of events.'),
];
const WRITE_PARAMETERS = [
  query('dryRun', 'string', 'When present (All), modifications are not persisted.'),
  query('fieldManager', 'string', 'A name associated with the actor or entity making these changes.'),
  query('fieldValidation', 'string', 'How the server handles unknown or duplicate fields: Ignore, Warn or Strict.'),
];
const FORCE = query('force', 'boolean', 'Force an apply request: re-acquire conflicting fields owned by others.');
const DELETE_PARAMETERS = [
  query('dryRun', 'string', 'When present (All), modifications are not persisted.'),
  query('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted.'),
  query(
    'propagationPolicy',
    'string',
    'Whether and how garbage collection will be performed: Orphan, Background or Foreground.',
  ),
];

/** The apimachinery schemas the paths refer to, as kube-apiserver publishes them (trimmed to their fields). */
const META_SCHEMAS: Record<string, unknown> = {
  [`${META}.ObjectMeta`]: {
    description: 'Metadata that all persisted resources must have.',
    type: 'object',
    properties: {
      annotations: { type: 'object', additionalProperties: { type: 'string' } },
      creationTimestamp: { type: 'string', format: 'date-time' },
      deletionGracePeriodSeconds: { type: 'integer', format: 'int64' },
      deletionTimestamp: { type: 'string', format: 'date-time' },
      finalizers: { type: 'array', items: { type: 'string' } },
      generateName: { type: 'string' },
      generation: { type: 'integer', format: 'int64' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      managedFields: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      name: { type: 'string' },
      namespace: { type: 'string' },
      ownerReferences: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      resourceVersion: { type: 'string' },
      selfLink: { type: 'string' },
      uid: { type: 'string' },
    },
  },
  [`${META}.ListMeta`]: {
    description: 'Metadata that synthetic resources must have: lists.',
    type: 'object',
    properties: {
      continue: { type: 'string' },
      remainingItemCount: { type: 'integer', format: 'int64' },
      resourceVersion: { type: 'string' },
      selfLink: { type: 'string' },
    },
  },
  [`${META}.Status`]: {
    description: 'Status is a return value for calls that do not return other objects.',
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      code: { type: 'integer', format: 'int32' },
      details: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      kind: { type: 'string' },
      message: { type: 'string' },
      metadata: { allOf: [ref(`${META}.ListMeta`)] },
      reason: { type: 'string' },
      status: { type: 'string' },
    },
  },
  [`${META}.DeleteOptions`]: {
    description: 'DeleteOptions may be provided when deleting an API object.',
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      dryRun: { type: 'array', items: { type: 'string' } },
      gracePeriodSeconds: { type: 'integer', format: 'int64' },
      kind: { type: 'string' },
      preconditions: {
        type: 'object',
        properties: { resourceVersion: { type: 'string' }, uid: { type: 'string' } },
      },
      propagationPolicy: { type: 'string' },
    },
  },
  [`${META}.Patch`]: {
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
    type: 'object',
  },
  [`${META}.WatchEvent`]: {
    description: 'Event represents a single event to a watched resource.',
    type: 'object',
    required: ['type', 'object'],
    properties: {
      object: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: 'The object.' },
      type: { type: 'string', description: 'ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.' },
    },
  },
};
