import { z } from 'zod';
import { defineOperation, type OperationDefinition } from '../../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../../openapi/schemas.js';
import { apiVersionOf, KINDS, type KindDefinition } from '../kinds/kind-table.js';
import { RESOURCES_BASE } from '../operations.js';
import { schemaOf } from './listing-query.js';

/**
 * The listing's operations, made from the kind table: for each kind its list (cluster-wide, and per namespace for
 * namespaced kinds) and its read by name, each with the kind's own query parameters (sortBy and status values,
 * filters), answer schema and errors. The routes mount them; the platform document shows them.
 */
export interface KindOperations {
  readonly definition: KindDefinition;
  readonly list: OperationDefinition;
  readonly listNamespaced?: OperationDefinition;
  readonly read: OperationDefinition;
}

/** `Pod` → `Pods`, `NetworkPolicy` → `NetworkPolicies`, `Ingress` → `Ingresses`. */
export function pluralKind(kind: string): string {
  if (/[^aeiou]y$/.test(kind)) return `${kind.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(kind)) return `${kind}es`;
  return `${kind}s`;
}

const retryAfter = {
  'Retry-After': {
    description: 'Seconds to wait before asking again (when the kind’s cache is still reading its first list).',
    schema: z.string(),
  },
} as const;

function itemSchema(definition: KindDefinition) {
  return apiComponent(
    definition.kind,
    z
      .looseObject({
        kind: z.literal(definition.kind),
        apiVersion: z.literal(apiVersionOf(definition)),
        metadata: z.looseObject({
          name: z.string(),
          ...(definition.namespaced && { namespace: z.string() }),
          uid: z.string(),
          resourceVersion: z.string(),
          creationTimestamp: z.string().describe('RFC 3339 date and time.'),
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z.record(z.string(), z.string()).optional(),
        }),
      })
      .describe(
        `A ${apiVersionOf(definition)} ${definition.kind} as kube-apiserver serves it (\`metadata.managedFields\` left ` +
          'out).',
      ),
  );
}

function kindOperations(definition: KindDefinition): KindOperations {
  const plural = pluralKind(definition.kind);
  const item = itemSchema(definition);
  const list = apiComponent(
    `${definition.kind}List`,
    z
      .object({
        items: z.array(item).describe('The requested page.'),
        totalItems: z.int().min(0).describe('How many objects match the filters, over all pages.'),
      })
      .describe(`A page of ${plural}, KubeSphere’s list shape.`),
  );
  const tags = ['resources.kapi.io/v1alpha3'];
  const source =
    definition.source === 'passthrough'
      ? 'Listed from kube-apiserver as the caller (never cached).'
      : 'Served from a watched cache started on first use (no call to kube-apiserver per request).';
  const notes = definition.notes ? ` ${definition.notes}` : '';
  const forbidden = {
    description: `The cluster’s RBAC does not allow the caller this verb on ${definition.resource} (SubjectAccessReview).`,
    body: StatusSchema,
  };
  const unavailable = {
    description:
      'The caller’s rights cannot be checked right now, or the kind’s cache has not read its first list within the ' +
      'wait (then with Retry-After).',
    body: StatusSchema,
    headers: retryAfter,
  };
  const listResponses = {
    200: { description: 'The page and the number of matching objects.', body: list },
    400: { description: 'A parameter has a bad value; `details.causes[0].field` names it.', body: StatusSchema },
    ...statusResponses,
    403: forbidden,
    503: unavailable,
  };
  const clusterList = defineOperation({
    operationId: `list${plural}`,
    method: 'get',
    path: `${RESOURCES_BASE}/${definition.resource}`,
    tags,
    summary: definition.namespaced
      ? `List ${plural} of every namespace the caller may list, filtered, sorted and paged`
      : `List ${plural}, filtered, sorted and paged`,
    description:
      `${source} Needs \`list ${definition.resource}\` in the cluster’s RBAC` +
      (definition.namespaced
        ? ': at the cluster scope for every namespace, otherwise only the namespaces where it is allowed are answered ' +
          '(each reviewed; 403 when none is).'
        : '.') +
      notes,
    security: 'bearer',
    query: schemaOf(definition),
    responses: listResponses,
  });
  const named = z.object({ name: z.string().describe(`The ${definition.kind}’s name.`) });
  const readResponses = {
    200: { description: `The ${definition.kind}.`, body: item },
    404: { description: `No ${definition.kind} of that name.`, body: StatusSchema },
    ...statusResponses,
    403: forbidden,
    503: unavailable,
  };
  if (!definition.namespaced) {
    return {
      definition,
      list: clusterList,
      read: defineOperation({
        operationId: `read${definition.kind}`,
        method: 'get',
        path: `${RESOURCES_BASE}/${definition.resource}/{name}`,
        tags,
        summary: `Read one ${definition.kind}`,
        description: `${source} Needs \`get ${definition.resource}\` (for that name) in the cluster’s RBAC.`,
        security: 'bearer',
        pathParameters: named,
        responses: readResponses,
      }),
    };
  }
  const inNamespace = z.object({ namespace: z.string().describe('The namespace.') });
  return {
    definition,
    list: clusterList,
    listNamespaced: defineOperation({
      operationId: `listNamespaced${plural}`,
      method: 'get',
      path: `${RESOURCES_BASE}/namespaces/{namespace}/${definition.resource}`,
      tags,
      summary: `List the ${plural} of one namespace, filtered, sorted and paged`,
      description: `${source} Needs \`list ${definition.resource}\` in that namespace.${notes}`,
      security: 'bearer',
      pathParameters: inNamespace,
      query: schemaOf(definition),
      responses: listResponses,
    }),
    read: defineOperation({
      operationId: `readNamespaced${definition.kind}`,
      method: 'get',
      path: `${RESOURCES_BASE}/namespaces/{namespace}/${definition.resource}/{name}`,
      tags,
      summary: `Read one ${definition.kind}`,
      description: `${source} Needs \`get ${definition.resource}\` (for that name) in that namespace.`,
      security: 'bearer',
      pathParameters: inNamespace.extend(named.shape),
      responses: readResponses,
    }),
  };
}

/** Every kind but nodes (whose operations, with their allocation annotations, are the node listing's). */
export const KIND_OPERATIONS: readonly KindOperations[] = KINDS.filter((d) => d.source !== 'nodes').map(kindOperations);

export const listingOperations: readonly OperationDefinition[] = KIND_OPERATIONS.flatMap((ops) => [
  ops.list,
  ...(ops.listNamespaced ? [ops.listNamespaced] : []),
  ops.read,
]);
