import type { RequestInfo } from './request-info.js';

/**
 * kube-apiserver's `apiserver_request_total` counter and `apiserver_request_duration_seconds` histogram at `/metrics`,
 * for the requests the sandbox answered, with kube's labels (verb as its metrics name it: LIST, WATCH, GET, POST, PUT,
 * PATCH, DELETE, CONNECT; group, version, resource, subresource, scope, component, and the counter's code), so one
 * reader (the bench's writes per login, the console's API latency chart) works on the sandbox and on a real
 * kube-apiserver alike. Only what the readers need: the histogram has its +Inf bucket alone, no other families.
 */
export class RequestMetrics {
  private readonly counts = new Map<string, number>();
  private readonly durations = new Map<string, { sum: number; count: number }>();

  count(info: RequestInfo, code: number, seconds = 0): void {
    const labels = info.isResourceRequest
      ? [
          ['verb', metricsVerb(info)],
          ['group', info.apiGroup],
          ['version', info.apiVersion],
          ['resource', info.resource],
          ['subresource', info.subresource],
          ['scope', info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster'],
        ]
      : [
          ['verb', metricsVerb(info)],
          ['group', ''],
          ['version', ''],
          ['resource', ''],
          ['subresource', ''],
          ['scope', ''],
        ];
    const text = (pairs: string[][]) => pairs.map(([name, value]) => `${name}="${value}"`).join(',');
    const key = text([...labels, ['component', 'apiserver'], ['code', String(code)]]);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const durationKey = text([...labels, ['component', 'apiserver']]);
    const duration = this.durations.get(durationKey) ?? { sum: 0, count: 0 };
    duration.sum += seconds;
    duration.count++;
    this.durations.set(durationKey, duration);
  }

  /** The Prometheus text exposition (version 0.0.4). */
  text(): string {
    const lines = [
      '# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      '# TYPE apiserver_request_total counter',
    ];
    for (const [key, value] of [...this.counts].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`apiserver_request_total{${key}} ${value}`);
    }
    lines.push(
      '# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      '# TYPE apiserver_request_duration_seconds histogram',
    );
    for (const [key, { sum, count }] of [...this.durations].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`apiserver_request_duration_seconds_bucket{${key},le="+Inf"} ${count}`);
      lines.push(`apiserver_request_duration_seconds_sum{${key}} ${sum}`);
      lines.push(`apiserver_request_duration_seconds_count{${key}} ${count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

/** kube's metrics verb: RBAC's verb in capitals, writes named by their HTTP method, streams CONNECT. */
function metricsVerb(info: RequestInfo): string {
  switch (info.verb) {
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'delete':
    case 'deletecollection':
      return 'DELETE';
    case 'get':
      return ['exec', 'attach', 'portforward', 'proxy'].includes(info.subresource) ? 'CONNECT' : 'GET';
    default:
      return info.verb.toUpperCase();
  }
}
