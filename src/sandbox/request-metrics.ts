import type { RequestInfo } from './request-info.js';

/**
 * kube-apiserver's `apiserver_request_total` counter at `/metrics`, for the requests the sandbox answered, with kube's
 * labels (verb as its metrics name it: LIST, WATCH, GET, POST, PUT, PATCH, DELETE, CONNECT; group, version, resource,
 * subresource, scope, component, code), so one reader (the bench's writes per login) works on the sandbox and on a
 * real kube-apiserver alike. Only what the readers need: no histograms, no other families.
 */
export class RequestMetrics {
  private readonly counts = new Map<string, number>();

  count(info: RequestInfo, code: number): void {
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
    const key = [...labels, ['component', 'apiserver'], ['code', String(code)]]
      .map(([name, value]) => `${name}="${value}"`)
      .join(',');
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
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
