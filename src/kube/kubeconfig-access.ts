import { readFileSync } from 'node:fs';
import type { ClusterAccess } from './connection.js';
import { KubeconfigError } from './kubeconfig.js';
import type { KubeconfigContext, UserSettings } from './kubeconfig-context.js';
import { tokenFileCredentials } from './token-file.js';

/** The TLS half of an access: what the connection's agent is built with. */
export type ClusterTls = Omit<ClusterAccess, 'credentials'>;

/** Credentials a plugin (exec, auth-provider) produces; see kubeconfig-plugin.ts. */
export type PluginAccess = (context: KubeconfigContext, tls: ClusterTls) => Promise<ClusterAccess>;

/**
 * Access for a selected kubeconfig context. Tokens, token files, client certificates and basic auth are handled
 * here; a user with an exec or auth-provider plugin goes to `pluginAccess`, which loads client-node only then.
 */
export async function kubeconfigAccess(context: KubeconfigContext, pluginAccess: PluginAccess): Promise<ClusterAccess> {
  const { cluster, user } = context;
  const where = `kubeconfig: cluster "${cluster.name}"`;
  const tls: ClusterTls = {
    server: cluster.server.href,
    ca: pem(where, 'certificate-authority', cluster.certificateAuthorityData, cluster.certificateAuthority),
    insecureSkipTlsVerify: cluster.insecureSkipTlsVerify,
    tlsServerName: cluster.tlsServerName,
  };
  if (!user) return { ...tls, credentials: () => Promise.resolve({}) };
  if (user.plugin) return pluginAccess(context, tls);
  const who = `kubeconfig: user "${user.name}"`;
  return {
    ...tls,
    cert: pem(who, 'client-certificate', user.clientCertificateData, user.clientCertificate),
    key: pem(who, 'client-key', user.clientKeyData, user.clientKey),
    credentials: await credentialsOf(user, who),
  };
}

async function credentialsOf(user: UserSettings, who: string): Promise<ClusterAccess['credentials']> {
  if (user.tokenFile) return tokenFileCredentials(user.tokenFile, `${who}: tokenFile`);
  let headers: Record<string, string> = {};
  if (user.token) headers = { Authorization: `Bearer ${user.token}` };
  else if (user.username) {
    const basic = Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64');
    headers = { Authorization: `Basic ${basic}` };
  }
  const fixed = Object.freeze(headers);
  return () => Promise.resolve(fixed);
}

/** PEM from `-data` (base64, wins as in client-go) or from the file; neither: undefined. Never quotes content. */
function pem(where: string, key: string, data: string | undefined, file: string | undefined): Buffer | undefined {
  let bytes: Buffer;
  if (data) {
    bytes = Buffer.from(data, 'base64');
    if (!isPem(bytes)) throw new KubeconfigError(`${where}: ${key}-data is not base64-encoded PEM`);
    return bytes;
  }
  if (!file) return undefined;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new KubeconfigError(`${where}: ${key} ${file} could not be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!isPem(bytes)) throw new KubeconfigError(`${where}: ${key} ${file} is not PEM`);
  return bytes;
}

function isPem(bytes: Buffer): boolean {
  return bytes.includes('-----BEGIN ');
}
