import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'selfsigned';
import type { Logger } from '../observability/logger.js';
import type { LogHistory } from './pod-logs.js';
import { AuditTrail, type SandboxAuditEntry } from './audit.js';
import { UnionAuthorizer } from './authorizer.js';
import { bootstrapRbac } from './bootstrap-rbac.js';
import { builtinTypes } from './builtin-types.js';
import { admissionTypes, SandboxAdmission } from './admission.js';
import { SandboxWebhooks } from './webhooks.js';
import type { GuardApiVersion } from '../tenant-guard/policy.js';
import { objectKey, parseStored, type StoredObject } from './stored-object.js';
import { platformFileBeside } from './platform-objects.js';
import { crdLifecycle, crdType, readCrdDirectory } from './crds.js';
import { Discovery, NEWEST_KUBERNETES_MINOR, OLDEST_KUBERNETES_MINOR } from './discovery.js';
import { seedIdentity } from './identity-seed.js';
import { RequestMetrics } from './request-metrics.js';
import {
  prepareSandboxDirectory,
  type SandboxDirectoryInfo,
  type SandboxDirectoryOption,
} from './sandbox-directory.js';
import { TokenAuthenticator } from './identity.js';
import { namespaceLifecycle } from './namespace-lifecycle.js';
import { OpenApiDocuments } from './openapi.js';
import { KAPI_SERVICE_ACCOUNT, SandboxPolicy } from './policy.js';
import { RbacAuthorizer } from './rbac-authorizer.js';
import { RBAC_GROUP } from './rbac-rules.js';
import { nowTimestamp, RegistryStore } from './registry-store.js';
import { ResourceRegistry, type KubeObject, type ResourceType } from './resource-types.js';
import { requestHandler, upgradeHandler, type RouterDeps } from './router.js';
import { seedCluster, type ClusterScale } from './seed.js';
import { StatusError } from './status.js';
import { ObjectStore } from './store.js';
import { UpgradeEcho } from './upgrade.js';
import { WebSocketWatches } from './websocket-watch.js';
import { WatchHub } from './watch-hub.js';

export type { SandboxAuditEntry } from './audit.js';
export type { SandboxUser } from './identity.js';
export type { AccessAttributes, Authorizer, PolicyDecision, PolicyRule, RuleSet } from './policy.js';
export { SandboxPolicy } from './policy.js';
export type { ClusterScale } from './seed.js';

/**
 * An in-process kube-apiserver look-alike on loopback: what `make run` uses without a cluster and what the test
 * suite runs against. See src/sandbox/README.md for what it serves, seeds and allows.
 */
export interface SandboxOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Seeded nodes; default 6. */
  nodes?: number;
  /** Seeded pods per node; default 8. */
  podsPerNode?: number;
  /**
   * The bench's cluster: the worker pods belong to this many Deployments across this many namespaces, beside this
   * many Services and ConfigMaps (instead of the demo workloads).
   */
  scale?: ClusterScale;
  /** Seed the demo cluster (nodes, pods, demo namespaces, kapi identity objects); default true. */
  seed?: boolean;
  /** Where CRD YAML files are loaded from; default <repo>/crds (skipped when missing). */
  crdDir?: string;
  /** The seeded admin User's password; random (24 characters) when not given. */
  adminPassword?: string;
  /** An LDAP identity provider in the seeded ClusterConfiguration (see sandbox-directory.ts); needs `seed`. */
  directory?: SandboxDirectoryOption;
  logger?: Logger;
  /** Serve HTTPS with a generated self-signed certificate (exposed as `caPem`); kubectl needs it for tokens. */
  tls?: boolean;
  /**
   * The Kubernetes minor release whose API versions discovery serves (and `/version` names), from 26 (1.26) to 35;
   * default 35. Lets tests take the paths a client needs on older clusters (SelfSubjectReview v1alpha1/v1beta1).
   */
  kubernetesMinor?: number;
  /** How often watches that allow bookmarks get one; default 3000 ms. */
  bookmarkIntervalMs?: number;
  /**
   * After refusing a body it did not read whole, the sandbox closes the connection for writing and cuts it this long
   * later (default 500 ms, Go's rstAvoidanceDelay): a client that has not read the answer by then loses it to the reset,
   * as from kube-apiserver. Tests of that answer on a busy machine give their client longer.
   */
  rstAvoidanceDelayMs?: number;
  /** Events kept per resource type for watches and paged lists; older versions get 410. Default 10,000. */
  historyLimit?: number;
  /** How often a running container writes a new log line (for `follow`); default 2000 ms. */
  logLineIntervalMs?: number;
  /**
   * Every container's log before the sandbox started: `lines` lines over the last `spanMs` (or since the container
   * started, if later). Default: 24-60 lines over the container's whole life. The logging bench uses it for volume.
   */
  logHistory?: LogHistory;
}

export interface Sandbox {
  url: string;
  /** The PEM certificate to trust, with `tls: true`. */
  caPem?: string;
  /** system:serviceaccount:kapi-system:kapi-apiserver, what kapi itself uses. */
  serviceAccountToken: string;
  /** sandbox-admin in system:masters. */
  adminToken: string;
  tokenFor(username: string, groups?: string[]): string;
  /** Refuses a token minted by `tokenFor` from now on (401), as a deleted ServiceAccount's tokens are. */
  revokeToken(token: string): void;
  /**
   * Rules beside the RBAC objects: a request is allowed by these or by RBAC. Tests may add rules here; arranging
   * access through ClusterRoles, Roles and their bindings works the same against a real cluster.
   */
  policy: SandboxPolicy;
  /** The seeded admin User's plaintext password. */
  adminPassword: string | undefined;
  /** The directory identity provider, with `directory`: how to log in through it. */
  directory?: SandboxDirectoryInfo;
  /** The last ~1000 requests. */
  readonly audit: readonly SandboxAuditEntry[];
  /** Forgets watch history: older resourceVersions now get 410 Expired. */
  compactHistory(): void;
  /** Cuts every open watch, as a restarting kube-apiserver would. */
  dropWatches(): void;
  /**
   * Holds back open watches of one resource (events and bookmarks) until the returned release is called, as a
   * lagging watch cache would: a write is answered, and watchers hear of it only later.
   */
  holdWatches(group: string, resource: string): () => void;
  stop(): Promise<void>;
}

/** <repo>/crds: the first ancestor of this module holding a package.json. */
function defaultCrdDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'crds');
    dir = dirname(dir);
  }
  return join(process.cwd(), 'crds');
}

async function tlsCredentials(host: string): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: 'kapi-sandbox' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 30 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
          ...(host !== '127.0.0.1' && host !== 'localhost' && host !== '::1' && /^[\d.]+$/.test(host)
            ? [{ type: 7 as const, ip: host }]
            : []),
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

function load(
  store: ObjectStore,
  registry: ResourceRegistry,
  resource: string,
  objects: KubeObject[],
  group = '',
): void {
  store.load(registry.byGroupResource(group, resource) as ResourceType, objects);
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger;
  const registry = new ResourceRegistry();
  const kubernetesMinor = kubernetesMinorOf(options.kubernetesMinor);
  for (const type of [...builtinTypes(kubernetesMinor), ...admissionTypes(kubernetesMinor)]) registry.register(type);
  const crds = crdType();
  registry.register(crds);

  const store = new ObjectStore(options.historyLimit ?? 10_000);
  const hub = new WatchHub(() => store.currentRv, options.bookmarkIntervalMs ?? 3000);
  store.onEvent((event) => hub.publish(event));
  const namespaces = registry.byGroupResource('', 'namespaces') as ResourceType;
  const objects = new RegistryStore(store, (name) => store.collection(namespaces).get(name) !== undefined);
  objects.setLifecycle('', 'namespaces', namespaceLifecycle({ registry, store }));
  objects.setLifecycle(
    crds.group,
    crds.resource,
    crdLifecycle({ registry, store, closeWatches: (type) => hub.closeType(type) }),
  );

  const seed = options.seed ?? true;
  const cluster = seedCluster({
    nodes: seed ? (options.nodes ?? 6) : 0,
    podsPerNode: options.podsPerNode ?? 8,
    ...(seed && options.scale && { scale: options.scale }),
  });
  const keep = (obj: KubeObject): boolean =>
    seed || ['default', 'kube-system', 'kube-public'].includes(String(obj.metadata.namespace ?? obj.metadata.name));
  // Without the seed, only what every cluster has from the start (the system namespaces and their accounts).
  const seededOnly = (): boolean => seed;
  const seeded: [string, string, KubeObject[], (obj: KubeObject) => boolean][] = [
    ['', 'namespaces', cluster.namespaces, keep],
    ['', 'serviceaccounts', cluster.serviceAccounts, keep],
    ['', 'services', cluster.services, keep],
    ['', 'configmaps', cluster.configMaps, seededOnly],
    ['', 'secrets', cluster.secrets, seededOnly],
    ['', 'nodes', cluster.nodes, seededOnly],
    ['', 'pods', cluster.pods, keep],
    ['', 'persistentvolumeclaims', cluster.persistentVolumeClaims, seededOnly],
    ['', 'persistentvolumes', cluster.persistentVolumes, seededOnly],
    ['', 'events', cluster.events, seededOnly],
    ['apps', 'deployments', cluster.deployments, seededOnly],
    ['apps', 'replicasets', cluster.replicaSets, seededOnly],
    ['apps', 'statefulsets', cluster.statefulSets, seededOnly],
    ['apps', 'daemonsets', cluster.daemonSets, seededOnly],
    ['batch', 'jobs', cluster.jobs, seededOnly],
    ['batch', 'cronjobs', cluster.cronJobs, seededOnly],
    ['networking.k8s.io', 'ingresses', cluster.ingresses, seededOnly],
    ['networking.k8s.io', 'networkpolicies', cluster.networkPolicies, seededOnly],
    ['storage.k8s.io', 'storageclasses', cluster.storageClasses, seededOnly],
    [RBAC_GROUP, 'roles', cluster.roles, seededOnly],
    [RBAC_GROUP, 'rolebindings', cluster.roleBindings, seededOnly],
  ];
  for (const [group, resource, objects, wanted] of seeded)
    load(store, registry, resource, objects.filter(wanted), group);
  // Like the system namespaces, the bootstrap roles exist in every cluster, seeded or not.
  const rbacSeed = bootstrapRbac({ created: nowTimestamp(), uid: randomUUID });
  load(store, registry, 'clusterroles', rbacSeed.clusterRoles, RBAC_GROUP);
  load(store, registry, 'clusterrolebindings', rbacSeed.clusterRoleBindings, RBAC_GROUP);

  for (const { file, crd } of await readCrdDirectory(options.crdDir ?? defaultCrdDir())) {
    try {
      objects.create(crds, '', crd);
    } catch (err) {
      const why = err instanceof StatusError ? err.message : String(err);
      throw new Error(`sandbox: cannot register the CRD in ${file}: ${why}`, { cause: err });
    }
  }
  const adminPassword = seed ? (options.adminPassword ?? randomBytes(18).toString('base64url')) : options.adminPassword;
  const directory = seed && options.directory ? await prepareSandboxDirectory(options.directory) : undefined;
  let seededIdentity: string[];
  try {
    seededIdentity =
      seed && adminPassword
        ? await seedIdentity(
            registry,
            store,
            adminPassword,
            directory,
            platformFileBeside(options.crdDir ?? defaultCrdDir()),
          )
        : [];
    if (directory) load(store, registry, 'rolebindings', directory.roleBindings, RBAC_GROUP);
  } catch (error) {
    await directory?.stop();
    throw error;
  }

  const tokens = new TokenAuthenticator();
  const serviceAccountToken = tokens.mint({
    username: KAPI_SERVICE_ACCOUNT,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:kapi-system'],
  });
  const adminToken = tokens.mint({ username: 'sandbox-admin', groups: ['system:masters'] });
  const policy = new SandboxPolicy();
  const rbac = new RbacAuthorizer(registry, store);
  rbac.invalidate(); // the bootstrap objects were loaded without events
  const authorizer = new UnionAuthorizer([policy, rbac]);
  const admissionType = (resource: string) => registry.byGroupResource('admissionregistration.k8s.io', resource);
  const storedAdmission = (resource: string) => (name: string) => {
    const type = admissionType(resource);
    return type && store.collection(type).get(objectKey('', name));
  };
  objects.setAdmission(
    new SandboxAdmission({
      policy: storedAdmission('validatingadmissionpolicies'),
      binding: storedAdmission('validatingadmissionpolicybindings'),
      json: (stored) =>
        parseStored(admissionType('validatingadmissionpolicies') as ResourceType, stored as StoredObject),
      allowed: (user, attributes) => authorizer.decide(user, attributes).allowed,
      version: (admissionType('validatingadmissionpolicies')?.versions[0] ?? 'v1') as GuardApiVersion,
    }),
  );
  const webhooks = new SandboxWebhooks({
    configurations: () => {
      const type = admissionType('validatingwebhookconfigurations');
      return type ? [...store.collection(type).objects.values()].map((stored) => parseStored(type, stored)) : [];
    },
    namespaceLabels: (name) => {
      const type = registry.byGroupResource('', 'namespaces');
      const stored = type && store.collection(type).get(objectKey('', name));
      return stored && type ? (parseStored(type, stored).metadata?.labels ?? {}) : undefined;
    },
  });
  const audit = new AuditTrail(1000);
  const upgrades = new UpgradeEcho();
  const websocketWatches = new WebSocketWatches();
  const follows = new Set<() => void>();
  let address = '';
  const deps: RouterDeps = {
    registry,
    store,
    objects,
    hub,
    tokens,
    authorizer,
    audit,
    requestMetrics: new RequestMetrics(),
    discovery: new Discovery(registry, () => address, kubernetesMinor),
    openapi: new OpenApiDocuments(registry, store),
    upgrades,
    websocketWatches,
    logs: {
      sandboxStartMs: Date.now(),
      intervalMs: options.logLineIntervalMs ?? 2000,
      follows,
      ...(options.logHistory && { history: options.logHistory }),
    },
    logger,
    webhooks,
    ...(options.rstAvoidanceDelayMs !== undefined && { rstAvoidanceDelayMs: options.rstAvoidanceDelayMs }),
  };

  const tls = options.tls ? await tlsCredentials(host) : undefined;
  const handler = requestHandler(deps);
  const server = tls ? https.createServer({ ...tls, minVersion: 'TLSv1.2' }, handler) : http.createServer(handler);
  server.on('upgrade', upgradeHandler(deps));
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  address = `${hostPart}:${port}`;
  const url = `${tls ? 'https' : 'http'}://${address}`;
  logger?.info('sandbox kube-apiserver started', {
    url,
    nodes: cluster.nodes.length,
    pods: cluster.pods.length,
    crds: store.collection(crds).size,
    seeded: seededIdentity,
  });

  let stopped: Promise<void> | undefined;
  return {
    url,
    ...(tls ? { caPem: tls.cert } : {}),
    serviceAccountToken,
    adminToken,
    tokenFor: (username, groups = []) => tokens.mint({ username, groups }),
    revokeToken: (token) => tokens.revoke(token),
    policy,
    adminPassword,
    ...(directory && { directory: directory.info }),
    get audit() {
      return audit.list();
    },
    compactHistory: () => store.compactHistory(),
    dropWatches: () => hub.closeAll(true),
    holdWatches: (group, resource) => hub.hold(group, resource),
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        hub.closeAll(false);
        hub.stop();
        for (const stop of [...follows]) stop();
        upgrades.closeAll();
        websocketWatches.closeAll();
        server.close(() => resolve());
        server.closeIdleConnections();
        for (const socket of sockets) socket.destroy();
      }).then(() => directory?.stop());
      return stopped;
    },
  };
}

function kubernetesMinorOf(minor: number | undefined): number {
  if (minor === undefined) return NEWEST_KUBERNETES_MINOR;
  if (!Number.isInteger(minor) || minor < OLDEST_KUBERNETES_MINOR || minor > NEWEST_KUBERNETES_MINOR) {
    throw new Error(`kubernetesMinor must be ${OLDEST_KUBERNETES_MINOR}..${NEWEST_KUBERNETES_MINOR}, not ${minor}`);
  }
  return minor;
}
