import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { EXEC_API_VERSION } from './exec-credential.js';

/** The parts of a kubeconfig the plugin reads and writes; everything else in the file is kept as it is. */
export interface Kubeconfig {
  apiVersion?: string;
  kind?: string;
  clusters?: { name: string; cluster?: { server: string; 'certificate-authority-data'?: string } }[];
  users?: { name: string; user?: { exec?: ExecConfig } }[];
  contexts?: { name: string; context?: { cluster: string; user: string; namespace?: string } }[];
  'current-context'?: string;
  [field: string]: unknown;
}

export interface ExecConfig {
  apiVersion: string;
  command: string;
  args: string[];
  env?: { name: string; value: string }[] | null;
  interactiveMode: 'Never' | 'IfAvailable' | 'Always';
  provideClusterInfo: boolean;
}

export interface KapiLogin {
  server: string;
  caPem?: string;
  username: string;
  clientId: string;
  /** Only when it is not the default: kept in the exec environment, not in the arguments. */
  clientSecret?: string;
  contextName: string;
  /** Signed in with --browser: a new sign-in, when one is needed, goes through the browser too. */
  browser?: boolean;
}

export const PLUGIN_COMMAND = 'kubectl-kapi';

/** The file kubectl would write: --kubeconfig, else the first file of KUBECONFIG, else ~/.kube/config. */
export function kubeconfigPath(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag) return flag;
  const first = env.KUBECONFIG?.split(delimiter).find((entry) => entry !== '');
  return first ?? join(env.HOME || homedir(), '.kube', 'config');
}

/** The cluster, user and context names a login uses: `kapi-<host>`, `<user>@kapi-<host>`, and the context name. */
export function namesFor(server: string, username: string): { cluster: string; user: string; context: string } {
  const host = new URL(server).host;
  const cluster = `kapi-${host}`;
  return { cluster, user: `${username}@${cluster}`, context: `${username}@${cluster}` };
}

/** Pure: the kubeconfig with the login's cluster, exec user and context added or replaced, and made current. */
export function withLogin(config: Kubeconfig, login: KapiLogin): Kubeconfig {
  const names = namesFor(login.server, login.username);
  const args = ['token', '--server', login.server, '--username', login.username];
  if (login.clientId !== 'kapi') args.push('--client-id', login.clientId);
  if (login.browser) args.push('--browser');
  const exec: ExecConfig = {
    apiVersion: EXEC_API_VERSION,
    command: PLUGIN_COMMAND,
    args,
    env: login.clientSecret ? [{ name: 'KAPI_CLIENT_SECRET', value: login.clientSecret }] : null,
    // kubectl lets the plugin prompt only when its stdin is a terminal; scripts get an error instead of a hang
    interactiveMode: 'IfAvailable',
    // the plugin learns the server and its CA from kubectl: no second copy of the CA to keep in sync
    provideClusterInfo: true,
  };
  const cluster: { server: string; 'certificate-authority-data'?: string } = { server: login.server };
  if (login.caPem) cluster['certificate-authority-data'] = Buffer.from(login.caPem).toString('base64');
  return {
    ...config,
    apiVersion: config.apiVersion ?? 'v1',
    kind: config.kind ?? 'Config',
    clusters: upsert(config.clusters, { name: names.cluster, cluster }),
    users: upsert(config.users, { name: names.user, user: { exec } }),
    contexts: upsert(config.contexts, {
      name: login.contextName,
      context: { cluster: names.cluster, user: names.user },
    }),
    'current-context': login.contextName,
  };
}

/** What `logout` needs from a context written by `login`: the server, user and client, and the cluster's CA. */
export function loginOf(
  config: Kubeconfig,
  contextName: string | undefined,
): { server: string; username: string; clientId: string; caPem?: string } {
  const name = contextName ?? config['current-context'];
  if (!name) throw new Error('no context given and no current context in the kubeconfig');
  const context = config.contexts?.find((entry) => entry.name === name)?.context;
  if (!context) throw new Error(`context "${name}" is not in the kubeconfig`);
  const exec = config.users?.find((entry) => entry.name === context.user)?.user?.exec;
  if (!exec || exec.command !== PLUGIN_COMMAND)
    throw new Error(`context "${name}" was not written by kubectl kapi login`);
  const flag = (flagName: string) => {
    const index = exec.args.indexOf(flagName);
    return index >= 0 ? exec.args[index + 1] : undefined;
  };
  const server = flag('--server');
  const username = flag('--username');
  if (!server || !username) throw new Error(`context "${name}" lacks --server or --username in its exec arguments`);
  const caData = config.clusters?.find((entry) => entry.name === context.cluster)?.cluster?.[
    'certificate-authority-data'
  ];
  return {
    server,
    username,
    clientId: flag('--client-id') ?? 'kapi',
    caPem: caData ? Buffer.from(caData, 'base64').toString('utf8') : undefined,
  };
}

export async function readKubeconfig(path: string): Promise<Kubeconfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const parsed: unknown = parse(text);
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${path} is not a kubeconfig`);
  return parsed as Kubeconfig;
}

/** Readable by the owner only, as kubectl writes it; renamed into place. */
export async function writeKubeconfig(path: string, config: Kubeconfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, stringify(config), { mode: 0o600 });
  await rename(temporary, path);
}

function upsert<T extends { name: string }>(entries: T[] | undefined, entry: T): T[] {
  const list = entries ?? [];
  const index = list.findIndex((existing) => existing.name === entry.name);
  return index >= 0 ? list.map((existing, i) => (i === index ? entry : existing)) : [...list, entry];
}
