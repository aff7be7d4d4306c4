import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { grantClusterAdmin, startLoggingSandbox, USER_HEADER, type LoggingSandbox } from './sandbox-app.js';
import { call } from '../../../sandbox/helpers.js';

const LOGS = '/kapis/logging.kapi.io/v1alpha2/logs';
const TENANT_LOGS = '/kapis/tenant.kapi.io/v1alpha2/logs';
const ADMIN = 'sandbox-admin-like';

interface LogRecordBody {
  log: string;
  time: string;
  namespace: string;
  pod: string;
  container: string;
}

let env: LoggingSandbox;
let now: number;

function logs(query: string, user = ADMIN, path = LOGS): request.Test {
  return request(env.app).get(`${path}?${query}`).set(USER_HEADER, user);
}

beforeAll(async () => {
  env = await startLoggingSandbox({ sandbox: { logLineIntervalMs: 1000 } });
  now = Math.floor(Date.now() / 1000);
  // The test's own "admin": cluster-wide pods/log through RBAC, as an operator would grant it.
  await grantClusterAdmin(env.sandbox, ADMIN);
});

afterAll(async () => {
  await env.stop();
});

describe('GET /kapis/logging.kapi.io/v1alpha2/logs', () => {
  it('when queried without parameters, then the 10 newest records come back newest first with the total', async () => {
    const res = await logs('').expect(200).expect('Content-Type', /json/);
    const { total, records } = res.body.query as { total: number; records: LogRecordBody[] };
    expect(records).toHaveLength(10);
    expect(total).toBeGreaterThan(10);
    for (const record of records) {
      expect(Object.keys(record).sort()).toEqual(['container', 'log', 'namespace', 'pod', 'time']);
      expect(record.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    }
    const times = records.map((r) => r.time);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('when the tenant group is asked, then the same handler answers', async () => {
    const a = await logs('operation=statistics', ADMIN, TENANT_LOGS).expect(200);
    const b = await logs('operation=statistics').expect(200);
    expect(a.body.statistics.containers).toBe(b.body.statistics.containers);
  });

  it('when asked ascending from a start time in seconds, then the oldest lines in range come first', async () => {
    const start = now - 86_400 * 60;
    const res = await logs(`sort=asc&size=20&start_time=${start}&end_time=${now}`).expect(200);
    const records = res.body.query.records as LogRecordBody[];
    expect(records).toHaveLength(20);
    const times = records.map((r) => r.time);
    expect([...times].sort()).toEqual(times);
    for (const time of times) {
      expect(Date.parse(time)).toBeGreaterThanOrEqual(start * 1000);
      expect(Date.parse(time)).toBeLessThanOrEqual(now * 1000 + 999);
    }
  });

  it('when paging with from and size, then consecutive pages continue each other', async () => {
    const range = `start_time=${now - 7200}&end_time=${now}&sort=asc`;
    const whole = (await logs(`${range}&size=30`).expect(200)).body.query.records as LogRecordBody[];
    const second = (await logs(`${range}&from=10&size=10`).expect(200)).body.query.records as LogRecordBody[];
    expect(second).toEqual(whole.slice(10, 20));
  });

  it.each([
    ['namespaces=kube-system', (r: LogRecordBody) => r.namespace === 'kube-system'],
    ['namespace_query=KUBE', (r: LogRecordBody) => r.namespace.includes('kube')],
    ['containers=calico-node', (r: LogRecordBody) => r.container === 'calico-node'],
    ['container_query=CALICO', (r: LogRecordBody) => r.container.startsWith('calico')],
    ['pod_query=kube-proxy', (r: LogRecordBody) => r.pod.startsWith('kube-proxy')],
    ['workloads=kube-proxy', (r: LogRecordBody) => r.pod.startsWith('kube-proxy-')],
    ['workload_query=proxy', (r: LogRecordBody) => r.pod.includes('proxy')],
    ['log_query=ERROR,timeout', (r: LogRecordBody) => /error|timeout/i.test(r.log)],
  ])('when filtered by %s, then every record matches it', async (filter, matches) => {
    const res = await logs(`${filter}&size=50`).expect(200);
    const records = res.body.query.records as LogRecordBody[];
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expect(matches(record)).toBe(true);
  });

  it('when filtered by exact pods, then only those pods are read', async () => {
    const one = (await logs('size=1').expect(200)).body.query.records[0] as LogRecordBody;
    const res = await logs(`pods=${one.pod}&size=100`).expect(200);
    expect(new Set((res.body.query.records as LogRecordBody[]).map((r) => r.pod))).toEqual(new Set([one.pod]));
  });

  it('when statistics, histogram and an export cover the same records, then they agree', async () => {
    const filter = `namespaces=kube-system&start_time=${now - 86_400 * 400}&end_time=${now}`;
    const stats = (await logs(`${filter}&operation=statistics`).expect(200)).body.statistics;
    expect(stats.containers).toBeGreaterThan(0);
    expect(stats.logs).toBeGreaterThan(stats.containers);
    const histogram = (await logs(`${filter}&operation=histogram&interval=1d`).expect(200)).body.histogram;
    expect(histogram.total).toBe(stats.logs);
    const buckets = histogram.histograms as { time: number; count: number }[];
    expect(buckets.reduce((sum, b) => sum + b.count, 0)).toBe(stats.logs);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.time - buckets[i - 1]!.time).toBe(86_400_000);
    for (const bucket of buckets) expect(bucket.time % 86_400_000).toBe(0);
    const exported = await logs(`${filter}&operation=export`)
      .expect(200)
      .expect('Content-Type', 'text/plain; charset=utf-8');
    expect(exported.headers['content-disposition']).toMatch(/attachment/);
    expect(exported.text.split('\n').filter(Boolean)).toHaveLength(stats.logs);
    const query = (await logs(`${filter}&size=0`).expect(200)).body.query;
    expect(query.total).toBe(Math.min(stats.logs, 10_000));
  });

  it('when exported ascending and descending over containers that started days apart, then both hold every line', async () => {
    // No start time: from each container's first line. The sandbox's pods started at different times (days apart).
    const filter = `end_time=${now}`;
    const stats = (await logs(`${filter}&operation=statistics`).expect(200)).body.statistics;
    const asc = (await logs(`${filter}&operation=export&sort=asc`).expect(200)).text.split('\n').filter(Boolean);
    const desc = (await logs(`${filter}&operation=export&sort=desc`).expect(200)).text.split('\n').filter(Boolean);
    expect(asc).toHaveLength(stats.logs);
    expect([...asc].sort()).toEqual([...desc].sort());
  });

  it('when exported ascending, then the lines come in time order', async () => {
    const filter = `namespaces=demo&start_time=${now - 600}&end_time=${now}`;
    const asc = await logs(`${filter}&operation=export&sort=asc`).expect(200);
    const records = (await logs(`${filter}&sort=asc&size=10000`).expect(200)).body.query.records as LogRecordBody[];
    expect(asc.text).toBe(records.map((r) => `${r.log}\n`).join(''));
  });

  it.each([
    ['start_time=1700000000000', 'start_time', /13 digits: it looks like milliseconds/],
    ['end_time=1700000000000', 'end_time', /milliseconds/],
    ['start_time=1700000000.5', 'start_time', /fraction; whole Unix seconds are required/],
    ['end_time=yesterday', 'end_time', /not a number; whole Unix seconds are required/],
    ['start_time=-5', 'start_time', /negative/],
    ['start_time=1700000100&end_time=1700000000', 'end_time', /before start_time/],
    ['operation=tail', 'operation', /not one of query, statistics, histogram, export/],
    ['sort=up', 'sort', /not one of asc, desc/],
    ['size=-1', 'size', /integer/],
    ['from=9995&size=10', 'size', /from \+ size must be at most 10000/],
    ['interval=15x', 'interval', /not an interval/],
  ])('when given %s, then it is a 400 Status naming %s', async (query, parameter, message) => {
    const res = await logs(query).expect(400);
    expect(res.body).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(res.body.details.causes[0].field).toBe(parameter);
    expect(res.body.message).toContain(parameter);
    expect(res.body.message).toMatch(message);
  });

  it('when another method is used, then it is a 405 Status', async () => {
    const res = await request(env.app).post(LOGS).set(USER_HEADER, ADMIN).expect(405);
    expect(res.body.kind).toBe('Status');
  });
});

describe('removed logging routes', () => {
  it.each([
    ['/namespaces/demo', 'namespaces=demo'],
    ['/namespaces/demo/workloads/web', 'namespaces=demo&workloads=web'],
    ['/namespaces/demo/pods/web-1', 'namespaces=demo&pods=web-1'],
    ['/workspaces/team-a', 'namespaces=<the namespaces of workspace team-a>'],
  ])('when %s is asked, then a 404 Status names the /logs query that replaces it', async (path, replacement) => {
    const res = await request(env.app)
      .get(`/kapis/logging.kapi.io/v1alpha2${path}?start_time=1700000000`)
      .set(USER_HEADER, ADMIN)
      .expect(404);
    expect(res.body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    expect(res.body.message).toContain(`/kapis/logging.kapi.io/v1alpha2/logs?${replacement}`);
    expect(res.body.message).toContain('start_time=1700000000');
  });

  it('when a log-setting API is asked, then no such group exists', async () => {
    await request(env.app).get('/kapis/logging.kapi.io/v1alpha2/fluentbit/outputs').set(USER_HEADER, ADMIN).expect(404);
    await request(env.app).get('/kapis/logging.kapi.io/v1alpha1/logsettings').set(USER_HEADER, ADMIN).expect(404);
  });
});

describe('who sees which logs', () => {
  const ALICE = 'alice-logs';

  beforeAll(async () => {
    // pods/log in "demo" only, by a Role and RoleBinding as on any cluster.
    await call(env.sandbox, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/demo/roles', {
      body: {
        metadata: { name: 'log-reader' },
        rules: [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }],
      },
    });
    await call(env.sandbox, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/demo/rolebindings', {
      body: {
        metadata: { name: 'alice-log-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'log-reader' },
        subjects: [{ kind: 'User', name: ALICE }],
      },
    });
  });

  it('when a user may read logs of one namespace and names none, then only that namespace is seen', async () => {
    const res = await logs('size=200', ALICE).expect(200);
    const records = res.body.query.records as LogRecordBody[];
    expect(records.length).toBeGreaterThan(0);
    expect(new Set(records.map((r) => r.namespace))).toEqual(new Set(['demo']));
    const all = (await logs(`operation=statistics&end_time=${now}`).expect(200)).body.statistics;
    const hers = (await logs(`operation=statistics&end_time=${now}`, ALICE).expect(200)).body.statistics;
    const demo = (await logs(`operation=statistics&namespaces=demo&end_time=${now}`).expect(200)).body.statistics;
    expect(hers).toEqual(demo);
    expect(all.containers).toBeGreaterThan(hers.containers);
  });

  it('when a user names a namespace it may not read, then it is a 403 Status naming it', async () => {
    const res = await logs('namespaces=demo,kube-system', ALICE).expect(403);
    expect(res.body).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    expect(res.body.message).toContain(`User "${ALICE}" cannot get resource "pods/log"`);
    expect(res.body.message).toContain('"kube-system"');
    const text = await logs('namespaces=kube-system&operation=export', ALICE).expect(403);
    expect(text.body.kind).toBe('Status');
  });

  it('when a user without any pods/log right asks, then nothing is seen', async () => {
    const res = await logs('', 'nobody-at-all').expect(200);
    expect(res.body.query).toEqual({ total: 0, records: [] });
  });

  it('when the same user asks again, then no review is repeated per namespace', async () => {
    await logs('operation=statistics', ALICE).expect(200);
    const before = env.reviews();
    await logs('operation=statistics', ALICE).expect(200);
    await logs('operation=histogram&interval=1h', ALICE).expect(200);
    expect(env.reviews()).toBe(before);
  });
});

describe('unreadable logs', () => {
  it('when a pod in range cannot be read, then it is skipped and counted, not a failure', async () => {
    // Bound to a node but never started: kube answers its log with 400 "waiting to start".
    await call(env.sandbox, 'POST', '/api/v1/namespaces/kapi-system/pods', {
      body: {
        metadata: { name: 'never-started' },
        spec: { nodeName: 'node-4', containers: [{ name: 'app', image: 'example/app:1' }] },
      },
    });
    const deadline = Date.now() + 5000;
    while (![...env.pods.directory.podsIn('kapi-system')].some((p) => p.key.endsWith('/never-started'))) {
      if (Date.now() > deadline) throw new Error('the pod never reached the cache');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const operation of ['query', 'statistics', 'histogram']) {
      const res = await logs(`namespaces=kapi-system&operation=${operation}`).expect(200);
      expect(res.body.skipped.containers).toBe(1);
      expect(res.body.skipped.examples[0]).toMatchObject({
        namespace: 'kapi-system',
        pod: 'never-started',
        container: 'app',
      });
      expect(res.body.skipped.examples[0].reason).toMatch(/waiting to start/);
    }
    const exported = await new Promise<{ trailers: NodeJS.Dict<string> }>((resolve, reject) => {
      const server = http.createServer(env.app).listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        http
          .get(
            {
              port,
              host: '127.0.0.1',
              path: `${LOGS}?namespaces=kapi-system&operation=export`,
              headers: { [USER_HEADER]: ADMIN },
            },
            (res) => {
              res.resume();
              res.on('end', () => server.close(() => resolve({ trailers: res.trailers })));
            },
          )
          .on('error', reject);
      });
    });
    expect(exported.trailers['kapi-skipped-containers']).toBe('1');
  });
});

describe('export streaming', () => {
  let big: LoggingSandbox;
  beforeAll(async () => {
    big = await startLoggingSandbox({
      sandbox: { nodes: 3, podsPerNode: 4, logHistory: { lines: 20_000, spanMs: 6 * 3600_000 } },
      backend: { concurrency: 2 },
    });
    await grantClusterAdmin(big.sandbox, ADMIN);
  });
  afterAll(async () => {
    await big.stop();
  });

  it('when the client goes away during an export, then the reads stop', async () => {
    const server = http.createServer(big.app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const firstChunk = await new Promise<{ req: http.ClientRequest; text: string }>((resolve, reject) => {
      const req = http.get(
        { port, host: '127.0.0.1', path: `${LOGS}?operation=export`, headers: { [USER_HEADER]: ADMIN } },
        (res) => {
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
          res.once('data', (chunk: Buffer) => resolve({ req, text: chunk.toString() }));
        },
      );
      req.on('error', reject);
    });
    // It started sending long before the whole result (20,000 lines per container) could have been read.
    expect(firstChunk.text.length).toBeGreaterThan(0);
    firstChunk.req.destroy();
    // Poll until the backend has let go of every read, then prove no more are started.
    const deadline = Date.now() + 10_000;
    let reads = big.logReads();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const later = big.logReads();
      if (later === reads) break;
      reads = later;
      if (Date.now() > deadline) throw new Error('reads went on after the client left');
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(big.logReads()).toBe(reads);
    const whole = (await request(big.app).get(`${LOGS}?operation=statistics`).set(USER_HEADER, ADMIN).expect(200)).body;
    // Far fewer windows were read than a whole export needs.
    expect(reads).toBeLessThan(whole.statistics.containers * 20);
    await new Promise((resolve) => server.close(resolve));
  });
});
