import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';
import { labelSelector, listLimit, nameAndAlias } from './label-selector-parameter.js';
import { NODE_STATUSES } from './node-status.js';

/** The node listing's operations: the routes mount them, parse with them, and the platform document shows them. */
export const RESOURCES_BASE = '/kapis/resources.kapi.io/v1alpha3';

/**
 * KubeSphere v1alpha3 list parameters. Their order is the order they are checked in. Unknown parameters are
 * ignored, and an empty value means the parameter is absent.
 */
export const NodeListQuerySchema = z.object({
  labelSelector: labelSelector.optional().describe('Kubernetes label selector syntax; every node must match it.'),
  label: labelSelector
    .optional()
    .describe('Another label selector (KubeSphere’s name); both apply when both are given.'),
  name: z.string().optional().describe('Substring of the node name or of its `kapi.io/alias-name` annotation.'),
  nameAndAlias,
  names: z.array(z.string()).optional().describe('Exact node names, comma-separated; any of them.'),
  uid: z.string().optional().describe('The node’s metadata.uid.'),
  status: z
    .enum(NODE_STATUSES)
    .optional()
    .describe(
      'running: Ready and schedulable; unschedulable: cordoned; warning: neither (not Ready, or under pressure).',
    ),
  page: z.int().min(1).default(1).describe('1-based page number. A page past the end has no items.'),
  limit: listLimit,
  sortBy: z
    .enum(['creationTimestamp', 'createTime', 'name'])
    .default('creationTimestamp')
    .describe('Sort key; createTime is an alias of creationTimestamp. Ties are broken by name.'),
  ascending: z
    .boolean()
    .default(false)
    .describe(
      'Oldest (or first name) first; newest first by default. Go strconv.ParseBool spellings (1, t, T, TRUE, True ' +
        'and 0, f, F, FALSE, False) are read too, as KubeSphere reads them.',
    ),
});

const quantityAnnotations =
  'Annotations `node.kapi.io/cpu-requests`, `cpu-limits`, `memory-requests`, `memory-limits` and their ' +
  '`-fraction` percentages give what the non-terminated pods on the node request and limit.';

const NodeSchema = apiComponent(
  'Node',
  z
    .object({
      kind: z.literal('Node'),
      apiVersion: z.literal('v1'),
      metadata: z.looseObject({
        name: z.string(),
        selfLink: z.string().describe('`/api/v1/nodes/<name>`, filled in for KubeSphere clients.'),
        uid: z.string(),
        resourceVersion: z.string(),
        creationTimestamp: z.string().describe('RFC 3339 date and time.'),
        labels: z.record(z.string(), z.string()).optional(),
        annotations: z.record(z.string(), z.string()).optional(),
      }),
      spec: z.looseObject({}).optional().describe('The Node’s spec as kube-apiserver serves it (core/v1 NodeSpec).'),
      status: z
        .looseObject({})
        .optional()
        .describe('The Node’s status as kube-apiserver serves it (core/v1 NodeStatus).'),
    })
    .describe(`A core/v1 Node from the watched cache. ${quantityAnnotations}`),
);

const NodeListSchema = apiComponent(
  'NodeList',
  z
    .object({
      items: z.array(NodeSchema).describe('The requested page.'),
      totalItems: z.int().min(0).describe('How many nodes match the filters, over all pages.'),
    })
    .describe('A page of nodes, KubeSphere’s list shape.'),
);

const forbidden = {
  description: 'The cluster’s RBAC does not allow the caller this verb on nodes (SubjectAccessReview).',
  body: StatusSchema,
} as const;

export const listNodes = defineOperation({
  operationId: 'listNodes',
  method: 'get',
  path: `${RESOURCES_BASE}/nodes`,
  tags: ['resources.kapi.io/v1alpha3'],
  summary: 'List nodes from the watched cache, filtered, sorted and paged',
  description:
    'Served from a watch-backed cache (no call to kube-apiserver per request). Needs `list nodes` in the cluster’s ' +
    `RBAC. ${quantityAnnotations}`,
  security: 'bearer',
  query: NodeListQuerySchema,
  responses: {
    200: { description: 'The page and the number of matching nodes.', body: NodeListSchema },
    400: { description: 'A parameter has a bad value; `details.causes[0].field` names it.', body: StatusSchema },
    ...statusResponses,
    403: forbidden,
  },
});

export const readNode = defineOperation({
  operationId: 'readNode',
  method: 'get',
  path: `${RESOURCES_BASE}/nodes/{name}`,
  tags: ['resources.kapi.io/v1alpha3'],
  summary: 'Read one node from the watched cache',
  description: `Needs \`get nodes\` (for that name) in the cluster’s RBAC. ${quantityAnnotations}`,
  security: 'bearer',
  pathParameters: z.object({ name: z.string().describe('The node name.') }),
  responses: {
    200: { description: 'The node.', body: NodeSchema },
    404: { description: 'No node of that name.', body: StatusSchema },
    ...statusResponses,
    403: forbidden,
  },
});

export const nodeOperations = [listNodes, readNode] as const;

const RegistryLookupErrors = {
  400: {
    description:
      'A parameter is missing or malformed; the secret is no image pull secret; or the registry refused, could not be ' +
      'reached, did not answer in time, or answered what is not read (its error codes in the message).',
    body: StatusSchema,
  },
  403: {
    description:
      'The cluster’s RBAC does not allow the caller this lookup in the namespace, or to read the secret named.',
    body: StatusSchema,
  },
} as const;

export const readImageConfig = defineOperation({
  operationId: 'readImageConfig',
  method: 'get',
  path: `${RESOURCES_BASE}/namespaces/{namespace}/imageconfig`,
  tags: ['resources.kapi.io/v1alpha3'],
  summary: 'An image’s config, from its registry (the console’s image lookup in the workload form)',
  description:
    'As KubeSphere 3.4 answers it: the image config blob’s fields (`config.ExposedPorts`, `config.Env`, `created`, …) ' +
    'of the image named, read from its registry with the Registry HTTP API v2; a multi-platform image’s linux/amd64 ' +
    'variant. `secret`, an image pull secret of the namespace (`kubernetes.io/dockerconfigjson` or ' +
    '`kubernetes.io/dockercfg`), is read as the caller, and only its entry for the image’s registry is used. Needs ' +
    '`get imageconfig` in API group `resources.kapi.io` in the namespace. One lookup is bounded in time (15 s) and in ' +
    'size.',
  security: 'bearer',
  pathParameters: z.object({ namespace: z.string().describe('The project whose pull secret is used.') }),
  query: z.object({
    image: z.string().describe('The image reference: `[registry/]repository[:tag][@digest]`.'),
    secret: z.string().optional().describe('An image pull secret of the namespace; anonymous without.'),
  }),
  responses: {
    200: {
      description: 'The image’s config.',
      body: apiComponent('ImageConfig', z.object({}).catchall(z.unknown())),
    },
    ...RegistryLookupErrors,
    404: { description: 'The registry does not hold that image or tag; or no such secret.', body: StatusSchema },
    ...statusResponses,
  },
});

export const listRepositoryTags = defineOperation({
  operationId: 'listRepositoryTags',
  method: 'get',
  path: `${RESOURCES_BASE}/namespaces/{namespace}/repositorytags`,
  tags: ['resources.kapi.io/v1alpha3'],
  summary: 'A repository’s tags, from its registry (the console’s tag choice in the workload form)',
  description:
    'As KubeSphere 3.4 answers it: the tags in reverse lexical order (the registry’s order with `ascending=true`), ' +
    'paged. At most 10,000 tags are read. The secret is used as for `readImageConfig`; needs `get repositorytags` in ' +
    'API group `resources.kapi.io` in the namespace.',
  security: 'bearer',
  pathParameters: z.object({ namespace: z.string().describe('The project whose pull secret is used.') }),
  query: z.object({
    repository: z.string().describe('`[registry/]repository`.'),
    secret: z.string().optional().describe('An image pull secret of the namespace; anonymous without.'),
    page: z.string().optional().describe('From 1 (default 1).'),
    limit: z.string().optional().describe('Tags per page; -1 (the default) for all.'),
    ascending: z.enum(['true', 'false']).optional().describe('The registry’s own order instead (default false).'),
  }),
  responses: {
    200: {
      description: 'The page of tags.',
      body: apiComponent(
        'RepositoryTags',
        z.object({
          registry: z.string(),
          repository: z.string(),
          tags: z.array(z.string()),
          total: z.int().min(0).describe('Tags in all.'),
        }),
      ),
    },
    ...RegistryLookupErrors,
    404: { description: 'The registry does not hold that repository; or no such secret.', body: StatusSchema },
    ...statusResponses,
  },
});

export const imageOperations = [readImageConfig, listRepositoryTags] as const;
