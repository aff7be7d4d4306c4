import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

export type ClusterSource = 'sandbox' | 'kubeconfig' | 'in-cluster';

/**
 * How kapi reaches kube-apiserver: the base URL, one keep-alive agent carrying the cluster's TLS settings, and the
 * credentials of kapi's own identity (service account, kubeconfig user, or the sandbox's service-account token).
 * Every cluster call — caches, stores, reviews, the /api forwarder — goes through one connection.
 */
export interface KubeConnection {
  readonly source: ClusterSource;
  readonly server: URL;
  readonly agent: http.Agent;
  /** Authorization (and nothing else the caller could confuse with its own) for kapi's identity. */
  authHeaders(): Promise<Record<string, string>>;
  /** "https://10.0.0.1:443 (in-cluster)" — safe to log: no credentials. */
  describe(): string;
  close(): void;
}

/** Credentials are re-read at most this often, so rotated service-account tokens are picked up. */
const AUTH_REFRESH_MS = 10_000;

export async function connectionFromKubeConfig(kc: KubeConfig, source: ClusterSource): Promise<KubeConnection> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const server = new URL(cluster.server);
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const };
  const agent =
    server.protocol === 'https:'
      ? new https.Agent({
          ...agentOptions,
          ca: tls.ca,
          cert: tls.cert,
          key: tls.key,
          rejectUnauthorized: tls.rejectUnauthorized ?? true,
          servername: tls.servername,
        })
      : new http.Agent(agentOptions);

  let cached: { headers: Record<string, string>; at: number } | undefined;
  const authHeaders = async (): Promise<Record<string, string>> => {
    const now = Date.now();
    if (cached && now - cached.at < AUTH_REFRESH_MS) return cached.headers;
    const opts: https.RequestOptions = { headers: {} };
    await kc.applyToHTTPSOptions(opts);
    const given = (opts.headers ?? {}) as Record<string, string>;
    const headers: Record<string, string> = {};
    if (given.Authorization) headers.Authorization = given.Authorization;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    cached = { headers, at: now };
    return headers;
  };

  return {
    source,
    server,
    agent,
    authHeaders,
    describe: () => `${server.origin} (${source})`,
    close: () => agent.destroy(),
  };
}

/** A kubeconfig for a server URL and bearer token; the sandbox is plain HTTP on loopback. */
export function kubeConfigFor(server: string, token: string, name = 'kapi'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name, server, skipTLSVerify: server.startsWith('http:') }],
    users: [{ name, token }],
    contexts: [{ name, cluster: name, user: name }],
    currentContext: name,
  });
  return kc;
}
