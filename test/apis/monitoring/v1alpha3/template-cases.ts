import { NAMED_METRICS } from '../../../../src/apis/monitoring/v1alpha3/catalogue.js';
import { queryOf } from '../../../../src/apis/monitoring/v1alpha3/expand.js';
import { namesOf, pairsOf } from '../../../../src/apis/monitoring/v1alpha3/request.js';
import { planOf, type PlanInput, type Target } from '../../../../src/apis/monitoring/v1alpha3/targets.js';

/**
 * Every route's templates as kapi expands them, with the widest valid names (dots are regex metacharacters): read by
 * the scope proof (templates.test.ts) and by the printer's proof against Prometheus (promql/printer.prometheus.test.ts).
 */

export const NS = 'team.a';
export const WORKSPACE_NAMESPACES = ['team.a', 'team-b', 'x_y.z'];
/** Namespaces no scoped query may match: a dot read as "any character", a neighbour, the system's. */
export const DECOYS = ['teamXa', 'team-a', 'kube-system', '', 'team.a.evil', 'x_yZz', 'team-bb'];
const SOME = namesOf('resources_filter', 'web-1|db.0|cache_2$');
const ALL = namesOf('resources_filter', undefined);

export interface Case {
  name: string;
  target: Target;
  input: PlanInput;
  /** The namespaces every selector must be confined to; undefined for a cluster-wide route. */
  scope?: readonly string[];
}

export const scopedCases = (): Case[] => {
  const one = [NS];
  const cases: Case[] = [];
  for (const filter of [ALL, SOME]) {
    const tag = 'all' in filter ? 'all' : 'named';
    cases.push(
      { name: `namespace (${tag})`, target: { kind: 'namespace', namespace: NS }, input: { filter }, scope: one },
      { name: `workloads (${tag})`, target: { kind: 'workloads', namespace: NS }, input: { filter }, scope: one },
      ...(['deployment', 'statefulset', 'daemonset'] as const).flatMap((kind) => [
        {
          name: `workloads/${kind} (${tag})`,
          target: { kind: 'workloads', namespace: NS, workloadKind: kind } as Target,
          input: { filter },
          scope: one,
        },
        {
          name: `workloads/${kind}/w.1/pods (${tag})`,
          target: { kind: 'workload-pods', namespace: NS, workloadKind: kind, workload: 'w.1' } as Target,
          input: { filter },
          scope: one,
        },
      ]),
      { name: `pods (${tag})`, target: { kind: 'namespace-pods', namespace: NS }, input: { filter }, scope: one },
      {
        name: `pods/p.1`,
        target: { kind: 'namespace-pods', namespace: NS, pod: 'p.1' },
        input: { filter },
        scope: one,
      },
      {
        name: `containers (${tag})`,
        target: { kind: 'containers', namespace: NS, pod: 'p.1' },
        input: { filter },
        scope: one,
      },
      {
        name: 'containers/c',
        target: { kind: 'containers', namespace: NS, pod: 'p.1', container: 'c' },
        input: { filter },
        scope: one,
      },
      { name: `claims (${tag})`, target: { kind: 'pvcs', namespace: NS }, input: { filter }, scope: one },
      { name: 'claims/data.1', target: { kind: 'pvcs', namespace: NS, pvc: 'data.1' }, input: { filter }, scope: one },
      {
        name: `workspace (${tag})`,
        target: { kind: 'workspace', workspace: 'ws.1' },
        input: { filter, workspaceNamespaces: WORKSPACE_NAMESPACES },
        scope: WORKSPACE_NAMESPACES,
      },
      {
        name: 'workspace of one project',
        target: { kind: 'workspace', workspace: 'ws.1' },
        input: { filter, workspaceNamespaces: [NS] },
        scope: one,
      },
      {
        name: `workspace namespaces (${tag})`,
        target: { kind: 'workspace-namespaces', workspace: 'ws.1' },
        input: {
          filter: 'all' in filter ? filter : namesOf('resources_filter', 'team.a|x_y.z'),
          workspaceNamespaces: WORKSPACE_NAMESPACES,
        },
        scope: 'all' in filter ? WORKSPACE_NAMESPACES : ['team.a', 'x_y.z'],
      },
    );
  }
  return cases;
};

export const clusterCases = (): Case[] => [
  { name: 'cluster', target: { kind: 'cluster' }, input: { filter: ALL } },
  { name: 'nodes', target: { kind: 'nodes' }, input: { filter: SOME } },
  { name: 'nodes/n.1', target: { kind: 'nodes', node: 'n.1' }, input: { filter: ALL } },
  { name: 'workspaces', target: { kind: 'workspaces' }, input: { filter: SOME } },
  { name: 'namespaces', target: { kind: 'namespaces' }, input: { filter: SOME } },
  { name: 'pods', target: { kind: 'pods' }, input: { filter: ALL, pairs: pairsOf('a/web-1|db.0') as never } },
  { name: 'nodes/n.1/pods', target: { kind: 'node-pods', node: 'n.1' }, input: { filter: SOME } },
  { name: 'nodes/n.1/pods/p', target: { kind: 'node-pods', node: 'n.1', pod: 'p' }, input: { filter: ALL } },
  {
    name: 'storage class claims',
    target: { kind: 'storageclass-pvcs', storageClass: 'fast.ssd' },
    input: { filter: SOME },
  },
  ...(['apiserver', 'scheduler', 'etcd'] as const).map((component) => ({
    name: component,
    target: { kind: 'component', component } as Target,
    input: { filter: ALL },
  })),
];

export const expanded = (c: Case) => {
  const plan = planOf(c.target, c.input);
  return NAMED_METRICS[plan.level].map((metric) => ({ metric, query: queryOf(metric, plan.slotsFor(metric)), plan }));
};
