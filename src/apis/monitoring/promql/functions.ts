import type { ValueType } from './ast.js';

/**
 * The functions kapi lets through (Prometheus 2.42's, promql/parser/functions.go, less none): their argument types,
 * how many more the last may repeat (`variadic`: 0 none, -1 any), and what they return. A function not named here —
 * one Prometheus added later, an experimental one (`info` reads series the query does not name) — is refused, so
 * that kapi never sends a query whose meaning it has not read.
 */
export interface PromFunction {
  args: ValueType[];
  variadic: number;
  returns: ValueType;
}

const v = 'vector';
const m = 'matrix';
const s = 'scalar';
const str = 'string';
const fn = (args: ValueType[], returns: ValueType = v, variadic = 0): PromFunction => ({ args, variadic, returns });

const ofVector = ['abs', 'absent', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atanh', 'ceil', 'cos', 'cosh', 'deg']
  .concat(['exp', 'floor', 'ln', 'log10', 'log2', 'rad', 'sgn', 'sin', 'sinh', 'sqrt', 'tan', 'tanh', 'timestamp'])
  .concat(['sort', 'sort_desc', 'histogram_count', 'histogram_sum']);
const overTime = ['absent_over_time', 'avg_over_time', 'count_over_time', 'last_over_time', 'max_over_time']
  .concat(['min_over_time', 'present_over_time', 'stddev_over_time', 'stdvar_over_time', 'sum_over_time'])
  .concat(['changes', 'delta', 'deriv', 'idelta', 'increase', 'irate', 'rate', 'resets']);
const ofTime = ['days_in_month', 'day_of_month', 'day_of_week', 'day_of_year', 'hour', 'minute', 'month', 'year'];

export const FUNCTIONS: ReadonlyMap<string, PromFunction> = new Map<string, PromFunction>([
  ...ofVector.map((name): [string, PromFunction] => [name, fn([v])]),
  ...overTime.map((name): [string, PromFunction] => [name, fn([m])]),
  ...ofTime.map((name): [string, PromFunction] => [name, fn([v], v, 1)]),
  ['clamp', fn([v, s, s])],
  ['clamp_max', fn([v, s])],
  ['clamp_min', fn([v, s])],
  ['histogram_fraction', fn([s, s, v])],
  ['histogram_quantile', fn([s, v])],
  ['label_join', fn([v, str, str, str], v, -1)],
  ['label_replace', fn([v, str, str, str, str])],
  ['pi', fn([], s)],
  ['predict_linear', fn([m, s])],
  ['quantile_over_time', fn([s, m])],
  ['round', fn([v, s], v, 1)],
  ['scalar', fn([v], s)],
  ['time', fn([], s)],
  ['vector', fn([s])],
]);
