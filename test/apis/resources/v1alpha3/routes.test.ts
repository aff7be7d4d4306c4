import type { V1Node } from '@kubernetes/client-node';
import request from 'supertest';
import { ALLOCATION_ANNOTATIONS as A } from '../../../../src/apis/resources/v1alpha3/allocation-annotations.js';
import type { AccessGuard, ResourceAttributes } from '../../../../src/auth/identity.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { createApp } from '../../../../src/server/app.js';
import { ForbiddenError } from '../../../../src/server/errors.js';
import { deepFreeze, FixedAllocations, InMemoryNodeCache, node } from './fixtures.js';

const BASE = '/kapis/resources.kapi.io/v1alpha3';

const NODES = deepFreeze([
  node('master-1', {
    created: '2024-01-01T00:00:00Z',
    labels: { 'node-role.kubernetes.io/control-plane': '', role: 'master' },
    annotations: {
      'projectcalico.org/IPv4Address': '10.0.0.1/24',
      'node.alpha.kubernetes.io/ttl': '0',
      'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      'kubeadm.alpha.kubernetes.io/cri-socket': '{"socket":"unix:///run/containerd/containerd.sock"}',
    },
  }),
  node('worker-1', { created: '2024-02-01T00:00:00Z', labels: { role: 'worker' } }),
  node('worker-2', { created: '2024-03-01T00:00:00Z', labels: { role: 'worker' }, unschedulable: true }),
  node('worker-3', {
    created: '2024-04-01T00:00:00Z',
    labels: { role: 'worker' },
    conditions: [{ type: 'Ready', status: 'Unknown' }],
  }),
]);

function setup(options: { guard?: AccessGuard } = {}) {
  const nodes = new InMemoryNodeCache(NODES);
  const allocations = new FixedAllocations({
    'worker-1': {
      cpuRequestsMilli: 1250,
      cpuLimitsMilli: 2000,
      memoryRequestsBytes: 3 * 2 ** 30,
      memoryLimitsBytes: 4 * 2 ** 30,
    },
  });
  const app = createApp({
    logger: createLogger('error', { silent: true }),
    readiness: [],
    nodes,
    allocations,
    ...(options.guard && { guard: options.guard }),
  });
  return { app, nodes };
}

function itemNames(body: { items: V1Node[] }): string[] {
  return body.items.map((n) => n.metadata?.name ?? '');
}

describe('GET /kapis/resources.kapi.io/v1alpha3/nodes', () => {
  it('when listing without parameters, then every node is returned newest first with totalItems', async () => {
    const res = await request(setup().app).get(`${BASE}/nodes`).expect(200).expect('Content-Type', /json/);
    expect(res.body.totalItems).toBe(4);
    expect(itemNames(res.body)).toEqual(['worker-3', 'worker-2', 'worker-1', 'master-1']);
    expect(Object.keys(res.body)).toEqual(['items', 'totalItems']);
  });

  it("when a node is returned, then it carries the seed's metadata fields, kind and apiVersion", async () => {
    const res = await request(setup().app).get(`${BASE}/nodes?names=master-1`).expect(200);
    const [item] = res.body.items;
    expect(item.kind).toBe('Node');
    expect(item.apiVersion).toBe('v1');
    expect(item.metadata).toMatchObject({
      name: 'master-1',
      selfLink: '/api/v1/nodes/master-1',
      uid: 'uid-master-1',
      resourceVersion: '100',
      creationTimestamp: '2024-01-01T00:00:00Z',
      labels: { 'node-role.kubernetes.io/control-plane': '', role: 'master' },
    });
    expect(item.metadata.annotations['kubeadm.alpha.kubernetes.io/cri-socket']).toBe(
      '{"socket":"unix:///run/containerd/containerd.sock"}',
    );
    expect(item.spec).toBeDefined();
    expect(item.status.allocatable).toEqual({ cpu: '4', memory: '8Gi', pods: '110' });
  });

  it('when a node has pods, then its item has the allocation annotations', async () => {
    const res = await request(setup().app).get(`${BASE}/nodes?names=worker-1`).expect(200);
    expect(res.body.items[0].metadata.annotations).toMatchObject({
      [A.cpuRequests]: '1250m',
      [A.cpuLimits]: '2',
      [A.memoryRequests]: '3Gi',
      [A.memoryLimits]: '4Gi',
      [A.cpuRequestsFraction]: '31%',
      [A.cpuLimitsFraction]: '50%',
      [A.memoryRequestsFraction]: '37%',
      [A.memoryLimitsFraction]: '50%',
    });
  });

  it.each([
    ['limit=2&sortBy=name&ascending=true', ['master-1', 'worker-1'], 4],
    ['limit=2&page=2&sortBy=name&ascending=true', ['worker-2', 'worker-3'], 4],
    ['limit=2&page=5', [], 4],
    ['limit=0', [], 4],
    ['sortBy=createTime&ascending=true', ['master-1', 'worker-1', 'worker-2', 'worker-3'], 4],
    ['limit=2&sortBy=name&ascending=1', ['master-1', 'worker-1'], 4],
    ['limit=2&sortBy=name&ascending=T', ['master-1', 'worker-1'], 4],
    ['limit=2&sortBy=name&ascending=False', ['worker-3', 'worker-2'], 4],
    ['labelSelector=role%3Dworker&limit=1', ['worker-3'], 3],
    ['label=role%20in%20(master)', ['master-1'], 1],
    [
      'labelSelector=role%3Dworker&label=!node-role.kubernetes.io%2Fcontrol-plane',
      ['worker-3', 'worker-2', 'worker-1'],
      3,
    ],
    ['name=worker&status=running', ['worker-1'], 1],
    ['status=unschedulable', ['worker-2'], 1],
    ['status=warning', ['worker-3'], 1],
    ['uid=uid-worker-2', ['worker-2'], 1],
    ['names=worker-1,master-1,nope', ['worker-1', 'master-1'], 2],
    ['unknown=1&fieldSelector=x&limit=1', ['worker-3'], 4],
    ['limit=1&limit=1', ['worker-3'], 4],
  ])('when the query is %s, then the page and the count are right', async (query, expected, total) => {
    const res = await request(setup().app).get(`${BASE}/nodes?${query}`).expect(200);
    expect(itemNames(res.body)).toEqual(expected);
    expect(res.body.totalItems).toBe(total);
  });

  it.each([
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['limit=-2', 'limit'],
    ['limit=many', 'limit'],
    ['ascending=maybe', 'ascending'],
    ['ascending=yes', 'ascending'],
    ['sortBy=age', 'sortBy'],
    ['status=broken', 'status'],
    ['labelSelector=a%20in%20(b', 'labelSelector'],
    ['label=%3Dx', 'label'],
    ['limit=1&limit=2', 'limit'],
    ['name[a]=b', 'name'],
  ])('when the query is %s, then a 400 Status names the parameter', async (query, parameter) => {
    const res = await request(setup().app).get(`${BASE}/nodes?${query}`).expect(400).expect('Content-Type', /json/);
    expect(res.body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
      details: { causes: [{ field: parameter }] },
    });
    expect(res.body.message).toContain(`"${parameter}"`);
  });

  it('when the same list is asked many times, then the cached nodes are never mutated', async () => {
    const { app } = setup();
    const before = structuredClone(NODES);
    for (let i = 0; i < 3; i++) await request(app).get(`${BASE}/nodes?limit=10&sortBy=name`).expect(200);
    await request(app).get(`${BASE}/nodes/worker-1`).expect(200);
    expect(NODES).toEqual(before);
    expect(NODES[1]?.metadata?.annotations).toBeUndefined();
  });

  it('when many requests are served, then the cache is listed once per revision, never per request', async () => {
    const { app, nodes } = setup();
    for (const query of ['sortBy=name&limit=1', 'sortBy=name&limit=1&page=2', 'sortBy=name&label=role%3Dworker']) {
      await request(app).get(`${BASE}/nodes?${query}`).expect(200);
    }
    expect(nodes.listCalls).toBe(1);
  });

  it('when the request is HEAD, then it is answered like GET without a body', async () => {
    const res = await request(setup().app).head(`${BASE}/nodes`).expect(200);
    expect(res.text).toBeUndefined();
  });

  it('when the cache changes, then the next list reflects it', async () => {
    const { app, nodes } = setup();
    await request(app).get(`${BASE}/nodes?sortBy=name`).expect(200);
    nodes.set([...NODES, node('added')]);
    const res = await request(app).get(`${BASE}/nodes?sortBy=name&ascending=true&limit=1`).expect(200);
    expect(itemNames(res.body)).toEqual(['added']);
    expect(res.body.totalItems).toBe(5);
  });

  it.each(['post', 'put', 'patch', 'delete'] as const)('when the method is %s, then 405 Status', async (method) => {
    const res = await request(setup().app)[method](`${BASE}/nodes`).expect(405);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    expect(res.headers['allow']).toBe('GET, HEAD');
  });
});

describe('GET /kapis/resources.kapi.io/v1alpha3/nodes/{name}', () => {
  it('when the node exists, then it is returned annotated, with kind and selfLink', async () => {
    const res = await request(setup().app).get(`${BASE}/nodes/worker-1`).expect(200);
    expect(res.body).toMatchObject({
      kind: 'Node',
      apiVersion: 'v1',
      metadata: { name: 'worker-1', selfLink: '/api/v1/nodes/worker-1', annotations: { [A.cpuRequests]: '1250m' } },
    });
  });

  it("when the node does not exist, then 404 Status with kube-apiserver's message (KubeSphere: 500)", async () => {
    const res = await request(setup().app).get(`${BASE}/nodes/ghost`).expect(404);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'nodes "ghost" not found',
      reason: 'NotFound',
      details: { name: 'ghost', kind: 'nodes' },
      code: 404,
    });
  });

  it.each(['post', 'put', 'patch', 'delete'] as const)('when the method is %s, then 405 Status', async (method) => {
    const res = await request(setup().app)[method](`${BASE}/nodes/worker-1`).expect(405);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
  });
});

describe('access to the node routes', () => {
  function recordingGuard(denied: (a: ResourceAttributes) => boolean) {
    const seen: ResourceAttributes[] = [];
    const guard: AccessGuard = (attributes) => (req, _res, next) => {
      const wanted = typeof attributes === 'function' ? attributes(req) : attributes;
      seen.push(wanted);
      next(denied(wanted) ? new ForbiddenError(`nodes is forbidden: cannot ${wanted.verb} nodes`) : undefined);
    };
    return { guard, seen };
  }

  it('when listing, then the guard is asked for list nodes before anything is read', async () => {
    const { guard, seen } = recordingGuard(() => true);
    const res = await request(setup({ guard }).app).get(`${BASE}/nodes?page=0`).expect(403);
    expect(seen).toEqual([{ verb: 'list', resource: 'nodes' }]);
    expect(res.body).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
  });

  it('when getting one node, then the guard is asked for get on that name', async () => {
    const { guard, seen } = recordingGuard((a) => a.name === 'master-1');
    await request(setup({ guard }).app).get(`${BASE}/nodes/worker-1`).expect(200);
    await request(setup({ guard }).app).get(`${BASE}/nodes/master-1`).expect(403);
    expect(seen).toEqual([
      { verb: 'get', resource: 'nodes', name: 'worker-1' },
      { verb: 'get', resource: 'nodes', name: 'master-1' },
    ]);
  });
});
