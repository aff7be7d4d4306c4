import { z } from 'zod';
import { defineOperation } from '../../../openapi/operation.js';
import { StatusSchema, apiComponent, statusResponses, RETRY_AFTER_HEADER } from '../../../openapi/schemas.js';
import { unixSeconds } from '../../../openapi/unix-seconds.js';

/**
 * The logging API's operation (SPEC §6), at the logging group and, for KubeSphere 3.4 clients, the tenant group:
 * the routes mount it, parse with its query schema, and the platform document shows it. Parameters are KubeSphere
 * 3.4's; their order is the order they are checked in. Unknown parameters are ignored; an empty value is absent.
 */
export const LOGGING_BASE = '/kapis/logging.kapi.io/v1alpha2';
export const TENANT_BASE = '/kapis/tenant.kapi.io/v1alpha2';

export const OPERATIONS = ['query', 'statistics', 'histogram', 'export'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** OpenSearch's default `index.max_result_window`: `from + size` beyond it is refused by both backends alike. */
export const MAX_RESULT_WINDOW = 10_000;
export const DEFAULT_SIZE = 10;
/**
 * The most namespaces one query that names none may have reviewed (after `namespace_query`): each is a
 * SubjectAccessReview once the authorizer's cache expires, so beyond this the caller must name `namespaces`.
 */
export const MAX_UNNAMED_NAMESPACES = 200;
export const DEFAULT_INTERVAL = '15m';
export const INTERVAL_PATTERN = /^(?:[1-9]\d{0,5}[smhdw]|1[Mqy])$/;

const exact = (what: string, example: string) =>
  z
    .array(z.string())
    .optional()
    .describe(`Comma-separated ${what}; a record matches when it equals any of them. Example: \`${example}\`.`);

const keywords = (what: string, example: string) =>
  z
    .array(z.string())
    .optional()
    .describe(
      `Comma-separated keywords; a record matches when its ${what} contains any of them, ignoring case. ` +
        `Example: \`${example}\`.`,
    );

/** A histogram's `interval` parameter (the logging API's and the event search's). */
export const IntervalSchema = z
  .string()
  .regex(INTERVAL_PATTERN, {
    error: (issue) =>
      `"${String(issue.input)}" is not an interval: a whole number and a unit s, m, h, d or w (e.g. 15m), or 1M, 1q, 1y`,
  })
  .default(DEFAULT_INTERVAL)
  .describe('Histogram bucket width: a whole number and s, m, h, d or w (15m), or 1M, 1q, 1y (calendar, UTC).');

export const LogQuerySchema = z.object({
  operation: z
    .enum(OPERATIONS)
    .default('query')
    .describe(
      'query: one page of matching records; statistics: how many containers and records match; histogram: ' +
        'record counts per `interval`; export: every matching record as text/plain, streamed.',
    ),
  namespaces: exact('namespaces', 'demo,kube-system').describe(
    'Comma-separated namespaces; a record matches when it equals any of them. Example: `demo,kube-system`. ' +
      'Without it, a caller that may not read logs cluster-wide gets every namespace it may read, each checked ' +
      `by a SubjectAccessReview: when more than ${MAX_UNNAMED_NAMESPACES} namespaces match \`namespace_query\`, ` +
      'that is a 400 asking to name them.',
  ),
  namespace_query: keywords('namespace', 'dem,kube'),
  workloads: exact('workloads (Deployment, StatefulSet, DaemonSet, Job)', 'web,api'),
  workload_query: keywords('workload name (OpenSearch: its pod name)', 'we'),
  pods: exact('pods', 'web-7d9c8b6f5-x2x4p'),
  pod_query: keywords('pod name', 'web'),
  containers: exact('containers', 'app,sidecar'),
  container_query: keywords('container name', 'app'),
  log_query: keywords('text', 'error,timeout'),
  interval: IntervalSchema,
  start_time: unixSeconds('Earliest record time, inclusive. Absent: no lower bound (every kept log)'),
  end_time: unixSeconds('Latest record time, inclusive. Absent: now'),
  sort: z.enum(SORT_ORDERS).default('desc').describe('Record order by time, for query and export.'),
  from: z.int().min(0).max(MAX_RESULT_WINDOW).default(0).describe('Offset of the first record a query returns.'),
  size: z
    .int()
    .min(0)
    .max(MAX_RESULT_WINDOW)
    .default(DEFAULT_SIZE)
    .describe(`Records a query returns; from + size at most ${MAX_RESULT_WINDOW}.`),
});

const LogRecordSchema = apiComponent(
  'LogRecord',
  z
    .object({
      log: z.string().describe('The line as the container wrote it, without the runtime timestamp.'),
      time: z.string().describe('When it was written: RFC 3339 with nanoseconds, UTC.'),
      namespace: z.string(),
      pod: z.string(),
      container: z.string(),
    })
    .describe('One log line.'),
);

const SkippedSchema = apiComponent(
  'LogSkippedContainers',
  z
    .object({
      containers: z.int().describe('How many containers could not be read.'),
      examples: z
        .array(z.object({ namespace: z.string(), pod: z.string(), container: z.string(), reason: z.string() }))
        .describe('The first few of them, with the reason.'),
    })
    .describe(
      'kapi’s addition, present only when some containers could not be read (the answer covers the others). ' +
        'KubeSphere clients ignore it.',
    ),
);

export const LogQueryResultSchema = apiComponent(
  'LogQueryResult',
  z
    .object({
      query: z.object({
        total: z.int().describe('Matching records, counted exactly up to 10,000; 10,000 means at least that many.'),
        records: z.array(LogRecordSchema).describe('The page: `size` records from `from`, in `sort` order.'),
      }),
      skipped: SkippedSchema.optional(),
    })
    .describe('operation=query.'),
);

export const LogStatisticsResultSchema = apiComponent(
  'LogStatisticsResult',
  z
    .object({
      statistics: z.object({
        containers: z.int().describe('Containers with at least one matching record.'),
        logs: z.int().describe('Matching records.'),
      }),
      skipped: SkippedSchema.optional(),
    })
    .describe('operation=statistics.'),
);

export const LogHistogramResultSchema = apiComponent(
  'LogHistogramResult',
  z
    .object({
      histogram: z.object({
        total: z.int().describe('Matching records.'),
        histograms: z
          .array(z.object({ time: z.int().describe('Bucket start, epoch milliseconds.'), count: z.int() }))
          .describe('One bucket per interval, ascending, from the first non-empty bucket to the last.'),
      }),
      skipped: SkippedSchema.optional(),
    })
    .describe('operation=histogram.'),
);

export const SKIPPED_TRAILER = 'Kapi-Skipped-Containers';

const description =
  'Container logs of the namespaces where the cluster’s RBAC allows the caller `get pods/log` (SubjectAccessReview): ' +
  'naming a namespace it may not read is a 403; naming none means every namespace it may read (at most ' +
  `${MAX_UNNAMED_NAMESPACES} to review, else a 400). Times are whole ` +
  'Unix seconds. operation=export answers `text/plain; charset=utf-8`, streamed (one line per record; the trailer ' +
  `${SKIPPED_TRAILER} counts containers that could not be read). An answer whose client takes none of it for ` +
  '--log-write-timeout (60 s) is ended.';

const responses = {
  200: {
    description: 'The answer of the operation (export: text/plain, see the description).',
    body: z.union([LogQueryResultSchema, LogStatisticsResultSchema, LogHistogramResultSchema]),
  },
  400: { description: 'A parameter has a bad value; `details.causes[0].field` names it.', body: StatusSchema },
  ...statusResponses,
  403: { description: 'A named namespace whose logs the caller may not read.', body: StatusSchema },
  429: {
    description:
      'Too many logging requests in flight, for this user or on this replica (exports and queries are limited ' +
      'apart; see --log-max-exports and --log-max-queries): try again after Retry-After.',
    body: StatusSchema,
    headers: { 'Retry-After': RETRY_AFTER_HEADER },
  },
} as const;

export const queryLogs = defineOperation({
  operationId: 'queryLogs',
  method: 'get',
  path: `${LOGGING_BASE}/logs`,
  tags: ['logging.kapi.io/v1alpha2'],
  summary: 'Query, count, chart or export container logs',
  description,
  security: 'bearer',
  query: LogQuerySchema,
  responses,
});

export const queryTenantLogs = defineOperation({
  ...queryLogs,
  operationId: 'queryTenantLogs',
  path: `${TENANT_BASE}/logs`,
  tags: ['tenant.kapi.io/v1alpha2'],
  summary: 'The same as queryLogs, where KubeSphere 3.4 clients ask',
});

export const loggingOperations = [queryLogs, queryTenantLogs] as const;
