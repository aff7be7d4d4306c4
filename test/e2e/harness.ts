/**
 * One e2e environment, two targets: the in-process sandbox (default) or the real cluster named by KUBECONFIG.
 * Every case arranges its objects through the Kubernetes API and talks to kapi over HTTP, so the same cases prove
 * the sandbox behaves like kube-apiserver. Everything a run creates carries its run id and is removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcrypt';
import { KubeApiError, KubeClient } from '../../src/kube/client.js';
import { connectToCluster } from '../../src/kube/cluster-source.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startKapiServer, type KapiServer } from '../../src/server/server.js';
import { loadCrdDocuments } from './crds.js';

export const RUN_LABEL = 'kapi.io/e2e-run';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export interface E2E {
  readonly target: 'sandbox' | 'cluster';
  readonly runId: string;
  /** Cluster-admin access for arranging objects (the sandbox admin, or the KUBECONFIG user). */
  readonly admin: KubeClient;
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
  /** Starts one more kapi replica on the same cluster (for cross-replica cases). */
  startReplica(): Promise<KapiServer>;
  stop(): Promise<void>;
}

export const silentLogger: Logger = createLogger('error', { silent: true });

/**
 * `metrics`: kapi also serves /metrics on a port of its own (`kapi.metricsPort`). `kubernetesMinor`: the release the
 * sandbox plays (its served API versions), else `KAPI_E2E_KUBERNETES_MINOR`, else the newest; a cluster is what it is.
 */
export async function startE2E(
  options: { sandboxNodes?: number; metrics?: boolean; kubernetesMinor?: number } = {},
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
  const namespace = runId;
  await admin.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: namespace, labels: { [RUN_LABEL]: runId } } },
  });
  // kapi reads its signing key from this run's namespace, so a Role there grants Secrets to kapi's identity. On the
  // sandbox that is the kapi-apiserver service account; on a real cluster kapi runs as the KUBECONFIG user (normally
  // cluster-admin, already allowed), so the Role is made but there is no one to bind it to.
  const secretsRole = `${runId}-kapi-secrets`;
  await admin.request({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`,
    body: {
      metadata: { name: secretsRole, labels: { [RUN_LABEL]: runId } },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
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
          oauth: { clients: [{ name: 'kapi', secret: 'kapi', grantTypes: ['password', 'refresh_token'] }] },
        },
      },
    },
  });

  const caDir = mkdtempSync(join(tmpdir(), 'kapi-e2e-'));
  const replicas: KapiServer[] = [];
  const startReplica = async (): Promise<KapiServer> => {
    const server = await startKapiServer({
      options: {
        port: 0,
        tlsPort: 0,
        metricsPort: options.metrics ? 0 : undefined,
        bindAddress: '127.0.0.1',
        configuration,
        signingKeySecret: { namespace, name: 'kapi-jwt' },
        tlsCertFile: undefined,
        tlsKeyFile: undefined,
        tlsSecret: undefined,
        tlsCaOut: join(caDir, `ca-${replicas.length}.crt`),
        trustedProxies: [],
      },
      connection: kapiConnection,
      logger: silentLogger,
      allowGeneratedSigningKey: false,
    });
    replicas.push(server);
    await server.ready(30_000);
    return server;
  };
  const kapi = await startReplica();

  const e2e: E2E = {
    target: sandbox ? 'sandbox' : 'cluster',
    runId,
    admin,
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
      await admin.request({
        method: 'POST',
        path: '/apis/iam.kapi.io/v1beta1/users',
        body: {
          apiVersion: 'iam.kapi.io/v1beta1',
          kind: 'User',
          metadata: { name, labels: { [RUN_LABEL]: runId } },
          spec: {
            email: userOptions.email ?? `${name}@e2e.kapi.test`,
            password: await bcrypt.hash(password, 4),
            groups: userOptions.groups ?? [],
          },
        },
      });
      created.push({ path });
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
    },
    startReplica,
    async stop() {
      await Promise.all(replicas.map((replica) => replica.stop(1_000)));
      for (const { path } of created.reverse()) await deleteIgnoringMissing(admin, path);
      await deleteIgnoringMissing(admin, `/api/v1/namespaces/${namespace}`);
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

export async function deleteIgnoringMissing(client: KubeClient, path: string): Promise<void> {
  try {
    await client.request({ method: 'DELETE', path });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.code === 404)) throw err;
  }
}

/**
 * On a real cluster the CRDs may not be installed yet; the sandbox loads them from crds/ itself. The suites run in
 * parallel and each may find them missing: a 409 AlreadyExists means another suite created them first, which is as
 * good (both then wait for Established).
 */
export async function ensureCrds(admin: KubeClient): Promise<void> {
  for (const crd of loadCrdDocuments()) {
    try {
      await admin.request({ path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}` });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 404)) throw err;
      await createUnlessExists(admin, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
      await waitFor(async () => {
        const got = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>({
          path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        });
        return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
      });
    }
  }
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
 * Polls `check` every 25 ms until it holds; resolves with the time that took (for a report, never for a bound). No
 * deadline of its own: the test's timeout is the only limit, as a busy machine is slow, not wrong.
 */
export async function waitFor(check: () => Promise<boolean> | boolean): Promise<number> {
  const started = Date.now();
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
  return Date.now() - started;
}
