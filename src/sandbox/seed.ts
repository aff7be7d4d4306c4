import { seededRandom, seededUid, type Random } from './random.js';
import type { KubeObject } from './resource-types.js';
import { DAY, iso } from './seed-format.js';
import { seedNodes } from './seed-nodes.js';
import { seedObjects, type SeededObjects } from './seed-objects.js';
import { seedPods } from './seed-pods.js';
import { WORKLOADS, type Workload } from './seed-workloads.js';

export { specialNodes } from './seed-nodes.js';

/**
 * The demo cluster: namespaces, nodes and pods that look like a kubeadm + Calico cluster, generated
 * deterministically (same seed, same cluster) and fast enough for 5,000 nodes and 50,000 pods in a few seconds.
 * What is seeded and why is listed in src/sandbox/README.md.
 */
export interface ClusterSeed extends SeededObjects {
  namespaces: KubeObject[];
  nodes: KubeObject[];
  pods: KubeObject[];
  serviceAccounts: KubeObject[];
}

/**
 * A cluster at the bench's scale instead of the demo mix: the worker pods belong to `deployments` Deployments
 * (`app-<i>`, spread over `namespaces` namespaces `team-<j>`), beside `services` Services and `configMaps` ConfigMaps.
 */
export interface ClusterScale {
  deployments: number;
  services: number;
  configMaps: number;
  namespaces: number;
}

export const SEED_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kapi-system', 'demo'];

function namespaceObject(name: string, created: number, random: Random): KubeObject {
  return {
    metadata: {
      name,
      uid: seededUid(random),
      creationTimestamp: iso(created),
      labels: { 'kubernetes.io/metadata.name': name },
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/** The RS-owned demo workloads, whose containers the scaled Deployments take in turn. */
const REPLICATED = WORKLOADS.filter((workload) => workload.owner === 'ReplicaSet');

function scaledWorkloads(scale: ClusterScale): (cursor: number) => Workload {
  const made = new Map<number, Workload>();
  return (cursor) => {
    const i = cursor % Math.max(1, scale.deployments);
    let workload = made.get(i);
    if (!workload) {
      const template = REPLICATED[i % REPLICATED.length] as Workload;
      workload = { ...template, namespace: `team-${i % scale.namespaces}`, app: `app-${i}` };
      made.set(i, workload);
    }
    return workload;
  };
}

export function seedCluster(options: {
  nodes: number;
  podsPerNode: number;
  now?: number;
  seed?: number;
  scale?: ClusterScale;
}): ClusterSeed {
  const now = options.now ?? Date.now();
  const random = seededRandom(options.seed ?? 20_240_601);
  const clusterCreated = now - 181 * DAY;
  const scale = options.scale;
  const namespaceNames = [...SEED_NAMESPACES, ...Array.from({ length: scale?.namespaces ?? 0 }, (_, i) => `team-${i}`)];
  const namespaces = namespaceNames.map((name, i) => namespaceObject(name, clusterCreated + i * 60_000, random));
  const serviceAccounts: KubeObject[] = [];
  for (const ns of namespaceNames) {
    serviceAccounts.push({
      metadata: {
        name: 'default',
        namespace: ns,
        uid: seededUid(random),
        creationTimestamp: iso(clusterCreated + 120_000),
      },
    });
  }
  for (const name of ['kube-proxy', 'calico-node', 'coredns']) {
    serviceAccounts.push({
      metadata: {
        name,
        namespace: 'kube-system',
        uid: seededUid(random),
        creationTimestamp: iso(clusterCreated + 180_000),
      },
    });
  }
  serviceAccounts.push({
    metadata: {
      name: 'kapi-apiserver',
      namespace: 'kapi-system',
      uid: seededUid(random),
      creationTimestamp: iso(clusterCreated + 240_000),
    },
  });
  const kubernetes: KubeObject[] = [
    {
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        uid: seededUid(random),
        creationTimestamp: iso(clusterCreated),
        labels: { component: 'apiserver', provider: 'kubernetes' },
      },
      spec: {
        clusterIP: '10.96.0.1',
        clusterIPs: ['10.96.0.1'],
        type: 'ClusterIP',
        sessionAffinity: 'None',
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        internalTrafficPolicy: 'Cluster',
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
      },
      status: { loadBalancer: {} },
    },
  ];
  const nodes = seedNodes(options.nodes, now, random);
  const pods = seedPods(nodes, options.podsPerNode, now, random, scale && scaledWorkloads(scale));
  const objects = seedObjects({
    pods,
    nodes: nodes.length,
    namespaces: namespaceNames,
    now,
    ...(scale && { scale: { services: scale.services, configMaps: scale.configMaps } }),
  });
  return {
    ...objects,
    namespaces,
    nodes,
    pods,
    serviceAccounts,
    services: [...kubernetes, ...objects.services],
  };
}
