/**
 * The logging API against the sandbox, or a real cluster with KUBECONFIG: pods made through the Kubernetes API write
 * logs (a real busybox container on a cluster; the sandbox's generated lines once the pod's status says it runs),
 * and kapi reads them through the pod-log API as SPEC §6 says. Queries are scoped to this run's namespaces.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getJson, login } from './client.js';
import { runningPodStatus } from '../../src/sandbox/pod-status.js';
import { RUN_LABEL, startE2E, waitFor, type E2E } from './harness.js';

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

/** A pod whose one container writes 40 lines, then idles. */
async function makeLoggingPod(namespace: string, name: string): Promise<void> {
  const onSandbox = e2e.target === 'sandbox';
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/pods`,
    body: {
      metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
      spec: {
        ...(onSandbox && { nodeName: 'node-4' }),
        terminationGracePeriodSeconds: 0,
        containers: [
          {
            name: 'app',
            image: 'busybox:1.36',
            command: ['sh', '-c', 'for i in $(seq 1 40); do echo "e2e line $i ERROR-or-not"; done; sleep 3600'],
          },
        ],
      },
    },
  });
  if (onSandbox) {
    // No kubelet in the sandbox: say what a kubelet would, so its log API serves the container.
    const path = `/api/v1/namespaces/${namespace}/pods/${name}/status`;
    const pod = await e2e.admin.request<Record<string, unknown>>({ path });
    await e2e.admin.request({
      method: 'PUT',
      path,
      body: {
        ...pod,
        status: runningPodStatus([{ name: 'app', image: 'busybox:1.36' }], new Date(Date.now() - 600_000)),
      },
    });
  }
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
  other = e2e.name('other');
  await e2e.admin.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: other, labels: { [RUN_LABEL]: e2e.runId } } },
  });
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
  await e2e?.admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${other}` }).catch(() => undefined);
  await e2e?.stop();
});

describe('logging API (e2e)', () => {
  it('when a pod of the run is queried, then its lines come back newest first, in the KubeSphere shape', async () => {
    const answer = await logs(`namespaces=${own}&pods=logger&size=5`);
    expect(answer.status).toBe(200);
    const { total, records } = answer.body.query!;
    expect(total).toBeGreaterThanOrEqual(5);
    expect(records).toHaveLength(5);
    for (const record of records) expect(record).toMatchObject({ namespace: own, pod: 'logger', container: 'app' });
    const times = records.map((r) => r.time);
    expect([...times].sort().reverse()).toEqual(times);
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
