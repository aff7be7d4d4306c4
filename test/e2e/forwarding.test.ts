/**
 * SPEC §5 end to end: raw HTTP through a real kapi (OAuth login, JWT, the cluster's RBAC) to the sandbox or the
 * cluster KUBECONFIG names. Every request is authenticated before it can reach kube-apiserver; the caller's own
 * credentials and any identity claim are refused or dropped; kube-apiserver sees the kapi user (impersonated by kapi's
 * service account) and its answers, errors included, come back unchanged; watches stream; a refused upgrade closes
 * the connection. On the sandbox its audit trail also shows what reached kube-apiserver and as whom.
 *
 * Not here: a redirecting backend. kube-apiserver does not redirect API requests on its own, so that case stays with
 * a fake backend in test/proxy/forwarder.test.ts and test/proxy/upgrade.test.ts rather than being faked in e2e.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1PodList } from '@kubernetes/client-node';
import { WebSocket } from 'ws';
import { KAPI_SERVICE_ACCOUNT } from '../../src/sandbox/policy.js';
import type { KubeStatus } from '../../src/server/errors.js';
import { login } from './client.js';
import { selfSubjectReviewRequest, selfSubjectReviewVersion } from './discovery.js';
import { auditSince, isBackground, kubeErrorAs } from './forwarding-audit.js';
import {
  bearer,
  exchangeOnOneConnection,
  openWatch,
  rawRequest,
  requestText,
  responseCodes,
  webSocketUpgrade,
} from './forwarding-http.js';
import { RUN_LABEL, startE2E, waitFor, type E2E } from './harness.js';
import { assertTarget, describeOnSandbox } from './target.js';

const PASSWORD = 'e2e-Forwarding-password-1';

/** SelfSubjectReview at the version the cluster serves (found by discovery, as kubectl auth whoami does). */
async function servedReviewVersion(): Promise<string> {
  const version = await selfSubjectReviewVersion(e2e.admin);
  if (version === undefined)
    throw new Error(
      'the cluster serves no SelfSubjectReview (Kubernetes 1.26 needs the APISelfSubjectReview feature gate)',
    );
  return version;
}
const READERS = 'e2e-readers';
const REFUSED_IMPERSONATION = /^impersonation through kapi is not allowed/;

let e2e: E2E;
let reader: string;
let readerToken: string;
let outsider: string;
let outsiderToken: string;
let kapiPort: number;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  kapiPort = Number(new URL(e2e.kapiUrl).port);
  reader = await e2e.createUser('fwd-reader', PASSWORD, { groups: [READERS] });
  await e2e.grant(reader, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['get'] },
    // kube 1.35 authorizes a WebSocket exec as get and create.
    { apiGroups: [''], resources: ['pods/exec'], verbs: ['get', 'create'] },
  ]);
  outsider = await e2e.createUser('fwd-outsider', PASSWORD);
  readerToken = (await login(e2e.kapiUrl, reader, PASSWORD)).access_token;
  outsiderToken = (await login(e2e.kapiUrl, outsider, PASSWORD)).access_token;
});

afterAll(async () => {
  await e2e?.stop();
});

function statusOf(body: string): KubeStatus {
  return JSON.parse(body) as KubeStatus;
}

describe('when a request is not authenticated', () => {
  it.each([
    ['no Authorization header', [] as string[]],
    ['a token kapi did not issue', ['Authorization', 'Bearer not-a-kapi-token']],
    ['Basic credentials', ['Authorization', `Basic ${Buffer.from('admin:admin').toString('base64')}`]],
  ])('then %s gets a 401 Status and kube-apiserver never sees the request', async (_case, headers) => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const answer = await rawRequest(e2e.kapiUrl, { path: '/api/v1/namespaces', headers });
    expect(answer.status).toBe(401);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(statusOf(answer.body)).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    if (audit) expect(audit().filter((entry) => entry.path === '/api/v1/namespaces')).toEqual([]);
  });

  it('then an exec upgrade without a token gets a 401 Status, the connection is closed and nothing reaches kube-apiserver', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const path = `/api/v1/namespaces/${e2e.runId}/pods/nothing/exec?command=sh&stdin=true&stdout=true`;
    const { data, closedByServer } = await exchangeOnOneConnection(
      kapiPort,
      requestText(path, `127.0.0.1:${kapiPort}`, webSocketUpgrade()),
    );
    expect(responseCodes(data)).toEqual([401]);
    expect(closedByServer).toBe(true);
    if (audit) expect(audit().filter((entry) => entry.path.includes('/pods/'))).toEqual([]);
  });
});

describe('when an authenticated caller sends impersonation headers', () => {
  const secrets = () => `/api/v1/namespaces/${e2e.runId}/secrets`;

  it.each([
    ['Impersonate-User: admin', ['Impersonate-User', 'admin']],
    ['mixed case iMpErSoNaTe-GrOuP: system:masters', ['iMpErSoNaTe-GrOuP', 'system:masters']],
    [
      'duplicated Impersonate-Group headers',
      ['Impersonate-Group', 'system:masters', 'Impersonate-Group', 'system:masters'],
    ],
    [
      'duplicated Impersonate-User headers, the first one harmless',
      () => ['Impersonate-User', reader, 'Impersonate-User', 'admin'],
    ],
    ['Impersonate-Extra-scopes', ['Impersonate-Extra-Scopes', 'cluster-admin']],
    ['Impersonate-Uid', ['Impersonate-Uid', '0']],
    [
      'Connection: Impersonate-User with Impersonate-User: admin',
      ['Connection', 'Impersonate-User', 'Impersonate-User', 'admin'],
    ],
    ['Connection: keep-alive, iMpErSoNaTe-GrOuP with no such header', ['Connection', 'keep-alive, iMpErSoNaTe-GrOuP']],
  ])('then %s is refused with 403 by kapi and never reaches kube-apiserver', async (_case, given) => {
    const attack = typeof given === 'function' ? given() : given;
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const answer = await rawRequest(e2e.kapiUrl, { path: secrets(), headers: [...bearer(readerToken), ...attack] });
    expect(answer.status).toBe(403);
    const status = statusOf(answer.body);
    expect(status).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    expect(status.message).toMatch(REFUSED_IMPERSONATION);
    if (audit) expect(audit().filter((entry) => entry.path === secrets())).toEqual([]);
  });

  it('then an exec upgrade with Impersonate-User is refused with 403 and the connection closed', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const path = `/api/v1/namespaces/${e2e.runId}/pods/nothing/exec?command=sh&stdin=true&stdout=true`;
    const headers = webSocketUpgrade([...bearer(readerToken), 'Impersonate-User', 'admin']);
    const { data, closedByServer } = await exchangeOnOneConnection(
      kapiPort,
      requestText(path, `127.0.0.1:${kapiPort}`, headers),
    );
    expect(responseCodes(data)).toEqual([403]);
    expect(data).toMatch(/impersonation through kapi is not allowed/);
    expect(closedByServer).toBe(true);
    if (audit) expect(audit().filter((entry) => entry.path.includes('/pods/'))).toEqual([]);
  });
});

describe('when an authenticated caller’s request is forwarded', () => {
  it('then kube-apiserver sees the kapi user and groups, and a second Authorization header never reaches it', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    // If the caller's Authorization travelled on, the sandbox would take its admin token; a cluster, this bad one.
    const smuggled = e2e.sandbox?.adminToken ?? 'not-a-cluster-token';
    const review = selfSubjectReviewRequest(await servedReviewVersion());
    const answer = await rawRequest(e2e.kapiUrl, {
      method: 'POST',
      path: review.path,
      headers: [...bearer(readerToken), ...bearer(smuggled), 'Content-Type', 'application/json'],
      body: review.body,
    });
    expect(answer.status).toBe(201);
    const { userInfo } = (JSON.parse(answer.body) as { status: { userInfo: { username: string; groups: string[] } } })
      .status;
    expect(userInfo.username).toBe(reader);
    expect(userInfo.groups).toEqual(expect.arrayContaining([READERS, 'system:authenticated']));
    expect(userInfo.groups).not.toContain('system:masters');
    expect(userInfo.groups).not.toContain('system:serviceaccounts');
    if (audit) {
      const seen = audit().filter((entry) => entry.path === review.path);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ user: reader, impersonatedBy: KAPI_SERVICE_ACCOUNT, code: 201 });
    }
  });

  it('then a read the user’s RBAC allows succeeds as that user', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const answer = await rawRequest(e2e.kapiUrl, { path: '/api/v1/nodes?limit=1', headers: bearer(readerToken) });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'NodeList', apiVersion: 'v1' });
    if (audit) {
      const seen = audit().filter((entry) => entry.path === '/api/v1/nodes' && !isBackground(entry));
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ user: reader, impersonatedBy: KAPI_SERVICE_ACCOUNT, verb: 'list', code: 200 });
    }
  });

  it('then a user without groups is still in system:authenticated for RBAC, though kapi does not send that group', async () => {
    // kube-apiserver adds system:authenticated to every impersonated user; kapi leaves it out to save kube one
    // authorization check per request. A binding to the group must still apply (run namespace only).
    const namespace = e2e.runId;
    const name = e2e.name('authenticated-readers');
    await e2e.admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      body: { metadata: { name, labels: { [RUN_LABEL]: e2e.runId } }, data: { seen: 'yes' } },
    });
    await e2e.admin.request({
      method: 'POST',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`,
      body: {
        metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
        rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [name], verbs: ['get'] }],
      },
    });
    await e2e.admin.request({
      method: 'POST',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
      body: {
        metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
      },
    });
    const path = `/api/v1/namespaces/${namespace}/configmaps/${name}`;
    // RBAC caches on a real cluster take a moment to see a new binding.
    await waitFor(async () => (await rawRequest(e2e.kapiUrl, { path, headers: bearer(outsiderToken) })).status === 200);
    const answer = await rawRequest(e2e.kapiUrl, { path, headers: bearer(outsiderToken) });
    expect(JSON.parse(answer.body)).toMatchObject({ data: { seen: 'yes' } });
    const request = selfSubjectReviewRequest(await servedReviewVersion());
    const review = await rawRequest(e2e.kapiUrl, {
      method: 'POST',
      path: request.path,
      headers: [...bearer(outsiderToken), 'Content-Type', 'application/json'],
      body: request.body,
    });
    expect(review.status).toBe(201);
    const { userInfo } = (JSON.parse(review.body) as { status: { userInfo: { username: string; groups: string[] } } })
      .status;
    expect(userInfo.username).toBe(outsider);
    expect(userInfo.groups).toEqual(['system:authenticated']);
  });

  it('then kube-apiserver’s 403 for a user without rights comes back unchanged, naming the kapi user', async () => {
    const answer = await rawRequest(e2e.kapiUrl, { path: '/api/v1/nodes', headers: bearer(outsiderToken) });
    expect(answer.status).toBe(403);
    const status = statusOf(answer.body);
    expect(status).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    expect(status.message).toContain(`User "${outsider}" cannot list resource "nodes"`);
    expect(status).toEqual(await kubeErrorAs(e2e.admin, outsider, '/api/v1/nodes'));
  });

  it('then kube-apiserver’s 404 for a missing namespace comes back unchanged', async () => {
    const path = `/api/v1/namespaces/${e2e.name('absent')}/configmaps/nothing`;
    const answer = await rawRequest(e2e.kapiUrl, { path, headers: bearer(readerToken) });
    expect(answer.status).toBe(404);
    const status = statusOf(answer.body);
    expect(status).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    expect(status).toEqual(await kubeErrorAs(e2e.admin, reader, path));
  });

  it('then a node watch relays each change made through the Kubernetes API as it happens, the stream staying open', async () => {
    const audit = e2e.sandbox && auditSince(e2e.sandbox);
    const selector = encodeURIComponent(`${RUN_LABEL}=${e2e.runId}`);
    // As client-go does: list, then watch from the list's resourceVersion (one kube-apiserver's watch cache has
    // served, unlike a write's, which it may not have reached yet: 504 "Too large resource version").
    const listed = await rawRequest(e2e.kapiUrl, {
      path: `/api/v1/nodes?labelSelector=${selector}`,
      headers: bearer(readerToken),
    });
    expect(listed.status).toBe(200);
    const { resourceVersion } = (JSON.parse(listed.body) as { metadata: { resourceVersion: string } }).metadata;
    const watch = await openWatch(
      e2e.kapiUrl,
      `/api/v1/nodes?watch=1&resourceVersion=${resourceVersion}&labelSelector=${selector}`,
      bearer(readerToken),
    );
    try {
      // The head arrives before any event: the watch is streamed, not buffered.
      expect(watch.status).toBe(200);
      expect(watch.headers['content-type']).toMatch(/^application\/json/);
      expect(watch.events).toEqual([]);

      const name = e2e.name('fwd-watched');
      await e2e.admin.request({
        method: 'POST',
        path: '/api/v1/nodes',
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { [RUN_LABEL]: e2e.runId } } },
      });
      // Relayed before the next write is even made: event by event, not held until a later one or the end.
      await waitFor(() => watch.events.some(({ event }) => event.type === 'ADDED'));
      const added = watch.events.find(({ event }) => event.type === 'ADDED')!;
      expect(added.event.object.metadata?.name).toBe(name);

      await e2e.admin.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${name}`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { changed: 'yes' } } },
      });
      // A real cluster's node controller may modify the node too; only the label tells this change apart.
      const isThePatch = ({ event }: (typeof watch.events)[number]) =>
        event.type === 'MODIFIED' && event.object.metadata?.labels?.changed === 'yes';
      await waitFor(() => watch.events.some(isThePatch));
      const modified = watch.events.find(isThePatch)!;
      expect(modified.event.object.metadata?.name).toBe(name);
      expect(watch.events.indexOf(modified)).toBeGreaterThan(watch.events.indexOf(added));
    } finally {
      watch.close();
    }
    if (audit) {
      const seen = audit().filter((entry) => entry.path === '/api/v1/nodes' && !isBackground(entry));
      expect(seen.map((entry) => entry.verb)).toEqual(['list', 'watch']);
      for (const entry of seen)
        expect(entry).toMatchObject({ user: reader, impersonatedBy: KAPI_SERVICE_ACCOUNT, code: 200 });
    }
  });
});

describe('when kube-apiserver refuses an upgrade', () => {
  it.each([
    ['into a pod the user may not exec into', () => outsiderToken, 'some-pod', 403],
    ['into a missing pod', () => readerToken, 'missing-pod', 404],
  ])(
    'then an exec %s gets kube’s non-101 answer, the connection is closed, and a pipelined request gets no answer',
    async (_case, token, pod, code) => {
      const audit = e2e.sandbox && auditSince(e2e.sandbox);
      const host = `127.0.0.1:${kapiPort}`;
      const exec = `/api/v1/namespaces/${e2e.runId}/pods/${pod}/exec?command=sh&stdin=true&stdout=true`;
      const pipelined = `/api/v1/namespaces/${e2e.runId}/configmaps/${e2e.name('pipelined')}`;
      const { data, closedByServer } = await exchangeOnOneConnection(
        kapiPort,
        requestText(exec, host, webSocketUpgrade(bearer(token()))) + requestText(pipelined, host, bearer(token())),
      );
      expect(responseCodes(data)).toEqual([code]);
      expect(data).toMatch(/\r\nConnection: close\r\n/i);
      const body = data.slice(data.indexOf('\r\n\r\n') + 4);
      expect(statusOf(body)).toMatchObject({ kind: 'Status', code });
      expect(closedByServer).toBe(true);
      if (audit) {
        expect(audit().filter((entry) => entry.path.endsWith(`/pods/${pod}/exec`))).toHaveLength(1);
        expect(audit().filter((entry) => entry.path === pipelined)).toEqual([]);
      }
    },
  );
});

describeOnSandbox('a running container to exec into (a kubelet with a container runtime)')(
  'when exec upgrades to WebSocket with the token in a subprotocol',
  () => {
    it('then the v5.channel.k8s.io stream relays stdin to stdout as the kapi user', async () => {
      const pods = await e2e.admin.request<V1PodList>({
        path: '/api/v1/pods',
        query: { fieldSelector: 'status.phase=Running', limit: 1 },
      });
      const pod = pods.items[0]!;
      const audit = auditSince(e2e.sandbox!);
      const url =
        `${e2e.kapiUrl.replace('http', 'ws')}/api/v1/namespaces/${pod.metadata!.namespace}/pods/${pod.metadata!.name}` +
        `/exec?container=${pod.spec!.containers[0]!.name}&command=cat&stdin=true&stdout=true`;
      const tokenProtocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(readerToken).toString('base64url')}`;
      const ws = new WebSocket(url, ['v5.channel.k8s.io', tokenProtocol]);
      try {
        const echoed = await new Promise<Buffer>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no echo within 5 s')), 5_000);
          ws.on('error', reject);
          ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
          ws.on('open', () => ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('hello through kapi')])));
          ws.on('message', (data: Buffer) => {
            if (data[0] !== 1) return;
            clearTimeout(timer);
            resolve(data.subarray(1));
          });
        });
        expect(ws.protocol).toBe('v5.channel.k8s.io');
        expect(echoed.toString('utf8')).toBe('hello through kapi');
      } finally {
        ws.terminate();
      }
      const exec = audit().filter((entry) => entry.path.endsWith(`/pods/${pod.metadata!.name}/exec`));
      expect(exec).toHaveLength(1);
      expect(exec[0]).toMatchObject({ user: reader, impersonatedBy: KAPI_SERVICE_ACCOUNT, code: 101 });
    });
  },
);
