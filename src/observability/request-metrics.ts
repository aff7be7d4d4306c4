import type { Registry } from 'prom-client';

/**
 * kapi_http_requests_total and kapi_http_request_duration_seconds, counted in plain numbers per series and turned into
 * Prometheus values only when scraped. prom-client validates and hashes the labels of every observation, even through
 * a labelled child; at one request at a time that was a noticeable share of what forwarding a GET costs kapi.
 */

/** The series of one route family, method and status code. */
interface Series {
  readonly route: string;
  readonly method: string;
  readonly code: string;
  count: number;
}

/** The latency of one route family and method: per-bucket counts (not cumulative), sum and count. */
interface Timing {
  readonly route: string;
  readonly method: string;
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** A value as prom-client's registry formats it. */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** The shape prom-client's Registry reads from a registered metric. */
interface RegisteredMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: MetricValue[] }>;
  reset(): void;
}

export class RequestMetrics {
  /** Every series, in the order first seen, for the scrape; found per request by route, method and code. */
  private readonly series: Series[] = [];
  private readonly seriesByLabels = new Map<string, Map<string, Map<string, Series>>>();
  private readonly timings: Timing[] = [];
  private readonly timingsByLabels = new Map<string, Map<string, Timing>>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    registry.registerMetric(
      this.metric('kapi_http_requests_total', 'HTTP requests by route pattern, method and status code', 'counter', () =>
        this.series.map((s) => ({
          labels: { route: s.route, method: s.method, code: s.code },
          value: s.count,
        })),
      ) as never,
    );
    registry.registerMetric(
      this.metric(
        'kapi_http_request_duration_seconds',
        'HTTP request latency by route pattern (time to the last byte; watches excluded)',
        'histogram',
        () => this.timings.flatMap((timing) => this.histogramValues(timing)),
      ) as never,
    );
  }

  /** One answered request. The key space is bounded: the labels come from fixed sets (route-labels.ts). */
  count(route: string, method: string, code: string): void {
    // Maps by label rather than one map by a joined key: no key string is built (and hashed) per request.
    const byCode = getOrMake(getOrMake(this.seriesByLabels, route, newMap), method, newMap);
    let series = byCode.get(code);
    if (!series) {
      series = { route, method, code, count: 0 };
      byCode.set(code, series);
      this.series.push(series);
    }
    series.count++;
  }

  time(route: string, method: string, seconds: number): void {
    const byMethod = getOrMake(this.timingsByLabels, route, newMap);
    let timing = byMethod.get(method);
    if (!timing) {
      timing = { route, method, buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      byMethod.set(method, timing);
      this.timings.push(timing);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    timing.buckets[bucket]!++;
    timing.sum += seconds;
    timing.count++;
  }

  private histogramValues(timing: Timing): MetricValue[] {
    const labels = { route: timing.route, method: timing.method };
    const name = 'kapi_http_request_duration_seconds';
    const values: MetricValue[] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += timing.buckets[i]!;
      values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${name}_bucket` });
    });
    values.push({ labels: { le: '+Inf', ...labels }, value: timing.count, metricName: `${name}_bucket` });
    values.push({ labels, value: timing.sum, metricName: `${name}_sum` });
    values.push({ labels, value: timing.count, metricName: `${name}_count` });
    return values;
  }

  private metric(
    name: string,
    help: string,
    type: RegisteredMetric['type'],
    values: () => MetricValue[],
  ): RegisteredMetric {
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {
        if (type === 'counter') {
          this.series.length = 0;
          this.seriesByLabels.clear();
        } else {
          this.timings.length = 0;
          this.timingsByLabels.clear();
        }
      },
    };
  }
}

const newMap = () => new Map();

function getOrMake<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
