import { describe, expect, test } from '@jest/globals';
import { LEVELS, NAMED_METRICS, TEMPLATES } from '../../../../src/apis/monitoring/v1alpha3/catalogue.js';
import { queryOf } from '../../../../src/apis/monitoring/v1alpha3/expand.js';
import { namesOf, pairsOf } from '../../../../src/apis/monitoring/v1alpha3/request.js';
import { quoted } from '../../../../src/apis/monitoring/v1alpha3/selectors.js';
import { planOf, type PlanInput, type Target } from '../../../../src/apis/monitoring/v1alpha3/targets.js';
import { goUnquote, parsePromql, type Selector } from './promql-tree.js';

/**
 * SPEC §19's proof that nothing a caller sends widens a query: every template of every route, expanded as kapi sends
 * it, is parsed with the parser Prometheus publishes; a namespaced or workspace route's query fails the test if any of
 * its selectors lacks the scope's matcher (`namespace="ns"`, or a regex that matches the scope's namespaces and no
 * other). Names are the widest valid ones (dots are regex metacharacters; a regex of them unquoted would match more).
 */

const NS = 'team.a';
const WORKSPACE_NAMESPACES = ['team.a', 'team-b', 'x_y.z'];
/** Namespaces no scoped query may match: a dot read as "any character", a neighbour, the system's. */
const DECOYS = ['teamXa', 'team-a', 'kube-system', '', 'team.a.evil', 'x_yZz', 'team-bb'];
const SOME = namesOf('resources_filter', 'web-1|db.0|cache_2$');
const ALL = namesOf('resources_filter', undefined);

interface Case {
  name: string;
  target: Target;
  input: PlanInput;
  /** The namespaces every selector must be confined to; undefined for a cluster-wide route. */
  scope?: readonly string[];
}

const scopedCases = (): Case[] => {
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

const clusterCases = (): Case[] => [
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

/** Whether a matcher confines a selector to exactly `scope` (Prometheus anchors a regex matcher: ^(?:re)$). */
function confined(selector: Selector, scope: readonly string[]): boolean {
  return selector.matchers.some((matcher) => {
    if (matcher.label !== 'namespace') return false;
    if (matcher.op === '=') return scope.length === 1 && matcher.value === scope[0];
    if (matcher.op !== '=~') return false;
    const regex = new RegExp(`^(?:${matcher.value})$`);
    return (
      scope.every((ns) => regex.test(ns)) && DECOYS.filter((ns) => !scope.includes(ns)).every((ns) => !regex.test(ns))
    );
  });
}

const expanded = (c: Case) => {
  const plan = planOf(c.target, c.input);
  return NAMED_METRICS[plan.level].map((metric) => ({ metric, query: queryOf(metric, plan.slotsFor(metric)), plan }));
};

describe('the catalogue', () => {
  test('when the named lists are read, then each metric has a template and each template is in a list, once', () => {
    const named = LEVELS.flatMap((level) => NAMED_METRICS[level]);
    expect(new Set(named).size).toBe(named.length);
    expect([...named].sort()).toEqual(Object.keys(TEMPLATES).sort());
  });
});

describe('every template of a namespaced or workspace route', () => {
  test.each(scopedCases().map((c) => [c.name, c] as const))(
    'when %s is expanded, then Prometheus’s parser reads it and every selector carries the scope',
    (_name, c) => {
      const queries = expanded(c);
      expect(queries.length).toBeGreaterThan(0);
      for (const { metric, query, plan } of queries) {
        expect(plan.scope).toEqual(c.scope);
        const parsed = parsePromql(query);
        expect({ metric, errors: parsed.errors }).toEqual({ metric, errors: [] });
        expect(parsed.selectors.length).toBeGreaterThan(0);
        const unscoped = parsed.selectors.filter((selector) => !confined(selector, c.scope as string[]));
        expect({ metric, unscoped: unscoped.map((s) => s.text) }).toEqual({ metric, unscoped: [] });
      }
    },
  );
});

describe('every template of a cluster-wide route', () => {
  test.each(clusterCases().map((c) => [c.name, c] as const))(
    'when %s is expanded, then Prometheus’s parser reads it without an error',
    (_name, c) => {
      for (const { metric, query } of expanded(c)) {
        const parsed = parsePromql(query);
        expect({ metric, errors: parsed.errors }).toEqual({ metric, errors: [] });
        expect(parsed.selectors.length).toBeGreaterThan(0);
      }
    },
  );

  test('when resources are named, then each selector of the level matches exactly them (quoted, anchored)', () => {
    const plan = planOf({ kind: 'nodes' }, { filter: namesOf('resources_filter', 'n.1|n-2$') });
    const parsed = parsePromql(queryOf('node_cpu_utilisation', plan.slotsFor('node_cpu_utilisation')));
    const node = parsed.selectors[0]?.matchers.find((m) => m.label === 'node');
    expect(node?.op).toBe('=~');
    const regex = new RegExp(`^(?:${node?.value})$`);
    expect(['n.1', 'n-2'].every((n) => regex.test(n))).toBe(true);
    expect(['nX1', 'n-22', 'n.1|x', ''].some((n) => regex.test(n))).toBe(false);
  });
});

describe('a value written into PromQL', () => {
  test.each([
    'plain',
    'x"} or up{namespace!="',
    'back\\slash\\"',
    'new\nline\ttab\r',
    'ctl\u0001\u007f',
    'unicode ü ✓ 𝄞',
    '`raw`',
    "single'quote",
  ])('when %j is quoted, then Prometheus’s parser reads one matcher whose value is exactly it', (value) => {
    const parsed = parsePromql(`up{namespace=${quoted(value)}}`);
    expect(parsed.errors).toEqual([]);
    expect(parsed.selectors).toHaveLength(1);
    expect(parsed.selectors[0]?.matchers).toEqual([{ label: 'namespace', op: '=', value }]);
    expect(goUnquote(quoted(value))).toBe(value);
  });
});
