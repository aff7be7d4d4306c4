import type { Level } from './catalogue.js';
import type { Sorting } from './request.js';

/**
 * Answers in KubeSphere 3.4.1's shape (pkg/simple/client/monitoring/types.go, pkg/models/monitoring/sort_page.go;
 * pure): each metric's Prometheus result with the seven metering fields KubeSphere always writes (empty), or its
 * `error`; sorted and paged as KubeSphere sorts them.
 */

export type Point = [number, string];

export interface MetricValue {
  metric?: Record<string, string>;
  value?: Point;
  values?: Point[];
  min_value: '';
  max_value: '';
  avg_value: '';
  sum_value: '';
  fee: '';
  resource_unit: '';
  currency_unit: '';
}

export interface MetricResult {
  metric_name: string;
  data?: { resultType: string; result: MetricValue[] };
  error?: string;
}

export interface MetricsAnswer {
  results: MetricResult[];
  page?: number;
  total_page?: number;
  total_item?: number;
}

const METERING = {
  min_value: '',
  max_value: '',
  avg_value: '',
  sum_value: '',
  fee: '',
  resource_unit: '',
  currency_unit: '',
} as const;

/** A Prometheus series or sample as KubeSphere answers it. */
export function metricValue(series: { metric?: Record<string, string>; value?: Point; values?: Point[] }): MetricValue {
  return {
    ...(series.metric && Object.keys(series.metric).length > 0 && { metric: series.metric }),
    ...(series.value && { value: series.value }),
    ...(series.values && { values: series.values }),
    ...METERING,
  };
}

/** What KubeSphere writes for a resource a sorted metric has no sample of. */
const placeholder = (): MetricValue => ({ ...METERING });

/** The label that names a level's resources, for sorting (sort_page.go's identifiers). */
export const IDENTIFIER: Partial<Record<Level, string>> = {
  node: 'node',
  workspace: 'workspace',
  namespace: 'namespace',
  workload: 'workload',
  pod: 'pod',
  container: 'container',
  pvc: 'persistentvolumeclaim',
};

/** A sample's value as Go's ParseFloat reads Prometheus's text (`+Inf`, `-Inf`, `NaN` included). */
const sampleOf = (value: MetricValue): number | undefined => {
  if (!value.value) return undefined;
  const text = value.value[1];
  return text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text);
};

/**
 * Sorts every vector metric to the order `sorting.metric`'s values give its resources (no sample last, NaN next,
 * equal values by name; resources the target lacks after, by name), with a placeholder where a metric has no sample
 * of a resource; then one page of each.
 */
export function sortAndPage(answer: MetricsAnswer, sorting: Sorting, identifier: string | undefined): MetricsAnswer {
  if (!identifier || answer.results.length === 0) return answer;
  const vectors = answer.results.filter((r) => r.data?.resultType === 'vector' && !r.error);
  const nameOf = (value: MetricValue) => value.metric?.[identifier] ?? '';
  const ordinal = new Map<string, number>();
  const target = vectors.find((r) => r.metric_name === sorting.metric);
  if (target?.data) {
    const sorted = [...target.data.result].sort((p, q) => {
      const a = sampleOf(p);
      const b = sampleOf(q);
      if (a === undefined || b === undefined) return a === b ? compare(nameOf(p), nameOf(q)) : a === undefined ? 1 : -1;
      if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return compare(nameOf(p), nameOf(q));
      if (Number.isNaN(a) !== Number.isNaN(b)) return Number.isNaN(a) ? 1 : -1;
      return sorting.order === 'asc' ? a - b : b - a;
    });
    for (const value of sorted) {
      const name = nameOf(value);
      if (name !== '' && !ordinal.has(name)) ordinal.set(name, ordinal.size);
    }
  }
  const all = new Set<string>();
  for (const result of vectors)
    for (const value of result.data?.result ?? []) if (nameOf(value)) all.add(nameOf(value));
  for (const name of [...all].sort(compare)) if (!ordinal.has(name)) ordinal.set(name, ordinal.size);
  const total = all.size;
  const start = (sorting.page - 1) * sorting.limit;
  const end = Math.min(sorting.page * sorting.limit, total);
  const results = answer.results.map((result) => {
    if (result.data?.resultType !== 'vector' || result.error) return result;
    const slots: MetricValue[] = Array.from({ length: total }, placeholder);
    for (const value of result.data.result) {
      const at = ordinal.get(nameOf(value));
      if (at !== undefined && nameOf(value) !== '') slots[at] = value;
    }
    return { ...result, data: { ...result.data, result: start >= total ? [] : slots.slice(start, end) } };
  });
  // KubeSphere writes the totals only when there is something (omitempty)
  return {
    results,
    page: sorting.page,
    ...(total > 0 && { total_page: Math.ceil(total / sorting.limit), total_item: total }),
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
