import { existsSync } from 'node:fs';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterChoice } from '../config/options.js';
import { connectionFromKubeConfig, type ClusterSource, type KubeConnection } from './connection.js';

/** Where a pod's service-account token is mounted (the same path client-go's rest.InClusterConfig reads). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Which cluster to use. An explicit choice wins. `auto` prefers, in order: running in a pod (the service host
 * variable and a mounted token), a kubeconfig (KUBECONFIG or ~/.kube/config), and else the built-in sandbox.
 * (KAPI_SANDBOX=1 was already turned into `sandbox` by the options.)
 */
export function resolveClusterSource(
  choice: ClusterChoice,
  env: Environment,
  fileExists: (file: string) => boolean = existsSync,
): ClusterSource {
  if (choice !== 'auto') return choice;
  if (env.KUBERNETES_SERVICE_HOST && fileExists(SERVICE_ACCOUNT_TOKEN)) return 'in-cluster';
  if (env.KUBECONFIG) return 'kubeconfig';
  const home = env.HOME || env.USERPROFILE;
  if (home && fileExists(path.join(home, '.kube', 'config'))) return 'kubeconfig';
  return 'sandbox';
}

/**
 * A connection to a real cluster. In a pod: the mounted service-account token (re-read as it rotates) and CA.
 * Otherwise the kubeconfig file(s) — `kubeconfigPath` may list several, separated as in KUBECONFIG — or
 * ~/.kube/config, with the current context.
 */
export async function connectToCluster(
  source: 'kubeconfig' | 'in-cluster',
  kubeconfigPath?: string,
): Promise<KubeConnection> {
  const kc = new KubeConfig();
  if (source === 'in-cluster') {
    if (!process.env.KUBERNETES_SERVICE_HOST || !process.env.KUBERNETES_SERVICE_PORT) {
      throw new Error(
        'in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a pod?)',
      );
    }
    if (!existsSync(SERVICE_ACCOUNT_TOKEN))
      throw new Error(`in-cluster: no service-account token at ${SERVICE_ACCOUNT_TOKEN}`);
    kc.loadFromCluster();
  } else {
    loadKubeconfig(kc, kubeconfigFiles(kubeconfigPath, process.env));
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new Error(`${source}: the current context "${kc.getCurrentContext() || '(none)'}" names no cluster`);
  }
  if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
    // client-node refuses to send credentials over plain HTTP unless the kubeconfig says it is meant
    throw new Error(
      `${source}: cluster "${cluster.name}" is plain ${cluster.server}; set insecure-skip-tls-verify: true to allow it`,
    );
  }
  return connectionFromKubeConfig(kc, source);
}

/** The kubeconfig files to read, first one wins for the current context (kubectl's merge order). */
export function kubeconfigFiles(kubeconfigPath: string | undefined, env: Environment): string[] {
  const list = kubeconfigPath || env.KUBECONFIG;
  if (list) return list.split(path.delimiter).filter(Boolean);
  const home = env.HOME || env.USERPROFILE;
  return home ? [path.join(home, '.kube', 'config')] : [];
}

function loadKubeconfig(kc: KubeConfig, files: string[]): void {
  if (files.length === 0) throw new Error('kubeconfig: no file given and no home directory to find ~/.kube/config in');
  files.forEach((file, i) => {
    const next = i === 0 ? kc : new KubeConfig();
    try {
      next.loadFromFile(file);
    } catch (error) {
      // no `cause`: a YAML error quotes the file, which may hold credentials
      // eslint-disable-next-line preserve-caught-error
      throw new Error(`kubeconfig ${file} could not be read: ${safeReason(error)}`);
    }
    if (next !== kc) mergeFirstWins(kc, next);
  });
}

/** kubectl's merge: the first file to name a cluster, user, context or current context wins; no duplicates error. */
function mergeFirstWins(kc: KubeConfig, next: KubeConfig): void {
  for (const cluster of next.clusters) if (!kc.getCluster(cluster.name)) kc.addCluster(cluster);
  for (const user of next.users) if (!kc.getUser(user.name)) kc.addUser(user);
  for (const context of next.contexts) if (!kc.getContextObject(context.name)) kc.addContext(context);
  if (!kc.getCurrentContext() && next.getCurrentContext()) kc.setCurrentContext(next.getCurrentContext());
}

/** A YAML error quotes the offending text, which in a kubeconfig may be a token: only its position is kept. */
function safeReason(error: unknown): string {
  const e = error as { code?: unknown; name?: string; message?: string; mark?: { line?: number } };
  if (typeof e.code === 'string') return e.message ?? e.code;
  if (e.name === 'YAMLException')
    return `not valid YAML${e.mark?.line !== undefined ? ` (line ${e.mark.line + 1})` : ''}`;
  if (e.message && /^(clusters|users|contexts)\[\d+\]\.[\w.]+ is missing$/.test(e.message)) return e.message;
  return 'not a valid kubeconfig';
}
