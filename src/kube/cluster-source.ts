import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ClusterChoice } from '../config/options.js';
import { connectionFor, type ClusterAccess, type ClusterSource, type KubeConnection } from './connection.js';
import { readKubeconfigs } from './kubeconfig.js';
import { kubeconfigAccess, type PluginAccess } from './kubeconfig-access.js';
import { selectContext } from './kubeconfig-context.js';
import { kapiContextReason } from './kapi-context.js';
import { tokenFileCredentials } from './token-file.js';

/** Where a pod's service-account token and cluster CA are mounted (the paths client-go's rest.InClusterConfig reads). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const SERVICE_ACCOUNT_CA = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';

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
  options: Parameters<typeof connectionFor>[2] = {},
): Promise<KubeConnection> {
  const access =
    source === 'in-cluster'
      ? await inClusterAccess(process.env)
      : await kubeconfigFileAccess(kubeconfigFiles(kubeconfigPath, process.env));
  return connectionFor(access, source, options);
}

/** The kubeconfig files to read, first one wins for the current context (kubectl's merge order). */
export function kubeconfigFiles(kubeconfigPath: string | undefined, env: Environment): string[] {
  const list = kubeconfigPath || env.KUBECONFIG;
  if (list) return list.split(path.delimiter).filter(Boolean);
  const home = env.HOME || env.USERPROFILE;
  return home ? [path.join(home, '.kube', 'config')] : [];
}

/** Access from kubeconfig files (merged), for `context` or the current context. */
export async function kubeconfigFileAccess(
  files: readonly string[],
  context?: string,
  pluginAccess: PluginAccess = loadPluginAccess,
): Promise<ClusterAccess> {
  return kubeconfigAccess(selectContext(readKubeconfigs(files), context), pluginAccess);
}

/**
 * Why the kubeconfig's current context is a kapi (kapi's own plugin, or this kapi's own listener) and not a cluster
 * to connect to; undefined when it may be one, or when the files cannot be read (connecting then says why).
 */
export function kubeconfigIsKapi(files: readonly string[], ownPorts: readonly number[]): string | undefined {
  try {
    return kapiContextReason(selectContext(readKubeconfigs(files)), ownPorts);
  } catch {
    return undefined;
  }
}

/** Loaded only for a user with an exec or auth-provider plugin: it pulls in client-node. */
const loadPluginAccess: PluginAccess = async (context, tls) =>
  (await import('./kubeconfig-plugin.js')).pluginAccess(context, tls);

/**
 * Access from inside a pod, as client-go's rest.InClusterConfig: https://$KUBERNETES_SERVICE_HOST:PORT (an IPv6
 * host in brackets), the mounted cluster CA, and the mounted token re-read as kubelet rotates it.
 */
export async function inClusterAccess(
  env: Environment,
  files: { token: string; ca: string } = { token: SERVICE_ACCOUNT_TOKEN, ca: SERVICE_ACCOUNT_CA },
): Promise<ClusterAccess> {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      'in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a pod?)',
    );
  }
  if (!existsSync(files.token)) throw new Error(`in-cluster: no service-account token at ${files.token}`);
  let ca: Buffer;
  try {
    ca = readFileSync(files.ca);
  } catch (error) {
    throw new Error(`in-cluster: the cluster CA ${files.ca} could not be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return {
    server: `https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`,
    ca,
    credentials: await tokenFileCredentials(files.token, 'in-cluster: the service-account token'),
  };
}
