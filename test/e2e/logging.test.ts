/**
 * The logging API against the sandbox, or a real cluster with KUBECONFIG: pods bound to a run-labelled node run (their
 * status written as a kubelet would), and kapi reads their logs through the pod-log API as SPEC §6 says. On a real
 * cluster kube-apiserver fetches those logs from the harness's kubelet stand-in, the node's kubelet endpoint; the
 * sandbox generates its pods' lines itself. Either way the cases hold kapi's answers against the pod-log API read
 * directly, and queries are scoped to this run's namespaces.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getJson, login } from './client.js';
import { requestText, startE2E, waitFor, type E2E } from './harness.js';
import type { WrittenLine } from './kubelet-stand-in.js';

interface LogRecord {
  log: string;
  time: string;
  namespace: string;
  pod: string;
  container: string;
}
interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
  details?: { causes?: { field?: string }[] };
}

const PASSWORD = 'e2e-Logs-password-1';
let e2e: E2E;
let own: string;
let other: string;
let adminToken: string;
let readerToken: string;
let startedAt: number;

/** Forty lines over the last ten minutes, one in four an error. */
function writtenLines(): WrittenLine[] {
  const first = Date.now() - 600_000;
  return Array.from({ length: 40 }, (_, i) => ({
    ms: first + i * 10_000,
    nano: i * 1_001,
    text: `e2e line ${i + 1} ${i % 4 === 0 ? 'ERROR' : 'INFO'}`,
  }));
}

/** A pod of one container `app` that has run for ten minutes, on the run's kubelet node, its lines written. */
async function makeLoggingPod(namespace: string, name: string): Promise<void> {
  const { standIn, nodeName } = await e2e.kubelet();
  standIn.write(namespace, name, 'app', writtenLines());
  await e2e.createRunningPod(namespace, name, { nodeName, containers: [{ name: 'app', image: 'busybox:1.36' }] });
}

/** The container's lines as the pod-log API gives them (timestamps on), read directly as the cluster admin. */
async function directLines(namespace: string, pod: string): Promise<{ time: string; log: string }[]> {
  const text = await requestText(e2e.admin, {
    path: `/api/v1/namespaces/${namespace}/pods/${pod}/log`,
    query: { timestamps: 'true' },
  });
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const space = line.indexOf(' ');
      return { time: nineDigits(line.slice(0, space)), log: line.slice(space + 1) };
    });
}

/** An RFC 3339 UTC time with its fraction at nine digits, as kapi's records give it. */
function nineDigits(time: string): string {
  const match = /^(.{19})(?:\.(\d+))?Z$/.exec(time);
  if (!match) throw new Error(`not an RFC 3339 UTC time: ${time}`);
  return `${match[1]}.${(match[2] ?? '').padEnd(9, '0')}Z`;
}

function logs(query: string, token = adminToken) {
  return getJson<{
    query?: { total: number; records: LogRecord[] };
    statistics?: { containers: number; logs: number };
  }>(`${e2e.kapiUrl}/kapis/logging.kapi.io/v1alpha2/logs?${query}`, token);
}

beforeAll(async () => {
  e2e = await startE2E();
  startedAt = Math.floor(Date.now() / 1000) - 3600;
  own = e2e.runId;
  other = await e2e.createNamespace('other');
  await makeLoggingPod(own, 'logger');
  await makeLoggingPod(other, 'logger');

  const admin = await e2e.createUser('log-admin', PASSWORD);
  await e2e.grant(admin, [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }]);
  const reader = await e2e.createUser('log-reader', PASSWORD);
  // pods/log in this run's namespace only, by a Role and a RoleBinding.
  await e2e.admin.request({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${own}/roles`,
    body: { metadata: { name: 'log-reader' }, rules: [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }] },
  });
  await e2e.admin.request({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${own}/rolebindings`,
    body: {
      metadata: { name: 'log-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'log-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: reader }],
    },
  });
  adminToken = (await login(e2e.kapiUrl, admin, PASSWORD)).access_token;
  readerToken = (await login(e2e.kapiUrl, reader, PASSWORD)).access_token;
  // Until both containers run and kapi's pod cache has them, their logs cannot be read.
  await waitFor(async () => {
    const answer = await logs(`namespaces=${own},${other}&operation=statistics`);
    return answer.status === 200 && answer.body.statistics?.containers === 2;
  });
}, 180_000);

afterAll(async () => {
  await e2e?.stop();
});

describe('logging API (e2e)', () => {
  it('when a pod of the run is queried, then its newest lines come back first, in the KubeSphere shape, as the pod-log API gives them', async () => {
    const answer = await logs(`namespaces=${own}&pods=logger&size=5`);
    expect(answer.status).toBe(200);
    const { total, records } = answer.body.query!;
    expect(total).toBeGreaterThanOrEqual(5);
    expect(records).toHaveLength(5);
    for (const record of records) expect(record).toMatchObject({ namespace: own, pod: 'logger', container: 'app' });
    const times = records.map((r) => r.time);
    expect([...times].sort().reverse()).toEqual(times);
    // The container may write more lines meanwhile (the sandbox's do): those after the newest record are not compared.
    const direct = (await directLines(own, 'logger')).filter((line) => line.time <= times[0]!);
    expect(records.map(({ time, log }) => ({ time, log }))).toEqual(direct.slice(-5).reverse());
  });

  it('when a time range in seconds is given ascending, then the lines in it come oldest first', async () => {
    const end = Math.floor(Date.now() / 1000);
    const answer = await logs(`namespaces=${own}&start_time=${startedAt}&end_time=${end}&sort=asc&size=100`);
    expect(answer.status).toBe(200);
    const times = answer.body.query!.records.map((r) => Date.parse(r.time));
    expect(times.length).toBeGreaterThan(0);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    for (const time of times) {
      expect(time).toBeGreaterThanOrEqual(startedAt * 1000);
      expect(time).toBeLessThan((end + 1) * 1000);
    }
  });

  it('when the times are milliseconds, then it is a 400 saying seconds are required', async () => {
    const answer = await getJson<Status>(
      `${e2e.kapiUrl}/kapis/logging.kapi.io/v1alpha2/logs?start_time=${Date.now()}`,
      adminToken,
    );
    expect(answer.status).toBe(400);
    expect(answer.body.details?.causes?.[0]?.field).toBe('start_time');
    expect(answer.body.message).toMatch(/milliseconds; whole Unix seconds are required/);
  });

  it('when statistics and an export cover the same lines, then they agree and the export is text', async () => {
    const filter = `namespaces=${own}&pods=logger&end_time=${Math.floor(Date.now() / 1000)}`;
    const stats = (await logs(`${filter}&operation=statistics`)).body.statistics!;
    expect(stats.containers).toBe(1);
    const res = await fetch(`${e2e.kapiUrl}/kapis/logging.kapi.io/v1alpha2/logs?${filter}&operation=export`, {
      headers: { Authorization: `Bearer ${adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect((await res.text()).split('\n').filter(Boolean)).toHaveLength(stats.logs);
  });

  it('when a user may read logs of one namespace, then it sees only that one and naming another is a 403', async () => {
    const mine = await logs(`namespaces=${own},${other}`, readerToken);
    expect(mine.status).toBe(403);
    expect((mine.body as unknown as Status).reason).toBe('Forbidden');
    const unnamed = await logs(`namespace_query=${e2e.runId}&size=100`, readerToken);
    expect(unnamed.status).toBe(200);
    const namespaces = new Set(unnamed.body.query!.records.map((r) => r.namespace));
    expect(namespaces).toEqual(new Set([own]));
    const adminSees = await logs(`namespace_query=${e2e.runId}&operation=statistics`);
    expect(adminSees.body.statistics!.containers).toBe(2);
  });

  it('when a removed route is asked, then its 404 names the /logs query that replaces it', async () => {
    const answer = await getJson<Status>(
      `${e2e.kapiUrl}/kapis/logging.kapi.io/v1alpha2/namespaces/${own}/pods/logger`,
      adminToken,
    );
    expect(answer.status).toBe(404);
    expect(answer.body.message).toContain(`/kapis/logging.kapi.io/v1alpha2/logs?namespaces=${own}&pods=logger`);
  });
});
