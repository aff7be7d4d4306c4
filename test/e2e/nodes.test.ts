/**
 * The node listing against the sandbox, or a real cluster with KUBECONFIG: nodes made through the Kubernetes API
 * show up in kapi's watched cache, and every query parameter behaves as SPEC §4 says. Queries are scoped to this
 * run's nodes with a label selector, so a real cluster's own nodes do not disturb them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getJson, login } from './client.js';
import { RUN_LABEL, startE2E, waitFor, type E2E } from './harness.js';

interface NodeItem {
  kind: string;
  apiVersion: string;
  metadata: {
    name: string;
    selfLink: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { unschedulable?: boolean };
  status?: unknown;
}
interface NodeList {
  items: NodeItem[];
  totalItems: number;
}
interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
}

const PASSWORD = 'e2e-Reader-password-1';
let e2e: E2E;
let token: string;
let nodesUrl: string;
let scope: string;

function nodeBody(
  name: string,
  extra: { labels?: Record<string, string>; unschedulable?: boolean; ready?: 'True' | 'False' } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { [RUN_LABEL]: e2e.runId, 'node-role.kubernetes.io/worker': '', ...extra.labels },
      annotations: { 'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'csi.tigera.io': name }) },
    },
    spec: extra.unschedulable ? { unschedulable: true } : {},
    status: {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: extra.ready
        ? [{ type: 'Ready', status: extra.ready, reason: 'E2E', message: 'set by the e2e suite' }]
        : [],
    },
  };
}

async function list(query: string): Promise<{ status: number; body: NodeList }> {
  return getJson<NodeList>(`${nodesUrl}?${scope}${query ? `&${query}` : ''}`, token);
}

beforeAll(async () => {
  e2e = await startE2E();
  nodesUrl = `${e2e.kapiUrl}/kapis/resources.kapi.io/v1alpha3/nodes`;
  scope = `labelSelector=${encodeURIComponent(`${RUN_LABEL}=${e2e.runId}`)}`;
  const user = await e2e.createUser('reader', PASSWORD);
  await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }]);
  token = (await login(e2e.kapiUrl, user, PASSWORD)).access_token;
});

afterAll(async () => {
  await e2e?.stop();
});

describe('when nodes change through the Kubernetes API', () => {
  it('then a created node is listed, a change is seen and a deleted node is gone, from the watched cache', async () => {
    const name = e2e.name('lifecycle');
    await e2e.admin.request({ method: 'POST', path: '/api/v1/nodes', body: nodeBody(name) });
    // polled until seen (the listing is never a list call per request, so only the watch can bring it in)
    await waitFor(async () => (await list(`names=${name}`)).body.totalItems === 1);

    await e2e.admin.request({
      method: 'PATCH',
      path: `/api/v1/nodes/${name}`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { 'e2e.kapi.io/changed': 'yes' } } },
    });
    await waitFor(async () => (await list('label=e2e.kapi.io/changed=yes')).body.totalItems === 1);

    await e2e.admin.request({ method: 'DELETE', path: `/api/v1/nodes/${name}` });
    await waitFor(async () => (await list(`names=${name}`)).body.totalItems === 0);
  });
});

describe('when listing with query parameters', () => {
  let alpha: string;
  let bravo: string;
  let charlie: string;

  beforeAll(async () => {
    // Creation timestamps have one-second resolution: space the nodes so their order is known.
    alpha = e2e.name('q-alpha');
    bravo = e2e.name('q-bravo');
    charlie = e2e.name('q-charlie');
    await e2e.admin.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: nodeBody(bravo, { labels: { tier: 'gold' }, ready: 'True' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await e2e.admin.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: nodeBody(alpha, { labels: { tier: 'silver' }, unschedulable: true }),
    });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await e2e.admin.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: nodeBody(charlie, { labels: { tier: 'gold' }, ready: 'False' }),
    });
    await waitFor(async () => (await list('')).body.totalItems === 3);
  });

  const names = (body: NodeList) => body.items.map((item) => item.metadata.name);

  it('then the default order is newest first and totalItems counts every match', async () => {
    const { status, body } = await list('');
    expect(status).toBe(200);
    expect(body.totalItems).toBe(3);
    expect(names(body)).toEqual([charlie, alpha, bravo]);
  });

  it('then sortBy=name&ascending=true sorts by name, and createTime is an alias of creationTimestamp', async () => {
    expect(names((await list('sortBy=name&ascending=true')).body)).toEqual([alpha, bravo, charlie]);
    expect(names((await list('sortBy=name&ascending=false')).body)).toEqual([charlie, bravo, alpha]);
    expect(names((await list('sortBy=createTime&ascending=true')).body)).toEqual([bravo, alpha, charlie]);
    // KubeSphere reads ascending with Go's strconv.ParseBool, so its clients may send any of its spellings.
    expect(names((await list('sortBy=name&ascending=1')).body)).toEqual([alpha, bravo, charlie]);
    expect(names((await list('sortBy=name&ascending=F')).body)).toEqual([charlie, bravo, alpha]);
  });

  it('then page and limit cut the sorted list and keep the total', async () => {
    const second = (await list('sortBy=name&ascending=true&limit=2&page=2')).body;
    expect(names(second)).toEqual([charlie]);
    expect(second.totalItems).toBe(3);
    const beyond = (await list('limit=2&page=9')).body;
    expect(beyond).toEqual({ items: [], totalItems: 3 });
    const none = (await list('limit=0')).body;
    expect(none).toEqual({ items: [], totalItems: 3 });
  });

  it('then name, names, uid, label and status filter as KubeSphere does', async () => {
    expect(names((await list('name=q-br')).body)).toEqual([bravo]);
    expect(names((await list(`names=${alpha},${charlie}&sortBy=name&ascending=true`)).body)).toEqual([alpha, charlie]);
    const uid = (await list(`names=${bravo}`)).body.items[0]!.metadata.uid;
    expect(names((await list(`uid=${uid}`)).body)).toEqual([bravo]);
    expect(names((await list('label=tier%3Dgold&sortBy=name&ascending=true')).body)).toEqual([bravo, charlie]);
    expect(names((await list('label=tier+notin+(gold)')).body)).toEqual([alpha]);
    expect(names((await list('status=unschedulable')).body)).toEqual([alpha]);
    expect(names((await list('status=warning')).body)).toContain(charlie);
    expect(names((await list('status=warning')).body)).not.toContain(alpha);
  });

  it('then unknown parameters are ignored instead of emptying the list', async () => {
    const { status, body } = await list('colour=blue&fieldSelector=whatever');
    expect(status).toBe(200);
    expect(body.totalItems).toBe(3);
  });

  it('then each item carries the seed metadata fields, a selfLink and the allocation annotations', async () => {
    const item = (await list(`names=${bravo}`)).body.items[0]!;
    expect(item.kind).toBe('Node');
    expect(item.metadata.selfLink).toBe(`/api/v1/nodes/${bravo}`);
    expect(item.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(item.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(new Date(item.metadata.creationTimestamp).toISOString()).toBe(
      item.metadata.creationTimestamp.replace('Z', '.000Z'),
    );
    expect(item.metadata.labels?.['node-role.kubernetes.io/worker']).toBe('');
    expect(JSON.parse(item.metadata.annotations!['csi.volume.kubernetes.io/nodeid']!)).toEqual({
      'csi.tigera.io': bravo,
    });
    expect(item.metadata.annotations!['node.kapi.io/cpu-requests']).toBeDefined();
  });

  it('then a pod bound to a node shows in its allocation annotations', async () => {
    await e2e.admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${e2e.runId}/pods`,
      body: {
        metadata: { name: 'alloc' },
        spec: {
          nodeName: bravo,
          containers: [
            {
              name: 'app',
              image: 'registry.invalid/none',
              resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } },
            },
          ],
        },
      },
    });
    await waitFor(
      async () =>
        (await list(`names=${bravo}`)).body.items[0]?.metadata.annotations?.['node.kapi.io/cpu-requests'] === '500m',
    );
    const annotations = (await list(`names=${bravo}`)).body.items[0]!.metadata.annotations!;
    expect(annotations['node.kapi.io/cpu-limits']).toBe('1');
    expect(annotations['node.kapi.io/memory-requests']).toBe('1Gi');
    expect(annotations['node.kapi.io/cpu-requests-fraction']).toBe('12%');
  });

  it('then the allocation sums print as resource.Quantity does: 1G + 500M is 1500M, 1Gi + 512Mi is 1536Mi', async () => {
    const podOn = (name: string, memory: { requests: string; limits: string }, cpu: string) =>
      e2e.admin.request({
        method: 'POST',
        path: `/api/v1/namespaces/${e2e.runId}/pods`,
        body: {
          metadata: { name },
          spec: {
            nodeName: charlie,
            containers: [
              {
                name: 'app',
                image: 'registry.invalid/none',
                resources: {
                  requests: { cpu, memory: memory.requests },
                  limits: { cpu, memory: memory.limits },
                },
              },
            ],
          },
        },
      });
    await podOn('decimal-a', { requests: '1G', limits: '1Gi' }, '1.5');
    await podOn('decimal-b', { requests: '500M', limits: '512Mi' }, '250m');
    await waitFor(
      async () =>
        (await list(`names=${charlie}`)).body.items[0]?.metadata.annotations?.['node.kapi.io/memory-requests'] ===
        '1500M',
    );
    const annotations = (await list(`names=${charlie}`)).body.items[0]!.metadata.annotations!;
    expect(annotations['node.kapi.io/memory-limits']).toBe('1536Mi');
    expect(annotations['node.kapi.io/cpu-requests']).toBe('1750m');
    expect(annotations['node.kapi.io/memory-requests-fraction']).toBe('17%');
  });

  it('then GET by name returns the node, and an absent name is a 404 Status', async () => {
    const found = await getJson<NodeItem>(`${nodesUrl}/${alpha}`, token);
    expect(found.status).toBe(200);
    expect(found.body.metadata.name).toBe(alpha);
    const missing = await getJson<Status>(`${nodesUrl}/${e2e.name('absent')}`, token);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it.each([
    ['page=0', 'page'],
    ['page=x', 'page'],
    ['limit=-2', 'limit'],
    ['limit=ten', 'limit'],
    ['ascending=maybe', 'ascending'],
    ['labelSelector=a%20in%20(', 'labelSelector'],
    ['label=%3D%3Dx', 'label'],
    ['status=sleepy', 'status'],
    ['sortBy=colour', 'sortBy'],
  ])('then %s is a 400 Status naming %s', async (query, parameter) => {
    const { status, body } = await getJson<Status>(`${nodesUrl}?${query}`, token);
    expect(status).toBe(400);
    expect(body).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(body.message).toContain(parameter);
  });
});
