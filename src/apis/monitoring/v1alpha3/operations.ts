import { z } from 'zod';
import { defineOperation, type OperationDefinition } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses } from '../../../openapi/schemas.js';
import { unixSeconds } from '../../../openapi/unix-seconds.js';
import { DEFAULT_STEP_SECONDS, MAX_FILTER_LENGTH, MAX_NAMES, MAX_POINTS, RESOURCE_NAME } from './request.js';
import { COMPONENTS, WORKLOAD_KINDS } from './targets.js';

/**
 * The monitoring API's operations (SPEC §19): KubeSphere 3.4.1's named-metrics routes at kapi's group, each read as
 * KubeSphere reads it, described once here for the routes and the platform document.
 */
export const MONITORING_BASE = '/kapis/monitoring.kapi.io/v1alpha3';
const TAG = 'monitoring.kapi.io/v1alpha3';

export const SORT_TYPES = ['asc', 'desc'] as const;

const names = (what: string) =>
  z
    .string()
    .optional()
    .describe(
      `The ${what} to answer for, as KubeSphere's console sends them: names separated by \`|\`, each optionally ` +
        `between \`^\` and \`$\` (\`a|b|c$\`); \`.*\` or nothing for all. At most ${MAX_NAMES} names and ` +
        `${MAX_FILTER_LENGTH} characters; anything else (a regular expression) is a 400.`,
    );

/** The parameters every named-metrics route reads (KubeSphere 3.4.1 helper.go); unknown ones are ignored. */
export const MetricsQuerySchema = z.object({
  metrics_filter: z
    .string()
    .optional()
    .describe(
      'Which of the level’s named metrics to answer, matched anywhere in the name as KubeSphere’s regular ' +
        'expression is (`a|b|c$`: only the last alternative is anchored): metric names, `|`, `^`, `$` and `.*` only. ' +
        'Default: all of them.',
    ),
  resources_filter: names('resources (nodes, workspaces, namespaces, workloads, pods, containers or claims)'),
  namespaced_resources_filter: z
    .string()
    .optional()
    .describe('On /pods and /nodes/{node}/pods: pods as `namespace/pod`, separated by `|` (`a/web-1|b/db-0$`).'),
  time: unixSeconds('An instant query at this time (default: now); not with start and end'),
  start: unixSeconds('A range query from this time (with end; points at start + k·step)'),
  end: unixSeconds('A range query to this time (with start)'),
  step: z
    .string()
    .optional()
    .describe(
      `A range query's step, a Go duration of at least 1s (\`600s\`, \`10m\`, \`1h30m\`; default ${DEFAULT_STEP_SECONDS}s); ` +
        `at most ${MAX_POINTS} points per series.`,
    ),
  times: z.string().optional().describe('Sent by KubeSphere’s console and ignored, as KubeSphere ignores it.'),
  sort_metric: z
    .string()
    .optional()
    .describe('An instant query’s metric whose values order the resources of every metric (then paged).'),
  sort_type: z.enum(SORT_TYPES).optional().describe('The order of `sort_metric` (default desc).'),
  page: z.int().min(1).optional().describe('With sort_metric: the page, from 1 (default 1).'),
  limit: z.int().min(1).optional().describe('With sort_metric: resources per page (default 5).'),
  type: z
    .string()
    .optional()
    .describe('`statistics` on /workspaces/{workspace}: its counts from the cluster; `rank` is accepted and ignored.'),
});

const Point = z
  .tuple([z.number().describe('Unix seconds'), z.string().describe('the value, as Prometheus writes it')])
  .describe('A sample: [time, "value"].');

const MetricValueSchema = z
  .object({
    metric: z.record(z.string(), z.string()).optional().describe('The series’ labels.'),
    value: Point.optional().describe('An instant query’s sample.'),
    values: z.array(Point).optional().describe('A range query’s points, at start + k·step.'),
    min_value: z.literal(''),
    max_value: z.literal(''),
    avg_value: z.literal(''),
    sum_value: z.literal(''),
    fee: z.literal(''),
    resource_unit: z.literal(''),
    currency_unit: z.literal(''),
  })
  .describe('One series (KubeSphere’s metering fields always empty).');

export const MetricsAnswerSchema = apiComponent(
  'MonitoringMetrics',
  z
    .object({
      results: z
        .array(
          z.object({
            metric_name: z.string(),
            data: z.object({ resultType: z.enum(['vector', 'matrix']), result: z.array(MetricValueSchema) }).optional(),
            error: z
              .string()
              .optional()
              .describe(
                'Why this metric has no data (the monitoring backend failed, was slow, or answered too many series).',
              ),
          }),
        )
        .describe('One entry per metric asked for, in the order of KubeSphere’s named list of the level.'),
      page: z.int().optional(),
      total_page: z.int().optional(),
      total_item: z.int().optional().describe('With sort_metric: the resources sorted, over all pages.'),
    })
    .describe(
      'KubeSphere 3.4.1’s metrics answer. With no monitoring backend configured, each metric is empty (never an error).',
    ),
);

const responses = {
  200: {
    description: 'The metrics; a metric the backend could not answer carries `error`.',
    body: MetricsAnswerSchema,
    headers: {
      'Server-Timing': {
        description:
          'When the monitoring backend was asked: `upstream;dur=<ms>` is how long the slowest of its queries took ' +
          '(the rest of the answer’s time is kapi’s own).',
        schema: z.string(),
      },
    },
  },
  400: { description: 'A parameter has a bad value; `details.causes[0].field` names it.', body: StatusSchema },
  ...statusResponses,
  403: {
    description: 'The cluster’s RBAC does not give the caller the right the description names.',
    body: StatusSchema,
  },
  429: {
    description:
      'Too many monitoring requests in flight, of this user (4) or on this replica (32): try again after Retry-After.',
    body: StatusSchema,
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before trying again.',
        schema: z.string().regex(/^\d+$/),
        required: true,
      },
    },
  },
} as const;

const path = (shape: Record<string, z.ZodType>) => z.object(shape);
const nameOf = (what: string) =>
  z
    .string()
    .regex(RESOURCE_NAME, { error: (issue) => `"${String(issue.input).slice(0, 64)}" is not a resource name` })
    .describe(what);
const node = nameOf('A node.');
const namespace = nameOf('A namespace.');
const pod = nameOf('A pod.');

const right = (verb: string, resource: string, scope: string) =>
  `Needs \`${verb}\` on \`${resource}\` in API group \`monitoring.kapi.io\` ${scope} (a SubjectAccessReview).`;

function operation(
  operationId: string,
  route: string,
  summary: string,
  access: string,
  pathParameters?: z.ZodObject,
): OperationDefinition {
  return defineOperation({
    operationId,
    method: 'get',
    path: `${MONITORING_BASE}${route}`,
    tags: [TAG],
    summary,
    description: access,
    security: 'bearer',
    ...(pathParameters && { pathParameters }),
    query: MetricsQuerySchema,
    responses,
  });
}

export const getPlatformMetrics = defineOperation({
  operationId: 'getPlatformMetrics',
  method: 'get',
  path: `${MONITORING_BASE}/kubesphere`,
  tags: [TAG],
  summary: 'The platform’s counts: clusters, workspaces and users (KubeSphere’s `kubesphere_*` names)',
  description: `${right('get', 'cluster', 'cluster-wide')} Counted from kapi’s caches, not Prometheus; every parameter is ignored, as KubeSphere ignores them.`,
  security: 'bearer',
  responses: { 200: responses[200], ...statusResponses, 403: responses[403] },
});
export const getClusterMetrics = operation(
  'getClusterMetrics',
  '/cluster',
  'The cluster’s metrics',
  right('get', 'cluster', 'cluster-wide'),
);
export const listNodeMetrics = operation(
  'listNodeMetrics',
  '/nodes',
  'Every node’s metrics (or those named by resources_filter)',
  right('list', 'nodes', 'cluster-wide'),
);
export const getNodeMetrics = operation(
  'getNodeMetrics',
  '/nodes/{node}',
  'A node’s metrics',
  right('get', 'nodes', 'cluster-wide, with the node’s name'),
  path({ node }),
);
export const listNodePodMetrics = operation(
  'listNodePodMetrics',
  '/nodes/{node}/pods',
  'The metrics of the pods on a node',
  right('get', 'nodes/pods', 'cluster-wide, with the node’s name'),
  path({ node }),
);
export const getNodePodMetrics = operation(
  'getNodePodMetrics',
  '/nodes/{node}/pods/{pod}',
  'The metrics of a pod on a node',
  right('get', 'nodes/pods', 'cluster-wide, with the node’s name'),
  path({ node, pod }),
);
export const listWorkspaceMetrics = operation(
  'listWorkspaceMetrics',
  '/workspaces',
  'Every workspace’s metrics',
  right('list', 'workspaces', 'cluster-wide'),
);
export const getWorkspaceMetrics = operation(
  'getWorkspaceMetrics',
  '/workspaces/{workspace}',
  'A workspace’s metrics, or with type=statistics its counts (projects, members, roles)',
  `${right('get', 'workspaces', 'with the workspace’s name')} The series are those of the workspace’s projects the ` +
    'caller may see: all of them for one who may list the workspace’s projects, else the caller’s own.',
  path({ workspace: nameOf('A workspace.') }),
);
export const listWorkspaceNamespaceMetrics = operation(
  'listWorkspaceNamespaceMetrics',
  '/workspaces/{workspace}/namespaces',
  'The metrics of a workspace’s projects',
  `${right('get', 'workspaces', 'with the workspace’s name')} Only the projects the caller may see, as for the workspace.`,
  path({ workspace: nameOf('A workspace.') }),
);
export const listNamespaceMetrics = operation(
  'listNamespaceMetrics',
  '/namespaces',
  'Every namespace’s metrics',
  right('list', 'namespaces', 'cluster-wide'),
);
export const getNamespaceMetrics = operation(
  'getNamespaceMetrics',
  '/namespaces/{namespace}',
  'A namespace’s metrics (none before it was created)',
  right('get', 'namespaces', 'in the namespace, with its name'),
  path({ namespace }),
);
export const listWorkloadMetrics = operation(
  'listWorkloadMetrics',
  '/namespaces/{namespace}/workloads',
  'The metrics of a namespace’s workloads (deployments, statefulsets, daemonsets)',
  right('list', 'workloads', 'in the namespace'),
  path({ namespace }),
);
export const listWorkloadKindMetrics = operation(
  'listWorkloadKindMetrics',
  '/namespaces/{namespace}/workloads/{kind}',
  'The metrics of a namespace’s workloads of one kind',
  right('list', 'workloads', 'in the namespace'),
  path({ namespace, kind: z.enum(WORKLOAD_KINDS) }),
);
export const listWorkloadPodMetrics = operation(
  'listWorkloadPodMetrics',
  '/namespaces/{namespace}/workloads/{kind}/{workload}/pods',
  'The metrics of a workload’s pods',
  right('get', 'workloads', 'in the namespace, with the workload’s name'),
  path({ namespace, kind: z.enum(WORKLOAD_KINDS), workload: nameOf('A workload.') }),
);
export const listPodMetrics = operation(
  'listPodMetrics',
  '/pods',
  'The metrics of pods of every namespace (or those of namespaced_resources_filter)',
  right('list', 'pods', 'cluster-wide'),
);
export const listNamespacePodMetrics = operation(
  'listNamespacePodMetrics',
  '/namespaces/{namespace}/pods',
  'The metrics of a namespace’s pods',
  right('list', 'pods', 'in the namespace'),
  path({ namespace }),
);
export const getPodMetrics = operation(
  'getPodMetrics',
  '/namespaces/{namespace}/pods/{pod}',
  'A pod’s metrics',
  right('get', 'pods', 'in the namespace, with the pod’s name'),
  path({ namespace, pod }),
);
export const listContainerMetrics = operation(
  'listContainerMetrics',
  '/namespaces/{namespace}/pods/{pod}/containers',
  'The metrics of a pod’s containers',
  right('get', 'pods', 'in the namespace, with the pod’s name'),
  path({ namespace, pod }),
);
export const getContainerMetrics = operation(
  'getContainerMetrics',
  '/namespaces/{namespace}/pods/{pod}/containers/{container}',
  'A container’s metrics',
  right('get', 'pods', 'in the namespace, with the pod’s name'),
  path({ namespace, pod, container: nameOf('A container.') }),
);
export const listClaimMetrics = operation(
  'listPersistentVolumeClaimMetrics',
  '/namespaces/{namespace}/persistentvolumeclaims',
  'The metrics of a namespace’s persistent volume claims',
  right('list', 'persistentvolumeclaims', 'in the namespace'),
  path({ namespace }),
);
export const getClaimMetrics = operation(
  'getPersistentVolumeClaimMetrics',
  '/namespaces/{namespace}/persistentvolumeclaims/{claim}',
  'A persistent volume claim’s metrics',
  right('get', 'persistentvolumeclaims', 'in the namespace, with the claim’s name'),
  path({ namespace, claim: nameOf('A persistent volume claim.') }),
);
export const listStorageClassClaimMetrics = operation(
  'listStorageClassPersistentVolumeClaimMetrics',
  '/storageclasses/{storageclass}/persistentvolumeclaims',
  'The metrics of a storage class’s persistent volume claims',
  right('get', 'storageclasses/persistentvolumeclaims', 'cluster-wide, with the storage class’s name'),
  path({ storageclass: nameOf('A storage class.') }),
);
export const getComponentMetrics = operation(
  'getComponentMetrics',
  '/components/{component}',
  'The metrics of a control-plane component: apiserver, scheduler or etcd',
  right('get', 'components', 'cluster-wide, with the component’s name'),
  path({ component: z.enum(COMPONENTS) }),
);

export const monitoringOperations: readonly OperationDefinition[] = [
  getPlatformMetrics,
  getClusterMetrics,
  listNodeMetrics,
  getNodeMetrics,
  listNodePodMetrics,
  getNodePodMetrics,
  listWorkspaceMetrics,
  getWorkspaceMetrics,
  listWorkspaceNamespaceMetrics,
  listNamespaceMetrics,
  getNamespaceMetrics,
  listWorkloadMetrics,
  listWorkloadKindMetrics,
  listWorkloadPodMetrics,
  listPodMetrics,
  listNamespacePodMetrics,
  getPodMetrics,
  listContainerMetrics,
  getContainerMetrics,
  listClaimMetrics,
  getClaimMetrics,
  listStorageClassClaimMetrics,
  getComponentMetrics,
];
