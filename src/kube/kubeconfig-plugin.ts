import type https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClusterAccess } from './connection.js';
import { KubeconfigError } from './kubeconfig.js';
import type { ClusterTls } from './kubeconfig-access.js';
import type { KubeconfigContext } from './kubeconfig-context.js';

/**
 * Credentials from an exec or auth-provider plugin (aws eks get-token, gke-gcloud-auth-plugin, kubelogin, OIDC…),
 * through client-node, which implements them. It is imported here and only here: loading it costs about 85 MiB of
 * memory, which a server with a token, a certificate or a service account never pays. The plugin runs once at
 * start-up, so a broken one fails there, and again whenever client-node's cached credential expires.
 */
export async function pluginAccess(context: KubeconfigContext, tls: ClusterTls): Promise<ClusterAccess> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  // Only the selected context, its cluster and its user (paths already absolute): JSON is YAML to client-node.
  const clusterName = context.cluster.name;
  const userName = context.user?.name ?? '';
  kc.loadFromString(
    JSON.stringify({
      clusters: [{ name: clusterName, cluster: context.written.cluster }],
      users: [{ name: userName, user: context.written.user ?? {} }],
      contexts: [{ name: context.name, context: { cluster: clusterName, user: userName } }],
      'current-context': context.name,
    }),
  );
  const who = `kubeconfig: user "${userName}"`;
  const first = await applied(kc, who);
  return {
    ...tls,
    // an exec plugin may hand out a client certificate instead of (or with) a token
    cert: first.cert,
    key: first.key,
    credentials: async () => (await applied(kc, who)).headers,
  };
}

async function applied(
  kc: KubeConfig,
  who: string,
): Promise<{ headers: Record<string, string>; cert?: Buffer; key?: Buffer }> {
  const opts: https.RequestOptions = { headers: {} };
  try {
    await kc.applyToHTTPSOptions(opts);
  } catch (error) {
    // no `cause`: a parse error of the plugin's output quotes that output, which holds the credential
    throw new KubeconfigError(`${who}: the credentials plugin failed: ${safeReason(error)}`);
  }
  const given = (opts.headers ?? {}) as Record<string, string>;
  const headers: Record<string, string> = {};
  if (given.Authorization) headers.Authorization = given.Authorization;
  if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return { headers, cert: buffer(opts.cert), key: buffer(opts.key) };
}

function buffer(value: unknown): Buffer | undefined {
  if (typeof value === 'string') return Buffer.from(value);
  return Buffer.isBuffer(value) ? value : undefined;
}

/** The plugin's own diagnostics (stderr, spawn errors) are kept, briefly; anything parsed from its output is not. */
function safeReason(error: unknown): string {
  if (error instanceof SyntaxError) return 'its output is not an ExecCredential (not JSON)';
  const message = error instanceof Error ? error.message.trim().split('\n')[0]?.trim() : undefined;
  if (!message) return 'no reason given';
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
