import { guardObjects, type GuardApiVersion } from '../tenant-guard/policy.js';
import { passwordSecret } from '../auth/users/password-hashes.js';
import { USER_FINALIZER } from '../controllers/users/user-cleanup.js';
import { KAPI_SERVICE_ACCOUNT } from './policy.js';
import { randomBytes, randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { nowTimestamp } from './registry-store.js';
import type { KubeObject, ResourceRegistry } from './resource-types.js';
import type { ObjectStore } from './store.js';
import type { PreparedDirectory } from './sandbox-directory.js';
import { adminClusterMembership, globalRoleBinding, readPlatformObjects } from './platform-objects.js';

/**
 * What the chart installs for kapi itself, when the kapi CRDs are registered: the ClusterConfiguration
 * kapi-system/kapi with the default authentication settings, the JWT signing-key Secret, the `admin` User and its
 * password Secret (a bcrypt hash; none in the User), the Secret holding that password, and the tenant guard.
 */
export const ADMIN_USER = 'admin';

function secret(name: string, data: Record<string, string>, now: string): KubeObject {
  return {
    metadata: {
      name,
      namespace: 'kapi-system',
      uid: randomUUID(),
      creationTimestamp: now,
      labels: { 'app.kubernetes.io/name': 'kapi-apiserver' },
    },
    type: 'Opaque',
    data,
  };
}

/** Seeds what exists; answers which kinds were seeded. */
export async function seedIdentity(
  registry: ResourceRegistry,
  store: ObjectStore,
  adminPassword: string,
  directory?: PreparedDirectory,
  platformFile?: string,
): Promise<string[]> {
  const configurations = registry.byGroupResource('installer.kapi.io', 'clusterconfigurations');
  const users = registry.byGroupResource('iam.kapi.io', 'users');
  const secrets = registry.byGroupResource('', 'secrets');
  if ((!configurations && !users) || !secrets) return [];
  const now = nowTimestamp();
  const seeded: string[] = [];
  const secretObjects = [secret('kapi-apiserver-jwt', { key: randomBytes(48).toString('base64') }, now)];

  if (configurations) {
    store.load(configurations, [
      {
        metadata: { name: 'kapi', namespace: 'kapi-system', uid: randomUUID(), creationTimestamp: now, generation: 1 },
        spec: {
          authentication: {
            accessTokenMaxAge: '2h',
            refreshTokenMaxAge: '4h',
            multipleLogin: true,
            maxSessionsPerUser: 20,
            loginLimit: { maxFailures: 10, window: '10m' },
            oauth: {
              clients: [
                { name: 'kapi', secret: 'kapi', grantTypes: ['password', 'refresh_token'] },
                {
                  name: 'kubectl',
                  public: true,
                  grantTypes: ['authorization_code', 'refresh_token'],
                  redirectURIs: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
                },
              ],
            },
            ...(directory && { identityProviders: [directory.identityProvider] }),
          },
        },
      },
    ]);
    seeded.push('ClusterConfiguration');
  }
  if (users) {
    // as the chart makes it: the hash in the admin's password Secret, none in the User
    const hash = await bcrypt.hash(adminPassword, 10);
    const uid = randomUUID();
    store.load(users, [
      {
        metadata: {
          name: ADMIN_USER,
          uid,
          creationTimestamp: now,
          generation: 1,
          finalizers: [USER_FINALIZER],
        },
        spec: { email: 'admin@kapi.local', groups: [] },
      },
    ]);
    const { metadata, data, type } = passwordSecret('kapi-system', ADMIN_USER, uid, hash) as KubeObject;
    secretObjects.push({
      metadata: { ...metadata, uid: randomUUID(), creationTimestamp: now },
      type,
      data,
    } as KubeObject);
    secretObjects.push(secret('kapi-admin', { password: Buffer.from(adminPassword, 'utf8').toString('base64') }, now));
    seeded.push('User');
  }
  if (directory?.secret) {
    const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
    const data = Object.fromEntries(Object.entries(directory.secret.data).map(([key, value]) => [key, base64(value)]));
    secretObjects.push(secret(directory.secret.name, data, now));
  }
  store.load(secrets, secretObjects);
  seeded.push('Secret');
  seedConsoleConfig(registry, store, now);
  if (platformFile && seedPlatform(registry, store, platformFile, now, users !== undefined)) seeded.push('GlobalRole');
  if (seedTenantGuard(registry, store, now)) seeded.push('ValidatingAdmissionPolicy');
  return seeded;
}

/** kapi's tenant guard, as the chart installs it for kapi's ServiceAccount (where the sandbox serves policies). */
function seedTenantGuard(registry: ResourceRegistry, store: ObjectStore, now: string): boolean {
  const policies = registry.byGroupResource('admissionregistration.k8s.io', 'validatingadmissionpolicies');
  const bindings = registry.byGroupResource('admissionregistration.k8s.io', 'validatingadmissionpolicybindings');
  if (!policies || !bindings) return false;
  const version = policies.versions[0] as GuardApiVersion;
  const { policy, binding } = guardObjects(version, { kapiUsernames: [KAPI_SERVICE_ACCOUNT] });
  const stored = (object: Record<string, unknown>): KubeObject => {
    const { apiVersion: _v, kind: _k, metadata, ...rest } = object as KubeObject;
    return { metadata: { ...metadata, uid: randomUUID(), creationTimestamp: now, generation: 1 }, ...rest };
  };
  store.load(policies, [stored(policy)]);
  store.load(bindings, [stored(binding)]);
  return true;
}

/** The chart's built-in platform roles and system-workspace, and the admin's platform-admin binding. */
function seedPlatform(
  registry: ResourceRegistry,
  store: ObjectStore,
  file: string,
  now: string,
  withAdmin: boolean,
): boolean {
  const objects = [
    ...readPlatformObjects(file),
    ...(withAdmin ? [globalRoleBinding(ADMIN_USER, 'platform-admin'), adminClusterMembership(ADMIN_USER)] : []),
  ];
  const byKind = new Map<string, KubeObject[]>();
  for (const { apiVersion, kind, metadata, ...rest } of objects) {
    const key = `${apiVersion.split('/')[0]}/${kind}`;
    const list = byKind.get(key) ?? [];
    list.push({ metadata: { ...metadata, uid: randomUUID(), creationTimestamp: now, generation: 1 }, ...rest });
    byKind.set(key, list);
  }
  const resources: Record<string, [string, string]> = {
    'iam.kapi.io/GlobalRole': ['iam.kapi.io', 'globalroles'],
    'iam.kapi.io/GlobalRoleBinding': ['iam.kapi.io', 'globalrolebindings'],
    'tenant.kapi.io/WorkspaceTemplate': ['tenant.kapi.io', 'workspacetemplates'],
    'rbac.authorization.k8s.io/ClusterRoleBinding': ['rbac.authorization.k8s.io', 'clusterrolebindings'],
    'rbac.authorization.k8s.io/ClusterRole': ['rbac.authorization.k8s.io', 'clusterroles'],
  };
  let seeded = false;
  for (const [key, list] of byKind) {
    const where = resources[key];
    const type = where && registry.byGroupResource(where[0], where[1]);
    if (!type) continue;
    store.load(type, list);
    seeded = true;
  }
  return seeded;
}

/**
 * The ConfigMap KubeSphere 3.4's console reads at every page load with the user's token (kapi-system/kapi-config,
 * `kapi.yaml`: it looks for `clusterRole:`), readable by every signed-in user, as the chart installs it.
 */
function seedConsoleConfig(registry: ResourceRegistry, store: ObjectStore, now: string): void {
  const configMaps = registry.byGroupResource('', 'configmaps');
  const roles = registry.byGroupResource('rbac.authorization.k8s.io', 'roles');
  const bindings = registry.byGroupResource('rbac.authorization.k8s.io', 'rolebindings');
  if (!configMaps || !roles || !bindings) return;
  const metadata = (name: string) => ({
    name,
    namespace: 'kapi-system',
    uid: randomUUID(),
    creationTimestamp: now,
    labels: { 'app.kubernetes.io/name': 'kapi-apiserver' },
  });
  store.load(configMaps, [{ metadata: metadata(CONSOLE_CONFIG), data: { 'kapi.yaml': CONSOLE_CONFIG_YAML } }]);
  store.load(roles, [
    {
      metadata: metadata(`${CONSOLE_CONFIG}-reader`),
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [CONSOLE_CONFIG], verbs: ['get'] }],
    },
  ]);
  store.load(bindings, [
    {
      metadata: metadata(`${CONSOLE_CONFIG}-reader`),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${CONSOLE_CONFIG}-reader` },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
    },
  ]);
}

export const CONSOLE_CONFIG = 'kapi-config';
/** One cluster, no federation: KubeSphere's single-cluster `multicluster.clusterRole`. No secret belongs here. */
export const CONSOLE_CONFIG_YAML = 'multicluster:\n  clusterRole: none\n';
