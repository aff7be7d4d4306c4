import express from 'express';
import request from 'supertest';
import { Metrics, routeFamily } from '../../src/observability/metrics.js';

describe('routeFamily', () => {
  test.each([
    ['/api/v1/nodes/node-1', '/api'],
    ['/apis/apps/v1/deployments', '/apis'],
    ['/kapis/resources.kapi.io/v1alpha3/nodes/node-7', '/kapis/resources.kapi.io/v1alpha3/nodes'],
    ['/oauth/token', '/oauth/token'],
    ['/readyz', '/readyz'],
    ['/whatever/else', 'other'],
  ])('when the path is %s, then the label is %s (bounded, never a node name)', (path, family) => {
    expect(routeFamily(path)).toBe(family);
  });
});

describe('Metrics.observe', () => {
  test('when requests are answered, then they are counted by route and code, and watches are not timed', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const app = express();
    app.use(metrics.observe());
    app.get('/api/v1/nodes', (_req, res) => res.json({}));
    await request(app).get('/api/v1/nodes');
    await request(app).get('/api/v1/nodes?watch=1');
    await request(app).get('/api/v1/missing');
    const text = await metrics.registry.metrics();
    expect(text).toContain('kapi_http_requests_total{route="/api",method="GET",code="200"} 2');
    expect(text).toContain('kapi_http_requests_total{route="/api",method="GET",code="404"} 1');
    expect(text).toContain('kapi_http_request_duration_seconds_count{route="/api",method="GET"} 2');
  });
});
