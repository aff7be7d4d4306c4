import { Counter, Histogram, Registry } from 'prom-client';
import { RequestMetrics } from '../../src/observability/request-metrics.js';

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** prom-client's own Counter and Histogram, as kapi registered them before: the format to match. */
function promClientReference() {
  const registry = new Registry();
  const requests = new Counter({
    name: 'kapi_http_requests_total',
    help: 'HTTP requests by route pattern, method and status code',
    labelNames: ['route', 'method', 'code'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'kapi_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern (time to the last byte; watches excluded)',
    labelNames: ['route', 'method'],
    buckets: BOUNDS,
    registers: [registry],
  });
  return { registry, requests, latency };
}

describe('RequestMetrics', () => {
  test('when requests are counted and timed, then the exposition is the same text prom-client writes for them', async () => {
    const reference = promClientReference();
    const registry = new Registry();
    const metrics = new RequestMetrics(registry, BOUNDS);
    const observations: [string, string, number, number][] = [
      ['/api', 'GET', 200, 0.0003],
      ['/api', 'GET', 200, 0.0005],
      ['/api', 'GET', 404, 0.002],
      ['/apis', 'POST', 201, 0.7],
      ['/api', 'GET', 200, 3],
      ['/kapis/resources.kapi.io/v1alpha3/nodes', 'GET', 200, 0.01],
    ];
    for (const [route, method, code, seconds] of observations) {
      metrics.count(route, method, String(code));
      metrics.time(route, method, seconds);
      reference.requests.inc({ route, method, code: String(code) });
      reference.latency.observe({ route, method }, seconds);
    }
    // A request counted but not timed (a watch).
    metrics.count('/api', 'GET', '200');
    reference.requests.inc({ route: '/api', method: 'GET', code: '200' });

    expect(await registry.metrics()).toBe(await reference.registry.metrics());
  });

  test('when nothing was observed yet, then both metrics are announced with no values, as prom-client does', async () => {
    const registry = new Registry();
    new RequestMetrics(registry, BOUNDS);
    expect(await registry.metrics()).toBe(await promClientReference().registry.metrics());
  });

  test('when the registry is reset, then every series starts again from zero', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry, BOUNDS);
    metrics.count('/api', 'GET', '200');
    metrics.time('/api', 'GET', 0.001);
    registry.resetMetrics();
    metrics.count('/api', 'GET', '200');
    const text = await registry.metrics();
    expect(text).toContain('kapi_http_requests_total{route="/api",method="GET",code="200"} 1');
    expect(text).not.toContain('kapi_http_request_duration_seconds_count');
    metrics.time('/api', 'GET', 0.002);
    expect(await registry.metrics()).toContain('kapi_http_request_duration_seconds_count{route="/api",method="GET"} 1');
  });
});
