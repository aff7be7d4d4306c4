import { isMapping, KubeconfigError, type Kubeconfig, type KubeconfigFields } from './kubeconfig.js';

/** The cluster of the selected context, as kapi uses it. File paths are absolute. */
export interface ClusterSettings {
  name: string;
  server: URL;
  certificateAuthority?: string;
  /** base64 PEM; wins over the file, as in client-go */
  certificateAuthorityData?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
}

/** The user of the selected context. Credentials either come from these fields or, with `plugin`, from a plugin. */
export interface UserSettings {
  name: string;
  token?: string;
  /** re-read as it rotates; wins over `token` (client-go reads the file after its first use of the token) */
  tokenFile?: string;
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  username?: string;
  password?: string;
  /** exec (EKS, GKE, OIDC login helpers…) or auth-provider: credentials only a plugin can produce */
  plugin?: 'exec' | 'auth-provider';
}

export interface KubeconfigContext {
  name: string;
  cluster: ClusterSettings;
  /** Absent: the context names no user, so requests carry no credentials (kubectl allows it too). */
  user: UserSettings | undefined;
  /** The selected entries as written, for the plugin path, which hands them to client-node unchanged. */
  written: { cluster: KubeconfigFields; user: KubeconfigFields | undefined };
}

/** Impersonation is kapi's to set per request: a kubeconfig user that impersonates someone cannot be kapi. */
const IMPERSONATION = ['as', 'as-uid', 'as-groups', 'as-user-extra'];

/** The current context (or `chosen`) with its cluster and user, checked; errors name entries, never values. */
export function selectContext(config: Kubeconfig, chosen?: string): KubeconfigContext {
  const name = chosen || config.currentContext;
  if (!name) throw new KubeconfigError('kubeconfig: no current-context is set');
  const which = `${chosen ? 'the context' : 'the current context'} "${name}"`;
  const context = config.contexts.get(name);
  if (!context) throw new KubeconfigError(`kubeconfig: ${which} names no cluster (there is no context "${name}")`);
  const clusterName = text(context, 'cluster', `context "${name}"`);
  if (!clusterName) throw new KubeconfigError(`kubeconfig: ${which} names no cluster`);
  const cluster = config.clusters.get(clusterName);
  if (!cluster) {
    throw new KubeconfigError(`kubeconfig: ${which} names no cluster (cluster "${clusterName}" is not defined)`);
  }
  const userName = text(context, 'user', `context "${name}"`);
  const user = userName === undefined ? undefined : config.users.get(userName);
  if (userName !== undefined && !user) {
    throw new KubeconfigError(`kubeconfig: ${which} names user "${userName}", which is not defined`);
  }
  return {
    name,
    cluster: clusterSettings(clusterName, cluster),
    user: userName === undefined || !user ? undefined : userSettings(userName, user),
    written: { cluster, user },
  };
}

function clusterSettings(name: string, fields: KubeconfigFields): ClusterSettings {
  const where = `cluster "${name}"`;
  const server = text(fields, 'server', where);
  if (!server) throw new KubeconfigError(`kubeconfig: ${where} has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`kubeconfig: ${where}: server is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeconfigError(`kubeconfig: ${where}: server is neither an https:// nor an http:// URL`);
  }
  const insecureSkipTlsVerify = flag(fields, 'insecure-skip-tls-verify', where);
  if (url.protocol === 'http:' && !insecureSkipTlsVerify) {
    // client-go and client-node refuse to send credentials over plain HTTP unless the kubeconfig says it is meant
    throw new KubeconfigError(
      `kubeconfig: ${where} is plain ${url.origin}; set insecure-skip-tls-verify: true to allow it`,
    );
  }
  if (text(fields, 'proxy-url', where)) {
    throw new KubeconfigError(`kubeconfig: ${where} sets proxy-url, which kapi does not support`);
  }
  return {
    name,
    server: url,
    certificateAuthority: text(fields, 'certificate-authority', where),
    certificateAuthorityData: text(fields, 'certificate-authority-data', where),
    insecureSkipTlsVerify,
    tlsServerName: text(fields, 'tls-server-name', where),
  };
}

function userSettings(name: string, fields: KubeconfigFields): UserSettings {
  const where = `user "${name}"`;
  const impersonates = IMPERSONATION.filter((key) => fields[key] !== undefined && fields[key] !== null);
  if (impersonates.length > 0) {
    throw new KubeconfigError(
      `kubeconfig: ${where} sets ${impersonates.join(', ')}; kapi impersonates its callers itself, so its own user cannot impersonate`,
    );
  }
  const plugin = isMapping(fields.exec) ? 'exec' : isMapping(fields['auth-provider']) ? 'auth-provider' : undefined;
  const user: UserSettings = {
    name,
    token: text(fields, 'token', where),
    tokenFile: text(fields, 'tokenFile', where),
    clientCertificate: text(fields, 'client-certificate', where),
    clientCertificateData: text(fields, 'client-certificate-data', where),
    clientKey: text(fields, 'client-key', where),
    clientKeyData: text(fields, 'client-key-data', where),
    username: text(fields, 'username', where),
    password: text(fields, 'password', where),
    plugin,
  };
  if (plugin) return user;
  const hasCert = Boolean(user.clientCertificate || user.clientCertificateData);
  const hasKey = Boolean(user.clientKey || user.clientKeyData);
  if (hasCert !== hasKey) {
    throw new KubeconfigError(
      `kubeconfig: ${where} has a client ${hasCert ? 'certificate without a key' : 'key without a certificate'}`,
    );
  }
  if ((user.token || user.tokenFile) && (user.username || user.password)) {
    throw new KubeconfigError(`kubeconfig: ${where} sets both a token and a username/password; use one`);
  }
  return user;
}

function text(fields: KubeconfigFields, key: string, where: string): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new KubeconfigError(`kubeconfig: ${where}: ${key} is not a string`);
  return value;
}

function flag(fields: KubeconfigFields, key: string, where: string): boolean {
  const value = fields[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new KubeconfigError(`kubeconfig: ${where}: ${key} is not true or false`);
  return value;
}
