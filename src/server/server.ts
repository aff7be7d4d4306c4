import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Server as HttpsServer } from 'node:https';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { LoggingOptions, Options } from '../config/options.js';
import { createLogging } from '../apis/logging/v1alpha2/create-logging.js';
import { ConfigurationWatcher } from '../config/configuration-watcher.js';
import { configRoutes, publicConfigRoutes } from '../apis/config/v1alpha2/routes.js';
import type { KubernetesVersion } from '../apis/config/v1alpha2/config-values.js';
import { ServerVersion } from '../kube/server-version.js';
import { packageRoot, packageVersion } from '../apidocs/documents.js';
import { createIdentity } from '../auth/index.js';
import { cachesOf } from '../kube/cache-registry.js';
import { KubeApiError, KubeClient } from '../kube/client.js';
import type { KubeConnection } from '../kube/connection.js';
import { createNamespaceCache, toCachedNamespace } from '../kube/namespace-cache.js';
import { createNodeCache } from '../kube/node-cache.js';
import { createPodAllocations } from '../kube/pod-allocations.js';
import { ListingCaches } from '../kube/compact/listing-caches.js';
import { Reflector } from '../kube/reflector.js';
import type { V1Namespace } from '@kubernetes/client-node';
import { ResourceListing } from '../apis/resources/v1alpha3/listing/resource-listing.js';
import { GlobalRoleDirectory } from '../apis/iam/v1alpha2/global-roles.js';
import { iamRoutes } from '../apis/iam/v1alpha2/routes.js';
import { UserRoleBindings, type MemberWriteHooks } from '../apis/iam/v1alpha2/role-bindings.js';
import { DEFAULT_PLATFORM_ROLE } from '../apis/iam/v1alpha2/user-admin.js';
import { tenantRoutes } from '../apis/tenant/routes.js';
import { monitoringRoutes } from '../apis/monitoring/v1alpha3/routes.js';
import { PrometheusBackend } from '../apis/monitoring/v1alpha3/prometheus.js';
import { workspaceAdminRoutes } from '../apis/tenant/admin-routes.js';
import { workspaceNamespaceRoutes } from '../apis/tenant/namespace-routes.js';
import { componentRoutes } from '../apis/resources/v1alpha2/routes.js';
import { departmentRoutes } from '../apis/iam/v1alpha2/department-routes.js';
import { DepartmentWatches } from '../apis/iam/v1alpha2/department-watch.js';
import { imageRoutes } from '../apis/resources/v1alpha3/image-routes.js';
import { RegistryClient } from '../registry/registry-client.js';
import { PodTerminals } from '../apis/terminal/terminal.js';
import { terminalRoutes } from '../apis/terminal/routes.js';
import { KubectlToolboxes } from '../apis/terminal/kubectl-toolboxes.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../apis/resources/v1alpha3/kinds/kind-table.js';
import { ProjectWatches } from '../apis/tenant/project-watch.js';
import { placeSystemNamespaces } from '../apis/tenant/system-workspace.js';
import { LeaderElector } from '../controllers/leader-election.js';
import { PlatformRbacController } from '../controllers/platform-rbac/controller.js';
import { UserController } from '../controllers/users/controller.js';
import { WorkspaceQuotaController, countUsage, selectedLabels } from '../controllers/workspace-quota/controller.js';
import { WorkspaceQuotaAdmission } from '../workspace-quota/admission.js';
import { QUOTAS_PATH } from '../workspace-quota/quota.js';
import { quotaWebhookRoutes } from '../workspace-quota/webhook-routes.js';
import { workspaceQuotaRoutes } from '../apis/tenant/quota-routes.js';
import { EventIndex } from '../apis/tenant/events/event-index.js';
import { eventRoutes, eventsApiSource, searchEngineSource } from '../apis/tenant/events/event-routes.js';
import type { SearchBackend } from '../apis/logging/v1alpha2/search/search-backend.js';
import { TenantGuardKeeper } from '../tenant-guard/guard-keeper.js';
import { GUARD_NAME } from '../tenant-guard/policy.js';

import type { Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { kapiRouteTemplates } from './route-templates.js';
import { DEFAULT_LOG_REQUEST_LIMITS, DEFAULT_LOG_WRITE_TIMEOUT_MS } from '../apis/logging/v1alpha2/request-limits.js';
import { createForwarder } from '../proxy/forwarder.js';
import { PASS_THROUGH_STATES, TokenPassThrough, reviewToken } from '../proxy/token-pass-through.js';
import { StreamRegistry } from '../proxy/stream-registry.js';
import express from 'express';
import { createApp } from './app.js';
import { errorHandler, notFound } from './error-handler.js';
import { ConnectionCap, DEFAULT_MAX_CONNECTIONS_PER_CLIENT } from './connection-cap.js';
import { DEFAULT_CONNECTION_TIMEOUTS, listen, type Listener } from './listener.js';
import { loadServingCertificate, watchServingCertificate, type CertificateWatch } from './tls.js';

/** How long a start waits for the tenant guard's first look (it goes on in the background after). */
const GUARD_FIRST_LOOK_MS = 10_000;

/**
 * As `Options`, except that listener ports are `undefined` when off and 0 when any free port will do (tests), and
 * that limits left out take their defaults.
 */
export type ServerOptions = Pick<
  Options,
  | 'port'
  | 'configuration'
  | 'signingKeySecret'
  | 'tlsCertFile'
  | 'tlsKeyFile'
  | 'tlsSecret'
  | 'tlsCaOut'
  | 'trustedProxies'
> & { bindAddress: string } & Partial<
    Pick<
      Options,
      | 'issuerUrl'
      | 'maxRequestBodyBytes'
      | 'readHeaderTimeoutMs'
      | 'readTimeoutMs'
      | 'idleTimeoutMs'
      | 'maxConnectionsPerClient'
      | 'listingCacheIdleMs'
      | 'listingSyncTimeoutMs'
      | 'shutdownDelayMs'
      | 'webhookPort'
      | 'webhookTlsSecret'
      | 'kubectlToolbox'
    >
  > & {
    tlsPort: number | undefined;
    metricsPort: number | undefined;
    /** Keep a generated serving certificate here across restarts (the sandbox); see ServingCertificateOptions. */
    tlsKeepGeneratedIn?: string;
    /** The logging API's backend; the pod-log API when absent. */
    logging?: LoggingOptions;
    /** How often whether kube-apiserver accepts kapi's tokens is asked again (token pass-through); a minute. */
    tokenReviewIntervalMs?: number;
  };

/**
 * The server's options from the command line's, for the cluster kapi runs against: a port of 0 turns its listener
 * off; with the sandbox, a generated serving certificate and its CA are kept beside the CA file (`.cache/`) across
 * restarts, so kubeconfigs written against them keep working.
 */
export function serverOptionsFor(
  options: Options,
  source: 'sandbox' | 'kubeconfig' | 'in-cluster',
  bindAddress: string,
): ServerOptions {
  return {
    ...options,
    bindAddress,
    tlsPort: options.tlsPort === 0 ? undefined : options.tlsPort,
    metricsPort: options.metricsPort === 0 ? undefined : options.metricsPort,
    tlsKeepGeneratedIn: source === 'sandbox' ? dirname(options.tlsCaOut) : undefined,
  };
}

const POD_LOG_BACKEND: LoggingOptions = {
  backend: 'pod-log',
  readConcurrency: 16,
  maxContainers: 1000,
  searchUrl: undefined,
  searchIndex: 'ks-logstash-log',
  searchFields: {},
  searchSecret: undefined,
  searchCaFile: undefined,
  limits: DEFAULT_LOG_REQUEST_LIMITS,
  writeTimeoutMs: DEFAULT_LOG_WRITE_TIMEOUT_MS,
};

export interface KapiServerConfig {
  options: ServerOptions;
  connection: KubeConnection;
  logger: Logger;
  /** Only the sandbox may run with an in-memory signing key when the Secret is missing. */
  allowGeneratedSigningKey: boolean;
  /** Tests only: a role change stopped between writing its new binding and deleting the one it replaces. */
  memberWriteHooks?: MemberWriteHooks;
}

export interface KapiServer {
  readonly httpPort: number;
  readonly httpsPort: number | undefined;
  readonly metricsPort: number | undefined;
  /** The CA of a generated serving certificate, for clients such as kubectl. */
  readonly caFile: string | undefined;
  /** Resolves once caches, configuration and the signing key are loaded. */
  ready(timeoutMs?: number): Promise<void>;
  /** Drains listeners (in-flight requests finish, watches are cut after the grace period), then stops watches. */
  stop(graceMs?: number): Promise<void>;
}

/** Builds every dependency from one cluster connection and starts the listeners. Used by main.ts and by tests. */
export async function startKapiServer(config: KapiServerConfig): Promise<KapiServer> {
  const { options, logger, connection } = config;
  const client = new KubeClient(connection);
  const metrics = new Metrics({ routes: kapiRouteTemplates() });

  const nodes = createNodeCache(client, logger);
  const allocations = createPodAllocations(client, logger);
  const namespaces = createNamespaceCache(client, logger);
  const configuration = new ConfigurationWatcher({
    client,
    logger,
    namespace: options.configuration.namespace,
    name: options.configuration.name,
    onReload: (result) => metrics.configurationReloads.inc({ result }),
  });
  // the tenant guard (SPEC §18), kept by every replica: each must be exempt from it, whatever its credentials; what
  // its fields grant is trusted only while it is in place
  const tenantGuard = new TenantGuardKeeper({ client, logger });
  const userRoleBindings = new UserRoleBindings(client, logger, config.memberWriteHooks);
  const identity = createIdentity({
    client,
    logger,
    // a user a directory login creates is platform-regular, as one created over the API without a role (SPEC §17)
    onUserCreated: (user) => userRoleBindings.assign(user, DEFAULT_PLATFORM_ROLE),
    metrics,
    settings: () => configuration.current(),
    signingKeySecret: options.signingKeySecret,
    allowGeneratedKey: config.allowGeneratedSigningKey,
    issuerUrl: options.issuerUrl,
    userFieldsTrusted: () => tenantGuard.state.state === 'guarded',
  });
  // Streams are authenticated once, when they open: revocations seen later (on any replica) cut them.
  const streamRegistry = new StreamRegistry();
  identity.onRevoked((revoked) =>
    revoked.kind === 'session'
      ? streamRegistry.endSession(revoked.sessionId)
      : streamRegistry.endUser(revoked.username, revoked.uid),
  );
  // only tokens of an https issuer with a published key are ever candidates (see auth/passable-token.ts)
  const passThrough = new TokenPassThrough({
    review: (token) => reviewToken(client, token),
    probe: () => identity.passThroughProbe(),
    logger,
    clock: Date.now,
    recheckMs: options.tokenReviewIntervalMs,
  });
  metrics.gaugeFrom(
    'kapi_token_pass_through',
    'Whether forwarded requests carry the caller’s own token (1: kube-apiserver accepts kapi’s tokens) or are impersonated (0), by the last verdict',
    () => ({
      [passThrough.current]: 1,
      ...Object.fromEntries(PASS_THROUGH_STATES.filter((s) => s !== passThrough.current).map((s) => [s, 0])),
    }),
    'state',
  );
  const forwarder = createForwarder({
    connection,
    logger,
    metrics,
    authenticateRequest: identity.authenticateRequest,
    streamRegistry,
    maxRequestBodyBytes: options.maxRequestBodyBytes,
    passThrough,
  });

  const logging = await createLogging({
    options: options.logging ?? POD_LOG_BACKEND,
    client,
    pods: allocations.directory,
    namespaces,
    authorizer: identity.authorizer,
    logger,
  });

  // Platform roles and who holds them: read at every console page load (SPEC §17).
  const globalRoles = new GlobalRoleDirectory(client, logger);

  // Every kind's listing (SPEC §13); each kind's cache starts on first use and stops when idle, outside /readyz.
  const listingCaches = new ListingCaches({
    client,
    logger,
    idleMs: options.listingCacheIdleMs,
    syncTimeoutMs: options.listingSyncTimeoutMs,
    onLifecycle: (cache, event) => metrics.listingCacheEvents.inc({ cache, event }),
  });
  const listing = new ResourceListing({
    caches: listingCaches,
    client,
    authorizer: identity.authorizer,
    namespaces,
    shared: {
      pods: allocations.pods as Reflector<unknown>,
      namespaces: namespaces as Reflector<unknown>,
      users: identity.usersWatch,
      globalroles: globalRoles.rolesWatch,
    },
  });
  // The console's charts (SPEC §19), from the monitoring backend the ClusterConfiguration names, through one cache.
  let lastMonitoringWarning = 0;
  // the console's image lookup reads registries the caller names
  const registries = new RegistryClient();
  const prometheus = new PrometheusBackend({
    onUpstream: (result) => metrics.monitoringQueries.inc({ result }),
    onCacheHit: () => metrics.monitoringQueries.inc({ result: 'cached' }),
    onFailure: (error) => {
      // once a minute at most: with the backend down, every chart of every page fails
      if (Date.now() - lastMonitoringWarning < 60_000) return;
      lastMonitoringWarning = Date.now();
      logger.warn('the monitoring backend could not be asked (further failures this minute are not logged)', { error });
    },
  });
  const listingCacheNames = listing.cacheNames();
  for (const cache of listingCacheNames) {
    for (const event of ['start', 'stop']) metrics.listingCacheEvents.inc({ cache, event }, 0);
  }

  // Workspace quotas (SPEC §18): watched by every replica for the pod webhook, recounted by the leader. Outside
  // readiness: until they are read the webhook refuses pods of every workspace instead of passing them unchecked.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const workspaceQuotas = new Reflector<any>({
    client,
    logger,
    name: 'workspace-quotas',
    listPath: QUOTAS_PATH,
    transform: (raw: unknown) => raw,
  });
  const quotaAdmission = new WorkspaceQuotaAdmission(
    client,
    {
      quotas: async () => {
        if (workspaceQuotas.synced) return workspaceQuotas.list();
        // not read yet (kapi starting): kube-apiserver's list, so no pod passes a quota meanwhile; none without the CRD
        const listed = await client
          .request<{ items?: unknown[] }>({ path: QUOTAS_PATH, timeoutMs: 5_000 })
          .catch((err: unknown) => {
            if (err instanceof KubeApiError && err.code === 404) return { items: [] };
            throw err;
          });
        return listed.items ?? [];
      },
      namespaceLabels: async (name) => {
        const cached = namespaces.get(name);
        if (cached) return selectedLabels(cached);
        // a namespace made a moment ago: asked of kube-apiserver
        const fresh = await client
          .request<V1Namespace>({ path: `/api/v1/namespaces/${encodeURIComponent(name)}`, timeoutMs: 5_000 })
          .catch((err: unknown) => {
            if (err instanceof KubeApiError && err.code === 404) return undefined;
            throw err;
          });
        return fresh && selectedLabels(toCachedNamespace(fresh, name));
      },
      usage: (quota) => countUsage(quota, namespaces.list(), allocations.pods.list()),
    },
    logger,
  );

  const watched = [nodes, allocations, namespaces, globalRoles, workspaceQuotas];
  // the console's Event Search (issue 40): the cluster's events, watched from the first search on
  const eventIndex = new EventIndex(client, logger);
  // The platform's roles realized in RBAC (SPEC §17), by one replica at a time: the leader of a Lease.
  let rbacController: PlatformRbacController | undefined;
  // and every User's traces kept removable, its hash out of the object (SPEC §17), by the same leader
  let userController: UserController | undefined;
  let stopWatchingGuard: (() => void) | undefined;
  // and the workspace quotas' use recounted from the pods
  let quotaController: WorkspaceQuotaController | undefined;
  const controllers = new LeaderElector({
    client,
    logger,
    namespace: options.configuration.namespace,
    name: 'kapi-apiserver-controllers',
    onStartedLeading: () => {
      rbacController = new PlatformRbacController(client, logger, {
        kapiNamespace: options.configuration.namespace,
        guard: tenantGuard,
      });
      rbacController.start();
      userController = new UserController({
        client,
        logger,
        kapiNamespace: options.configuration.namespace,
        setPassword: (user, uid, hash) => identity.setPasswordHash(user, uid, hash),
        hashesTrusted: () => tenantGuard.state.state === 'guarded',
      });
      userController.start();
      stopWatchingGuard = tenantGuard.onChange(() => userController?.recheck());
      quotaController = new WorkspaceQuotaController({
        client,
        logger,
        quotas: workspaceQuotas,
        namespaces,
        pods: allocations.pods,
      });
      quotaController.start();
    },
    onStoppedLeading: () => {
      void rbacController?.stop();
      rbacController = undefined;
      stopWatchingGuard?.();
      void userController?.stop();
      userController = undefined;
      void quotaController?.stop();
      quotaController = undefined;
    },
  });
  // a replica with credentials of its own is exempt before it writes a guarded field (a login session): its first look
  // is waited for, a short while
  await Promise.race([tenantGuard.check(), new Promise((resolve) => setTimeout(resolve, GUARD_FIRST_LOOK_MS).unref())]);
  controllers.start();
  // KubeSphere's system-workspace holds the system namespaces (SPEC §18), as its installer labels them
  const stopPlacing = placeSystemNamespaces({
    client,
    namespaces,
    kapiNamespace: options.configuration.namespace,
    logger,
  });
  for (const cache of watched) cache.start();
  configuration.start();
  await identity.start();
  metrics.cachesFrom(() => cachesOf(client));
  metrics.gaugeFrom(
    'kapi_tenant_guard',
    'Whether kube-apiserver holds every writer of the tenant fields to kapi’s rules (1: kapi’s ValidatingAdmissionPolicy is in place; 0: it is not, and workspace and platform-role grants are only taken away)',
    () => ({ [GUARD_NAME]: tenantGuard.state.state === 'guarded' ? 1 : 0 }),
    'policy',
  );
  metrics.gaugeFrom('kapi_cache_objects', 'Objects held in each watched cache', () => {
    const objects: Record<string, number> = { nodes: nodes.size, pods: allocations.size, namespaces: namespaces.size };
    for (const state of listingCaches.states(listingCacheNames)) objects[state.name] = state.objects;
    return objects;
  });
  metrics.gaugeFrom('kapi_cache_running', 'Whether each on-demand listing cache is running (1) or stopped (0)', () =>
    Object.fromEntries(listingCaches.states(listingCacheNames).map((state) => [state.name, state.running ? 1 : 0])),
  );
  metrics.gaugeFrom(
    'kapi_cache_body_bytes',
    'Bytes of the (compressed) object bodies each listing cache holds off the V8 heap',
    () => Object.fromEntries(listingCaches.states(listingCacheNames).map((state) => [state.name, state.bodyBytes])),
  );

  let shuttingDown = false;
  const readiness = [
    { name: 'shutdown', notReadyReason: () => (shuttingDown ? 'shutting down' : undefined) },
    { name: 'kube-credentials', notReadyReason: () => connection.health.notReadyReason() },
    nodes.readiness,
    allocations.readiness,
    namespaces.readiness,
    ...globalRoles.readiness,
    configuration.readiness,
    ...identity.readiness,
    ...(logging.backend.readiness ? [logging.backend.readiness] : []),
  ];
  metrics.readyFrom(readiness);
  const kubernetesVersion = new ServerVersion<KubernetesVersion>(client);
  const consoleConfig = {
    version: packageVersion(packageRoot()),
    kubernetesVersion: () => kubernetesVersion.get(),
    settings: () => configuration.current(),
  };
  /** kapi's HTTPS listener as users' kubeconfigs name it: its port and generated CA, once it listens. */
  const kubectlListener: { httpsPort?: number; caPem?: string; selfSigned?: boolean } = {};
  const toolbox = options.kubectlToolbox;
  const usersKind = KINDS_BY_RESOURCE.get('users') as KindDefinition;
  const toolboxes =
    toolbox &&
    new KubectlToolboxes(
      client,
      () => {
        const { caPem, httpsPort, selfSigned } = kubectlListener;
        // a self-signed certificate is this replica's alone: kubectl then reaches this very pod, by its address
        const direct = selfSigned && toolbox.podIp && httpsPort;
        const host = toolbox.podIp?.includes(':') ? `[${toolbox.podIp}]` : toolbox.podIp;
        return {
          namespace: options.configuration.namespace,
          image: toolbox.image,
          kapiUrl: direct ? `https://${host}:${httpsPort}` : toolbox.kapiUrl,
          ...(caPem && { caPem }),
          ...(direct && { tlsServerName: new URL(toolbox.kapiUrl).hostname }),
        };
      },
      async (username) => {
        const stored = await listing.readCached(usersKind, undefined, username);
        return stored
          ? (JSON.parse(stored.toString('utf8')) as { metadata?: { uid?: string } }).metadata?.uid
          : undefined;
      },
      logger,
    );
  const terminals = new PodTerminals({
    authenticate: identity.authenticateRequest,
    authorizer: identity.authorizer,
    listing,
    connection,
    logger,
    registry: streamRegistry,
    ...(toolboxes && { toolboxes }),
  });
  const app = createApp({
    logger,
    readiness,
    nodes,
    allocations,
    publicRoutes: [
      identity.oauthRouter,
      publicConfigRoutes(consoleConfig),
      // the quota webhook on the HTTPS listener, unless it has a listener of its own (the chart's)
      ...(options.webhookPort ? [] : [quotaWebhookRoutes(quotaAdmission, logger)]),
    ],
    resourceRoutes: [imageRoutes({ authorizer: identity.authorizer, client, registries })],
    platformRoutes: [
      configRoutes(),
      terminalRoutes(terminals),
      iamRoutes({
        listing,
        roles: globalRoles,
        authorizer: identity.authorizer,
        ...(config.memberWriteHooks && { memberWriteHooks: config.memberWriteHooks }),
        admin: {
          client,
          bindings: userRoleBindings,
          passwordPolicy: () => configuration.current().passwordPolicy,
          endSessions: (user) => identity.endSessionsOf(user),
          setPasswordHash: (user, uid, hash) => identity.setPasswordHash(user, uid, hash),
          kapiNamespace: options.configuration.namespace,
          logger,
        },
      }),
      departmentRoutes({ listing, authorizer: identity.authorizer, client, logger }),
      tenantRoutes({ listing, authorizer: identity.authorizer }),
      workspaceQuotaRoutes({ listing, authorizer: identity.authorizer, client, logger }),
      eventRoutes({
        authorizer: identity.authorizer,
        namespaces,
        events:
          // the backend's name, not instanceof: the OpenSearch client is loaded only where a log store is named
          options.logging?.eventsBackend === 'opensearch' && logging.backend.name === 'search'
            ? searchEngineSource(
                logging.backend as SearchBackend,
                options.logging.eventsSearchIndex ?? 'ks-logstash-events',
              )
            : eventsApiSource(eventIndex),
      }),
      workspaceAdminRoutes({ listing, authorizer: identity.authorizer, client, logger }),
      workspaceNamespaceRoutes({ listing, authorizer: identity.authorizer, namespaces, client, logger }),
      monitoringRoutes({
        authorizer: identity.authorizer,
        namespaces,
        listing,
        backend: () => configuration.current().monitoring,
        prometheus,
        client,
      }),
      componentRoutes({
        listing,
        authorizer: identity.authorizer,
        client,
        kapiNamespace: options.configuration.namespace,
        kubectlEndpoint: {
          ...(options.issuerUrl && { issuerUrl: options.issuerUrl }),
          listener: () => kubectlListener,
        },
        ...(toolboxes && { toolboxes }),
      }),
    ],
    account: identity.accountRouter,
    authenticate: identity.authenticate,
    guard: identity.guard,
    forwarding: { authenticate: identity.authenticateRequest, forward: forwarder.forward },
    metrics,
    trustedProxies: options.trustedProxies,
    logging: logging.routers,
    listing,
  });

  const listeners: Listener[] = [];
  const projectWatches = new ProjectWatches(
    {
      authenticate: identity.authenticateRequest,
      authorizer: identity.authorizer,
      listing,
      namespaces,
      logger,
      registry: streamRegistry,
    },
    forwarder.handleUpgrade,
  );
  const departmentWatches = new DepartmentWatches(
    {
      authenticate: identity.authenticateRequest,
      authorizer: identity.authorizer,
      listing,
      logger,
      registry: streamRegistry,
    },
    forwarder.handleUpgrade,
  );
  // the console's terminals, a member's live project list and department tree, then the relayed upgrades of /api
  // and /apis
  const upgrade = {
    should: (req: IncomingMessage) =>
      terminals.matches(req) ||
      projectWatches.matches(req) ||
      departmentWatches.matches(req) ||
      forwarder.shouldUpgrade(req),
    handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (terminals.matches(req)) terminals.handle(req, socket, head);
      else if (projectWatches.matches(req)) projectWatches.handle(req, socket, head);
      else if (departmentWatches.matches(req)) departmentWatches.handle(req, socket, head);
      else forwarder.handleUpgrade(req, socket, head);
    },
  };
  const maxConnectionsPerClient = options.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT;
  const connections = {
    timeouts: {
      readHeaderTimeoutMs: options.readHeaderTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUTS.readHeaderTimeoutMs,
      readTimeoutMs: options.readTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUTS.readTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUTS.idleTimeoutMs,
    },
    // One count per address across the HTTP, HTTPS and metrics listeners.
    cap: new ConnectionCap(maxConnectionsPerClient, options.trustedProxies, (address) =>
      logger.warn('connections refused: the client address holds the most connections allowed', {
        sourceIp: address,
        maxConnectionsPerClient,
      }),
    ),
    logger,
  };
  const http = await listen(app, { port: options.port, host: options.bindAddress, upgrade, ...connections });
  listeners.push(http);

  let https: Listener | undefined;
  let caFile: string | undefined;
  let certificateWatch: CertificateWatch | undefined;
  if (options.tlsPort !== undefined) {
    const certificateOptions = {
      certFile: options.tlsCertFile,
      keyFile: options.tlsKeyFile,
      secret: options.tlsSecret,
      client,
      caOut: options.tlsCaOut,
      // the name users' kubectl pods check it by (a Service in a namespace other than kapi-system)
      hosts: [hostname(), ...(toolbox ? [new URL(toolbox.kapiUrl).hostname] : [])],
      keepIn: options.tlsKeepGeneratedIn,
    };
    const certificate = await loadServingCertificate(certificateOptions);
    caFile = certificate.caFile;
    const served = await listen(app, {
      port: options.tlsPort,
      host: options.bindAddress,
      tls: { key: certificate.key, cert: certificate.cert },
      upgrade,
      ...connections,
    });
    https = served;
    listeners.push(served);
    kubectlListener.httpsPort = served.port;
    if (certificate.ca) kubectlListener.caPem = certificate.ca;
    kubectlListener.selfSigned = certificate.source === 'self-signed';
    // A renewed certificate (files or Secret) is served to new connections; open ones keep theirs.
    certificateWatch = watchServingCertificate({ ...certificateOptions, logger }, certificate, (pair) =>
      (served.server as HttpsServer).setSecureContext({ minVersion: 'TLSv1.2', ...pair }),
    );
  }

  // The admission webhooks on a listener of their own, with the certificate the chart's webhook configuration trusts
  // (one Secret for every replica): the users' HTTPS listener keeps its own certificate.
  let webhookWatch: CertificateWatch | undefined;
  if (options.webhookPort && options.webhookTlsSecret) {
    const webhookCertificateOptions = {
      certFile: undefined,
      keyFile: undefined,
      secret: options.webhookTlsSecret,
      client,
      caOut: options.tlsCaOut,
      hosts: [hostname()],
    };
    const certificate = await loadServingCertificate(webhookCertificateOptions);
    const webhooks = express();
    webhooks.disable('x-powered-by');
    webhooks.use(quotaWebhookRoutes(quotaAdmission, logger));
    webhooks.use(notFound);
    webhooks.use(errorHandler(logger));
    const served = await listen(webhooks, {
      port: options.webhookPort,
      host: options.bindAddress,
      tls: { key: certificate.key, cert: certificate.cert },
      ...connections,
      errorFormat: () => 'status' as const,
    });
    listeners.push(served);
    webhookWatch = watchServingCertificate({ ...webhookCertificateOptions, logger }, certificate, (pair) =>
      (served.server as HttpsServer).setSecureContext({ minVersion: 'TLSv1.2', ...pair }),
    );
  }

  let metricsListener: Listener | undefined;
  if (options.metricsPort !== undefined) {
    metricsListener = await listen(
      (req, res) => {
        if (req.url !== '/metrics') {
          res.writeHead(404).end();
          return;
        }
        metrics.registry.metrics().then(
          (text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
          () => res.writeHead(500).end(),
        );
      },
      // Nothing but Prometheus is served there: every error is a Status, whatever the path.
      { port: options.metricsPort, host: options.bindAddress, ...connections, errorFormat: () => 'status' as const },
    );
    listeners.push(metricsListener);
  }

  return {
    httpPort: http.port,
    httpsPort: https?.port,
    metricsPort: metricsListener?.port,
    caFile,
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const waiting = readiness.map((check) => check.notReadyReason()).filter((reason) => reason !== undefined);
        if (waiting.length === 0) return;
        if (Date.now() > deadline)
          throw new Error(`kapi-apiserver not ready after ${timeoutMs} ms: ${waiting.join('; ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop(graceMs = 10_000) {
      // Not ready first, still serving: the Service and load balancers stop sending before the listeners close.
      shuttingDown = true;
      if (options.shutdownDelayMs) await new Promise((resolve) => setTimeout(resolve, options.shutdownDelayMs));
      await certificateWatch?.stop();
      await webhookWatch?.stop();
      await eventIndex.stop();
      const closing = listeners.map((listener) => listener.stop(graceMs));
      // Watches and log follows end cleanly (at an event boundary, a WebSocket close frame), so clients see an end
      // and watch again elsewhere, instead of a cut after the grace.
      streamRegistry.closeAll();
      terminals.closeAll();
      projectWatches.closeAll();
      departmentWatches.closeAll();
      await Promise.all(closing);
      forwarder.close();
      stopPlacing();
      await controllers.stop();
      await tenantGuard.stop();
      await Promise.all([
        ...watched.map((cache) => cache.stop()),
        listingCaches.stop(),
        configuration.stop(),
        identity.stop(),
        logging.close(),
        prometheus.close(),
        registries.close(),
      ]);
    },
  };
}
