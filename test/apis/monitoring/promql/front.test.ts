import { describe, expect, test } from '@jest/globals';
import { checkLimits, confineToNamespace, queryTooLarge } from '../../../../src/apis/monitoring/promql/enforce.js';
import {
  durationOf,
  formatDuration,
  formatFloat,
  quote,
  unquote,
} from '../../../../src/apis/monitoring/promql/lexical.js';
import { PromQLError, parsePromQL } from '../../../../src/apis/monitoring/promql/parse.js';
import { printPromQL } from '../../../../src/apis/monitoring/promql/print.js';

/**
 * kapi's PromQL front, piece by piece (its printer is proved against Prometheus in printer.prometheus.test.ts): the
 * precedence it restores where the grammar reads looser than Prometheus, the namespace it puts on every selector, the
 * limits, and the literals as Go reads and prints them.
 */
const confined = (query: string, namespace = 'ns') => printPromQL(confineToNamespace(parsePromQL(query), namespace));
const refusedWith = (work: () => unknown) => {
  try {
    work();
  } catch (error) {
    if (error instanceof PromQLError) return error.message;
    throw error;
  }
  return undefined;
};

describe('reading as Prometheus reads', () => {
  test.each([
    // a range, subquery, offset or @ binds tighter than any operator
    ['1 - -a offset 5m', '1 - -a offset 5m', 'binary', 'unary'],
    ['a + b offset 5m', 'a + b offset 5m', 'binary', 'vector'],
    ['foo offset 5m @ 100', 'foo @ 100.000 offset 5m', 'vector', 'vector'],
  ])('when %j is read, then it prints %j and its top is a %s', (query, printed, top, right) => {
    const expr = parsePromQL(query);
    expect(printPromQL(expr)).toBe(printed);
    expect(expr.kind).toBe(top);
    if (expr.kind === 'binary') expect(expr.rhs.kind).toBe(right);
  });

  test('when a grouping has no labels of its own, then it is kept (a print that dropped it would change the match)', () => {
    expect(printPromQL(parsePromQL('a * ignoring() group_left b'))).toBe('a * ignoring () group_left () b');
  });
});

describe('confining to a namespace', () => {
  test('when a query has selectors anywhere, then each carries the namespace, its own equal matcher kept once', () => {
    expect(
      confined('sum(rate(a[5m])) + on(x) b{namespace="ns"} or absent(c) and max_over_time(d[5m:] offset 1m)'),
    ).toBe(
      'sum(rate(a{namespace="ns"}[5m])) + on (x) b{namespace="ns"} or absent(c{namespace="ns"}) and max_over_time(d{namespace="ns"}[5m:] offset 1m)',
    );
  });

  test.each([
    ['a{namespace="other"}', /conflicts/],
    ['a{namespace=~"ns"}', /conflicts/],
    ['a{namespace!="x"}', /conflicts/],
    ['label_replace(a, "namespace", "x", "", "")', /may not write the namespace label/],
    ['label_join(a, "namespace", "", "b")', /may not write the namespace label/],
    ['count_values("namespace", a)', /may not write the namespace label/],
  ])('when %j is confined, then it is refused', (query, message) => {
    expect(refusedWith(() => confined(query))).toMatch(message);
  });
});

describe('limits', () => {
  test('when a query passes each limit, then it is refused naming the limit', () => {
    expect(queryTooLarge('x'.repeat(4097))?.message).toBe('the query is 4097 bytes; at most 4096 are allowed');
    expect(queryTooLarge('x'.repeat(4096))).toBeUndefined();
    expect(refusedWith(() => parsePromQL(`${'('.repeat(50)}a${')'.repeat(50)}`, { maxDepth: 50 }))).toMatch(
      /nests 51 deep; at most 50/,
    );
    expect(refusedWith(() => parsePromQL(`${'('.repeat(49)}a${')'.repeat(49)}`, { maxDepth: 50 }))).toBeUndefined();
    const many = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`).join(' + ');
    expect(refusedWith(() => checkLimits(parsePromQL(many(21))))).toMatch(/21 selectors; at most 20/);
    expect(refusedWith(() => checkLimits(parsePromQL(many(20))))).toBeUndefined();
    expect(refusedWith(() => checkLimits(parsePromQL('rate(a[1d])')))).toBeUndefined();
    expect(refusedWith(() => checkLimits(parsePromQL('rate(a[1d1ms])')))).toMatch(/range window/);
    expect(refusedWith(() => checkLimits(parsePromQL('a[1d:8s]')))).toBeUndefined();
    expect(refusedWith(() => checkLimits(parsePromQL('a[1d:7s]')))).toMatch(
      /12342 points per series is more than the 11000/,
    );
  });
});

describe('literals as Go reads and prints them', () => {
  test.each([
    ['"a\\tb\\u00e9\\U0001F600\\x41\\101\\\\\\""', 'a\tbé😀AA\\"'],
    ["'it\\'s'", "it's"],
    ['`raw\\n\r`', 'raw\\n'],
  ])('when %s is read, then its value is %j', (text, value) => {
    expect(unquote(text)).toEqual({ value });
  });

  test.each([['"\\q"'], ['"\\x4"'], ['"\\ud800"'], ['"\\xff"'], ['"a'], ['"\\\'"'], ['"a\nb"']])(
    'when %s is read, then it is refused',
    (text) => {
      expect(unquote(text)).toEqual({ error: expect.any(String) });
    },
  );

  test('when values are printed, then as Go’s %q and %v print them', () => {
    expect(quote('a"b\\c\n\u0007\u007f\u00a0é😀\u{e0001}')).toBe('"a\\"b\\\\c\\n\\a\\x7f\\u00a0é😀\\U000e0001"');
    expect([0, -0, 1, 1e6, 123456, 1234567, 0.0001, 0.00001, 1.5e-7, 2 ** 70, -Infinity, NaN].map(formatFloat)).toEqual(
      [
        '0',
        '-0',
        '1',
        '1e+06',
        '123456',
        '1.234567e+06',
        '0.0001',
        '1e-05',
        '1.5e-07',
        '1.1805916207174113e+21',
        '-Inf',
        'NaN',
      ],
    );
  });

  test('when durations are read and printed, then as Prometheus’s model.Duration', () => {
    expect(durationOf('1h30m')).toBe(5_400_000);
    expect(durationOf('30m1h')).toBeUndefined();
    expect(durationOf('5')).toBeUndefined();
    expect([90 * 60_000, 7 * 86_400_000, 8 * 86_400_000, 365 * 86_400_000, 1500].map(formatDuration)).toEqual([
      '1h30m',
      '1w',
      '8d',
      '1y',
      '1s500ms',
    ]);
  });
});
