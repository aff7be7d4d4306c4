/**
 * One e2e environment, two targets: the in-process sandbox (default) or the real cluster named by KUBECONFIG.
 * Every case arranges its objects through the Kubernetes API and talks to kapi over HTTP, so the same cases prove
 * the sandbox behaves like kube-apiserver. Everything a run creates carries its run id and is removed at the end.
 *
 * A real cluster may be bare (the kit of ../shared/kube: kube-apiserver and etcd, no controller-manager, scheduler or
 * kubelet), so the harness makes what those would have: the `default` ServiceAccount of every namespace it creates,
 * Nodes (`createNode`), pods that run (`createRunningPod`: bound to a node, their status written as a kubelet
 * would), and a kubelet's log endpoint (`kubelet()`). A case uses these, never objects it did not make: other suites
 * run at the same time on the same cluster.
 */
import { passwordSecret } from '../../src/auth/users/password-hashes.js';
import type { MemberWriteHooks } from '../../src/apis/iam/v1alpha2/role-bindings.js';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcrypt';
import { KubeApiError, KubeClient, type KubeRequest } from '../../src/kube/client.js';
import { connectToCluster } from '../../src/kube/cluster-source.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runningPodStatus } from '../../src/sandbox/pod-status.js';
import { startKapiServer, type KapiServer } from '../../src/server/server.js';
import { loadCrdDocuments } from './crds.js';
import { globalRoleBinding, platformFileBeside, readPlatformObjects } from '../../src/sandbox/platform-objects.js';
import { startKubeletStandIn, type KubeletStandIn } from './kubelet-stand-in.js';

export const RUN_LABEL = 'kapi.io/e2e-run';

/** The confidential browser client every run registers; its redirect URI is loopback, so any port matches. */
export const E2E_CONSOLE = {
  id: 'e2e-console',
  secret: 'e2e-console-secret',
  redirectUri: 'http://127.0.0.1/console/callback',
} as const;

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export interface NodeOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** The Ready condition's status; no conditions at all when absent. */
  ready?: 'True' | 'False';
  unschedulable?: boolean;
  /** Status fields merged over the default capacity and conditions (e.g. a kubelet endpoint). */
  status?: Record<string, unknown>;
}

export interface PodContainer {
  name: string;
  image?: string;
  command?: string[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

/** A kubelet's log endpoint and the Node it serves (see kubelet-stand-in.ts). */
export interface RunKubelet {
  readonly standIn: KubeletStandIn;
  readonly nodeName: string;
}

export interface E2E {
  readonly target: 'sandbox' | 'cluster';
  readonly runId: string;
  /** Cluster-admin access for arranging objects (the sandbox admin, or the KUBECONFIG user). */
  readonly admin: KubeClient;
  /**
   * kapi's own access to the cluster (the sandbox's kapi ServiceAccount, or the KUBECONFIG user kapi runs as): for
   * writing what only kapi may (the tenant guard lets kapi alone write a project's pending creator).
   */
  readonly asKapi: KubeClient;
  readonly kapi: KapiServer;
  readonly kapiUrl: string;
  readonly kapiHttpsUrl: string;
  readonly caFile: string | undefined;
  readonly sandbox: Sandbox | undefined;
  readonly configuration: { namespace: string; name: string };
  /** The name of a run-scoped object: `<runId>-<suffix>`. */
  name(suffix: string): string;
  /** Creates a User (run-scoped name) with a bcrypt hash of `password`. */
  createUser(suffix: string, password: string, options?: { groups?: string[]; email?: string }): Promise<string>;
  /** Grants cluster-wide rules to a user through RBAC (ClusterRole + ClusterRoleBinding). */
  grant(username: string, rules: PolicyRule[]): Promise<void>;
  /**
   * Creates a namespace `<runId>-<suffix>` labelled with the run, with its `default` ServiceAccount (pods need one;
   * on a bare cluster no controller makes it). The run's own namespace is `runId`, made at start the same way.
   */
  createNamespace(suffix: string): Promise<string>;
  /** Creates a run-labelled Node `<runId>-<suffix>` (4 CPUs, 8 GiB, 110 pods) and returns its name. */
  createNode(suffix: string, options?: NodeOptions): Promise<string>;
  /**
   * Creates a pod bound to `nodeName` and writes the status a kubelet would once its containers run (no scheduler,
   * no kubelet on a bare cluster); `startedAt` is when they started (default: ten minutes ago).
   */
  createRunningPod(
    namespace: string,
    name: string,
    spec: { nodeName: string; containers: PodContainer[] },
    startedAt?: Date,
  ): Promise<void>;
  /**
   * A kubelet stand-in on loopback and a run-labelled Node pointing at it, started on first use and stopped at the
   * end: a real kube-apiserver sends it the `pods/log` of pods bound to that node. The sandbox generates its pods'
   * logs itself and never calls it.
   */
  kubelet(): Promise<RunKubelet>;
  /**
   * Plays the scheduler and kubelet for a pod someone else makes (kapi's kubectl pods): once it exists, it is bound
   * to the stand-in's node and its containers' status written as running, so its exec reaches the stand-in.
   */
  runPodWhenMade(namespace: string, name: string): Promise<void>;
  /**
   * Starts one more kapi replica on the same cluster (for cross-replica cases); `connection`: it reaches the cluster
   * with other credentials than the first replica's.
   */
  startReplica(options?: {
    connection?: KubeConnection;
    shutdownDelayMs?: number;
    /** Where this replica's role changes stop between their two writes (a crash's test). */
    memberWriteHooks?: MemberWriteHooks;
    /** Serves no kubectl toolbox (no --kubectl-image). */
    withoutToolbox?: boolean;
  }): Promise<KapiServer>;
  stop(): Promise<void>;
}

export const silentLogger: Logger = createLogger('error', { silent: true });

/**
 * `listingCacheIdleMs`: how soon an unused listing cache stops (default kapi's).
 * `metrics`: kapi also serves /metrics on a port of its own (`kapi.metricsPort`). `kubernetesMinor`: the release the
 * sandbox plays (its served API versions), else `KAPI_E2E_KUBERNETES_MINOR`, else the newest; a cluster is what it is.
 */
export async function startE2E(
  options: { sandboxNodes?: number; metrics?: boolean; kubernetesMinor?: number; listingCacheIdleMs?: number } = {},
): Promise<E2E> {
  const runId = `e2e-${randomBytes(3).toString('hex')}`;
  const kubeconfig = process.env.KUBECONFIG;
  let sandbox: Sandbox | undefined;
  let adminConnection: KubeConnection;
  let kapiConnection: KubeConnection;
  /** Who kapi is to the cluster, as an RBAC subject; undefined when that identity is not one a binding can name. */
  let kapiSubject: { kind: 'ServiceAccount'; name: string; namespace: string } | undefined;
  if (kubeconfig) {
    adminConnection = await connectToCluster('kubeconfig', kubeconfig);
    kapiConnection = adminConnection;
  } else {
    const minorFromEnv = process.env.KAPI_E2E_KUBERNETES_MINOR;
    sandbox = await startSandbox({
      nodes: options.sandboxNodes ?? 6,
      logger: silentLogger,
      kubernetesMinor: options.kubernetesMinor ?? (minorFromEnv ? Number(minorFromEnv) : undefined),
    });
    adminConnection = connectionFor(tokenAccess(sandbox.url, sandbox.adminToken), 'sandbox');
    kapiConnection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
    kapiSubject = { kind: 'ServiceAccount', name: 'kapi-apiserver', namespace: 'kapi-system' };
  }
  const admin = new KubeClient(adminConnection);
  const created: { path: string }[] = [];

  await ensureCrds(admin);
  await ensurePlatformObjects(admin);
  const namespaces: string[] = [];
  const createNamespace = async (name: string): Promise<string> => {
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name, labels: { [RUN_LABEL]: runId } } },
    });
    namespaces.push(name);
    await ensureDefaultServiceAccount(admin, name);
    return name;
  };
  const namespace = await createNamespace(runId);
  // kapi reads its signing key from this run's namespace, so a Role there grants Secrets to kapi's identity. On the
  // sandbox that is the kapi-apiserver service account; on a real cluster kapi runs as the KUBECONFIG user (normally
  // cluster-admin, already allowed), so the Role is made but there is no one to bind it to.
  const secretsRole = `${runId}-kapi-secrets`;
  await admin.request({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`,
    body: {
      metadata: { name: secretsRole, labels: { [RUN_LABEL]: runId } },
      rules: [
        // as the chart's Role: the signing key read, the users' password Secrets written
        { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
        // the Lease its replicas elect the controllers' leader by, as the chart's Role allows in kapi's namespace
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
        // the users' kubectl pods (the toolbox), as the chart's Role allows there
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'create', 'delete'] },
        { apiGroups: [''], resources: ['pods/exec'], verbs: ['get', 'create'] },
      ],
    },
  });
  created.push({ path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles/${secretsRole}` });
  if (kapiSubject) {
    await admin.request({
      method: 'POST',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
      body: {
        metadata: { name: secretsRole, labels: { [RUN_LABEL]: runId } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: secretsRole },
        subjects: [kapiSubject],
      },
    });
    created.push({ path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings/${secretsRole}` });
  }
  await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/secrets`,
    body: { metadata: { name: 'kapi-jwt' }, type: 'Opaque', data: { key: randomBytes(48).toString('base64') } },
  });
  const configuration = { namespace, name: 'kapi' };
  await admin.request({
    method: 'POST',
    path: `/apis/installer.kapi.io/v1alpha1/namespaces/${namespace}/clusterconfigurations`,
    body: {
      apiVersion: 'installer.kapi.io/v1alpha1',
      kind: 'ClusterConfiguration',
      metadata: { name: 'kapi' },
      spec: {
        authentication: {
          accessTokenMaxAge: '2h',
          refreshTokenMaxAge: '4h',
          multipleLogin: true,
          loginLimit: { maxFailures: 10, window: '10m' },
          oauth: {
            clients: [
              { name: 'kapi', secret: 'kapi', grantTypes: ['password', 'refresh_token'] },
              // browser sign-in: a public native client and a confidential web client, both on loopback redirects
              // (any port), so a test's own listener receives the codes
              { name: 'kubectl', public: true, redirectURIs: ['http://127.0.0.1/callback', 'http://[::1]/callback'] },
              { name: E2E_CONSOLE.id, secret: E2E_CONSOLE.secret, redirectURIs: [E2E_CONSOLE.redirectUri] },
            ],
          },
        },
      },
    },
  });

  const caDir = mkdtempSync(join(tmpdir(), 'kapi-e2e-'));
  const replicas: KapiServer[] = [];
  const startReplica = async (
    replicaOptions: {
      connection?: KubeConnection;
      shutdownDelayMs?: number;
      memberWriteHooks?: MemberWriteHooks;
      withoutToolbox?: boolean;
    } = {},
  ): Promise<KapiServer> => {
    const server = await startKapiServer({
      options: {
        port: 0,
        tlsPort: 0,
        metricsPort: options.metrics ? 0 : undefined,
        ...(options.listingCacheIdleMs !== undefined && { listingCacheIdleMs: options.listingCacheIdleMs }),
        ...(replicaOptions.shutdownDelayMs !== undefined && { shutdownDelayMs: replicaOptions.shutdownDelayMs }),
        bindAddress: '127.0.0.1',
        configuration,
        signingKeySecret: { namespace, name: 'kapi-jwt' },
        tlsCertFile: undefined,
        tlsKeyFile: undefined,
        tlsSecret: undefined,
        tlsCaOut: join(caDir, `ca-${replicas.length}.crt`),
        trustedProxies: [],
        // users' kubectl pods reach this replica by its address (its certificate names localhost)
        ...(!replicaOptions.withoutToolbox && {
          kubectlToolbox: { image: 'registry.invalid/kapi-kubectl', kapiUrl: 'https://localhost', podIp: '127.0.0.1' },
        }),
      },
      connection: replicaOptions.connection ?? kapiConnection,
      logger: silentLogger,
      allowGeneratedSigningKey: false,
      ...(replicaOptions.memberWriteHooks && { memberWriteHooks: replicaOptions.memberWriteHooks }),
    });
    replicas.push(server);
    await server.ready(30_000);
    return server;
  };
  const kapi = await startReplica();

  const createNode = async (suffix: string, nodeOptions: NodeOptions = {}): Promise<string> => {
    const name = `${runId}-${suffix}`;
    await admin.request({ method: 'POST', path: '/api/v1/nodes', body: nodeObject(name, runId, nodeOptions) });
    return name;
  };
  let kubelet: Promise<RunKubelet> | undefined;
  const startKubelet = async (): Promise<RunKubelet> => {
    const standIn = await startKubeletStandIn();
    try {
      const nodeName = await createNode('kubelet', { ready: 'True', status: standIn.nodeStatus() });
      return { standIn, nodeName };
    } catch (error) {
      await standIn.stop();
      throw error;
    }
  };

  const e2e: E2E = {
    target: sandbox ? 'sandbox' : 'cluster',
    runId,
    admin,
    asKapi: kapiConnection === adminConnection ? admin : new KubeClient(kapiConnection),
    kapi,
    kapiUrl: `http://127.0.0.1:${kapi.httpPort}`,
    kapiHttpsUrl: `https://127.0.0.1:${kapi.httpsPort}`,
    caFile: kapi.caFile,
    sandbox,
    configuration,
    name: (suffix) => `${runId}-${suffix}`,
    async createUser(suffix, password, userOptions = {}) {
      const name = `${runId}-${suffix}`;
      const path = `/apis/iam.kapi.io/v1beta1/users/${name}`;
      const user = await admin.request<{ metadata: { uid: string } }>({
        method: 'POST',
        path: '/apis/iam.kapi.io/v1beta1/users',
        body: {
          apiVersion: 'iam.kapi.io/v1beta1',
          kind: 'User',
          metadata: { name, labels: { [RUN_LABEL]: runId } },
          spec: { email: userOptions.email ?? `${name}@e2e.kapi.test`, groups: userOptions.groups ?? [] },
        },
      });
      created.push({ path });
      // its password as kapi keeps it: a Secret in kapi's namespace (the run's), never in the User
      const secret = passwordSecret(runId, name, user.metadata.uid, await bcrypt.hash(password, 4));
      await admin.request({ method: 'POST', path: `/api/v1/namespaces/${runId}/secrets`, body: secret });
      // its login records, if any were written (a real cluster's garbage collector would delete them with the User)
      created.push({ path: `/apis/iam.kapi.io/v1beta1/loginhistories/${name}` });
      return name;
    },
    async grant(username, rules) {
      const roleName = `${runId}-${username}`.slice(0, 253);
      await admin.request({
        method: 'POST',
        path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
        body: { metadata: { name: roleName, labels: { [RUN_LABEL]: runId } }, rules },
      });
      created.push({ path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${roleName}` });
      await admin.request({
        method: 'POST',
        path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
        body: {
          metadata: { name: roleName, labels: { [RUN_LABEL]: runId } },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: username }],
        },
      });
      created.push({ path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${roleName}` });
      // kube-apiserver's authorizer reads bindings from its own watch cache, a moment behind the objects just made (a
      // watch opened right after was once answered 403 on 1.26 in CI): each rule in effect before the caller goes on
      await waitFor(async () => {
        const answers = await Promise.all(rules.map((rule) => allowedAtKube(admin, username, rule)));
        return answers.every(Boolean);
      });
    },
    createNamespace: (suffix) => createNamespace(`${runId}-${suffix}`),
    createNode,
    async createRunningPod(podNamespace, name, spec, startedAt = new Date(Date.now() - 600_000)) {
      const containers = spec.containers.map((container) => ({ image: 'registry.invalid/e2e', ...container }));
      await admin.request({
        method: 'POST',
        path: `/api/v1/namespaces/${podNamespace}/pods`,
        body: {
          metadata: { name, labels: { [RUN_LABEL]: runId } },
          spec: { nodeName: spec.nodeName, terminationGracePeriodSeconds: 0, containers },
        },
      });
      await admin.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${podNamespace}/pods/${name}/status`,
        contentType: 'application/merge-patch+json',
        body: { status: runningPodStatus(containers, startedAt) },
      });
    },
    kubelet: () => (kubelet ??= startKubelet()),
    async runPodWhenMade(podNamespace, name) {
      const { standIn, nodeName } = await (kubelet ??= startKubelet());
      const path = `/api/v1/namespaces/${podNamespace}/pods/${name}`;
      let made: { spec?: { containers?: { name: string; image: string }[] } } | undefined;
      await waitFor(async () => {
        made = await admin.request<typeof made>({ path }).catch(() => undefined);
        return made !== undefined;
      });
      const containers = made?.spec?.containers ?? [];
      // the stand-in serves the containers it knows
      for (const container of containers)
        standIn.write(podNamespace, name, container.name, [{ ms: Date.now(), nano: 0, text: 'started' }]);
      await admin.request({
        method: 'POST',
        path: `${path}/binding`,
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: nodeName } },
      });
      await admin.request({
        method: 'PATCH',
        path: `${path}/status`,
        contentType: 'application/merge-patch+json',
        body: { status: runningPodStatus(containers, new Date()) },
      });
    },
    startReplica,
    async stop() {
      await Promise.all(replicas.map((replica) => replica.stop(1_000)));
      await (await kubelet?.catch(() => undefined))?.standIn.stop();
      // kapi is stopped: no controller takes its finalizer off a deleted User, so the run does
      for (const { path } of created.reverse()) await deleteIgnoringMissing(admin, path, { finalizers: true });
      for (const name of namespaces.reverse()) await deleteIgnoringMissing(admin, `/api/v1/namespaces/${name}`);
      const nodes = await admin.request<{ items: { metadata: { name: string } }[] }>({
        path: '/api/v1/nodes',
        query: { labelSelector: `${RUN_LABEL}=${runId}` },
      });
      for (const node of nodes.items) await deleteIgnoringMissing(admin, `/api/v1/nodes/${node.metadata.name}`);
      adminConnection.close();
      if (kapiConnection !== adminConnection) kapiConnection.close();
      await sandbox?.stop();
    },
  };
  return e2e;
}

/** A Node as a kubelet registers one: capacity, allocatable, and a Ready condition when asked. */
function nodeObject(name: string, runId: string, options: NodeOptions): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { [RUN_LABEL]: runId, ...options.labels },
      ...(options.annotations && { annotations: options.annotations }),
    },
    spec: options.unschedulable ? { unschedulable: true } : {},
    status: {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: options.ready
        ? [{ type: 'Ready', status: options.ready, reason: 'E2E', message: 'set by the e2e suite' }]
        : [],
      ...options.status,
    },
  };
}

/**
 * The namespace's `default` ServiceAccount, which kube's ServiceAccount admission needs before a pod can be created
 * there. A cluster's controller-manager makes it (the sandbox plays one); a bare kube-apiserver has none, so the
 * harness makes it, and finding it there already is as good.
 */
export async function ensureDefaultServiceAccount(client: KubeClient, namespace: string): Promise<void> {
  await createUnlessExists(client, `/api/v1/namespaces/${namespace}/serviceaccounts`, {
    metadata: { name: 'default' },
  });
}

/** A request whose answer is text (a pod's log, say): the whole body; an error answer throws KubeApiError. */
export async function requestText(client: KubeClient, request: KubeRequest): Promise<string> {
  const res = await client.stream(request);
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Deletes an object, if there; `finalizers`: also takes off the finalizers that would keep it. */
export async function deleteIgnoringMissing(
  client: KubeClient,
  path: string,
  options: { finalizers?: boolean } = {},
): Promise<void> {
  try {
    const answer = await client.request<{ metadata?: { deletionTimestamp?: string } }>({ method: 'DELETE', path });
    if (options.finalizers && answer?.metadata?.deletionTimestamp)
      await client.request({
        method: 'PATCH',
        path,
        contentType: 'application/merge-patch+json',
        body: { metadata: { finalizers: null } },
      });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.code === 404)) throw err;
  }
}

/** The annotation that says which revision of crds/ a cluster's CRD was installed from. */
const CRD_DIGEST = 'kapi.io/e2e-crd-digest';

/**
 * On a real cluster the CRDs may not be installed yet, or be those of an older checkout (a reused cluster): the
 * sandbox loads them from crds/ itself. A missing CRD is created; one installed from other crds/ contents (its digest
 * annotation differs) is replaced. The suites run in parallel and each may find them missing or stale: a 409 means
 * another suite got there first, which is as good (all then wait for Established).
 */
export async function ensureCrds(admin: KubeClient): Promise<void> {
  for (const document of loadCrdDocuments()) {
    const digest = createHash('sha256').update(JSON.stringify(document)).digest('hex').slice(0, 16);
    const crd = {
      ...document,
      metadata: { ...document.metadata, annotations: { ...document.metadata.annotations, [CRD_DIGEST]: digest } },
    };
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    let existing: { metadata: { resourceVersion: string; annotations?: Record<string, string> } } | undefined;
    try {
      existing = await admin.request({ path });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 404)) throw err;
    }
    if (!existing) {
      await createUnlessExists(admin, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    } else if (existing.metadata.annotations?.[CRD_DIGEST] !== digest) {
      try {
        await admin.request({
          method: 'PUT',
          path,
          body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata.resourceVersion } },
        });
      } catch (err) {
        if (!(err instanceof KubeApiError && err.code === 409)) throw err;
      }
    } else continue;
    await waitFor(async () => {
      const got = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>({ path });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });
  }
}

/**
 * The chart's built-in platform roles, system-workspace and kapi:monitoring-view (the sandbox seeds them itself),
 * created when missing; then the aggregated ClusterRoles filled in, as a cluster's controller-manager would.
 */
export async function ensurePlatformObjects(admin: KubeClient): Promise<void> {
  const file = platformFileBeside(join(process.cwd(), 'crds'));
  for (const object of readPlatformObjects(file)) {
    const [group, version] = object.apiVersion.split('/') as [string, string];
    const resource = `${object.kind.toLowerCase()}s`;
    await createUnlessExists(admin, `/apis/${group}/${version}/${resource}`, object);
  }
  await aggregateClusterRoles(admin);
}

/**
 * kube-controller-manager's ClusterRole aggregation, for a bare kube-apiserver that has none: each ClusterRole with an
 * aggregationRule gets the rules of the ClusterRoles its selectors pick (matchLabels), through chains (view into edit
 * into admin), written only when they differ. Where a controller-manager runs, it writes the same.
 */
export async function aggregateClusterRoles(admin: KubeClient): Promise<void> {
  type Role = {
    metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string };
    aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string> }[] };
    rules?: unknown[] | null;
  };
  const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
  for (let pass = 0; pass < 3; pass++) {
    const roles = (await admin.request<{ items: Role[] }>({ path })).items;
    let changed = false;
    for (const role of roles) {
      const selectors = role.aggregationRule?.clusterRoleSelectors ?? [];
      if (selectors.length === 0) continue;
      const picked = roles.filter(
        (other) =>
          other.metadata.name !== role.metadata.name &&
          selectors.some((selector) => {
            const wanted = Object.entries(selector.matchLabels ?? {});
            return wanted.length > 0 && wanted.every(([key, value]) => other.metadata.labels?.[key] === value);
          }),
      );
      const rules: unknown[] = [];
      for (const rule of picked.flatMap((other) => other.rules ?? []))
        if (!rules.some((known) => JSON.stringify(known) === JSON.stringify(rule))) rules.push(rule);
      if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) continue;
      try {
        await admin.request({ method: 'PUT', path: `${path}/${role.metadata.name}`, body: { ...role, rules } });
        changed = true;
      } catch (error) {
        // another suite aggregated it meanwhile: the next pass reads it again
        if (!(error instanceof KubeApiError && error.code === 409)) throw error;
        changed = true;
      }
    }
    if (!changed) return;
  }
}

/**
 * Gives `user` the platform role `role` as kapi names and labels the binding (`<user>-<role>`); answers the binding's
 * path, for the caller to delete.
 */
export async function bindGlobalRole(admin: KubeClient, user: string, role: string): Promise<string> {
  const binding = globalRoleBinding(user, role);
  await admin.request({ method: 'POST', path: '/apis/iam.kapi.io/v1alpha2/globalrolebindings', body: binding });
  return `/apis/iam.kapi.io/v1alpha2/globalrolebindings/${binding.metadata.name}`;
}

/** POSTs `body`; an object of that name already there (409 AlreadyExists, made by a parallel suite) is success. */
export async function createUnlessExists(client: KubeClient, path: string, body: unknown): Promise<void> {
  try {
    await client.request({ method: 'POST', path, body });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.code === 409 && err.status?.reason === 'AlreadyExists')) throw err;
  }
}

/**
 * What kube-apiserver's own authorizer decides for `username` (with `system:authenticated`): a SubjectAccessReview by
 * the cluster's administrator.
 */
export async function kubeAllows(
  admin: KubeClient,
  username: string,
  attributes: {
    verb: string;
    group?: string;
    resource: string;
    subresource?: string;
    name?: string;
    namespace?: string;
  },
): Promise<boolean> {
  const review = await admin.request<{ status?: { allowed?: boolean } }>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: username, groups: ['system:authenticated'], resourceAttributes: attributes },
    },
  });
  return review.status?.allowed === true;
}

/** Whether the first verb of `rule` on its first resource is allowed (`pods/exec`: the subresource `exec` of `pods`). */
function allowedAtKube(admin: KubeClient, username: string, rule: PolicyRule): Promise<boolean> {
  const [resource, subresource] = rule.resources[0]!.split('/');
  return kubeAllows(admin, username, {
    verb: rule.verbs[0]!,
    group: rule.apiGroups[0]!,
    resource: resource!,
    ...(subresource && { subresource }),
  });
}

/** Merges `status` into a User's status subresource (a lock, a disabled state), as an administrator would. */
export async function patchUserStatus(admin: KubeClient, name: string, status: Record<string, unknown>): Promise<void> {
  await admin.request({
    method: 'PATCH',
    path: `/apis/iam.kapi.io/v1beta1/users/${name}/status`,
    contentType: 'application/merge-patch+json',
    body: { status },
  });
}

/**
 * Polls `check` every 25 ms until it holds; resolves with the time that took (for a report, never for a bound). No
 * deadline of its own: the test's timeout is the only limit, as a busy machine is slow, not wrong.
 */
export async function waitFor(check: () => Promise<boolean> | boolean): Promise<number> {
  const started = Date.now();
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
  return Date.now() - started;
}

/**
 * A request of `path` exactly as written, with a bearer token: fetch and URL would fold a "." or ".." segment (also
 * "%2E%2E") before kapi saw it. The answer's body parsed as JSON.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: { kind?: string; code?: number } }> {
  const { hostname, port } = new URL(baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string | number> = { Authorization: `Bearer ${token}` };
  if (payload)
    Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) });
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}
