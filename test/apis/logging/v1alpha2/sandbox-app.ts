/**
 * The logging API as the server mounts it, over the sandbox: the watched pod and namespace caches, the pod-log
 * backend reading the sandbox's pod-log API as kapi's service account, and the SubjectAccessReview authorizer asking
 * the sandbox's RBAC. The caller is named by a test header instead of a token (authentication is tested elsewhere).
 */
import type { NextFunction, Request, Response } from 'express';
import { SubjectAccessReviewAuthorizer } from '../../../../src/auth/authorization/authorizer.js';
import {
  PodLogBackend,
  type PodLogBackendOptions,
} from '../../../../src/apis/logging/v1alpha2/pod-log/pod-log-backend.js';
import { loggingRoutes, type LoggingRoutesDeps } from '../../../../src/apis/logging/v1alpha2/routes.js';
import type { LogBackend } from '../../../../src/apis/logging/v1alpha2/log-backend.js';
import { KubeClient } from '../../../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../../../src/kube/connection.js';
import { createNamespaceCache, type WatchedNamespaces } from '../../../../src/kube/namespace-cache.js';
import { createPodAllocations, type PodAllocations } from '../../../../src/kube/pod-allocations.js';
import { createLogger, type Logger } from '../../../../src/observability/logger.js';
import type { Sandbox, SandboxOptions } from '../../../../src/sandbox/index.js';
import { createApp } from '../../../../src/server/app.js';
import { call, testSandbox } from '../../../sandbox/helpers.js';

export const USER_HEADER = 'x-test-user';

/** Cluster-wide rights (cluster-admin) for `user`, granted through RBAC as an operator would. */
export async function grantClusterAdmin(sandbox: Sandbox, user: string): Promise<void> {
  await call(sandbox, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      metadata: { name: `${user}-cluster-admin` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', name: user }],
    },
  });
}

export interface LoggingSandbox {
  sandbox: Sandbox;
  app: ReturnType<typeof createApp>;
  pods: PodAllocations;
  namespaces: WatchedNamespaces;
  backend: LogBackend;
  /** Reviews the authorizer sent to the sandbox. */
  reviews: () => number;
  /** Log reads the sandbox served. */
  logReads: () => number;
  stop(): Promise<void>;
}

export async function startLoggingSandbox(
  options: {
    sandbox?: SandboxOptions;
    backend?: Partial<PodLogBackendOptions>;
    wrap?: (b: LogBackend) => LogBackend;
    /** Limits and the write timeout of the routes (none and the default when absent). */
    routes?: Pick<LoggingRoutesDeps, 'limits' | 'writeTimeoutMs'>;
    logger?: Logger;
  } = {},
): Promise<LoggingSandbox> {
  const sandbox = await testSandbox(options.sandbox);
  const logger = options.logger ?? createLogger('error', { silent: true });
  const connection: KubeConnection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
  const client = new KubeClient(connection);
  const pods = createPodAllocations(client, logger);
  const namespaces = createNamespaceCache(client, logger);
  pods.start();
  namespaces.start();
  await Promise.all([pods.waitForSync(10_000), namespaces.waitForSync(10_000)]);
  let reviews = 0;
  const counting = new KubeClient(connection);
  const request = counting.request.bind(counting);
  counting.request = ((req) => {
    if (req.path.endsWith('/subjectaccessreviews')) reviews++;
    return request(req);
  }) as typeof counting.request;
  // kapi's own reads of the pod-log API, counted to prove when they stop.
  const authorizer = new SubjectAccessReviewAuthorizer({ client: counting, logger });
  let logReads = 0;
  const reading = new KubeClient(connection);
  const stream = reading.stream.bind(reading);
  reading.stream = ((req) => {
    if (req.path.endsWith('/log')) logReads++;
    return stream(req);
  }) as typeof reading.stream;
  const podLog = new PodLogBackend({ client: reading, pods: pods.directory, ...options.backend });
  const backend = options.wrap ? options.wrap(podLog) : podLog;
  const routers = loggingRoutes({ backend, authorizer, namespaces, logger, ...options.routes });
  const authenticate = (req: Request, _res: Response, next: NextFunction) => {
    const name = req.header(USER_HEADER);
    if (name) req.user = { username: name, groups: ['system:authenticated'] };
    next();
  };
  const app = createApp({
    logger,
    readiness: [],
    nodes: { list: () => [], get: () => undefined, revision: 0 },
    allocations: pods,
    authenticate,
    logging: routers,
  });
  return {
    sandbox,
    app,
    pods,
    namespaces,
    backend,
    reviews: () => reviews,
    logReads: () => logReads,
    async stop() {
      await Promise.all([pods.stop(), namespaces.stop()]);
      connection.close();
      await sandbox.stop();
    },
  };
}
