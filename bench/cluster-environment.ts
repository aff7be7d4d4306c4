import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcrypt';
import { parseAllDocuments, stringify } from 'yaml';
import { KubeApiError, KubeClient } from '../src/kube/client.js';
import { kubeconfigFileAccess, kubeconfigFiles } from '../src/kube/cluster-source.js';
import { connectionFor } from '../src/kube/connection.js';
import type { Environment } from './environment.js';
import { setBackendTrust } from './tls.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const SESSIONS = '/apis/iam.kapi.io/v1beta1/loginsessions';
/** Cost of the bench user's hash: only its one login is checked against it. */
const HASH_COST = 10;
/** The chart rendered with its defaults: the source of kapi's RBAC rules (generated, checked by CI). */
const MANIFESTS = fileURLToPath(new URL('../../manifests/kapi-apiserver.yaml', import.meta.url));
const TOKEN_SECONDS = 24 * 3600;

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

/** The chart's ClusterRole and Role rules for kapi's ServiceAccount, as `make manifests` rendered them. */
function chartRules(): { cluster: PolicyRule[]; namespaced: PolicyRule[] } {
  const docs = parseAllDocuments(readFileSync(MANIFESTS, 'utf8')).map(
    (doc) => doc.toJSON() as { kind?: string; metadata?: { name?: string }; rules?: PolicyRule[] } | null,
  );
  const rules = (kind: string) => {
    const found = docs.find((doc) => doc?.kind === kind && doc.metadata?.name === 'kapi-apiserver')?.rules;
    if (!found) throw new Error(`${MANIFESTS} holds no ${kind} kapi-apiserver`);
    return found;
  };
  return { cluster: rules('ClusterRole'), namespaced: rules('Role') };
}

/**
 * BENCH_KUBECONFIG: a real cluster instead of the sandbox, for the forwarding and node-page rows. The kubeconfig's
 * user must be cluster-admin-like: the bench makes a namespace with kapi's signing key, a User allowed to read nodes
 * (in two groups, as people are) and its ClusterRole and binding (all named `kapi-bench-<id>`), and removes them at
 * the end. kapi's CRDs must be installed (`kubectl apply -f crds/`).
 *
 * Both sides run as they would in a cluster, so kube-apiserver does the same work for them as it would there: kapi
 * as a ServiceAccount with exactly the chart's RBAC (not the kubeconfig's admin, whose system:masters group skips
 * RBAC and API priority and fairness), and the direct path as an ordinary identity with the bench user's rights (a
 * ServiceAccount bound to the same ClusterRole), so "through kapi vs direct" compares the same request by the same
 * kind of caller. The admin's own cost per GET is kept as a reference (`adminHeaders`).
 * BENCH_BACKEND_PIDS=kube-apiserver=<pid>,etcd=<pid> adds their CPU when they run on this machine.
 */
export async function startClusterEnvironment(
  kubeconfig: string,
  options: { backendPids?: Record<string, number>; writable?: boolean } = {},
): Promise<Environment> {
  const access = await kubeconfigFileAccess(kubeconfigFiles(kubeconfig, process.env));
  const connection = connectionFor(access, 'kubeconfig');
  const client = new KubeClient(connection);
  const credentials = await connection.authHeaders();
  setBackendTrust({
    ca: access.ca?.toString('utf8'),
    cert: access.cert?.toString('utf8'),
    key: access.key?.toString('utf8'),
    rejectUnauthorized: !access.insecureSkipTlsVerify,
    servername: access.tlsServerName,
  });

  try {
    await client.request({ method: 'GET', path: USERS, query: { limit: '1' } });
  } catch (error) {
    connection.close();
    throw new Error(`kapi's CRDs are not installed in this cluster (kubectl apply -f crds/): ${String(error)}`, {
      cause: error,
    });
  }

  const name = `kapi-bench-${randomBytes(3).toString('hex')}`;
  const password = randomBytes(18).toString('base64url');
  const hash = await bcrypt.hash(password, HASH_COST);
  const created: string[] = [];
  let kapiKubeconfig: string | undefined;
  const create = async (path: string, body: unknown) => {
    await client.request({ method: 'POST', path, body });
    created.push(`${path}/${(body as { metadata: { name: string } }).metadata.name}`);
  };
  const stop = async () => {
    // Login sessions the bench's user left behind, then everything the bench made, newest first.
    const sessions = await client
      .request<{ items: { metadata: { name: string } }[] }>({
        method: 'GET',
        path: SESSIONS,
        query: { labelSelector: `iam.kapi.io/username=${name}` },
      })
      .catch(() => ({ items: [] }));
    for (const session of sessions.items) created.push(`${SESSIONS}/${session.metadata.name}`);
    for (const path of created.reverse()) {
      await client.request({ method: 'DELETE', path }).catch((error: unknown) => {
        if (!(error instanceof KubeApiError && error.code === 404)) console.error(`could not delete ${path}`);
      });
      // kapi is stopped: no controller takes its cleanup finalizer off a deleted User, so the bench does
      if (path.startsWith(`${USERS}/`))
        await client
          .request({
            method: 'PATCH',
            path,
            contentType: 'application/merge-patch+json',
            body: { metadata: { finalizers: null } },
          })
          .catch(() => undefined);
    }
    connection.close();
    if (kapiKubeconfig) rmSync(path.dirname(kapiKubeconfig), { recursive: true, force: true });
  };

  try {
    await create('/api/v1/namespaces', { metadata: { name } });
    await create(`/api/v1/namespaces/${name}/secrets`, {
      metadata: { name: 'kapi-jwt' },
      type: 'Opaque',
      data: { key: randomBytes(48).toString('base64') },
    });
    await create(USERS, {
      apiVersion: 'iam.kapi.io/v1beta1',
      kind: 'User',
      metadata: { name },
      spec: { email: `${name}@bench.kapi.test`, password: hash, groups: [`${name}:developers`, `${name}:operators`] },
    });
    await create(`${RBAC}/clusterroles`, {
      metadata: { name },
      rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }],
    });
    const serviceAccount = (sa: string) => ({ kind: 'ServiceAccount', name: sa, namespace: name });
    await create(`/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'reader' } });
    await create(`${RBAC}/clusterrolebindings`, {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }, serviceAccount('reader')],
    });
    // kapi's own identity: the chart's ServiceAccount rights, cluster-wide and in its namespace.
    const rules = chartRules();
    const kapiRole = `${name}-kapi`;
    await create(`/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'kapi-apiserver' } });
    await create(`${RBAC}/clusterroles`, { metadata: { name: kapiRole }, rules: rules.cluster });
    await create(`${RBAC}/clusterrolebindings`, {
      metadata: { name: kapiRole },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: kapiRole },
      subjects: [serviceAccount('kapi-apiserver')],
    });
    await create(`${RBAC}/namespaces/${name}/roles`, { metadata: { name: 'kapi-apiserver' }, rules: rules.namespaced });
    await create(`${RBAC}/namespaces/${name}/rolebindings`, {
      metadata: { name: 'kapi-apiserver' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kapi-apiserver' },
      subjects: [serviceAccount('kapi-apiserver')],
    });
    const tokenOf = async (sa: string) => {
      const review = await client.request<{ status: { token: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${name}/serviceaccounts/${sa}/token`,
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: TOKEN_SECONDS },
        },
      });
      return review.status.token;
    };
    const kapiToken = await tokenOf('kapi-apiserver');
    kapiKubeconfig = writeKubeconfig(connection.server.href, access, kapiToken);
    const user = await client.request<{ metadata: { uid: string } }>({ path: `${USERS}/${name}` });
    const readerToken = await tokenOf('reader');
    const count = async (resource: string) => {
      const list = await client.request<{ items: unknown[]; metadata: { remainingItemCount?: number } }>({
        method: 'GET',
        path: `/api/v1/${resource}`,
        query: { limit: '1' },
      });
      return list.items.length + (list.metadata.remainingItemCount ?? 0);
    };
    return {
      target: 'cluster',
      backendUrl: connection.server.origin + connection.server.pathname.replace(/\/+$/, ''),
      directHeaders: { Authorization: `Bearer ${readerToken}` },
      impersonatingHeaders: {
        Authorization: `Bearer ${kapiToken}`,
        'Impersonate-User': name,
        'Impersonate-Uid': user.metadata.uid,
        'Impersonate-Group': [`${name}:developers`, `${name}:operators`],
      },
      adminHeaders: credentials,
      kapiUser: { name, password },
      kapiEnv: {
        KAPI_SIGNING_KEY_SECRET: `${name}/kapi-jwt`,
        KAPI_CLUSTER_CONFIGURATION: `${name}/kapi`,
      },
      kubeconfig: kapiKubeconfig,
      backendPids: options.backendPids ?? backendPidsFrom(process.env.BENCH_BACKEND_PIDS),
      writable: options.writable ?? false,
      adminHashCost: HASH_COST,
      loginUser: { name, password, hash },
      nodeCount: await count('nodes'),
      podCount: await count('pods'),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A kubeconfig for kapi: the cluster as the bench reaches it, and kapi's ServiceAccount token. */
function writeKubeconfig(
  server: string,
  access: Awaited<ReturnType<typeof kubeconfigFileAccess>>,
  token: string,
): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kapi-bench-kapi-')), 'kubeconfig.yaml');
  const cluster: Record<string, unknown> = { server: server.replace(/\/+$/, '') };
  if (access.ca) cluster['certificate-authority-data'] = access.ca.toString('base64');
  if (access.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
  if (access.tlsServerName) cluster['tls-server-name'] = access.tlsServerName;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'bench', cluster }],
    users: [{ name: 'kapi', user: { token } }],
    contexts: [{ name: 'kapi', context: { cluster: 'bench', user: 'kapi' } }],
    'current-context': 'kapi',
  };
  writeFileSync(file, stringify(config), { mode: 0o600 });
  return file;
}

/** "kube-apiserver=123,etcd=456" → { 'kube-apiserver': 123, etcd: 456 } */
export function backendPidsFrom(text: string | undefined): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const entry of (text ?? '').split(',').filter(Boolean)) {
    const [role, pid] = entry.split('=');
    if (role && Number.isInteger(Number(pid))) pids[role] = Number(pid);
  }
  return pids;
}
