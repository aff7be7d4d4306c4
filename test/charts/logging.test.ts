import type { V1Deployment } from '@kubernetes/client-node';
import { parseOptions } from '../../src/config/options.js';
import { findObject, helm, CHART_DIR, renderChart, setValues } from './helm.js';

/** The Deployment's environment, read by kapi exactly as the container would (parseOptions). */
async function loggingFrom(values: Record<string, string | number | boolean>) {
  const objects = await renderChart(setValues(values));
  const deployment = findObject<V1Deployment>(objects, 'Deployment', 'kapi-apiserver');
  const env = Object.fromEntries(
    (deployment.spec!.template.spec!.containers[0]!.env ?? []).map((v) => [v.name, v.value ?? '']),
  );
  const options = parseOptions([], env);
  if (typeof options === 'string') throw new Error(`unexpected ${options}`);
  return options.logging;
}

describe('chart: logging backend', () => {
  it('when nothing is set, then kapi reads logs through the pod-log API with the documented bounds', async () => {
    expect(await loggingFrom({})).toMatchObject({ backend: 'pod-log', readConcurrency: 16, maxContainers: 1000 });
  });

  it('when nothing is set, then logging requests are limited and stalled answers ended as the README says', async () => {
    expect(await loggingFrom({})).toMatchObject({
      limits: { exports: { perProcess: 4, perUser: 2 }, queries: { perProcess: 8, perUser: 4 } },
      writeTimeoutMs: 60_000,
      eventsBackend: 'events-api',
      eventsSearchIndex: 'ks-logstash-events',
    });
  });

  it('when Event Search is to read the store too, then kapi gets that backend and index; without the store, no install', async () => {
    expect(
      await loggingFrom({
        'logging.backend': 'opensearch',
        'logging.opensearch.url': 'https://opensearch.logging.svc:9200',
        'logging.events.backend': 'opensearch',
        'logging.events.index': 'kube-events',
      }),
    ).toMatchObject({ eventsBackend: 'opensearch', eventsSearchIndex: 'kube-events' });
    const refused = await helm(['template', 'kapi-apiserver', CHART_DIR, ...setValues({ 'logging.events.backend': 'opensearch' })]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/needs logging.backend opensearch/);
  });

  it('when the limits and the write timeout are set, then kapi gets them', async () => {
    expect(
      await loggingFrom({
        'logging.limits.exports': 10,
        'logging.limits.exportsPerUser': 3,
        'logging.limits.queries': 20,
        'logging.limits.queriesPerUser': 5,
        'logging.writeTimeout': '2m',
      }),
    ).toMatchObject({
      limits: { exports: { perProcess: 10, perUser: 3 }, queries: { perProcess: 20, perUser: 5 } },
      writeTimeoutMs: 120_000,
    });
  });

  it('when OpenSearch is chosen, then kapi gets its URL, index, field names and credentials Secret', async () => {
    expect(
      await loggingFrom({
        'logging.backend': 'opensearch',
        'logging.opensearch.url': 'https://opensearch.logging.svc:9200',
        'logging.opensearch.index': 'logs',
        'logging.opensearch.fields.time': '@timestamp',
        'logging.opensearch.secretName': 'opensearch-credentials',
        'logging.podLog.readConcurrency': 4,
      }),
    ).toEqual({
      backend: 'opensearch',
      readConcurrency: 4,
      maxContainers: 1000,
      searchUrl: 'https://opensearch.logging.svc:9200',
      searchIndex: 'logs',
      searchFields: { time: '@timestamp' },
      searchSecret: { namespace: 'kapi-system', name: 'opensearch-credentials' },
      searchCaFile: undefined,
      limits: { exports: { perProcess: 4, perUser: 2 }, queries: { perProcess: 8, perUser: 4 } },
      writeTimeoutMs: 60_000,
      eventsBackend: "events-api",
      eventsSearchIndex: "ks-logstash-events",
    });
  });

  it.each([
    [{ 'logging.backend': 'opensearch' }, /url/],
    [{ 'logging.backend': 'loki' }, /backend/],
    [{ 'logging.backend': 'opensearch', 'logging.opensearch.url': 'https://u:p@os:9200' }, /url/],
    [{ 'logging.opensearch.fields.colour': 'c' }, /colour/],
    [{ 'logging.limits.exports': 0 }, /exports/],
    [{ 'logging.writeTimeout': '60' }, /writeTimeout/],
  ])('when the values are %j, then the schema refuses them', async (values, message) => {
    const result = await helm(['template', 'kapi-apiserver', CHART_DIR, ...setValues(values)]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });
});
