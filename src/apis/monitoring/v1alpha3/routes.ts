import { Router } from 'express';
import type { Authorizer, UserInfo } from '../../../auth/identity.js';
import type { WatchedNamespaces } from '../../../kube/namespace-cache.js';
import { mountOperation, type OperationDefinition } from '../../../openapi/operation.js';
import { parseQuery } from '../../../openapi/query-parameters.js';
import { ServiceUnavailableError } from '../../../server/errors.js';
import { jsonBodyOf } from '../../../auth/account/account-routes.js';
import type { KubeClient } from '../../../kube/client.js';
import { asCaller, requireRight, withCaller } from '../../caller.js';
import { DASHBOARDS_GROUP, DASHBOARDS_VERSION, dashboardFromGrafana } from './grafana.js';
import { workspaceRoles } from '../../iam/v1alpha2/scoped-roles.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../../resources/v1alpha3/listing/resource-listing.js';
import { TenantMemberships } from '../../tenant/memberships.js';
import { NAMED_METRICS } from './catalogue.js';
import { queryOf } from './expand.js';
import * as op from './operations.js';
import { GRAFANA_BODY_LIMIT_BYTES } from './operations.js';
import { quote } from '../promql/lexical.js';
import type { AdhocParameters } from './adhoc.js';
import { MonitoringRequestLimits } from './request-limits.js';
import {
  DEFAULTS as PROMETHEUS_DEFAULTS,
  type MonitoringBackendSettings,
  type PrometheusBackend,
} from './prometheus.js';
import { metricsQueryOf, type MetricsQuery, type Timing } from './request.js';
import { IDENTIFIER, metricValue, sortAndPage, type MetricResult, type MetricsAnswer } from './results.js';
import { MONITORING_GROUP, accessOf, planOf, type PodPair, type Target } from './targets.js';

export interface MonitoringRouteDeps {
  authorizer: Authorizer;
  namespaces: Pick<WatchedNamespaces, 'synced' | 'get' | 'list'>;
  listing: ResourceListing;
  /** The backend the ClusterConfiguration names now; undefined when none (every metric answered empty). */
  backend: () => MonitoringBackendSettings | undefined;
  prometheus: PrometheusBackend;
  /** Requests of one user in flight at once (429 beyond); MAX_REQUESTS_PER_USER when absent. */
  limits?: MonitoringRequestLimits;
  /** Upstream queries one request has in flight at once; default MAX_QUERIES_PER_REQUEST. */
  maxQueriesPerRequest?: number;
  now?: () => number;
  /** kapi's client: the Grafana import creates a dashboard through it, as the caller. */
  client?: KubeClient;
}

export const MAX_QUERIES_PER_REQUEST = 8;

const kind = (resource: string) => KINDS_BY_RESOURCE.get(resource) as KindDefinition;

/**
 * `monitoring.kapi.io/v1alpha3` (SPEC §19): each route reads its target from the path, asks the cluster's RBAC for
 * the right on `monitoring.kapi.io` it needs, reads its parameters, and answers KubeSphere's named metrics of the
 * target's level from the monitoring backend, each through templates filled from validated names only (targets.ts).
 */
export function monitoringRoutes(deps: MonitoringRouteDeps): Router {
  const router = Router();
  const now = deps.now ?? Date.now;
  const memberships = new TenantMemberships(deps.listing);
  const limits = deps.limits ?? new MonitoringRequestLimits();
  const perRequest = deps.maxQueriesPerRequest ?? MAX_QUERIES_PER_REQUEST;

  /**
   * The namespaces of a workspace, as kapi's watch has them, that the caller may see: all of them for one who may
   * read every workspace's metrics or list the workspace's projects, else the caller's own projects.
   */
  const workspaceNamespaces = async (caller: UserInfo, workspace: string): Promise<string[]> => {
    requireSynced();
    const all = deps.namespaces
      .list()
      .filter((ns) => ns.workspace === workspace)
      .map((ns) => ns.name)
      .sort();
    if ((await deps.authorizer.authorize(caller, accessOf({ kind: 'workspaces' }))).allowed) return all;
    return (await memberships.visibleProjects(deps.authorizer, caller, workspace, all)).names;
  };

  const requireSynced = () => {
    if (!deps.namespaces.synced)
      throw new ServiceUnavailableError('the namespaces are not known yet (the cache has not synced); try again');
  };

  /** Mounts a route whose target comes from its path parameters. */
  const serve = (operation: OperationDefinition, targetOf: (params: Record<string, string>) => Target) =>
    mountOperation(
      router,
      '',
      operation,
      withCaller(async (caller, req, res) => {
        const params = operation.pathParameters
          ? (parseQuery(operation.pathParameters, req.params as Record<string, unknown>) as Record<string, string>)
          : {};
        const target = targetOf(params);
        await requireRight(deps.authorizer, caller, accessOf(target));
        const query = metricsQueryOf(
          parseQuery(op.MetricsQuerySchema, req.query as Record<string, unknown>),
          Math.floor(now() / 1000),
        );
        // held until the answer is worked out, even for a client gone: its upstream queries still run
        const release = limits.admit(caller.username);
        try {
          const upstream = { slowestMs: 0, queries: 0 };
          const answered = await answer(caller, target, query, upstream);
          // what the monitoring backend took of the answer's time (the slowest of its queries ran alongside the rest)
          if (upstream.queries > 0)
            res.setHeader(
              'Server-Timing',
              `upstream;dur=${upstream.slowestMs.toFixed(1)};desc="the slowest of ${upstream.queries} backend queries"`,
            );
          res.json(answered);
        } finally {
          release();
        }
      }),
    );

  const answer = async (
    caller: UserInfo,
    target: Target,
    query: MetricsQuery,
    upstream: { slowestMs: number; queries: number },
  ): Promise<MetricsAnswer> => {
    if (target.kind === 'workspace' && query.type === 'statistics')
      return workspaceStatistics(caller, target.workspace);
    const workspaceScoped = target.kind === 'workspace' || target.kind === 'workspace-namespaces';
    const plan = planOf(target, {
      filter: query.filter,
      ...(query.pairs && { pairs: query.pairs }),
      ...(workspaceScoped && { workspaceNamespaces: await workspaceNamespaces(caller, target.workspace) }),
    });
    const metrics = NAMED_METRICS[plan.level].filter((metric) => query.wants(metric));
    let timing: Timing | undefined = query.timing;
    if (plan.clampNamespace !== undefined) timing = clamped(timing, createdAt(plan.clampNamespace));
    const settings = deps.backend();
    // nothing to ask: no backend, a namespace not there yet at those times, a workspace with no project to show
    if (!settings || !timing || (plan.scope && plan.scope.length === 0))
      return { results: metrics.map((metric) => empty(metric, query.timing)) };
    const asked = timing;
    const results = await inBatches(metrics, perRequest, async (metric): Promise<MetricResult> => {
      const started = performance.now();
      const outcome = await deps.prometheus.query(settings, queryOf(metric, plan.slotsFor(metric)), asked);
      upstream.slowestMs = Math.max(upstream.slowestMs, performance.now() - started);
      upstream.queries++;
      if ('error' in outcome) return { metric_name: metric, error: outcome.error };
      const series = query.pairs ? outcome.data.result.filter(inPairs(query.pairs)) : outcome.data.result;
      return { metric_name: metric, data: { resultType: outcome.data.resultType, result: series.map(metricValue) } };
    });
    const answered: MetricsAnswer = { results };
    return query.sorting ? sortAndPage(answered, query.sorting, IDENTIFIER[plan.level]) : answered;
  };

  /** Unix seconds a namespace was made at; one kapi has not seen (yet) counts as made now. */
  const createdAt = (namespace: string): number => {
    requireSynced();
    return deps.namespaces.get(namespace)?.createdAt ?? Math.floor(now() / 1000);
  };

  const workspaceStatistics = async (caller: UserInfo, workspace: string): Promise<MetricsAnswer> => {
    const at = Math.floor(now() / 1000);
    const template = await memberships.workspace(workspace);
    const projects = await workspaceNamespaces(caller, workspace);
    const members = template ? (await memberships.membersOf(workspace)).size : 0;
    const roles = template ? workspaceRoles(workspace, template.metadata?.creationTimestamp).length : 0;
    return {
      results: [
        count('workspace_namespace_count', template ? projects.length : 0, at),
        count('workspace_devops_project_count', 0, at),
        count('workspace_member_count', members, at),
        count('workspace_role_count', roles, at),
      ],
    };
  };

  mountOperation(
    router,
    '',
    op.getPlatformMetrics,
    withCaller(async (caller, _req, res) => {
      await requireRight(deps.authorizer, caller, accessOf({ kind: 'cluster' }));
      const at = Math.floor(now() / 1000);
      // KubeSphere counts Cluster objects, 1 when there are none: kapi manages the one cluster it runs in
      res.json({
        results: [
          count('kubesphere_cluser_count', 1, at),
          count('kubesphere_workspace_count', await deps.listing.cachedCount(kind('workspacetemplates')), at),
          count('kubesphere_user_count', await deps.listing.cachedCount(kind('users')), at),
        ],
      });
    }),
  );
  /**
   * Mounts an ad-hoc route (`[namespaces/{ns}/]targets/*`): the caller's right on `targets` (cluster-wide, or in the
   * namespace), then the answer, counted against the caller's requests in flight as the named metrics are.
   */
  const adhoc = (
    operation: OperationDefinition,
    handle: (namespace: string | undefined, query: Record<string, unknown>) => Promise<object>,
  ) =>
    mountOperation(
      router,
      '',
      operation,
      withCaller(async (caller, req, res) => {
        const namespace = operation.pathParameters
          ? (parseQuery(operation.pathParameters, req.params as Record<string, unknown>).namespace as string)
          : undefined;
        await requireRight(deps.authorizer, caller, targetsAccess(namespace));
        const query = operation.query ? parseQuery(operation.query, req.query as Record<string, unknown>) : {};
        const release = limits.admit(caller.username);
        try {
          res.json(await handle(namespace, query));
        } finally {
          release();
        }
      }),
    );

  // the ad-hoc queries' module (Prometheus's PromQL grammar with it) is loaded by the first such query: a kapi whose
  // console never asks one does not hold it
  let adhocModule: Promise<typeof import('./adhoc.js')> | undefined;
  const adhocOperations = () => (adhocModule ??= import('./adhoc.js'));

  const adhocQuery = async (namespace: string | undefined, raw: Record<string, unknown>) => {
    const { adhocQueryOf, adhocAnswerOf } = await adhocOperations();
    const { promql, timing } = adhocQueryOf(raw as AdhocParameters, namespace, Math.floor(now() / 1000));
    const asked = namespace === undefined ? timing : clamped(timing, createdAt(namespace));
    const settings = deps.backend();
    if (!settings || !asked) return { data: { resultType: 'instant' in timing ? 'vector' : 'matrix', result: [] } };
    return adhocAnswerOf(await deps.prometheus.query(settings, promql, asked));
  };
  adhoc(op.queryMetrics, adhocQuery);
  adhoc(op.queryNamespaceMetrics, adhocQuery);

  const labelSets = async (namespace: string | undefined, raw: Record<string, unknown>) => {
    const { labelSetQueryOf, labelSetsOf } = await adhocOperations();
    const asked = labelSetQueryOf(raw, namespace);
    // a namespace's series from before it was made are another's of the same name (KubeSphere's clamp)
    const start = namespace === undefined ? asked.start : Math.max(asked.start, createdAt(namespace));
    const settings = deps.backend();
    if (!settings || start > asked.end) return { data: null };
    const params = new URLSearchParams({ 'match[]': asked.match, start: String(start), end: String(asked.end) });
    const read = await deps.prometheus.read(settings, '/api/v1/series', params);
    return 'error' in read ? { data: [], error: read.error } : labelSetsOf(read.data, PROMETHEUS_DEFAULTS.maxSeries);
  };
  adhoc(op.listMetricLabelSets, labelSets);
  adhoc(op.listNamespaceMetricLabelSets, labelSets);

  const metadata = async (namespace: string | undefined) => {
    const { metadataOf } = await adhocOperations();
    const settings = deps.backend();
    if (!settings) return { data: null };
    // a namespace's targets are those labelled with it (Prometheus's match_target, as KubeSphere asks)
    const params = new URLSearchParams(
      namespace === undefined ? {} : { match_target: `{namespace=${quote(namespace)}}` },
    );
    const read = await deps.prometheus.read(settings, '/api/v1/targets/metadata', params);
    return 'error' in read ? { data: null, error: read.error } : metadataOf(read.data);
  };
  adhoc(op.listMetricMetadata, metadata);
  adhoc(op.listNamespaceMetricMetadata, metadata);

  /** A Grafana dashboard created as a custom monitoring dashboard, as the caller (kube-apiserver's RBAC decides). */
  const importAs = (operation: OperationDefinition, namespaced: boolean) =>
    mountOperation(
      router,
      '',
      operation,
      jsonBodyOf(GRAFANA_BODY_LIMIT_BYTES),
      withCaller(async (caller, req, res) => {
        const params = parseQuery(
          operation.pathParameters as NonNullable<OperationDefinition['pathParameters']>,
          req.params as Record<string, unknown>,
        );
        const name = params.name as string;
        const namespace = namespaced ? (params.namespace as string) : undefined;
        const dashboard = dashboardFromGrafana(req.body, name, namespace);
        const collection =
          namespace === undefined
            ? `/apis/${DASHBOARDS_GROUP}/${DASHBOARDS_VERSION}/clusterdashboards`
            : `/apis/${DASHBOARDS_GROUP}/${DASHBOARDS_VERSION}/namespaces/${encodeURIComponent(namespace)}/dashboards`;
        if (!deps.client) throw new ServiceUnavailableError('kapi cannot write to the cluster here');
        const created = await asCaller(
          deps.client,
          caller,
          { method: 'POST', path: collection, body: dashboard, timeoutMs: 10_000 },
          { name, group: DASHBOARDS_GROUP, kind: namespace === undefined ? 'clusterdashboards' : 'dashboards' },
        );
        res.json(created);
      }),
    );
  importAs(op.importDashboard, true);
  importAs(op.importClusterDashboard, false);

  serve(op.getClusterMetrics, () => ({ kind: 'cluster' }));
  serve(op.listNodeMetrics, () => ({ kind: 'nodes' }));
  serve(op.getNodeMetrics, (p) => ({ kind: 'nodes', node: p.node as string }));
  serve(op.listNodePodMetrics, (p) => ({ kind: 'node-pods', node: p.node as string }));
  serve(op.getNodePodMetrics, (p) => ({ kind: 'node-pods', node: p.node as string, pod: p.pod as string }));
  serve(op.listWorkspaceMetrics, () => ({ kind: 'workspaces' }));
  serve(op.getWorkspaceMetrics, (p) => ({ kind: 'workspace', workspace: p.workspace as string }));
  serve(op.listWorkspaceNamespaceMetrics, (p) => ({ kind: 'workspace-namespaces', workspace: p.workspace as string }));
  serve(op.listNamespaceMetrics, () => ({ kind: 'namespaces' }));
  serve(op.getNamespaceMetrics, (p) => ({ kind: 'namespace', namespace: p.namespace as string }));
  serve(op.listWorkloadMetrics, (p) => ({ kind: 'workloads', namespace: p.namespace as string }));
  serve(op.listWorkloadKindMetrics, (p) => ({
    kind: 'workloads',
    namespace: p.namespace as string,
    workloadKind: p.kind as 'deployment',
  }));
  serve(op.listWorkloadPodMetrics, (p) => ({
    kind: 'workload-pods',
    namespace: p.namespace as string,
    workloadKind: p.kind as 'deployment',
    workload: p.workload as string,
  }));
  serve(op.listPodMetrics, () => ({ kind: 'pods' }));
  serve(op.listNamespacePodMetrics, (p) => ({ kind: 'namespace-pods', namespace: p.namespace as string }));
  serve(op.getPodMetrics, (p) => ({ kind: 'namespace-pods', namespace: p.namespace as string, pod: p.pod as string }));
  serve(op.listContainerMetrics, (p) => ({
    kind: 'containers',
    namespace: p.namespace as string,
    pod: p.pod as string,
  }));
  serve(op.getContainerMetrics, (p) => ({
    kind: 'containers',
    namespace: p.namespace as string,
    pod: p.pod as string,
    container: p.container as string,
  }));
  serve(op.listClaimMetrics, (p) => ({ kind: 'pvcs', namespace: p.namespace as string }));
  serve(op.getClaimMetrics, (p) => ({ kind: 'pvcs', namespace: p.namespace as string, pvc: p.claim as string }));
  serve(op.listStorageClassClaimMetrics, (p) => ({
    kind: 'storageclass-pvcs',
    storageClass: p.storageclass as string,
  }));
  serve(op.getComponentMetrics, (p) => ({ kind: 'component', component: p.component as 'etcd' }));
  return router;
}

/** The right the ad-hoc routes need: `get targets` on `monitoring.kapi.io`, cluster-wide or in the namespace. */
function targetsAccess(namespace: string | undefined) {
  return {
    verb: 'get',
    group: MONITORING_GROUP,
    resource: 'targets',
    ...(namespace !== undefined && { namespace }),
  };
}

/**
 * The times a query of a namespace made at `created` may ask (KubeSphere's clamp): none when they all come before
 * it; a range starting before it starts at its first step after.
 */
export function clamped(timing: Timing, created: number): Timing | undefined {
  if ('instant' in timing) return timing.instant < created ? undefined : timing;
  if (timing.end < created) return undefined;
  if (timing.start >= created) return timing;
  const start = timing.start + Math.ceil((created - timing.start) / timing.step) * timing.step;
  // no point of the range is after the namespace was made
  return start > timing.end ? undefined : { ...timing, start };
}

/** A metric with no series (KubeSphere answers so when there is nothing to ask). */
function empty(metric: string, timing: Timing): MetricResult {
  return { metric_name: metric, data: { resultType: 'instant' in timing ? 'vector' : 'matrix', result: [] } };
}

/** A count kapi knows itself, as KubeSphere answers one: a vector of one sample, now. */
function count(metric: string, value: number, at: number): MetricResult {
  return { metric_name: metric, data: { resultType: 'vector', result: [metricValue({ value: [at, String(value)] })] } };
}

/** Whether a series is of one of the pairs asked for (a pair without a namespace: any). */
function inPairs(pairs: readonly PodPair[]) {
  return (series: { metric?: Record<string, string> }) =>
    pairs.some(
      (pair) =>
        series.metric?.pod === pair.pod &&
        (pair.namespace === undefined || series.metric?.namespace === pair.namespace),
    );
}

/** `work` for each item, at most `limit` at once, the answers in the items' order. */
async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
