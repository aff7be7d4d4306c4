import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createNodeCache } from '../../src/kube/node-cache.js';
import { createPodAllocations } from '../../src/kube/pod-allocations.js';
import { createLogger } from '../../src/observability/logger.js';

/**
 * What the caches cost in heap. The objects are served from a worker thread (its own heap), so the main heap holds
 * only what the caches keep. SPEC §11 scale (5,000 nodes, 50,000 pods) with KAPI_MEMORY_FULL=1; a tenth by default,
 * which keeps the check fast and the per-object budget the same.
 */
const scale = process.env.KAPI_MEMORY_FULL === '1' ? 1 : 0.1;
const NODES = Math.round(5000 * scale);
const PODS = Math.round(50_000 * scale);

const server = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { nodes, pods } = workerData;
const node = (i) => ({
  metadata: {
    name: 'node-' + String(i).padStart(5, '0'), uid: 'e0a4c2b6-5d1f-4c59-9f0e-' + String(i).padStart(12, '0'),
    resourceVersion: String(1000 + i), creationTimestamp: '2024-05-01T10:00:00Z',
    labels: { 'kubernetes.io/hostname': 'node-' + i, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
      'node.kubernetes.io/instance-type': 'm5.xlarge', 'topology.kubernetes.io/zone': 'zone-' + (i % 3),
      'topology.kubernetes.io/region': 'region-1', 'node-role.kubernetes.io/worker': '' },
    annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': 'i-0' + i }) },
    managedFields: Array.from({ length: 4 }, (_, k) => ({ manager: 'kubelet', operation: 'Update', apiVersion: 'v1',
      time: '2024-05-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:conditions': { k: {} } } } })),
  },
  spec: { podCIDR: '10.244.' + (i % 250) + '.0/24', providerID: 'aws:///zone/i-0' + i },
  status: {
    capacity: { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' },
    allocatable: { cpu: '3800m', memory: '15Gi', pods: '110', 'ephemeral-storage': '90Gi' },
    conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((type) => ({ type,
      status: type === 'Ready' ? 'True' : 'False', lastHeartbeatTime: '2024-05-01T10:00:00Z',
      lastTransitionTime: '2024-05-01T10:00:00Z', reason: 'Kubelet' + type, message: 'kubelet reports ' + type })),
    addresses: [{ type: 'InternalIP', address: '10.0.' + (i >> 8) + '.' + (i & 255) }, { type: 'Hostname', address: 'node-' + i }],
    nodeInfo: { machineID: 'm' + i, systemUUID: 's' + i, bootID: 'b' + i, kernelVersion: '6.1.0', osImage: 'Ubuntu 22.04',
      containerRuntimeVersion: 'containerd://1.7.2', kubeletVersion: 'v1.30.1', kubeProxyVersion: 'v1.30.1',
      operatingSystem: 'linux', architecture: 'amd64' },
    images: Array.from({ length: 8 }, (_, k) => ({ names: ['registry.example/app-' + k + '@sha256:' + 'ab'.repeat(32),
      'registry.example/app-' + k + ':v1'], sizeBytes: 1e8 + k })),
  },
});
const pod = (i) => ({
  metadata: { name: 'app-' + i + '-7d9c8b6f5-x' + (i % 9999), namespace: 'ns-' + (i % 200), uid: 'pod-uid-' + i,
    resourceVersion: String(100000 + i), labels: { app: 'app-' + (i % 500), 'pod-template-hash': '7d9c8b6f5' },
    managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:metadata': {} } }] },
  spec: { nodeName: 'node-' + String(i % nodes).padStart(5, '0'), containers: [
      { name: 'app', image: 'registry.example/app:v1', resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } } },
      { name: 'sidecar', image: 'registry.example/proxy:v1', resources: { requests: { cpu: '10m', memory: '32Mi' } } } ] },
  status: { phase: 'Running', podIP: '10.244.0.' + (i % 250), conditions: [{ type: 'Ready', status: 'True' }],
    containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'registry.example/app:v1' }] },
});
const page = (make, count, query) => {
  const limit = Number(query.get('limit')) || count;
  const from = Number(query.get('continue') || 0);
  const to = Math.min(count, from + limit);
  const items = [];
  for (let i = from; i < to; i++) items.push(make(i));
  return JSON.stringify({ metadata: { resourceVersion: '999999', continue: to < count ? String(to) : undefined }, items });
};
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.searchParams.get('watch')) { res.writeHead(200); res.flushHeaders(); return; }
  const body = url.pathname === '/api/v1/nodes' ? page(node, nodes, url.searchParams) : page(pod, pods, url.searchParams);
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port,
  nodeJsonBytes: JSON.stringify(node(1)).length, podJsonBytes: JSON.stringify(pod(1)).length }));
parentPort.on('message', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

describe('cache memory', () => {
  let worker: Worker;
  let connection: KubeConnection;
  let served: { port: number; nodeJsonBytes: number; podJsonBytes: number };
  beforeAll(async () => {
    worker = new Worker(server, { eval: true, workerData: { nodes: NODES, pods: PODS } });
    served = await new Promise((resolve) => worker.once('message', resolve));
    const port = served.port;
    connection = connectionFor(tokenAccess(`http://127.0.0.1:${port}`, 'test-token'), 'sandbox');
  });
  afterAll(async () => {
    connection.close();
    worker.postMessage('stop');
    await new Promise((resolve) => worker.once('exit', resolve));
  });

  it(`when ${NODES} nodes and ${PODS} pods are cached, then the heap grows within budget`, async () => {
    const logger = createLogger('error', { silent: true });
    const client = new KubeClient(connection);
    collectGarbage();
    const before = process.memoryUsage().heapUsed;

    const nodes = createNodeCache(client, logger);
    nodes.start();
    await nodes.waitForSync(60_000);
    const started = Date.now();
    nodes.list();
    const listMs = Date.now() - started;
    collectGarbage();
    const nodesOnly = process.memoryUsage().heapUsed - before;

    const pods = createPodAllocations(client, logger);
    pods.start();
    await pods.waitForSync(60_000);
    collectGarbage();
    const nodesAndPods = process.memoryUsage().heapUsed - before;

    // A relist (a sink attaching, or an expired resourceVersion) of unchanged pods keeps what the cache held: no
    // second copy of every key string beside the one each cached pod holds.
    let listed!: () => void;
    const relisted = new Promise<void>((resolve) => (listed = resolve));
    pods.pods.attach({
      beginList: () => undefined,
      put: () => undefined,
      remove: () => undefined,
      endList: () => listed(),
    });
    await relisted;
    // the least of a few settled samples: on a loaded machine (make test runs suites side by side) one collection can
    // find garbage of the relist's last tick still held, which is not what is kept
    let afterRelist = Number.POSITIVE_INFINITY;
    for (let sample = 0; sample < 3; sample++) {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      afterRelist = Math.min(afterRelist, process.memoryUsage().heapUsed - before);
    }
    await Promise.all([nodes.stop(), pods.stop()]);

    const MB = 2 ** 20;
    const podsOnly = nodesAndPods - nodesOnly;
    if (scale === 1)
      console.log(
        `cache heap: ${NODES} nodes ${(nodesOnly / MB).toFixed(1)} MB (${Math.round(nodesOnly / NODES)} B each, ` +
          `${served.nodeJsonBytes} B of JSON), ${PODS} pods ${(podsOnly / MB).toFixed(1)} MB ` +
          `(${Math.round(podsOnly / PODS)} B each, ${served.podJsonBytes} B of JSON), first list() ${listMs} ms`,
      );
    expect([nodes.size, pods.size]).toEqual([NODES, PODS]);
    expect(pods.allocatedOn('node-00000').cpuRequestsMilli).toBe(110 * Math.ceil(PODS / NODES));
    // 2 MB covers fixed costs (code compiled on first use); then ≤ 200 B a pod (10 MB for 50,000), and a node no
    // more than twice its JSON (managedFields dropped)
    expect(podsOnly).toBeLessThan(2 * MB + 200 * PODS);
    expect(nodesOnly).toBeLessThan(2 * MB + 2 * served.nodeJsonBytes * NODES);
    // a key string is about 50 B a pod: a relist that kept the listed copies would add that much again
    expect(afterRelist - nodesAndPods).toBeLessThan(20 * PODS);
  });
});
