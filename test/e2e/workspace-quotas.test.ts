/**
 * Workspace quotas (KubeSphere's quota.kubesphere.io ResourceQuota, SPEC §18) on the sandbox and on real
 * kube-apiservers: a quota over a workspace's two projects together, set through kapi's tenant route by one who
 * manages workspaces, read by the workspace's admin, and held by kube-apiserver calling kapi's validating webhook on
 * every pod creation — here pods written straight to kube-apiserver, past kapi. A pod that would pass a limit in
 * either project is refused with kube's message; one that states no limit where the quota limits it is refused; once a
 * pod is deleted kapi's controller gives its share back and the next pod fits; a project of another workspace is not
 * counted. The webhook configuration is the chart's, pointed at this run's kapi and only at this run's workspace.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeApiError } from '../../src/kube/client.js';
import { QUOTA_WEBHOOK_PATH } from '../../src/workspace-quota/webhook-routes.js';
import { quotaWebhookConfiguration } from '../../src/workspace-quota/webhook-configuration.js';
import { WorkspaceQuotaAdmission } from '../../src/workspace-quota/admission.js';
import { RUN_LABEL, deleteIgnoringMissing, silentLogger, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Quotas-Passw0rd';
const TEMPLATES = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
const QUOTAS = '/apis/quota.kapi.io/v1alpha2/resourcequotas';
const WEBHOOKS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
let e2e: E2E;
let workspace: string;
let first: string;
let second: string;
let outside: string;
let webhookName: string;
let aliceToken: string;
let aliceName: string;
let bobToken: string;
let carolToken: string;
const caller = new KapiCaller();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

async function send(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Raw };
}

const quotaPath = (name = workspace) => `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/resourcequotas/${name}`;
const quota = (hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'quota.kapi.io/v1alpha2',
  kind: 'ResourceQuota',
  metadata: { name: workspace, workspace, cluster: 'default' },
  spec: { quota: { hard, ...extra } },
});

/** A pod written straight to kube-apiserver as the cluster's admin: kapi sees it only as its webhook. */
async function createPod(namespace: string, name: string, limits?: { cpu: string; memory: string }) {
  try {
    await e2e.admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/pods`,
      body: {
        metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
        spec: { containers: [{ name: 'app', image: 'nginx', ...(limits && { resources: { limits } }) }] },
      },
    });
    return { status: 201, message: '' };
  } catch (err) {
    if (!(err instanceof KubeApiError)) throw err;
    return { status: err.code, message: err.status?.message ?? '' };
  }
}

const usedOf = async (): Promise<Record<string, string>> =>
  ((await e2e.admin.request<Raw>({ path: `${QUOTAS}/${workspace}` })).status?.total?.used ?? {}) as Record<
    string,
    string
  >;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  const alice = await e2e.createUser('quota-alice', PASSWORD);
  aliceName = alice;
  const bob = await e2e.createUser('quota-bob', PASSWORD);
  const carol = await e2e.createUser('quota-carol', PASSWORD);
  workspace = e2e.name('quota-ws');
  await e2e.admin.request({
    method: 'POST',
    path: TEMPLATES,
    body: {
      apiVersion: 'tenant.kapi.io/v1alpha2',
      kind: 'WorkspaceTemplate',
      metadata: { name: workspace, labels: { [RUN_LABEL]: e2e.runId } },
      spec: { template: { spec: { manager: alice } } },
    },
  });
  first = await e2e.createNamespace('quota-a');
  second = await e2e.createNamespace('quota-b');
  outside = await e2e.createNamespace('quota-out');
  for (const name of [first, second])
    await e2e.admin.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${name}`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { 'kapi.io/workspace': workspace } } },
    });
  // carol manages workspaces' quotas on the platform (role-template-manage-workspaces grants this)
  await e2e.grant(carol, [
    { apiGroups: ['tenant.kapi.io'], resources: ['workspacetemplates/resourcequotas'], verbs: ['*'] },
  ]);
  // the chart's webhook, at this run's kapi, for this run's workspace only (other suites' pods are not its)
  webhookName = e2e.name('quota-webhook');
  const ca = e2e.caFile ? readFileSync(e2e.caFile) : undefined;
  expect(ca).toBeDefined();
  const configuration = quotaWebhookConfiguration({ url: e2e.kapiHttpsUrl }, ca?.toString('base64') ?? '', [workspace]);
  await e2e.admin.request({
    method: 'POST',
    path: WEBHOOKS,
    body: { ...configuration, metadata: { name: webhookName, labels: { [RUN_LABEL]: e2e.runId } } },
  });
  // alice administers the workspace once kapi's controller has realized it
  await waitFor(async () => {
    const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        spec: {
          user: alice,
          groups: ['system:authenticated'],
          resourceAttributes: {
            verb: 'get',
            group: 'tenant.kapi.io',
            resource: 'workspacetemplates',
            subresource: 'resourcequotas',
            name: workspace,
          },
        },
      },
    });
    return review.status.allowed === true;
  });
  aliceToken = (await caller.login(e2e.kapiUrl, alice, PASSWORD)).access_token;
  bobToken = (await caller.login(e2e.kapiUrl, bob, PASSWORD)).access_token;
  carolToken = (await caller.login(e2e.kapiUrl, carol, PASSWORD)).access_token;
}, 120_000);

afterAll(async () => {
  if (webhookName) await deleteIgnoringMissing(e2e.admin, `${WEBHOOKS}/${webhookName}`).catch(() => undefined);
  if (workspace) {
    await deleteIgnoringMissing(e2e.admin, `${QUOTAS}/${workspace}`).catch(() => undefined);
    await deleteIgnoringMissing(e2e.admin, `${TEMPLATES}/${workspace}`).catch(() => undefined);
  }
  await e2e?.stop();
});

describe('a workspace quota', () => {
  it('when none is set, then the workspace’s admin reads a 404 Status (the console shows no limit)', async () => {
    const answer = await send('GET', quotaPath(), aliceToken);
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('when the workspace’s admin or a stranger sets one, then RBAC refuses: a quota is the platform’s limit', async () => {
    for (const token of [aliceToken, bobToken]) {
      const answer = await send(
        'POST',
        `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/resourcequotas`,
        token,
        quota({ pods: '9' }),
      );
      expect(answer.status).toBe(403);
      expect(answer.body.message).toContain('workspacetemplates/resourcequotas');
    }
    expect((await send('GET', quotaPath(), bobToken)).status).toBe(403);
  });

  it('when a quota names what the webhook cannot hold, or no quantity, then it is a 400 Status naming it', async () => {
    const base = `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/resourcequotas`;
    const services = await send('POST', base, carolToken, quota({ services: '3' }));
    expect(services.status).toBe(400);
    expect(services.body.message).toContain('spec.quota.hard[services]');
    const lots = await send('POST', base, carolToken, quota({ 'limits.cpu': 'lots' }));
    expect(lots.status).toBe(400);
    expect(lots.body.message).toContain('"lots"');
    const scopes = await send('POST', base, carolToken, quota({ pods: '1' }, { scopes: ['BestEffort'] }));
    expect(scopes.status).toBe(400);
  });

  it('when one who manages workspaces sets it, then it selects the workspace’s projects and its admin reads it', async () => {
    const base = `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/resourcequotas`;
    const created = await send('POST', base, carolToken, {
      ...quota({ pods: '3', 'limits.cpu': '1', 'limits.memory': '1Gi' }),
      spec: { quota: { hard: { pods: '3', 'limits.cpu': '1', 'limits.memory': '1Gi' } }, selector: { any: 'thing' } },
    });
    expect(created.status).toBe(200);
    expect(created.body.metadata.labels).toMatchObject({ 'kapi.io/workspace': workspace });
    expect(created.body.spec.selector).toEqual({ 'kapi.io/workspace': workspace });
    // the controller counts the (empty) projects
    await waitFor(async () => (await usedOf()).pods === '0');
    const read = await send('GET', quotaPath(), aliceToken);
    expect(read.status).toBe(200);
    expect(read.body.spec.quota.hard).toEqual({ pods: '3', 'limits.cpu': '1', 'limits.memory': '1Gi' });
    expect(read.body.status.total.used).toEqual({ pods: '0', 'limits.cpu': '0', 'limits.memory': '0' });
    expect(read.body.status.namespaces.map((entry: Raw) => entry.namespace)).toEqual([first, second].sort());
  });

  it('when pods of both projects fill it, then the next pod in either is refused by kube-apiserver with kube’s message', async () => {
    expect(await createPod(first, 'a', { cpu: '400m', memory: '256Mi' })).toEqual({ status: 201, message: '' });
    expect(await createPod(second, 'b', { cpu: '400m', memory: '256Mi' })).toEqual({ status: 201, message: '' });
    const refused = await createPod(first, 'c', { cpu: '400m', memory: '256Mi' });
    expect(refused.status).toBe(403);
    expect(refused.message).toBe(
      'admission webhook "resourcequotas.quota.kapi.io" denied the request: exceeded quota: ' +
        `${workspace}, requested: limits.cpu=400m, used: limits.cpu=800m, limited: limits.cpu=1`,
    );
    const used = await usedOf();
    expect(used).toMatchObject({ pods: '2', 'limits.cpu': '800m', 'limits.memory': '512Mi' });
  });

  it('when the workspace’s admin tries the same pod through kapi’s forwarding, or lifts the quota through /apis or straight at kube-apiserver, then each is refused', async () => {
    const pod = {
      metadata: { name: 'through-kapi', labels: { [RUN_LABEL]: e2e.runId } },
      spec: { containers: [{ name: 'app', image: 'nginx', resources: { limits: { cpu: '400m', memory: '256Mi' } } }] },
    };
    // through kapi's /api forwarding, as alice (her workspace's admin role reaches the project once realized)
    let answer = { status: 0, body: undefined as Raw };
    await waitFor(async () => {
      answer = await send('POST', `/api/v1/namespaces/${first}/pods`, aliceToken, pod);
      return answer.status === 403 && String(answer.body?.message).includes('exceeded quota');
    });
    expect(answer.body).toMatchObject({ kind: 'Status', code: 403 });
    // the quota itself: kapi's forwarding as alice, and kube-apiserver as alice (impersonated), both RBAC's refusal
    const raise = { metadata: { name: workspace }, spec: { quota: { hard: { pods: '99', 'limits.cpu': '99' } } } };
    const forwarded = await fetch(`${e2e.kapiUrl}${QUOTAS}/${workspace}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${aliceToken}`, 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify(raise),
    });
    expect(forwarded.status).toBe(403);
    const direct = await e2e.admin
      .request({
        method: 'PATCH',
        path: `${QUOTAS}/${workspace}`,
        contentType: 'application/merge-patch+json',
        headers: { 'Impersonate-User': aliceName, 'Impersonate-Group': 'system:authenticated' },
        body: raise,
      })
      .then(
        () => 200,
        (err: unknown) => (err instanceof KubeApiError ? err.code : 0),
      );
    expect(direct).toBe(403);
    expect(await usedOf()).toMatchObject({ pods: '2', 'limits.cpu': '800m' });
  });

  it('when a pod states no limit the quota limits, then it is refused naming what to state', async () => {
    const refused = await createPod(second, 'bare');
    expect(refused.status).toBe(403);
    expect(refused.message).toContain(
      `failed quota: ${workspace}: must specify limits.cpu for: app; limits.memory for: app`,
    );
  });

  it('when a project of another workspace makes the same pod, then the quota does not count it', async () => {
    expect((await createPod(outside, 'c', { cpu: '400m', memory: '256Mi' })).status).toBe(201);
    expect(await usedOf()).toMatchObject({ pods: '2', 'limits.cpu': '800m' });
  });

  it('when a pod is deleted, then kapi’s controller gives its share back and the next pod fits', async () => {
    await e2e.admin.request({
      method: 'DELETE',
      path: `/api/v1/namespaces/${first}/pods/a`,
      query: { gracePeriodSeconds: 0 },
    });
    await waitFor(async () => (await usedOf()).pods === '1');
    expect(await createPod(first, 'c', { cpu: '400m', memory: '256Mi' })).toEqual({ status: 201, message: '' });
    const read = await send('GET', quotaPath(), aliceToken);
    expect(read.body.status.total.used).toMatchObject({ pods: '2', 'limits.cpu': '800m' });
    const perNamespace = Object.fromEntries(
      read.body.status.namespaces.map((entry: Raw) => [entry.namespace, entry.used.pods]),
    );
    expect(perNamespace).toEqual({ [first]: '1', [second]: '1' });
  });

  it('when the limit is raised and then the quota lifted, then pods past the old limit fit', async () => {
    const current = (await send('GET', quotaPath(), carolToken)).body;
    const raised = await send('PUT', quotaPath(), carolToken, {
      ...quota({ pods: '3', 'limits.cpu': '2', 'limits.memory': '1Gi' }),
      metadata: { name: workspace },
    });
    expect(raised.status).toBe(200);
    expect(raised.body.metadata.resourceVersion).not.toBe(current.metadata.resourceVersion);
    expect(await createPod(second, 'd', { cpu: '400m', memory: '256Mi' })).toEqual({ status: 201, message: '' });
    expect((await createPod(second, 'e', { cpu: '100m', memory: '1Mi' })).message).toContain('limited: pods=3');
    const lifted = await send('DELETE', quotaPath(), carolToken);
    expect(lifted.status).toBe(200);
    expect(lifted.body).toMatchObject({ kind: 'Status', status: 'Success' });
    await waitFor(async () => (await createPod(second, 'e', { cpu: '100m', memory: '1Mi' })).status === 201);
    expect((await send('GET', quotaPath(), aliceToken)).status).toBe(404);
  });
});

/** A quota for a made-up workspace, straight in the cluster (the admission cases below need no namespace). */
async function createQuota(name: string, hard: Record<string, string>, workspace: string) {
  await e2e.admin.request({
    method: 'POST',
    path: QUOTAS,
    body: {
      apiVersion: 'quota.kapi.io/v1alpha2',
      kind: 'ResourceQuota',
      metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
      spec: { quota: { hard }, selector: { 'kapi.io/workspace': workspace } },
    },
  });
}

const bare = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'app' }] } });

describe('admission, replica by replica', () => {
  it('when six pods race for three places through two replicas’ admissions, then exactly three are admitted and charged', async () => {
    const name = e2e.name('quota-race');
    const labels = { 'kapi.io/workspace': name };
    await createQuota(name, { pods: '3' }, name);
    try {
      // the quota as the replicas' watches would hold it; each reads it afresh from kube-apiserver before charging
      const sources = {
        quotas: async () => [{ metadata: { name }, spec: { quota: { hard: { pods: '3' } }, selector: labels } }],
        namespaceLabels: async () => labels,
        usage: () => ({ total: {}, namespaces: [] }),
      };
      const replicas = [0, 1].map(() => new WorkspaceQuotaAdmission(e2e.asKapi, sources, silentLogger));
      const answers = await Promise.all(
        [0, 1, 2, 3, 4, 5].map((i) => replicas[i % 2]!.admit({ pod: bare(`p${i}`), namespace: 'race', dryRun: false })),
      );
      expect(answers.filter((answer) => answer.allowed)).toHaveLength(3);
      expect(answers.filter((answer) => !answer.allowed)).toEqual(
        Array(3).fill({
          allowed: false,
          code: 403,
          reason: 'Forbidden',
          message: `exceeded quota: ${name}, requested: pods=1, used: pods=3, limited: pods=3`,
        }),
      );
      const stored = await e2e.admin.request<Raw>({ path: `${QUOTAS}/${name}` });
      expect(stored.status.total.used).toEqual({ pods: '3' });
    } finally {
      await deleteIgnoringMissing(e2e.admin, `${QUOTAS}/${name}`);
    }
  });

  it('when one of two quotas refuses a pod, then the other is not charged for it (every quota is checked first)', async () => {
    const roomy = e2e.name('quota-roomy');
    const full = e2e.name('quota-full');
    const workspace = e2e.name('quota-two');
    const labels = { 'kapi.io/workspace': workspace };
    await createQuota(roomy, { pods: '5' }, workspace);
    await createQuota(full, { pods: '0' }, workspace);
    try {
      const sources = {
        quotas: async () =>
          [roomy, full].map((name) => ({ metadata: { name }, spec: { quota: { hard: {} }, selector: labels } })),
        namespaceLabels: async () => labels,
        usage: () => ({ total: {}, namespaces: [] }),
      };
      const admission = new WorkspaceQuotaAdmission(e2e.asKapi, sources, silentLogger);
      const answer = await admission.admit({ pod: bare('p'), namespace: 'two', dryRun: false });
      expect(answer).toMatchObject({ allowed: false, message: expect.stringContaining(`exceeded quota: ${full}`) });
      const stored = await e2e.admin.request<Raw>({ path: `${QUOTAS}/${roomy}` });
      // not charged: no use, or the leader's recount of the new quota (pods 0; a recount never lowers a fresh charge,
      // so a charge would still show as 1)
      expect({ pods: '0', ...stored.status?.total?.used }).toEqual({ pods: '0' });
    } finally {
      await deleteIgnoringMissing(e2e.admin, `${QUOTAS}/${roomy}`);
      await deleteIgnoringMissing(e2e.admin, `${QUOTAS}/${full}`);
    }
  });
});

describe('the quota webhook, asked directly', () => {
  /** A review sent as kube-apiserver sends one: over TLS, to kapi's HTTPS listener. */
  const post = (body: unknown, url = `${e2e.kapiHttpsUrl}${QUOTA_WEBHOOK_PATH}`) =>
    new Promise<{ status: number; body: Raw }>((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = (url.startsWith('https:') ? https : http).request(
        url,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
          ...(url.startsWith('https:') && { ca: readFileSync(e2e.caFile as string) }),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const review = (request: Record<string, unknown>) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', resource: { group: '', version: 'v1', resource: 'pods' }, namespace: first, ...request },
  });

  it('when the body is no AdmissionReview, then it is a 400 Status', async () => {
    const res = await post({ hello: 'world' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', code: 400 });
  });

  it('when it is asked over plain HTTP, then it is not the webhook that answers (kube-apiserver calls webhooks over TLS)', async () => {
    const res = await post(review({ operation: 'CREATE', object: bare('p') }), `${e2e.kapiUrl}${QUOTA_WEBHOOK_PATH}`);
    // any other path of kapi's without a token: a 401 Status, no AdmissionReview
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ kind: 'Status', code: 401 });
  });

  it('when the review is not of a pod’s creation, then it is allowed untouched with its uid', async () => {
    const res = await post(review({ operation: 'DELETE' }));
    expect(res.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-1', allowed: true },
    });
  });

  it('when a made-up review asks a negative amount (to lower a quota’s use), then it is refused and nothing is charged', async () => {
    const res = await post(
      review({
        operation: 'CREATE',
        object: {
          metadata: { name: 'x' },
          spec: { containers: [{ name: 'app', resources: { limits: { cpu: '-100', memory: '1Mi' } } }] },
        },
      }),
    );
    expect(res.body.response).toEqual({
      uid: 'u-1',
      allowed: false,
      status: {
        status: 'Failure',
        code: 400,
        reason: 'BadRequest',
        message: 'the pod’s CPU and memory are not quantities',
      },
    });
  });
});
