import { randomBytes, randomUUID } from 'node:crypto';
import { startDirectory } from './directory/directory.js';
import { nowTimestamp } from './registry-store.js';
import type { KubeObject } from './resource-types.js';

/**
 * The sandbox's LDAP identity provider (`make run ARGS=--sandbox-directory=…`): a directory-backed user to log in as,
 * next to the local `admin`.
 *
 * - `demo`: a real OpenLDAP (Debian's slapd, as the tests run it) on loopback with a generated CA, seeded with the
 *   user `demo` (a random password, printed at start) in the group `demo-team`, and a RoleBinding that lets that group
 *   view the namespace `demo`: a login shows the whole path (directory bind, groups, a linked User, RBAC by a
 *   directory group) with nothing else installed.
 * - a URL: that directory, searched under its base DN by `uid` (or `mail` for a login with "@"), groups from the
 *   users' `memberOf`; nothing is bound: grant a directory group what it should have with a RoleBinding.
 * Either way the provider is called `directory`, maps with `auto`, and its Secrets live in kapi-system as in a cluster.
 */
export type SandboxDirectoryOption =
  | { kind: 'demo' }
  | { kind: 'url'; url: string; baseDN: string; bindDN?: string; bindPassword?: string; caPem?: string };

export const DIRECTORY_PROVIDER = 'directory';
const SECRET = 'kapi-sandbox-directory';
export const DEMO_USER = 'demo';
export const DEMO_GROUP = 'demo-team';
export const DEMO_NAMESPACE = 'demo';
const DEMO_CLUSTER_ROLE = 'view';

export interface SandboxDirectoryInfo {
  /** The identity provider's name in the ClusterConfiguration. */
  provider: string;
  url: string;
  usersDN: string;
  /** With `demo`: the seeded directory user, its group and what the group may do. */
  demoUser?: { name: string; password: string; group: string; namespace: string; clusterRole: string };
}

export interface PreparedDirectory {
  info: SandboxDirectoryInfo;
  /** The entry of `spec.authentication.identityProviders`. */
  identityProvider: Record<string, unknown>;
  /** The Secret (kapi-system) the provider's bind password and CA come from; absent when it needs none. */
  secret?: { name: string; data: Record<string, string> };
  roleBindings: KubeObject[];
  stop(): Promise<void>;
}

export async function prepareSandboxDirectory(option: SandboxDirectoryOption): Promise<PreparedDirectory> {
  return option.kind === 'demo' ? demoDirectory() : directoryAt(option);
}

async function demoDirectory(): Promise<PreparedDirectory> {
  const directory = await startDirectory();
  // slapd is a process of its own: a sandbox that exits without stopping it must not leave it running.
  const killOnExit = () => process.kill(directory.slapd.pid, 'SIGTERM');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await directory.stop({ remove: true });
  };
  try {
    const password = randomBytes(12).toString('base64url');
    const userDN = await directory.addUser({ uid: DEMO_USER, password, mail: 'demo@kapi.local', cn: 'Demo User' });
    await directory.addGroup(DEMO_GROUP, [userDN]);
    return {
      info: {
        provider: DIRECTORY_PROVIDER,
        url: directory.slapd.ldapsUrl,
        usersDN: directory.peopleDN,
        demoUser: {
          name: DEMO_USER,
          password,
          group: DEMO_GROUP,
          namespace: DEMO_NAMESPACE,
          clusterRole: DEMO_CLUSTER_ROLE,
        },
      },
      identityProvider: {
        name: DIRECTORY_PROVIDER,
        type: 'LDAP',
        mappingMethod: 'auto',
        ldap: directory.providerSettings({ bindPassword: SECRET, ca: SECRET }),
      },
      secret: { name: SECRET, data: { password: directory.servicePassword, 'ca.crt': directory.slapd.caPem } },
      roleBindings: [demoRoleBinding()],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function demoRoleBinding(): KubeObject {
  return {
    metadata: {
      name: `${DEMO_GROUP}-${DEMO_CLUSTER_ROLE}`,
      namespace: DEMO_NAMESPACE,
      uid: randomUUID(),
      creationTimestamp: nowTimestamp(),
    },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: DEMO_CLUSTER_ROLE },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: DEMO_GROUP }],
  };
}

function directoryAt(option: Extract<SandboxDirectoryOption, { kind: 'url' }>): Promise<PreparedDirectory> {
  const data: Record<string, string> = {};
  if (option.bindPassword !== undefined) data.password = option.bindPassword;
  if (option.caPem !== undefined) data['ca.crt'] = option.caPem;
  const transport = option.url.startsWith('ldaps://') ? { url: option.url } : { url: option.url, startTLS: true };
  return Promise.resolve({
    info: { provider: DIRECTORY_PROVIDER, url: option.url, usersDN: option.baseDN },
    identityProvider: {
      name: DIRECTORY_PROVIDER,
      type: 'LDAP',
      mappingMethod: 'auto',
      ldap: {
        ...transport,
        ...(option.caPem !== undefined && { caSecretRef: { name: SECRET, key: 'ca.crt' } }),
        ...(option.bindDN !== undefined && {
          bindDN: option.bindDN,
          bindPasswordSecretRef: { name: SECRET, key: 'password' },
        }),
        userSearch: { baseDN: option.baseDN, loginAttribute: 'uid', mailAttribute: 'mail' },
        memberOfAttribute: 'memberOf',
      },
    },
    ...(Object.keys(data).length > 0 && { secret: { name: SECRET, data } }),
    roleBindings: [],
    stop: () => Promise.resolve(),
  });
}
