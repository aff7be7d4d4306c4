import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcrypt';
import { seedCluster, specialNodes } from '../../src/sandbox/seed.js';
import { call, testSandbox, type Json } from './helpers.js';

describe('cluster seed (pure)', () => {
  const seed = seedCluster({ nodes: 6, podsPerNode: 8, now: Date.parse('2025-06-01T00:00:00Z') });
  const node = (name: string) => seed.nodes.find((n) => n.metadata.name === name)!;
  const condition = (name: string, type: string) =>
    ((node(name).status as Json).conditions as Json[]).find((c) => c.type === type).status;

  test.each([
    [6, { controlPlanes: 1, unschedulable: 4, memoryPressure: 5, notReady: 6 }],
    [2, { controlPlanes: 1, unschedulable: undefined, memoryPressure: undefined, notReady: 2 }],
    [5000, { controlPlanes: 3, unschedulable: 4998, memoryPressure: 4999, notReady: 5000 }],
  ])('when %i nodes are seeded, then the control planes and special nodes are %o', (count, expected) => {
    expect(specialNodes(count)).toEqual(expected);
  });

  test('when nodes are seeded, then roles are empty-valued labels and the standard labels are set', () => {
    expect(node('node-1').metadata.labels).toMatchObject({
      'node-role.kubernetes.io/control-plane': '',
      'kubernetes.io/hostname': 'node-1',
    });
    for (const name of ['node-2', 'node-6']) {
      expect(node(name).metadata.labels).toMatchObject({
        'node-role.kubernetes.io/worker': '',
        'kubernetes.io/os': 'linux',
      });
      expect(node(name).metadata.labels!['kubernetes.io/arch']).toMatch(/^(amd64|arm64)$/);
      expect(node(name).metadata.labels!['topology.kubernetes.io/zone']).toMatch(/^zone-[abc]$/);
    }
    expect(JSON.parse(node('node-3').metadata.annotations!['csi.volume.kubernetes.io/nodeid']!)).toEqual({
      'csi.tigera.io': 'node-3',
    });
    expect(node('node-3').metadata.annotations).toMatchObject({
      'node.alpha.kubernetes.io/ttl': '0',
      'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
    });
  });

  test('when nodes are seeded, then one is unschedulable (with its taint), one NotReady, one under memory pressure, the rest Ready', () => {
    expect(node('node-4').spec).toMatchObject({
      unschedulable: true,
      taints: expect.arrayContaining([expect.objectContaining({ key: 'node.kubernetes.io/unschedulable' })]),
    });
    expect(condition('node-6', 'Ready')).toBe('False');
    expect(condition('node-5', 'MemoryPressure')).toBe('True');
    for (const name of ['node-1', 'node-2', 'node-3', 'node-4', 'node-5'])
      expect(condition(name, 'Ready')).toBe('True');
    expect((node('node-2').status as Json).capacity).toEqual(
      expect.objectContaining({
        cpu: expect.any(String),
        memory: expect.stringMatching(/Ki$/),
        pods: '110',
        'ephemeral-storage': expect.any(String),
      }),
    );
    expect((node('node-2').status as Json).nodeInfo.kubeletVersion).toBe('v1.35.0');
  });

  test('when nodes are seeded, then creation times are distinct and increase with the node number', () => {
    const times = seed.nodes.map((n) => Date.parse(n.metadata.creationTimestamp!));
    expect(new Set(times).size).toBe(times.length);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  test('when pods are seeded, then each node has podsPerNode pods with a realistic mix', () => {
    expect(seed.pods).toHaveLength(48);
    const perNode = new Map<string, number>();
    for (const pod of seed.pods)
      perNode.set((pod.spec as Json).nodeName, (perNode.get((pod.spec as Json).nodeName) ?? 0) + 1);
    expect([...perNode.values()]).toEqual(Array(6).fill(8));
    const phases = new Set(seed.pods.map((p) => (p.status as Json).phase));
    expect(phases).toContain('Running');
    expect([...phases].some((p) => p !== 'Running')).toBe(true);
    expect(seed.pods.some((p) => (p.spec as Json).initContainers?.length)).toBe(true);
    expect(seed.pods.some((p) => (p.spec as Json).containers.length === 3)).toBe(true);
    expect(seed.pods.some((p) => (p.status as Json).qosClass === 'BestEffort')).toBe(true);
    expect(seed.pods.some((p) => (p.status as Json).qosClass === 'Guaranteed')).toBe(true);
    const keys = seed.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  test('when pods are seeded, then every controller they name exists with the uid their ownerReferences give', () => {
    const owners = new Map<string, string>();
    const kinds: [string, Json[]][] = [
      ['ReplicaSet', seed.replicaSets],
      ['StatefulSet', seed.statefulSets],
      ['DaemonSet', seed.daemonSets],
      ['Job', seed.jobs],
    ];
    for (const [kind, objects] of kinds) {
      for (const obj of objects) owners.set(`${kind}/${obj.metadata.namespace}/${obj.metadata.name}`, obj.metadata.uid);
    }
    for (const pod of seed.pods) {
      const ref = (pod.metadata.ownerReferences as Json[])[0];
      if (ref.kind === 'Node') continue;
      expect(owners.get(`${ref.kind}/${pod.metadata.namespace}/${ref.name}`)).toBe(ref.uid);
    }
    // a ReplicaSet's Deployment owns it, and counts its pods
    for (const rs of seed.replicaSets) {
      const deployment = seed.deployments.find(
        (d) => d.metadata.uid === (rs.metadata.ownerReferences as Json[])[0].uid,
      )!;
      const pods = seed.pods.filter((p) => (p.metadata.ownerReferences as Json[])[0].uid === rs.metadata.uid);
      expect((deployment.spec as Json).replicas).toBe(pods.length);
      expect((deployment.status as Json).readyReplicas).toBe(
        pods.filter((p) => (p.status as Json).phase === 'Running').length,
      );
    }
  });

  test('when the demo cluster is seeded, then each kind a console lists has objects, in several states', () => {
    for (const kind of [
      'deployments',
      'replicaSets',
      'statefulSets',
      'daemonSets',
      'jobs',
      'cronJobs',
      'services',
      'configMaps',
      'secrets',
      'storageClasses',
      'persistentVolumeClaims',
      'persistentVolumes',
      'ingresses',
      'networkPolicies',
      'roles',
      'roleBindings',
      'events',
    ] as const) {
      expect(seed[kind].length).toBeGreaterThan(0);
    }
    expect(new Set(seed.cronJobs.map((c) => (c.spec as Json).suspend))).toEqual(new Set([true, false]));
    expect(new Set(seed.persistentVolumeClaims.map((c) => (c.status as Json).phase))).toEqual(
      new Set(['Bound', 'Pending']),
    );
    expect(new Set(seed.events.map((e) => e.type))).toEqual(new Set(['Normal', 'Warning']));
    expect(seed.configMaps.filter((c) => c.metadata.name === 'kube-root-ca.crt')).toHaveLength(seed.namespaces.length);
  });

  test('when seeded at the bench scale, then the worker pods spread over that many Deployments, each with its ReplicaSet', () => {
    const big = seedCluster({
      nodes: 20,
      podsPerNode: 12,
      now: Date.parse('2025-06-01T00:00:00Z'),
      scale: { deployments: 50, services: 70, configMaps: 90, namespaces: 4 },
    });
    const apps = big.deployments.filter((d) => d.metadata.name!.startsWith('app-'));
    expect(apps).toHaveLength(50);
    expect(big.deployments).toHaveLength(51); // and CoreDNS on the control plane
    expect(big.replicaSets).toHaveLength(51);
    expect(big.services).toHaveLength(71); // and the kubernetes Service
    expect(big.configMaps).toHaveLength(90 + big.namespaces.length);
    expect(new Set(apps.map((d) => d.metadata.namespace))).toEqual(new Set(['team-0', 'team-1', 'team-2', 'team-3']));
  });

  test('when seeded twice with the same seed, then the cluster is the same', () => {
    const again = seedCluster({ nodes: 6, podsPerNode: 8, now: Date.parse('2025-06-01T00:00:00Z') });
    expect(again.pods.map((p) => p.metadata.name)).toEqual(seed.pods.map((p) => p.metadata.name));
    expect(again.nodes[2]!.metadata.uid).toBe(seed.nodes[2]!.metadata.uid);
  });
});

const crdYaml = (
  plural: string,
  kind: string,
  group: string,
  version: string,
  scope: string,
) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
spec:
  group: ${group}
  scope: ${scope}
  names: {plural: ${plural}, singular: ${kind.toLowerCase()}, kind: ${kind}}
  versions:
    - name: ${version}
      served: true
      storage: true
      subresources: {status: {}}
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;

describe('identity seed', () => {
  test('when the kapi CRDs are registered, then the ClusterConfiguration, signing key, admin User and its password Secret exist', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-identity-'));
    await writeFile(
      join(dir, 'crds.yaml'),
      `${crdYaml('users', 'User', 'iam.kapi.io', 'v1beta1', 'Cluster')}---\n${crdYaml('clusterconfigurations', 'ClusterConfiguration', 'installer.kapi.io', 'v1alpha1', 'Namespaced')}`,
    );
    const sandbox = await testSandbox({ crdDir: dir, adminPassword: 'correct horse battery' });
    try {
      const config = await call<Json>(
        sandbox,
        'GET',
        '/apis/installer.kapi.io/v1alpha1/namespaces/kapi-system/clusterconfigurations/kapi',
      );
      expect(config.body.spec.authentication).toEqual({
        accessTokenMaxAge: '2h',
        refreshTokenMaxAge: '4h',
        multipleLogin: true,
        maxSessionsPerUser: 20,
        loginLimit: { maxFailures: 10, window: '10m' },
        oauth: {
          clients: [
            { name: 'kapi', secret: 'kapi', grantTypes: ['password', 'refresh_token'] },
            {
              name: 'kubectl',
              public: true,
              grantTypes: ['authorization_code', 'refresh_token'],
              redirectURIs: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
            },
          ],
        },
      });
      const key = await call<Json>(sandbox, 'GET', '/api/v1/namespaces/kapi-system/secrets/kapi-apiserver-jwt');
      expect(Buffer.from(key.body.data.key, 'base64')).toHaveLength(48);
      const admin = await call<Json>(sandbox, 'GET', '/apis/iam.kapi.io/v1beta1/users/admin');
      expect(admin.body.spec).toMatchObject({ email: 'admin@kapi.local', groups: [] });
      // the hash is in the admin's password Secret, for this User, never in the User object
      expect(admin.body.spec.password).toBeUndefined();
      expect(admin.body.metadata.finalizers).toEqual(['finalizers.kapi.io/users']);
      const stored = await call<Json>(sandbox, 'GET', '/api/v1/namespaces/kapi-system/secrets/password-admin');
      expect(stored.body.metadata.annotations).toMatchObject({
        'iam.kapi.io/user': 'admin',
        'iam.kapi.io/user-uid': admin.body.metadata.uid,
      });
      const hash = Buffer.from(stored.body.data.bcrypt, 'base64').toString();
      expect(hash).toMatch(/^\$2[aby]\$10\$/);
      expect(await bcrypt.compare('correct horse battery', hash)).toBe(true);
      expect(admin.body.status).toBeUndefined();
      const password = await call<Json>(sandbox, 'GET', '/api/v1/namespaces/kapi-system/secrets/kapi-admin');
      expect(Buffer.from(password.body.data.password, 'base64').toString()).toBe('correct horse battery');
      expect(sandbox.adminPassword).toBe('correct horse battery');
    } finally {
      await sandbox.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('when no admin password is given, then a random one of at least 16 characters is generated', async () => {
    const sandbox = await testSandbox();
    try {
      expect(sandbox.adminPassword).toMatch(/^[A-Za-z0-9_-]{16,}$/);
      expect((await call(sandbox, 'GET', '/api/v1/namespaces/kapi-system/secrets/kapi-admin')).status).toBe(404);
    } finally {
      await sandbox.stop();
    }
  });

  test('when the repository crds/ directory is loaded, then every CRD in it registers', async () => {
    const sandbox = await testSandbox({ crdDir: undefined });
    try {
      const crds = await call<Json>(sandbox, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
      for (const crd of crds.body.items) {
        const { group, names, versions } = crd.spec;
        expect((await call(sandbox, 'GET', `/apis/${group}/${versions[0].name}/${names.plural}`)).status).toBe(200);
      }
    } finally {
      await sandbox.stop();
    }
  });

  test('when seed is false, then only the system namespaces exist', async () => {
    const sandbox = await testSandbox({ seed: false });
    try {
      const namespaces = await call<Json>(sandbox, 'GET', '/api/v1/namespaces');
      expect(namespaces.body.items.map((n: Json) => n.metadata.name)).toEqual([
        'default',
        'kube-public',
        'kube-system',
      ]);
      expect((await call<Json>(sandbox, 'GET', '/api/v1/nodes')).body.items).toEqual([]);
      expect(sandbox.adminPassword).toBeUndefined();
    } finally {
      await sandbox.stop();
    }
  });
});

describe('scale', () => {
  // How long seeding and paging take is a figure of `npm run bench` (it seeds the same 5,000 nodes and 50,000 pods),
  // not a bound a shared test run can hold.
  test('when 5,000 nodes and 50,000 pods are seeded, then all are listed and paging all nodes by 500 returns each once', async () => {
    const sandbox = await testSandbox({ nodes: 5000, podsPerNode: 10 });
    try {
      const names = new Set<string>();
      let pages = 0;
      let token = '';
      do {
        const page = await call<Json>(sandbox, 'GET', `/api/v1/nodes?limit=500${token ? `&continue=${token}` : ''}`);
        for (const item of page.body.items) names.add(item.metadata.name);
        pages++;
        token = page.body.metadata.continue ?? '';
      } while (token);
      const pods = await call<Json>(sandbox, 'GET', '/api/v1/pods?limit=1');
      expect(names.size).toBe(5000);
      expect(pages).toBe(10);
      expect(pods.body.metadata.remainingItemCount + 1).toBe(50_000);
    } finally {
      await sandbox.stop();
    }
  }, 120_000);
});
