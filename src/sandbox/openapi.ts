import { createHash } from 'node:crypto';
import { apiVersionOf, type ResourceRegistry, type ResourceType } from './resource-types.js';
import type { ObjectStore } from './store.js';
import { parseStored } from './stored-object.js';

/**
 * A minimal OpenAPI v3 description, generated from the registry: per group version, every REST path with its
 * operations, kind and query parameters, plus the CRDs' own schemas. It exists for clients that read it before
 * writing: `kubectl apply` checks here that the server validates fields itself (`fieldValidation`) instead of
 * downloading schemas to validate client-side. Built-in kinds carry no schemas, so kubectl computes strategic merge
 * patches from its compiled-in types, as it does when a server publishes no OpenAPI.
 */
const QUERY = (name: string, type = 'string') => ({ name, in: 'query', schema: { type }, uniqueItems: true });
const LIST_PARAMS = ['labelSelector', 'fieldSelector', 'resourceVersion', 'resourceVersionMatch', 'continue'].map((n) =>
  QUERY(n),
);
const WRITE_PARAMS = [QUERY('dryRun'), QUERY('fieldManager'), QUERY('fieldValidation')];
const OK = { '200': { description: 'OK' } };

function operation(
  type: ResourceType,
  version: string,
  action: string,
  parameters: unknown[],
): Record<string, unknown> {
  return {
    operationId: `${action}${type.kind}`,
    parameters,
    responses: action === 'post' ? { '201': { description: 'Created' }, ...OK } : OK,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: type.group, version, kind: type.kind },
  };
}

function pathsFor(type: ResourceType, version: string): Record<string, unknown> {
  const prefix = type.group ? `/apis/${type.group}/${version}` : `/api/${version}`;
  const base = type.namespaced ? `${prefix}/namespaces/{namespace}/${type.resource}` : `${prefix}/${type.resource}`;
  const named = `${base}/{name}`;
  const paths: Record<string, unknown> = {
    [base]: {
      get: operation(type, version, 'list', [...LIST_PARAMS, QUERY('limit', 'integer'), QUERY('watch', 'boolean')]),
      post: operation(type, version, 'post', WRITE_PARAMS),
      delete: operation(type, version, 'deletecollection', [...LIST_PARAMS, QUERY('dryRun')]),
    },
    [named]: {
      get: operation(type, version, 'get', []),
      put: operation(type, version, 'put', WRITE_PARAMS),
      patch: operation(type, version, 'patch', [...WRITE_PARAMS, QUERY('force', 'boolean')]),
      delete: operation(type, version, 'delete', [QUERY('dryRun')]),
    },
  };
  if (type.namespaced) paths[`${prefix}/${type.resource}`] = { get: operation(type, version, 'list', LIST_PARAMS) };
  if (type.subresources.includes('status')) {
    paths[`${named}/status`] = {
      get: operation(type, version, 'get', []),
      put: operation(type, version, 'put', WRITE_PARAMS),
      patch: operation(type, version, 'patch', WRITE_PARAMS),
    };
  }
  return paths;
}

/** Component names as kube builds them for CRDs: the group reversed, then version and kind. */
function schemaName(type: ResourceType, version: string): string {
  return `${type.group.split('.').reverse().join('.')}.${version}.${type.kind}`;
}

export class OpenApiDocuments {
  constructor(
    private readonly registry: ResourceRegistry,
    private readonly store: ObjectStore,
  ) {}

  private groupVersions(): Map<string, { group: string; version: string }> {
    const found = new Map<string, { group: string; version: string }>();
    for (const type of this.registry.all()) {
      for (const version of type.versions) {
        found.set(type.group ? `apis/${type.group}/${version}` : `api/${version}`, { group: type.group, version });
      }
    }
    return found;
  }

  /** /openapi/v3: the group versions and where their documents are. */
  root(): unknown {
    const paths: Record<string, unknown> = {};
    for (const [path, { group, version }] of [...this.groupVersions()].sort(([a], [b]) => a.localeCompare(b))) {
      const hash = createHash('sha256')
        .update(JSON.stringify(this.document(group, version)))
        .digest('hex')
        .slice(0, 32)
        .toUpperCase();
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    }
    return { paths };
  }

  /** /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>; undefined when not served. */
  document(group: string, version: string): unknown | undefined {
    const types = this.registry.all().filter((t) => t.group === group && t.versions.includes(version));
    if (types.length === 0) return undefined;
    const paths: Record<string, unknown> = {};
    const schemas: Record<string, unknown> = {};
    for (const type of types) {
      Object.assign(paths, pathsFor(type, version));
      const schema = type.crdName ? this.crdSchema(type, version) : undefined;
      if (schema) {
        schemas[schemaName(type, version)] = {
          ...schema,
          'x-kubernetes-group-version-kind': [{ group, version, kind: type.kind }],
        };
      }
    }
    return {
      openapi: '3.0.0',
      info: { title: `Kubernetes sandbox: ${apiVersionOf(group, version)}`, version: 'v1.35.0' },
      paths,
      components: { schemas },
    };
  }

  private crdSchema(type: ResourceType, version: string): Record<string, unknown> | undefined {
    const crdType = this.registry.byGroupResource('apiextensions.k8s.io', 'customresourcedefinitions');
    const stored = crdType && this.store.collection(crdType).get(type.crdName as string);
    if (!crdType || !stored) return undefined;
    const crd = parseStored(crdType, stored) as {
      spec?: { versions?: { name?: string; schema?: { openAPIV3Schema?: Record<string, unknown> } }[] };
    };
    return crd.spec?.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
  }
}
