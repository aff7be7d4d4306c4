import { seedCluster } from '../src/sandbox/seed.js';
import type { KubeObject } from '../src/sandbox/resource-types.js';
import { describeAnswer, send, type HttpAnswer } from './http.js';
import { detail } from './report.js';
import { agentFor } from './tls.js';

/**
 * The bench's cluster written into a real kube-apiserver: the sandbox's seed (seedCluster: the same nodes, and pods
 * with containers, resources, owners and kubelet-like status), created through kube-apiserver with many requests in
 * flight, each pod's status then written as its kubelet would. A marker ConfigMap, written last, says the data is
 * complete; a kit that has it with the same size is reused as it is (the seed takes minutes at SPEC §11's size).
 */
const MARKER = '/api/v1/namespaces/default/configmaps/kapi-bench-seed';
/** Requests in flight while seeding: enough to keep kube-apiserver and etcd busy on two cores. */
const IN_FLIGHT = 48;
const PROGRESS_EVERY_MS = 15_000;

export interface SeedSize {
  nodes: number;
  podsPerNode: number;
}

export interface SeedOutcome {
  /** The seed was found complete (no write made). */
  reused: boolean;
  ms: number;
}

/** What a client may set on create: name, labels, annotations, owners (kube sets uid, times and versions itself). */
function creatable(object: KubeObject, withStatus: boolean): Record<string, unknown> {
  const { name, namespace, labels, annotations, ownerReferences } = object.metadata as Record<string, unknown>;
  return {
    metadata: { name, namespace, labels, annotations, ownerReferences },
    // kube's Priority admission computes spec.priority from priorityClassName and refuses a client's own value.
    spec: withoutPriority(object.spec),
    ...(withStatus && object.status !== undefined && { status: object.status }),
  };
}

function withoutPriority(spec: unknown): unknown {
  if (!spec || typeof spec !== 'object' || !('priority' in spec)) return spec;
  const { priority: _computed, ...rest } = spec as Record<string, unknown>;
  return rest;
}

/** Runs `task` over `items` with `limit` at once; reports progress now and then. */
async function inParallel<T>(label: string, items: readonly T[], limit: number, task: (item: T) => Promise<void>) {
  let next = 0;
  let done = 0;
  const started = Date.now();
  const progress = setInterval(() => {
    const rate = done / ((Date.now() - started) / 1000);
    detail(
      `  ${label}: ${done.toLocaleString('en-US')}/${items.length.toLocaleString('en-US')} (${rate.toFixed(0)}/s)`,
    );
  }, PROGRESS_EVERY_MS);
  try {
    await Promise.all(
      Array.from({ length: Math.min(limit, items.length) }, async () => {
        while (next < items.length) {
          await task(items[next++]!);
          done++;
        }
      }),
    );
  } finally {
    clearInterval(progress);
  }
}

export async function seedKit(
  backendUrl: string,
  headers: Record<string, string>,
  size: SeedSize,
): Promise<SeedOutcome> {
  const started = Date.now();
  const agent = agentFor(backendUrl, { keepAlive: true, maxSockets: IN_FLIGHT });
  const call = (
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<HttpAnswer> => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return send(`${backendUrl}${path}`, {
      method,
      agent,
      headers: { ...headers, ...(payload !== undefined && { 'Content-Type': contentType }) },
      body: payload,
      timeoutMs: 120_000,
    });
  };
  const expect = async (method: string, path: string, body: unknown, ok: number[], contentType?: string) => {
    const answer = await call(method, path, body, contentType);
    if (!ok.includes(answer.status)) throw new Error(`${method} ${path}: ${describeAnswer(answer)}`);
  };
  try {
    const marker = await call('GET', MARKER);
    if (marker.status === 200) {
      const data = (JSON.parse(marker.body.toString('utf8')) as { data?: Record<string, string> }).data ?? {};
      if (data.nodes === String(size.nodes) && data.podsPerNode === String(size.podsPerNode)) {
        return { reused: true, ms: Date.now() - started };
      }
      throw new Error(`the kit holds another seed (${JSON.stringify(data)}); its directory is chosen by size`);
    }
    const cluster = seedCluster({ nodes: size.nodes, podsPerNode: size.podsPerNode });
    detail(
      `seeding ${cluster.nodes.length.toLocaleString('en-US')} nodes and ${cluster.pods.length.toLocaleString('en-US')} pods through kube-apiserver (${IN_FLIGHT} requests in flight; once per kit)`,
    );
    // An interrupted seed left some objects: 409 AlreadyExists is as good as created.
    for (const namespace of cluster.namespaces) {
      await expect('POST', '/api/v1/namespaces', creatable(namespace, false), [201, 409]);
    }
    for (const account of cluster.serviceAccounts) {
      const namespace = account.metadata.namespace as string;
      await expect('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, creatable(account, false), [201, 409]);
    }
    await inParallel('nodes', cluster.nodes, IN_FLIGHT, async (node) => {
      await expect('POST', '/api/v1/nodes', creatable(node, true), [201, 409]);
    });
    await inParallel('pods', cluster.pods, IN_FLIGHT, async (pod) => {
      const namespace = pod.metadata.namespace as string;
      const path = `/api/v1/namespaces/${namespace}/pods`;
      await expect('POST', path, creatable(pod, false), [201, 409]);
      // Pods are created Pending; the status is the kubelet's to write.
      await expect(
        'PATCH',
        `${path}/${pod.metadata.name as string}/status`,
        { status: pod.status },
        [200],
        'application/merge-patch+json',
      );
    });
    await expect(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      {
        metadata: { name: 'kapi-bench-seed' },
        data: { nodes: String(size.nodes), podsPerNode: String(size.podsPerNode), at: new Date().toISOString() },
      },
      [201],
    );
    return { reused: false, ms: Date.now() - started };
  } finally {
    agent.destroy();
  }
}
