import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createNodeCache, type WatchedNodes } from '../../src/kube/node-cache.js';
import { createPodAllocations, NodeAllocationIndex, type PodAllocations } from '../../src/kube/pod-allocations.js';
import { podAllocation } from '../../src/kube/pod-resources.js';
import { createLogger } from '../../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from './fake-kube-apiserver.js';

/**
 * The caches against the sandbox kube-apiserver, as kapi runs them: kapi's service-account identity, real list
 * paging, watches, bookmarks and 410s. Changes go in through the API as the admin, like kubectl would.
 */
describe('caches against the sandbox', () => {
  let sandbox: Sandbox;
  let connection: KubeConnection;
  let adminConnection: KubeConnection;
  let admin: KubeClient;
  let nodes: WatchedNodes;
  let pods: PodAllocations;

  beforeAll(async () => {
    sandbox = await startSandbox({ nodes: 6, podsPerNode: 4, crdDir: '/nonexistent', bookmarkIntervalMs: 200 });
    connection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
    adminConnection = connectionFor(tokenAccess(sandbox.url, sandbox.adminToken), 'sandbox');
    admin = new KubeClient(adminConnection);
    const client = new KubeClient(connection);
    const logger = createLogger('error', { silent: true });
    // a slow first retry keeps the "changes while disconnected" window below open long enough to script
    const tuning = { pageSize: 5, backoff: { initialMs: 600, maxMs: 2000 } };
    nodes = createNodeCache(client, logger, tuning);
    pods = createPodAllocations(client, logger, tuning);
    nodes.start();
    pods.start();
    await Promise.all([nodes.waitForSync(), pods.waitForSync()]);
  });

  afterAll(async () => {
    await Promise.all([nodes?.stop(), pods?.stop()]);
    connection?.close();
    adminConnection?.close();
    await sandbox?.stop();
  });

  const nodeNames = () =>
    nodes
      .list()
      .map((n) => n.metadata!.name!)
      .sort();

  it('when synced, then the caches hold what the API lists, and allocations match a recount of the pods', async () => {
    const listed = await admin.request<{ items: { metadata: { name: string } }[] }>({ path: '/api/v1/nodes' });
    expect(nodeNames()).toEqual(listed.items.map((n) => n.metadata.name).sort());
    expect(nodes.readiness.notReadyReason()).toBeUndefined();
    expect(pods.readiness.notReadyReason()).toBeUndefined();

    const allPods = await admin.request<{ items: V1Pod[] }>({ path: '/api/v1/pods' });
    const recount = new NodeAllocationIndex();
    for (const pod of allPods.items) recount.add(podAllocation(pod));
    for (const name of nodeNames()) expect(pods.allocatedOn(name)).toEqual(recount.allocatedOn(name));
    expect(pods.allocatedOn(nodeNames()[0]!).cpuRequestsMilli).toBeGreaterThan(0);
  });

  it('when a node is created, labelled and deleted through the API, then the cache follows within a second', async () => {
    await admin.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'added-1' } },
    });
    await eventually(() => expect(nodes.get('added-1')).toBeDefined());

    await admin.request({
      method: 'PATCH',
      path: '/api/v1/nodes/added-1',
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { zone: 'east' } } },
    });
    await eventually(() => expect(nodes.get('added-1')?.metadata?.labels?.zone).toBe('east'));

    await admin.request({ method: 'DELETE', path: '/api/v1/nodes/added-1' });
    await eventually(() => expect(nodes.get('added-1')).toBeUndefined());
  });

  it('when a pod is bound to a node and then deleted, then that node allocation follows within a second', async () => {
    const node = nodeNames()[0]!;
    const before = pods.allocatedOn(node);
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces/default/pods',
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'alloc-check' },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '123m' } } }] },
      },
    });
    await eventually(() => expect(pods.allocatedOn(node).cpuRequestsMilli).toBe(before.cpuRequestsMilli + 123));

    await admin.request({ method: 'DELETE', path: '/api/v1/namespaces/default/pods/alloc-check' });
    await eventually(() => expect(pods.allocatedOn(node)).toEqual(before));
  });

  it('when watch history is compacted while watches are cut, then the caches relist and catch up', async () => {
    const listsBefore = sandbox.audit.filter((e) => e.verb === 'list' && e.path === '/api/v1/nodes').length;
    const gone = nodeNames()[1]!;

    sandbox.dropWatches();
    await admin.request({ method: 'POST', path: '/api/v1/nodes', body: { metadata: { name: 'while-cut' } } });
    await admin.request({ method: 'DELETE', path: `/api/v1/nodes/${gone}` });
    sandbox.compactHistory(); // the versions the caches hold are now too old: 410 on re-watch

    await eventually(() => {
      expect(nodes.get('while-cut')).toBeDefined();
      expect(nodes.get(gone)).toBeUndefined();
    });
    const lists = sandbox.audit.filter((e) => e.verb === 'list' && e.path === '/api/v1/nodes').length;
    expect(lists).toBeGreaterThan(listsBefore);
    await eventually(() => expect(nodes.readiness.notReadyReason()).toBeUndefined());
  });
});
