import { describe, expect, test } from '@jest/globals';
import { LEVELS, NAMED_METRICS, TEMPLATES } from '../../../../src/apis/monitoring/v1alpha3/catalogue.js';
import { queryOf } from '../../../../src/apis/monitoring/v1alpha3/expand.js';
import { namesOf } from '../../../../src/apis/monitoring/v1alpha3/request.js';
import { quoted } from '../../../../src/apis/monitoring/v1alpha3/selectors.js';
import { planOf } from '../../../../src/apis/monitoring/v1alpha3/targets.js';
import { goUnquote, parsePromql, type Selector } from './promql-tree.js';
import { DECOYS, clusterCases, expanded, scopedCases } from './template-cases.js';

/**
 * SPEC §19's proof that nothing a caller sends widens a query: every template of every route, expanded as kapi sends
 * it, is parsed with the parser Prometheus publishes; a namespaced or workspace route's query fails the test if any of
 * its selectors lacks the scope's matcher (`namespace="ns"`, or a regex that matches the scope's namespaces and no
 * other). Names are the widest valid ones (dots are regex metacharacters; a regex of them unquoted would match more).
 */

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
