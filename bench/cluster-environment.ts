import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
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

/**
 * BENCH_KUBECONFIG: a real cluster instead of the sandbox, for the forwarding and node-page rows. The kubeconfig's
 * user must be cluster-admin-like: the bench makes a namespace with kapi's signing key, a User allowed to read nodes
 * and its ClusterRole and binding (all named `kapi-bench-<id>`), and removes them at the end. kapi's CRDs must be
 * installed (`kubectl apply -f crds/`). kapi runs with this kubeconfig, as kapi's own identity; the direct path uses
 * the same user. BENCH_BACKEND_PIDS=kube-apiserver=<pid>,etcd=<pid> adds their CPU when they run on this machine.
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
    }
    connection.close();
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
      spec: { email: `${name}@bench.kapi.test`, password: hash, groups: [] },
    });
    await create(`${RBAC}/clusterroles`, {
      metadata: { name },
      rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }],
    });
    await create(`${RBAC}/clusterrolebindings`, {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }],
    });
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
      directHeaders: credentials,
      adminHeaders: credentials,
      kapiUser: { name, password },
      kapiEnv: {
        KAPI_SIGNING_KEY_SECRET: `${name}/kapi-jwt`,
        KAPI_CLUSTER_CONFIGURATION: `${name}/kapi`,
      },
      kubeconfig,
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

/** "kube-apiserver=123,etcd=456" → { 'kube-apiserver': 123, etcd: 456 } */
export function backendPidsFrom(text: string | undefined): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const entry of (text ?? '').split(',').filter(Boolean)) {
    const [role, pid] = entry.split('=');
    if (role && Number.isInteger(Number(pid))) pids[role] = Number(pid);
  }
  return pids;
}
