import { z } from 'zod';
import { defineOperation, type OperationDefinition, type ResponseDefinition } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses, RETRY_AFTER_HEADER } from '../../../openapi/schemas.js';
import { unixSeconds } from '../../../openapi/unix-seconds.js';
import { QUERY_LIMITS } from '../promql/enforce.js';
import { MAX_GRAFANA_BYTES } from './grafana.js';
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

/** An instant query's time, or a range query's (KubeSphere 3.4.1 helper.go): every route reads them. */
const TIMING = {
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
};

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
  ...TIMING,
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
    headers: { 'Retry-After': RETRY_AFTER_HEADER },
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

/** The ad-hoc routes' query parameters (KubeSphere 3.4.1 helper.go, level 0). */
const AdhocQuerySchema = z.object({
  expr: z
    .string()
    .optional()
    .describe(
      `The PromQL (required). Read strictly as Prometheus 2 reads it; refused (400, naming why) when it does not parse, ` +
        `uses a function kapi does not know, or passes a limit: ${QUERY_LIMITS.maxBytes} bytes, ` +
        `${QUERY_LIMITS.maxSelectors} selectors, nesting ${QUERY_LIMITS.maxDepth} deep, range and subquery windows of ` +
        `${QUERY_LIMITS.maxWindowMs / 3600_000} h, ${QUERY_LIMITS.maxSubqueryPoints} points per subquery. ` +
        'What Prometheus is sent is kapi’s own print of the query it read, never this text.',
    ),
  ...TIMING,
});

const LabelSetsQuerySchema = z.object({
  metric: z.string().optional().describe('A metric name or series selector (required), read as `expr` is.'),
  start: unixSeconds('Series seen from this time (required)'),
  end: unixSeconds('Series seen up to this time (required)'),
});

const AdhocAnswerSchema = apiComponent(
  'MonitoringAdhocAnswer',
  z
    .object({
      data: z
        .object({ resultType: z.string().optional(), result: z.array(MetricValueSchema).optional() })
        .describe('Prometheus’s result: series of a vector or a matrix (a scalar or a string answers none).'),
      error: z.string().optional().describe('Why the backend gave no result (its error, a timeout, too many series).'),
    })
    .describe('KubeSphere 3.4.1’s answer to an ad-hoc query.'),
);

const LabelSetsAnswerSchema = apiComponent(
  'MonitoringLabelSets',
  z
    .object({
      data: z
        .array(z.record(z.string(), z.string()))
        .nullable()
        .describe('The label sets of the series the selector matches (without `__name__`); null when none.'),
      error: z.string().optional(),
    })
    .describe('KubeSphere 3.4.1’s label sets answer.'),
);

const MetadataAnswerSchema = apiComponent(
  'MonitoringMetadata',
  z
    .object({
      data: z
        .array(z.object({ metric: z.string(), type: z.string().optional(), help: z.string().optional() }))
        .nullable()
        .describe('One entry per metric the targets expose (in a namespace: its targets’); null when none.'),
      error: z.string().optional(),
    })
    .describe('KubeSphere 3.4.1’s metadata answer.'),
);

const { 400: _badRequest, ...withoutBadRequest } = responses;

function adhocOperation(
  operationId: string,
  route: string,
  summary: string,
  namespaced: boolean,
  query: z.ZodObject | undefined,
  body: z.ZodType,
  extra: string,
): OperationDefinition {
  return defineOperation({
    operationId,
    method: 'get',
    path: `${MONITORING_BASE}${namespaced ? '/namespaces/{namespace}' : ''}/targets/${route}`,
    tags: [TAG],
    summary,
    description:
      (namespaced
        ? `${right('get', 'targets', 'in the namespace')} Every selector is confined to the namespace ` +
          '(`namespace="<ns>"`); a matcher of its own on `namespace` that is not that is a 400, as is writing the ' +
          '`namespace` label (label_replace, label_join, count_values). '
        : `${right('get', 'targets', 'cluster-wide')} `) + extra,
    security: 'bearer',
    ...(namespaced && { pathParameters: path({ namespace }) }),
    ...(query && { query }),
    responses: {
      ...withoutBadRequest,
      // with no parameter to get wrong (the cluster's metadata), no 400
      ...((namespaced || query ? { 400: responses[400] } : {}) as Record<number, ResponseDefinition>),
      200: { description: 'The answer; a backend failure is its `error`.', body },
    },
  });
}

const QUERY_NOTE = 'An instant query, or a range query with start and end.';
const LABELSETS_NOTE = 'Prometheus’s series API over the selector.';
const METADATA_NOTE = 'Prometheus’s targets metadata (in a namespace: of targets labelled with it).';
export const queryMetrics = adhocOperation(
  'queryMetrics',
  'query',
  'An ad-hoc PromQL query',
  false,
  AdhocQuerySchema,
  AdhocAnswerSchema,
  QUERY_NOTE,
);
export const queryNamespaceMetrics = adhocOperation(
  'queryNamespaceMetrics',
  'query',
  'An ad-hoc PromQL query in a namespace',
  true,
  AdhocQuerySchema,
  AdhocAnswerSchema,
  QUERY_NOTE,
);
export const listMetricLabelSets = adhocOperation(
  'listMetricLabelSets',
  'labelsets',
  'The label sets of a metric’s series',
  false,
  LabelSetsQuerySchema,
  LabelSetsAnswerSchema,
  LABELSETS_NOTE,
);
export const listNamespaceMetricLabelSets = adhocOperation(
  'listNamespaceMetricLabelSets',
  'labelsets',
  'The label sets of a metric’s series in a namespace',
  true,
  LabelSetsQuerySchema,
  LabelSetsAnswerSchema,
  LABELSETS_NOTE,
);
export const listMetricMetadata = adhocOperation(
  'listMetricMetadata',
  'metadata',
  'The metrics the cluster’s targets expose',
  false,
  undefined,
  MetadataAnswerSchema,
  METADATA_NOTE,
);
export const listNamespaceMetricMetadata = adhocOperation(
  'listNamespaceMetricMetadata',
  'metadata',
  'The metrics a namespace’s targets expose',
  true,
  undefined,
  MetadataAnswerSchema,
  METADATA_NOTE,
);

const GrafanaImportSchema = z
  .object({
    grafanaDashboardContent: z.string().optional().describe('The Grafana dashboard’s JSON, as a string (required).'),
    grafanaDashboardUrl: z
      .string()
      .optional()
      .describe('Refused (400): kapi fetches no URL for a caller; send the content instead.'),
    description: z.string().optional().describe('The dashboard’s description (annotation `kapi.io/description`).'),
  })
  .describe('KubeSphere 3.4.1’s Grafana import body.');

const DashboardObjectSchema = z
  .looseObject({ apiVersion: z.string(), kind: z.string(), metadata: z.looseObject({ name: z.string() }) })
  .describe('The dashboard created, as kube-apiserver stored it.');

function importOperation(operationId: string, route: string, summary: string, namespaced: boolean) {
  return defineOperation({
    operationId,
    method: 'post',
    path: `${MONITORING_BASE}${route}`,
    tags: [TAG],
    summary,
    description:
      `Converts a Grafana dashboard (rows flattened; graph, singlestat, bargauge, table and text panels; Grafana’s ` +
      'template-variable selectors taken out of its Prometheus targets, as KubeSphere does) and creates it as the ' +
      `caller: needs \`create ${namespaced ? 'dashboards` in the namespace' : 'clusterdashboards`'} in API group ` +
      '`monitoring.kapi.io` (kube-apiserver’s RBAC decides). Its panels’ queries are read and confined when drawn ' +
      '(`targets/query`).',
    security: 'bearer',
    pathParameters: path(
      namespaced ? { namespace, name: nameOf('The dashboard’s name.') } : { name: nameOf('The dashboard’s name.') },
    ),
    jsonBody: GrafanaImportSchema,
    responses: {
      200: { description: 'Created.', body: DashboardObjectSchema },
      400: {
        description: 'No content, a URL, content that is not a Grafana dashboard; `details.causes[0].field` names it.',
        body: StatusSchema,
      },
      ...statusResponses,
      403: { description: 'The cluster’s RBAC does not let the caller create it.', body: StatusSchema },
      409: { description: 'A dashboard of that name exists.', body: StatusSchema },
      413: { description: `The body is larger than ${GRAFANA_BODY_LIMIT_BYTES >> 20} MiB.`, body: StatusSchema },
      415: { description: 'The body is not JSON.', body: StatusSchema },
    },
  });
}

/** A body of the Grafana import read at most: the content is a JSON string inside JSON (escaped, up to twice as long). */
export const GRAFANA_BODY_LIMIT_BYTES = 2 * MAX_GRAFANA_BYTES + 16 * 1024;

export const importDashboard = importOperation(
  'importDashboard',
  '/namespaces/{namespace}/dashboards/{name}/template',
  'Import a Grafana dashboard as a project’s custom monitoring dashboard',
  true,
);
export const importClusterDashboard = importOperation(
  'importClusterDashboard',
  '/clusterdashboards/{name}/template',
  'Import a Grafana dashboard as a cluster custom monitoring dashboard',
  false,
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
  queryMetrics,
  queryNamespaceMetrics,
  listMetricLabelSets,
  listNamespaceMetricLabelSets,
  listMetricMetadata,
  listNamespaceMetricMetadata,
  importDashboard,
  importClusterDashboard,
];
