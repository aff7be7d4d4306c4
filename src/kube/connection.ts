import http from 'node:http';
import https from 'node:https';
import { ClusterHealth, type ClusterHealthLog, type ProbeResult } from './cluster-health.js';

export type ClusterSource = 'sandbox' | 'kubeconfig' | 'in-cluster';

/**
 * Everything needed to reach one kube-apiserver as kapi: where it is, the TLS settings to trust and present, and
 * kapi's own credentials. Built from the pod's service account, a kubeconfig, or a plain URL and token.
 */
export interface ClusterAccess {
  server: string;
  /** PEM CA bundle to trust; absent: the system roots. */
  ca?: Buffer;
  /** PEM client certificate and key (mutual TLS). */
  cert?: Buffer;
  key?: Buffer;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  /** kapi's own credentials (Authorization header); called at most every 10 s so rotated tokens are picked up */
  credentials(): Promise<Record<string, string>>;
}

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
  /** What `authHeaders` answers when it can answer at once (read lately); undefined when it must be asked. */
  currentAuthHeaders?(): Record<string, string> | undefined;
  /** Whether kube-apiserver takes kapi's credentials, and when it answers again after an outage. */
  readonly health: ClusterHealth;
  /**
   * kube-apiserver answered 401 to kapi's own credentials: they are read again on the next request (a rotated or
   * replaced token file), and `health` reports it until they are accepted.
   */
  credentialsRefused(): void;
  /** "https://10.0.0.1:443 (in-cluster)" — safe to log: no credentials. */
  describe(): string;
  close(): void;
}

/** Credentials are re-read at most this often, so rotated service-account tokens are picked up. */
const AUTH_REFRESH_MS = 10_000;

export function connectionFor(
  access: ClusterAccess,
  source: ClusterSource,
  options: { log?: ClusterHealthLog; probeIntervalMs?: number } = {},
): KubeConnection {
  const server = new URL(access.server);
  if (server.protocol !== 'https:' && server.protocol !== 'http:') {
    throw new Error(`${source}: the server ${server.origin} is neither https nor http`);
  }
  if (server.protocol === 'http:' && !access.insecureSkipTlsVerify) {
    // credentials in clear text only when whoever configured the access said so (kubeconfig, sandbox on loopback)
    throw new Error(`${source}: ${server.origin} is plain http; credentials are only sent over it when allowed`);
  }
  const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const };
  const agent =
    server.protocol === 'https:'
      ? new https.Agent({
          ...agentOptions,
          ca: access.ca,
          cert: access.cert,
          key: access.key,
          rejectUnauthorized: !access.insecureSkipTlsVerify,
          servername: access.tlsServerName,
        })
      : new http.Agent(agentOptions);

  let cached: { headers: Record<string, string>; at: number } | undefined;
  // One refresh at a time: concurrent callers share it (an exec plugin runs once, not once per request).
  let refreshing: Promise<Record<string, string>> | undefined;
  const authHeaders = (): Promise<Record<string, string>> => {
    if (cached && Date.now() - cached.at < AUTH_REFRESH_MS) return Promise.resolve(cached.headers);
    refreshing ??= access
      .credentials()
      .then((given) => {
        const headers = authorizationOnly(given);
        cached = { headers, at: Date.now() };
        return headers;
      })
      .finally(() => (refreshing = undefined));
    return refreshing;
  };

  const health = new ClusterHealth(
    async () => {
      const result = await probeReadiness(server, agent, authHeaders);
      // still refused: read the credentials again for the next probe (a token file rewritten meanwhile)
      if (result === 'refused') cached = undefined;
      return result;
    },
    options.log,
    options.probeIntervalMs,
  );
  return {
    source,
    server,
    agent,
    authHeaders,
    currentAuthHeaders: () => (cached && Date.now() - cached.at < AUTH_REFRESH_MS ? cached.headers : undefined),
    health,
    credentialsRefused: () => {
      cached = undefined;
      health.refused();
    },
    describe: () => `${server.origin} (${source})`,
    close: () => {
      health.close();
      agent.destroy();
    },
  };
}

const PROBE_TIMEOUT_MS = 2_000;

/**
 * kube-apiserver's own `/readyz` with kapi's credentials (allowed to every authenticated user by the default
 * `system:public-info-viewer` role): 200 once it and etcd serve, 401 while it refuses the credentials. A 403 (a
 * cluster without that role) still proves the credentials are taken.
 */
async function probeReadiness(
  server: URL,
  agent: http.Agent,
  authHeaders: () => Promise<Record<string, string>>,
): Promise<ProbeResult> {
  const headers = await authHeaders();
  const url = new URL(`${server.pathname.replace(/\/+$/, '')}/readyz`, server);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const request = transport.get(url, { headers, agent, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      resolve(code === 200 || code === 403 ? 'ready' : code === 401 ? 'refused' : 'failing');
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve('failing'));
  });
}

/** Access with a bearer token; a plain http server (the sandbox on loopback, a test fake) is allowed. */
export function tokenAccess(server: string, token: string): ClusterAccess {
  const headers = Object.freeze({ Authorization: `Bearer ${token}` });
  return {
    server,
    insecureSkipTlsVerify: new URL(server).protocol === 'http:',
    credentials: () => Promise.resolve(headers),
  };
}

function authorizationOnly(given: Record<string, string>): Record<string, string> {
  const value = Object.entries(given).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  const headers: Record<string, string> = value ? { Authorization: value } : {};
  return Object.freeze(headers);
}
