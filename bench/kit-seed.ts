import { seedCluster, type ClusterScale } from '../src/sandbox/seed.js';
import type { SeededObjects } from '../src/sandbox/seed-objects.js';
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
/** The kinds the listings row is measured on: every one of them must be written. */
const SCALED_KINDS: ReadonlySet<keyof SeededObjects> = new Set([
  'deployments',
  'replicaSets',
  'services',
  'configMaps',
]);

export interface SeedSize {
  nodes: number;
  podsPerNode: number;
  /** The listings row's cluster (SPEC §11): Deployments with their ReplicaSets, Services, ConfigMaps, namespaces. */
  scale?: ClusterScale;
}

/**
 * The seed's other kinds, in creation order (owners before what they own), where kube-apiserver serves them, and
 * whether their status is written afterwards as their controller would (the listings' status values read it).
 */
const KINDS: readonly {
  field: keyof SeededObjects;
  api: string;
  resource: string;
  namespaced: boolean;
  status: boolean;
}[] = [
  { field: 'deployments', api: '/apis/apps/v1', resource: 'deployments', namespaced: true, status: true },
  { field: 'replicaSets', api: '/apis/apps/v1', resource: 'replicasets', namespaced: true, status: true },
  { field: 'statefulSets', api: '/apis/apps/v1', resource: 'statefulsets', namespaced: true, status: true },
  { field: 'daemonSets', api: '/apis/apps/v1', resource: 'daemonsets', namespaced: true, status: true },
  { field: 'jobs', api: '/apis/batch/v1', resource: 'jobs', namespaced: true, status: true },
  { field: 'cronJobs', api: '/apis/batch/v1', resource: 'cronjobs', namespaced: true, status: false },
  { field: 'services', api: '/api/v1', resource: 'services', namespaced: true, status: false },
  { field: 'configMaps', api: '/api/v1', resource: 'configmaps', namespaced: true, status: false },
  {
    field: 'storageClasses',
    api: '/apis/storage.k8s.io/v1',
    resource: 'storageclasses',
    namespaced: false,
    status: false,
  },
  { field: 'persistentVolumes', api: '/api/v1', resource: 'persistentvolumes', namespaced: false, status: true },
  {
    field: 'persistentVolumeClaims',
    api: '/api/v1',
    resource: 'persistentvolumeclaims',
    namespaced: true,
    status: true,
  },
  { field: 'ingresses', api: '/apis/networking.k8s.io/v1', resource: 'ingresses', namespaced: true, status: false },
  {
    field: 'networkPolicies',
    api: '/apis/networking.k8s.io/v1',
    resource: 'networkpolicies',
    namespaced: true,
    status: false,
  },
  { field: 'roles', api: '/apis/rbac.authorization.k8s.io/v1', resource: 'roles', namespaced: true, status: false },
  {
    field: 'roleBindings',
    api: '/apis/rbac.authorization.k8s.io/v1',
    resource: 'rolebindings',
    namespaced: true,
    status: false,
  },
  { field: 'events', api: '/api/v1', resource: 'events', namespaced: true, status: false },
];

/**
 * An object of the seed as a client creates it: its own fields (spec, data, rules…) with the metadata a client may set;
 * kube-apiserver sets uid, times and versions, allocates a Service's cluster IP itself, and writes status apart.
 */
function creatableObject(object: KubeObject, resource: string): Record<string, unknown> {
  const { metadata, status: _status, ...fields } = object as KubeObject & Record<string, unknown>;
  const { name, namespace, labels, annotations, ownerReferences } = metadata as Record<string, unknown>;
  const body: Record<string, unknown> = {
    ...fields,
    metadata: { name, namespace, labels, annotations, ownerReferences },
  };
  if (resource === 'services' && body.spec && typeof body.spec === 'object') {
    const { clusterIP: _ip, clusterIPs: _ips, ...spec } = body.spec as Record<string, unknown>;
    body.spec = spec;
  }
  return body;
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
    const markerData = {
      nodes: String(size.nodes),
      podsPerNode: String(size.podsPerNode),
      ...(size.scale && {
        deployments: String(size.scale.deployments),
        services: String(size.scale.services),
        configMaps: String(size.scale.configMaps),
        namespaces: String(size.scale.namespaces),
      }),
    };
    const marker = await call('GET', MARKER);
    if (marker.status === 200) {
      const data = (JSON.parse(marker.body.toString('utf8')) as { data?: Record<string, string> }).data ?? {};
      if (Object.entries(markerData).every(([key, value]) => data[key] === value)) {
        return { reused: true, ms: Date.now() - started };
      }
      throw new Error(`the kit holds another seed (${JSON.stringify(data)}); its directory is chosen by size`);
    }
    const cluster = seedCluster({ nodes: size.nodes, podsPerNode: size.podsPerNode, scale: size.scale });
    detail(
      `seeding ${cluster.nodes.length.toLocaleString('en-US')} nodes and ${cluster.pods.length.toLocaleString('en-US')} pods` +
        (size.scale
          ? `, ${cluster.deployments.length.toLocaleString('en-US')} deployments + replicasets, ${cluster.services.length.toLocaleString('en-US')} services, ${cluster.configMaps.length.toLocaleString('en-US')} configmaps`
          : '') +
        ` through kube-apiserver (${IN_FLIGHT} requests in flight; once per kit)`,
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
    for (const kind of KINDS) {
      const objects = cluster[kind.field];
      if (objects.length === 0) continue;
      // A demo object a real kube-apiserver refuses (422) is reported and left out: the listings rows measure the
      // scaled kinds, which must all be there.
      let refused = 0;
      let firstRefusal = '';
      await inParallel(kind.resource, objects, IN_FLIGHT, async (object) => {
        const namespace = object.metadata.namespace as string | undefined;
        const path = `${kind.api}${kind.namespaced ? `/namespaces/${namespace}` : ''}/${kind.resource}`;
        const answer = await call('POST', path, creatableObject(object, kind.resource));
        if (answer.status === 422 && !SCALED_KINDS.has(kind.field)) {
          refused++;
          firstRefusal ||= describeAnswer(answer);
          return;
        }
        if (answer.status !== 201 && answer.status !== 409) throw new Error(`POST ${path}: ${describeAnswer(answer)}`);
        if (kind.status && object.status !== undefined) {
          await expect(
            'PATCH',
            `${path}/${object.metadata.name as string}/status`,
            { status: object.status },
            [200],
            'application/merge-patch+json',
          );
        }
      });
      if (refused > 0)
        detail(`  ${kind.resource}: ${refused} refused by kube-apiserver and left out (${firstRefusal})`);
    }
    await expect(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      { metadata: { name: 'kapi-bench-seed' }, data: { ...markerData, at: new Date().toISOString() } },
      [201],
    );
    return { reused: false, ms: Date.now() - started };
  } finally {
    agent.destroy();
  }
}
