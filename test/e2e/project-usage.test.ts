/**
 * A project's overview in the console (KubeSphere 3.4's `resources.kapi.io/v1alpha2` `quotas` and
 * `abnormalworkloads`), on the sandbox and on real kube-apiservers: the project's ResourceQuotas merged as KubeSphere
 * merges them (the smallest limit and use of each), what is left of each limit, the object counts from kapi's watched
 * caches, and the workloads, jobs and claims in an abnormal state, each by the listing's own status.
 *
 * A bare cluster has no quota controller: the quotas' status is written here as the controller would write it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rawRequest, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { READ_EVERY_KIND } from './kind-samples.js';
import { assertTarget } from './target.js';

const RESOURCES2 = '/kapis/resources.kapi.io/v1alpha2';
const PASSWORD = 'e2e-Usage-Passw0rd';
let e2e: E2E;
let project: string;
let readerToken: string;
let strangerToken: string;
const caller = new KapiCaller();

interface Usage {
  namespace: string;
  data: { hard?: Record<string, string>; used: Record<string, string>; left?: Record<string, string> };
}

async function create(path: string, body: Record<string, unknown>): Promise<void> {
  await e2e.admin.request({ method: 'POST', path, body });
}

async function writeStatus(path: string, status: Record<string, unknown>): Promise<void> {
  await e2e.admin.request({
    method: 'PATCH',
    path: `${path}/status`,
    contentType: 'application/merge-patch+json',
    body: { status },
  });
}

const container = [{ name: 'app', image: 'registry.invalid/e2e' }];
const template = (app: string) => ({ metadata: { labels: { app } }, spec: { containers: container } });

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  project = await e2e.createNamespace('usage');
  const reader = await e2e.createUser('usage-reader', PASSWORD);
  await e2e.grant(reader, READ_EVERY_KIND);
  readerToken = (await caller.login(e2e.kapiUrl, reader, PASSWORD)).access_token;
  const stranger = await e2e.createUser('usage-stranger', PASSWORD);
  strangerToken = (await caller.login(e2e.kapiUrl, stranger, PASSWORD)).access_token;

  const ns = `/namespaces/${project}`;
  // a Deployment half ready (updating), one with all its replicas ready (running), a claim (Pending from its creation)
  for (const [name, ready] of [
    ['half-ready', 1],
    ['all-ready', 2],
  ] as const) {
    await create(`/apis/apps/v1${ns}/deployments`, {
      metadata: { name },
      spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: template(name) },
    });
    await writeStatus(`/apis/apps/v1${ns}/deployments/${name}`, {
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: ready,
      availableReplicas: ready,
    });
  }
  await create(`/api/v1${ns}/services`, {
    metadata: { name: 'web' },
    spec: { selector: { app: 'all-ready' }, ports: [{ port: 80 }] },
  });
  await create(`/api/v1${ns}/persistentvolumeclaims`, {
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  await create(`/api/v1${ns}/configmaps`, { metadata: { name: 'not-counted' }, data: { a: 'b' } });
  // two quotas, as the quota controller would have written their status: the smaller limit and use of each count
  const quotas: [string, Record<string, string>, Record<string, string>][] = [
    [
      'compute',
      { 'requests.cpu': '2', 'count/pods': '10', 'limits.memory': '1Gi' },
      { 'requests.cpu': '500m', 'count/pods': '0', 'limits.memory': '1536Mi' },
    ],
    ['tighter', { 'requests.cpu': '1' }, { 'requests.cpu': '250m' }],
  ];
  for (const [name, hard, used] of quotas) {
    await create(`/api/v1${ns}/resourcequotas`, { metadata: { name }, spec: { hard } });
    await writeStatus(`/api/v1${ns}/resourcequotas/${name}`, { hard, used });
  }
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
});

describe('a project’s overview: its usage and abnormal workloads', () => {
  it('then quotas merges its ResourceQuotas (the smaller limit and use), says what is left, and counts its objects', async () => {
    const url = `${e2e.kapiUrl}${RESOURCES2}/namespaces/${project}/quotas`;
    // kapi's caches hold what was just made once their watches have seen it
    await waitFor(async () => {
      const usage = (await caller.get<Usage>(url, readerToken)).body;
      return usage.data?.used?.['count/deployments.apps'] === '2' && usage.data.used['persistentvolumeclaims'] === '1';
    });
    const usage = await caller.get<Usage>(url, readerToken);
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({
      namespace: project,
      data: {
        hard: { 'requests.cpu': '1', 'count/pods': '10', 'limits.memory': '1Gi' },
        used: {
          'requests.cpu': '250m',
          'count/pods': '0',
          'limits.memory': '1536Mi',
          'count/deployments.apps': '2',
          'count/statefulsets.apps': '0',
          'count/daemonsets.apps': '0',
          'count/jobs.batch': '0',
          'count/cronjobs.batch': '0',
          'count/services': '1',
          'count/ingresses.extensions': '0',
          persistentvolumeclaims: '1',
        },
        // over its limit: nothing left, never below zero
        left: { 'requests.cpu': '750m', 'count/pods': '10', 'limits.memory': '0' },
      },
    });
  });

  it('then abnormalworkloads counts the Deployment still updating and the claim still pending', async () => {
    const url = `${e2e.kapiUrl}${RESOURCES2}/namespaces/${project}/abnormalworkloads`;
    await waitFor(
      async () => (await caller.get<{ data: Record<string, number> }>(url, readerToken)).body.data?.deployments === 1,
    );
    const abnormal = await caller.get(url, readerToken);
    expect(abnormal.body).toEqual({
      namespace: project,
      data: { deployments: 1, statefulsets: 0, daemonsets: 0, jobs: 0, persistentvolumeclaims: 1 },
    });
  });

  it('then the cluster’s counts hold at least the project’s, and its abnormal workloads at least the project’s', async () => {
    const usage = await caller.get<Usage>(`${e2e.kapiUrl}${RESOURCES2}/quotas`, readerToken);
    expect(usage.status).toBe(200);
    expect(usage.body.namespace).toBe('');
    expect(usage.body.data.hard).toBeUndefined();
    expect(Number(usage.body.data.used['count/deployments.apps'])).toBeGreaterThanOrEqual(2);
    const abnormal = await caller.get<{ data: Record<string, number> }>(
      `${e2e.kapiUrl}${RESOURCES2}/abnormalworkloads`,
      readerToken,
    );
    expect(abnormal.body.data.deployments).toBeGreaterThanOrEqual(1);
    expect(abnormal.body.data.persistentvolumeclaims).toBeGreaterThanOrEqual(1);
  });

  it('then a namespace that is not a DNS label is a 400 Status (`..` would reach every project’s quotas)', async () => {
    for (const path of [
      'namespaces/%2E%2E/quotas',
      'namespaces/%2E/quotas',
      'namespaces/Not_A_Label/abnormalworkloads',
    ]) {
      const answer = await rawRequest(e2e.kapiUrl, 'GET', `${RESOURCES2}/${path}`, readerToken);
      expect([answer.status, answer.body]).toMatchObject([400, { kind: 'Status', code: 400 }]);
    }
  });

  it('then one without the right gets a 403 Status, one without a token a 401 Status', async () => {
    for (const path of [
      `namespaces/${project}/quotas`,
      'quotas',
      `namespaces/${project}/abnormalworkloads`,
      'abnormalworkloads',
    ]) {
      const url = `${e2e.kapiUrl}${RESOURCES2}/${path}`;
      expect((await caller.get(url, strangerToken)).body).toMatchObject({ kind: 'Status', code: 403 });
      expect((await caller.get(url)).body).toMatchObject({ kind: 'Status', code: 401 });
    }
  });
});
