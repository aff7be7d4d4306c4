/**
 * The OpenSearch backend against a real OpenSearch (or Elasticsearch 7.10+), when KAPI_LOG_SEARCH_URL names one:
 * documents shaped as Fluent Bit's Kubernetes filter writes them go into this run's own daily indices, and the
 * logging API answers over them. Optional: KAPI_LOG_SEARCH_USERNAME, KAPI_LOG_SEARCH_PASSWORD, KAPI_LOG_SEARCH_CA_FILE.
 * Without KAPI_LOG_SEARCH_URL the suite is skipped (and says so).
 */
import { appWithoutCluster } from '../support/app-without-cluster.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from '@opensearch-project/opensearch';
import request from 'supertest';
import { loggingRoutes } from '../../src/apis/logging/v1alpha2/routes.js';
import { FLUENT_BIT_FIELDS } from '../../src/apis/logging/v1alpha2/search/fields.js';
import { SearchBackend, type SearchCredentials } from '../../src/apis/logging/v1alpha2/search/search-backend.js';
import { createApp } from '../../src/server/app.js';
import { eventRoutes, searchEngineSource } from '../../src/apis/tenant/events/event-routes.js';
import { silentLogger } from './harness.js';

const URL_ = process.env.KAPI_LOG_SEARCH_URL;
const LOGS = '/kapis/logging.kapi.io/v1alpha2/logs';

if (!URL_) {
  console.log(
    'logging-search e2e skipped: set KAPI_LOG_SEARCH_URL (and optionally KAPI_LOG_SEARCH_USERNAME, KAPI_LOG_SEARCH_PASSWORD, KAPI_LOG_SEARCH_CA_FILE) to run it against a real OpenSearch',
  );
}

const credentials: SearchCredentials = {
  ...(process.env.KAPI_LOG_SEARCH_USERNAME && { username: process.env.KAPI_LOG_SEARCH_USERNAME }),
  ...(process.env.KAPI_LOG_SEARCH_PASSWORD && { password: process.env.KAPI_LOG_SEARCH_PASSWORD }),
  ...(process.env.KAPI_LOG_SEARCH_CA_FILE && { ca: readFileSync(process.env.KAPI_LOG_SEARCH_CA_FILE, 'utf8') }),
};
const prefix = `kapi-e2e-${randomBytes(3).toString('hex')}`;
/** Two hours of lines, one a minute from each of three containers, ending an hour ago. */
const END = Math.floor(Date.now() / 1000 / 60) * 60 - 3600;
const START = END - 7200;
const CONTAINERS = [
  { namespace: 'shop', pod: 'web-7d9c8b6f5-x2x4p', container: 'app', id: 'c-web' },
  { namespace: 'shop', pod: 'db-0', container: 'postgres', id: 'c-db' },
  { namespace: 'ops', pod: 'agent-k2j4d', container: 'agent', id: 'c-agent' },
];

let client: Client;
let app: ReturnType<typeof createApp>;
let backend: SearchBackend;

function day(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10).replaceAll('-', '.');
}

const SUITE = 'logging API on OpenSearch (e2e)';
(URL_ ? describe : describe.skip)(
  URL_ ? SUITE : `${SUITE} [skipped: needs an OpenSearch named by KAPI_LOG_SEARCH_URL]`,
  () => {
    beforeAll(async () => {
      client = new Client({
        node: URL_!,
        ...(credentials.username && { auth: { username: credentials.username, password: credentials.password ?? '' } }),
        ssl: { rejectUnauthorized: true, ...(credentials.ca && { ca: credentials.ca }) },
      });
      const body: unknown[] = [];
      for (let t = START; t < END; t += 60) {
        for (const c of CONTAINERS) {
          const minute = (t - START) / 60;
          body.push({ index: { _index: `${prefix}-${day(t)}` } });
          body.push({
            log: `${minute % 10 === 0 ? 'ERROR upstream timeout' : 'INFO request served'} ${c.container} ${minute}`,
            time: new Date(t * 1000).toISOString(),
            kubernetes: { namespace_name: c.namespace, pod_name: c.pod, container_name: c.container, docker_id: c.id },
          });
        }
      }
      const bulk = await client.bulk({ body: body as never, refresh: true });
      expect((bulk.body as { errors?: boolean }).errors).toBe(false);
      backend = new SearchBackend({
        url: URL_!,
        indexPrefix: prefix,
        fields: FLUENT_BIT_FIELDS,
        credentials: async () => credentials,
      });
      app = appWithoutCluster({
        logging: loggingRoutes({
          backend,
          authorizer: undefined,
          namespaces: { synced: true, list: () => [], get: () => undefined },
          logger: silentLogger,
        }),
      });
    }, 60_000);

    afterAll(async () => {
      await client?.indices.delete({ index: `${prefix}-*` }).catch(() => undefined);
      await backend?.close();
      await client?.close();
    });

    const range = `start_time=${START}&end_time=${END}`;
    const per = 120; // lines per container in the range

    it('when a range is queried, then the newest lines come first and the total counts them all', async () => {
      const res = await request(app).get(`${LOGS}?${range}&size=3`).expect(200);
      expect(res.body.query.total).toBe(per * CONTAINERS.length);
      const times = (res.body.query.records as { time: string }[]).map((r) => r.time);
      expect([...times].sort().reverse()).toEqual(times);
    });

    it('when paged ascending, then consecutive pages continue each other', async () => {
      const all = (await request(app).get(`${LOGS}?${range}&sort=asc&size=20`).expect(200)).body.query.records;
      const second = (await request(app).get(`${LOGS}?${range}&sort=asc&from=10&size=10`).expect(200)).body.query
        .records;
      expect(second.map((r: { time: string }) => r.time)).toEqual(
        all.slice(10, 20).map((r: { time: string }) => r.time),
      );
    });

    it.each([
      ['namespaces=shop', per * 2],
      ['namespace_query=OP', per],
      ['workloads=web', per],
      ['workloads=db', per],
      ['pods=db-0', per],
      ['pod_query=AGENT', per],
      ['containers=app,agent', per * 2],
      ['container_query=gres', per],
      ['log_query=error', (per / 10) * 3],
    ])('when filtered by %s, then %d lines match', async (filter, count) => {
      const res = await request(app).get(`${LOGS}?${range}&${filter}&operation=statistics`).expect(200);
      expect(res.body.statistics.logs).toBe(count);
    });

    it('when statistics are asked, then containers are counted', async () => {
      const res = await request(app).get(`${LOGS}?${range}&operation=statistics`).expect(200);
      expect(res.body.statistics).toEqual({ containers: 3, logs: per * 3 });
    });

    it('when a histogram is asked per hour, then the buckets hold every line', async () => {
      const res = await request(app).get(`${LOGS}?${range}&operation=histogram&interval=1h`).expect(200);
      const buckets = res.body.histogram.histograms as { time: number; count: number }[];
      expect(res.body.histogram.total).toBe(per * 3);
      expect(buckets.reduce((sum, b) => sum + b.count, 0)).toBe(per * 3);
      for (const bucket of buckets) expect(bucket.time % 3_600_000).toBe(0);
    });

    it('when exported, then every line comes as text in order', async () => {
      const res = await request(app).get(`${LOGS}?${range}&pods=db-0&operation=export&sort=asc`).expect(200);
      const lines = res.text.split('\n').filter(Boolean);
      expect(lines).toHaveLength(per);
      expect(lines[0]).toMatch(/ 0$/);
      expect(lines[per - 1]).toMatch(new RegExp(` ${per - 1}$`));
    });

    it('when a namespace was recreated, then a reader of the new one sees nothing from before', async () => {
      const created = START + 3600;
      const scoped = await backend.statistics({
        filter: { startTime: START, endTime: END },
        scope: { kind: 'some', namespaces: new Map([['ops', created]]) },
        signal: new AbortController().signal,
      });
      expect(scoped.result.logs).toBe(per / 2);
    });
  },
);

/**
 * Event Search over KubeSphere's kube-events indices in the same store (`--events-backend=opensearch`): core/v1 Events
 * indexed as KubeSphere's events exporter writes them, searched through the tenant route with a caller who may list
 * events in one namespace only.
 */
const EVENTS_SUITE = 'Event Search on OpenSearch (e2e)';
(URL_ ? describe : describe.skip)(
  URL_ ? EVENTS_SUITE : `${EVENTS_SUITE} [skipped: needs an OpenSearch named by KAPI_LOG_SEARCH_URL]`,
  () => {
    const eventsPrefix = `${prefix}-events`;
    let eventsApp: ReturnType<typeof createApp>;
    let store: SearchBackend;
    let storeClient: Client;
    const now = Math.floor(Date.now() / 1000);
    const event = (namespace: string, name: string, reason: string, secondsAgo: number) => ({
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: `${name}.1`, namespace },
      involvedObject: { kind: 'Pod', name, namespace, uid: `${namespace}-${name}` },
      reason,
      message: `${reason} of ${name}`,
      type: reason === 'BackOff' ? 'Warning' : 'Normal',
      lastTimestamp: new Date((now - secondsAgo) * 1000).toISOString().replace(/\.\d+Z$/, 'Z'),
    });

    beforeAll(async () => {
      storeClient = new Client({
        node: URL_!,
        ...(credentials.username && { auth: { username: credentials.username, password: credentials.password ?? '' } }),
        ssl: { rejectUnauthorized: true, ...(credentials.ca && { ca: credentials.ca }) },
      });
      const docs = [
        event('shop', 'web-0', 'BackOff', 120),
        event('shop', 'web-1', 'Pulled', 60),
        event('ops', 'agent-0', 'BackOff', 30),
      ];
      const body = docs.flatMap((doc) => [{ index: { _index: `${eventsPrefix}-${day(now)}` } }, doc]);
      const bulk = await storeClient.bulk({ body: body as never, refresh: true });
      expect((bulk.body as { errors?: boolean }).errors).toBe(false);
      store = new SearchBackend({
        url: URL_!,
        indexPrefix: prefix,
        fields: FLUENT_BIT_FIELDS,
        credentials: async () => credentials,
      });
      const created = now - 3600;
      eventsApp = appWithoutCluster({
        user: { username: 'viewer', groups: [] },
        platformRoutes: [
          eventRoutes({
            // may list events in shop only
            authorizer: {
              authorize: async (_user, attributes) => ({ allowed: attributes.namespace === 'shop' }),
            },
            namespaces: {
              synced: true,
              list: () => [
                { name: 'shop', createdAt: created },
                { name: 'ops', createdAt: created },
              ],
              get: () => undefined,
            } as never,
            events: searchEngineSource(store, eventsPrefix),
          }),
        ],
      });
    }, 60_000);

    afterAll(async () => {
      await storeClient?.indices.delete({ index: `${eventsPrefix}-*` }).catch(() => undefined);
      await store?.close();
      await storeClient?.close();
    });

    const EVENTS = '/kapis/tenant.kapi.io/v1alpha2/events';

    it('when a caller of one namespace searches, then only its events, newest first', async () => {
      const res = await request(eventsApp)
        .get(`${EVENTS}?start_time=${now - 3600}`)
        .expect(200);
      expect(res.body.query.total).toBe(2);
      expect(res.body.query.records.map((r: { involvedObject: { name: string } }) => r.involvedObject.name)).toEqual([
        'web-1',
        'web-0',
      ]);
    });

    it('when narrowed by reason, counted and charted, then the same events', async () => {
      const query = `start_time=${now - 3600}&reason_filter=BackOff`;
      expect((await request(eventsApp).get(`${EVENTS}?${query}`).expect(200)).body.query.total).toBe(1);
      expect((await request(eventsApp).get(`${EVENTS}?${query}&operation=statistics`).expect(200)).body).toEqual({
        statistics: { resources: 1, events: 1 },
      });
      const histogram = (await request(eventsApp).get(`${EVENTS}?${query}&operation=histogram&interval=1m`).expect(200))
        .body.histogram;
      expect(histogram.total).toBe(1);
    });
  },
);
