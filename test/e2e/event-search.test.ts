/**
 * The console's Event Search (`tenant.kapi.io/v1alpha2/events`, KubeSphere 3.4.1's parameters and answers) on the
 * sandbox and on real kube-apiservers, from the cluster's own events: events written in two projects of the run are
 * found by reason, object name and message; a viewer of one project finds its events and none of the other's; the
 * statistics and histogram count them; bad input is a 400 Status.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RUN_LABEL, kubeAllows, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Events-Passw0rd';
const EVENTS = '/kapis/tenant.kapi.io/v1alpha2/events';
let e2e: E2E;
let first: string;
let second: string;
let adminToken: string;
let viewerToken: string;
let reason: string;
const caller = new KapiCaller();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

async function search(token: string, query: Record<string, string>) {
  const res = await fetch(`${e2e.kapiUrl}${EVENTS}?${new URLSearchParams(query)}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as Raw };
}

/** An event of now (whole seconds, as kube keeps them): after its namespace was made, as a real one is. */
async function writeEvent(namespace: string, object: string, message: string) {
  const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/events`,
    body: {
      metadata: { generateName: `${object}.`, labels: { [RUN_LABEL]: e2e.runId } },
      involvedObject: { kind: 'Pod', name: object, namespace, uid: `${namespace}-${object}` },
      reason,
      message,
      type: 'Warning',
      source: { component: 'e2e' },
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
    },
  });
}

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  first = await e2e.createNamespace('events-a');
  second = await e2e.createNamespace('events-b');
  reason = `E2eProbe${e2e.runId.replace(/[^a-z0-9]/gi, '')}`;
  // a second apart each, so newest first is one order (an event older than its namespace is not shown)
  const aSecond = () => new Promise((resolve) => setTimeout(resolve, 1100));
  await aSecond();
  await writeEvent(first, 'web-0', 'Back-off restarting failed container web');
  await aSecond();
  await writeEvent(first, 'web-1', 'Liveness probe failed: connection refused');
  await aSecond();
  await writeEvent(second, 'db-0', 'Back-off restarting failed container db');
  const admin = await e2e.createUser('events-admin', PASSWORD);
  await e2e.grant(admin, [{ apiGroups: [''], resources: ['events'], verbs: ['list'] }]);
  const viewer = await e2e.createUser('events-viewer', PASSWORD);
  // a viewer of the first project only: list events there
  await e2e.admin.request({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${first}/rolebindings`,
    body: {
      metadata: { name: 'events-viewer', labels: { [RUN_LABEL]: e2e.runId } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: viewer }],
    },
  });
  // kube-apiserver's authorizer reads bindings from its own cache, a moment behind
  await waitFor(() => kubeAllows(e2e.admin, viewer, { verb: 'list', resource: 'events', namespace: first }));
  adminToken = (await caller.login(e2e.kapiUrl, admin, PASSWORD)).access_token;
  viewerToken = (await caller.login(e2e.kapiUrl, viewer, PASSWORD)).access_token;
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
});

describe('Event Search', () => {
  it('when the administrator searches by reason, then the run’s three events, newest first, as core/v1 Events', async () => {
    let answer = await search(adminToken, { reason_filter: reason, start_time: '0', size: '50' });
    await waitFor(async () => {
      answer = await search(adminToken, { reason_filter: reason, start_time: '0', size: '50' });
      return answer.body.query?.total === 3;
    });
    expect(answer.status).toBe(200);
    const records = answer.body.query.records as Raw[];
    expect(records.map((record) => record.involvedObject.name)).toEqual(['db-0', 'web-1', 'web-0']);
    expect(records[0]).toMatchObject({
      kind: 'Event',
      apiVersion: 'v1',
      type: 'Warning',
      source: { component: 'e2e' },
    });
    expect(records[0].metadata.managedFields).toBeUndefined();
  });

  it.each<[string, Record<string, string>, string[]]>([
    ['an object’s name', { involved_object_name_filter: 'web-1' }, ['web-1']],
    ['a message’s text', { message_search: 'back-off' }, ['db-0', 'web-0']],
    ['a project', { involved_object_namespace_filter: 'FIRST' }, ['web-1', 'web-0']],
  ])('when the administrator narrows by %s, then those events', async (_case, query, expected) => {
    const named = Object.fromEntries(
      Object.entries(query).map(([key, value]) => [key, value === 'FIRST' ? first : value]),
    );
    const answer = await search(adminToken, { reason_filter: reason, start_time: '0', ...named });
    expect((answer.body.query.records as Raw[]).map((record) => record.involvedObject.name)).toEqual(expected);
  });

  it('when a viewer of one project searches, then only its events; naming the other project gives none', async () => {
    const own = await search(viewerToken, { reason_filter: reason, start_time: '0' });
    expect(own.status).toBe(200);
    expect((own.body.query.records as Raw[]).map((record) => record.involvedObject.name)).toEqual(['web-1', 'web-0']);
    const other = await search(viewerToken, { reason_filter: reason, involved_object_namespace_filter: second });
    expect(other.body).toEqual({ query: { total: 0, records: [] } });
  });

  it('when statistics and a histogram are asked, then they count the same events', async () => {
    const statistics = await search(adminToken, { operation: 'statistics', reason_filter: reason, start_time: '0' });
    expect(statistics.body).toEqual({ statistics: { resources: 3, events: 3 } });
    const start = String(Math.floor(Date.now() / 1000) - 3600);
    const histogram = await search(adminToken, {
      operation: 'histogram',
      reason_filter: reason,
      start_time: start,
      interval: '1m',
    });
    expect(histogram.body.histogram.total).toBe(3);
    expect((histogram.body.histogram.buckets as { count: number }[]).reduce((sum, b) => sum + b.count, 0)).toBe(3);
  });

  it.each<[string, Record<string, string>, string]>([
    ['an unknown operation', { operation: 'export' }, 'operation'],
    ['a reversed time range', { start_time: '2000', end_time: '1000' }, 'end_time'],
    ['a page past the window', { from: '10000', size: '1' }, 'size'],
  ])('when the query has %s, then a 400 Status naming the parameter', async (_case, query, parameter) => {
    const answer = await search(adminToken, query);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 400, details: { causes: [{ field: parameter }] } });
  });

  it('when no token is sent, then a 401 Status', async () => {
    const res = await fetch(`${e2e.kapiUrl}${EVENTS}`);
    expect(res.status).toBe(401);
  });
});
