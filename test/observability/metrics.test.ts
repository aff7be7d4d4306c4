import express from 'express';
import request from 'supertest';
import { Metrics } from '../../src/observability/metrics.js';

describe('Metrics.observe', () => {
  test('when requests are answered, then they are counted by route and code, and watches are not timed', async () => {
    const metrics = new Metrics({ processMetrics: false, routes: ['/kapis/g/v1/things/{name}'] });
    const app = express();
    app.use(metrics.observe());
    app.get('/api/v1/nodes', (_req, res) => res.json({}));
    app.get('/kapis/g/v1/things/:name', (_req, res) => res.json({}));
    await request(app).get('/api/v1/nodes');
    await request(app).get('/api/v1/nodes?watch=1');
    await request(app).get('/api/v1/missing');
    await request(app).get('/kapis/g/v1/things/one');
    await request(app).get('/kapis/g/v1/things/two');
    await request(app).get('/kapis/g/v1/unknown');
    const text = await metrics.registry.metrics();
    expect(text).toContain('kapi_http_requests_total{route="/api/v1/nodes",method="GET",code="200"} 2');
    expect(text).toContain('kapi_http_requests_total{route="other",method="GET",code="404"} 2');
    expect(text).toContain('kapi_http_requests_total{route="/kapis/g/v1/things/{name}",method="GET",code="200"} 2');
    expect(text).toContain('kapi_http_request_duration_seconds_count{route="/api/v1/nodes",method="GET"} 1');
  });
});

describe('operator series', () => {
  test('when streams open and close, then both stream gauges follow, by kind', async () => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.streams.inc('watch');
    metrics.streams.inc('exec');
    metrics.streams.inc('watch');
    metrics.streams.dec('watch');
    const text = await metrics.registry.metrics();
    expect(text).toContain('kapi_forwarded_streams{kind="watch"} 1');
    expect(text).toContain('kapi_forwarded_streams{kind="exec"} 1');
    expect(text).toContain('kapi_forwarded_streams{kind="log"} 0');
    expect(text).toContain('kapi_forwarded_watches 2');
  });

  test('when caches and readiness are read at scrape time, then they show the current state', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const caches = [
      { name: 'nodes', synced: true, lastEventAt: 1_700_000_000_500 },
      { name: 'pods', synced: false, lastEventAt: undefined },
    ];
    let reason: string | undefined = 'not synced yet';
    metrics.cachesFrom(() => caches);
    metrics.readyFrom([{ notReadyReason: () => reason }]);
    let text = await metrics.registry.metrics();
    expect(text).toContain('kapi_cache_synced{cache="nodes"} 1');
    expect(text).toContain('kapi_cache_synced{cache="pods"} 0');
    expect(text).toContain('kapi_cache_last_event_timestamp_seconds{cache="nodes"} 1700000000.5');
    expect(text).not.toContain('kapi_cache_last_event_timestamp_seconds{cache="pods"}');
    expect(text).toContain('kapi_ready 0');
    reason = undefined;
    caches.pop();
    text = await metrics.registry.metrics();
    expect(text).toContain('kapi_ready 1');
    expect(text).not.toContain('cache="pods"');
  });

  test('when nothing happened yet, then every counter label value already reads 0', async () => {
    const text = await new Metrics({ processMetrics: false }).registry.metrics();
    for (const series of [
      'kapi_configuration_reloads_total{result="invalid"} 0',
      'kapi_token_refreshes_total{result="reused"} 0',
      'kapi_session_revocations_total{via="refresh_reuse"} 0',
      'kapi_authorization_cache_lookups_total{result="miss"} 0',
    ]) {
      expect(text).toContain(series);
    }
  });
});
