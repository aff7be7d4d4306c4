import type http from 'node:http';
import type { UserInfo } from '../../src/auth/identity.js';
import { createLogger } from '../../src/observability/logger.js';
import { createApp, type AppDeps } from '../../src/server/app.js';

/**
 * kapi's app for a test that needs no cluster: no nodes, nothing allocated, no readiness checks, a silent logger;
 * `user`, when given, is who every request is (instead of an authenticator). The rest is the test's own.
 */
export function appWithoutCluster(parts: Partial<AppDeps> & { user?: UserInfo }): http.RequestListener {
  const { user, ...deps } = parts;
  return createApp({
    logger: createLogger('error', { silent: true }),
    readiness: [],
    nodes: { list: () => [], get: () => undefined, revision: 0 },
    allocations: {
      allocatedOn: () => ({ cpuRequestsMilli: 0, cpuLimitsMilli: 0, memoryRequestsBytes: 0, memoryLimitsBytes: 0 }),
    },
    ...(user && {
      authenticate: (req, _res, next) => {
        req.user = user;
        next();
      },
    }),
    ...deps,
  });
}
