import { InvalidParameterError } from '../../../server/errors.js';
import { confineToNamespace, checkLimits, queryTooLarge, QUERY_LIMITS } from '../promql/enforce.js';
import { PromQLError, parsePromQL, valueTypeOf } from '../promql/parse.js';
import { printPromQL } from '../promql/print.js';
import type { PrometheusData } from './prometheus.js';
import { metricsQueryOf, type Timing } from './request.js';
import { metricValue, type MetricValue } from './results.js';

/**
 * The ad-hoc routes' pure part (SPEC §19; KubeSphere 3.4.1's `targets/query|labelsets|metadata`): a caller's PromQL
 * read strictly, bounded, confined to the namespace it is asked in, and only kapi's print of it sent; Prometheus's
 * answers in KubeSphere's shapes.
 */

export interface AdhocParameters {
  expr?: string;
  time?: number;
  start?: number;
  end?: number;
  step?: string;
}

export interface AdhocQuery {
  /** What is sent to Prometheus: kapi's print of the tree it read and confined. */
  promql: string;
  timing: Timing;
}

/** The query a `targets/query` request asks, confined to `namespace` when there is one; a 400 naming what is wrong. */
export function adhocQueryOf(raw: AdhocParameters, namespace: string | undefined, now: number): AdhocQuery {
  const { timing } = metricsQueryOf(
    {
      ...(raw.time !== undefined && { time: raw.time }),
      ...(raw.start !== undefined && { start: raw.start }),
      ...(raw.end !== undefined && { end: raw.end }),
      ...(raw.step !== undefined && { step: raw.step }),
    },
    now,
  );
  const expr = readExpr('expr', raw.expr, namespace);
  // Prometheus's own rule for a range query
  const type = valueTypeOf(expr);
  if (!('instant' in timing) && type !== 'scalar' && type !== 'vector')
    throw new InvalidParameterError(
      'expr',
      `a range query (start and end) must be a scalar or an instant vector, not a ${type === 'matrix' ? 'range vector' : type}`,
    );
  return { promql: printPromQL(expr), timing };
}

export interface LabelSetQuery {
  /** The series selector sent as `match[]`. */
  match: string;
  start: number;
  end: number;
}

/** `targets/labelsets`: a series selector (KubeSphere's `metric`), confined as a query is, between start and end. */
export function labelSetQueryOf(
  raw: { metric?: string; start?: number; end?: number },
  namespace: string | undefined,
): LabelSetQuery {
  const missing = (['metric', 'start', 'end'] as const).filter((name) => raw[name] === undefined || raw[name] === '');
  if (missing.length > 0)
    throw new InvalidParameterError(missing[0] as string, `required fields are missing: [${missing.join(', ')}]`);
  const start = raw.start as number;
  const end = raw.end as number;
  if (start > end) throw new InvalidParameterError('start', `${start} is after end ${end}`);
  const expr = readExpr('metric', raw.metric, namespace);
  if (expr.kind !== 'vector' || expr.offsetMs !== 0 || expr.at !== undefined)
    throw new InvalidParameterError('metric', 'must be a metric name or a series selector (`name{label="value"}`)');
  return { match: printPromQL(expr), start, end };
}

function readExpr(parameter: string, text: string | undefined, namespace: string | undefined) {
  if (text === undefined || text.trim() === '') throw new InvalidParameterError(parameter, 'is required');
  try {
    const tooLarge = queryTooLarge(text);
    if (tooLarge) throw tooLarge;
    const expr = parsePromQL(text, { maxDepth: QUERY_LIMITS.maxDepth });
    checkLimits(expr);
    return namespace === undefined ? expr : confineToNamespace(expr, namespace);
  } catch (error) {
    if (error instanceof PromQLError) throw new InvalidParameterError(parameter, error.message);
    throw error;
  }
}

export interface AdhocAnswer {
  data: { resultType?: string; result?: MetricValue[] };
  error?: string;
}

/** Prometheus's answer to a `targets/query` as KubeSphere writes it (a backend failure is the answer's `error`). */
export function adhocAnswerOf(outcome: { data: PrometheusData } | { error: string }): AdhocAnswer {
  if ('error' in outcome) return { data: {}, error: outcome.error };
  return { data: { resultType: outcome.data.resultType, result: outcome.data.result.map(metricValue) } };
}

/** `/api/v1/series`'s label sets as KubeSphere answers them: each without `__name__`; null when there are none. */
export function labelSetsOf(
  data: unknown,
  maxSeries: number,
): { data: Record<string, string>[] | null } | { error: string } {
  const series = Array.isArray(data) ? data : [];
  if (series.length > maxSeries)
    return { error: `too many series (${series.length}; at most ${maxSeries}): name a narrower selector` };
  const sets = series.map((labels: Record<string, unknown>) => {
    const set: Record<string, string> = {};
    for (const [name, value] of Object.entries(labels ?? {}))
      if (name !== '__name__' && typeof value === 'string') set[name] = value;
    return set;
  });
  return { data: sets.length > 0 ? sets : null };
}

export interface MetricMetadata {
  metric: string;
  type?: string;
  help?: string;
}

/** `/api/v1/targets/metadata` as KubeSphere answers it: one entry per metric (the first seen), null when none. */
export function metadataOf(data: unknown): { data: MetricMetadata[] | null } {
  const seen = new Set<string>();
  const out: MetricMetadata[] = [];
  for (const item of Array.isArray(data) ? data : []) {
    const metric = typeof item?.metric === 'string' ? item.metric : '';
    if (!metric || seen.has(metric)) continue;
    seen.add(metric);
    out.push({
      metric,
      ...(typeof item.type === 'string' && item.type && { type: item.type }),
      ...(typeof item.help === 'string' && item.help && { help: item.help }),
    });
  }
  return { data: out.length > 0 ? out : null };
}
