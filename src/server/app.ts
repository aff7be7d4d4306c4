import express, { type RequestHandler, type Router } from 'express';
import helmet from 'helmet';
import type { NodeCache, PodAllocationIndex, ReadinessCheck } from '../kube/caches.js';
import type { Logger } from '../observability/logger.js';
import { accessLog } from '../observability/access-log.js';
import { allowAll, type AccessGuard } from '../auth/identity.js';
import { nodeRoutes } from '../apis/resources/v1alpha3/routes.js';
import { apiDocsRoutes } from '../apidocs/routes.js';
import type { LoggingRouters } from '../apis/logging/v1alpha2/routes.js';
import { errorHandler, notFound } from './error-handler.js';
import { healthRoutes } from './health.js';
import { requestId } from './request-id.js';

/** Everything the HTTP app needs, built by the composition root (main.ts) or by tests. */
export interface AppDeps {
  logger: Logger;
  readiness: readonly ReadinessCheck[];
  nodes: NodeCache;
  allocations: PodAllocationIndex;
  /** Served without authentication (the OAuth endpoints). */
  publicRoutes?: readonly Router[];
  /** Puts `req.user` on the request or answers 401; absent only when features are tested alone. */
  authenticate?: RequestHandler;
  guard?: AccessGuard;
  /** Forwards /api and /apis to kube-apiserver as the caller. */
  forward?: RequestHandler;
  /** Proxies trusted to name the client in X-Forwarded-For (req.ip: audit lines, login limits). */
  trustedProxies?: readonly string[];
  /** Request metrics, when the metrics listener is on. */
  observe?: RequestHandler;
  /** The logging API (SPEC §6), at the logging group and at the tenant group KubeSphere 3.4 clients use. */
  logging?: LoggingRouters;
}

/**
 * Paths forwarded to kube-apiserver as the caller. A lookahead: it matches without consuming, so Express strips no
 * prefix from `req.url` and the audit line and metrics see the full path.
 */
const FORWARDED_PATH = /^(?=\/(?:api|apis|version|openapi)(?:\/|$))/;

/**
 * The request pipeline, in order, in one place: id → metrics → audit log → then either forwarded paths (authn →
 * kube-apiserver) or kapi's own (security headers → public: health, API documents, OAuth → authn → features → 404); errors → Status.
 */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', deps.trustedProxies?.length ? [...deps.trustedProxies] : false);
  app.use(requestId);
  if (deps.observe) app.use(deps.observe);
  app.use(accessLog(deps.logger));

  // Nothing else kapi serves lives under the forwarded paths: they go straight to authentication and kube-apiserver,
  // past routers they would never match, and come back as kube-apiserver sent them (no browser security headers).
  if (deps.forward) app.use(FORWARDED_PATH, ...(deps.authenticate ? [deps.authenticate] : []), deps.forward);

  app.use(helmet({ contentSecurityPolicy: false, strictTransportSecurity: false }));
  app.use(healthRoutes(deps.readiness));
  app.use(apiDocsRoutes());
  for (const router of deps.publicRoutes ?? []) app.use(router);

  if (deps.authenticate) app.use(deps.authenticate);
  app.use(
    '/kapis/resources.kapi.io/v1alpha3',
    nodeRoutes({ nodes: deps.nodes, allocations: deps.allocations, guard: deps.guard ?? allowAll }),
  );
  if (deps.logging) {
    app.use('/kapis/logging.kapi.io/v1alpha2', deps.logging.logging);
    app.use('/kapis/tenant.kapi.io/v1alpha2', deps.logging.tenant);
  }

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
