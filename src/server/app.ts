import express, { type RequestHandler, type Router } from 'express';
import helmet from 'helmet';
import type { NodeCache, PodAllocationIndex, ReadinessCheck } from '../kube/caches.js';
import type { Logger } from '../observability/logger.js';
import { accessLog } from '../observability/access-log.js';
import { allowAll, type AccessGuard } from '../auth/identity.js';
import { nodeRoutes } from '../apis/resources/v1alpha3/routes.js';
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
  /** Request metrics, when the metrics listener is on. */
  observe?: RequestHandler;
}

/** Paths forwarded to kube-apiserver as the caller. */
const FORWARDED_PREFIXES = ['/api', '/apis', '/version', '/openapi'];
const FORWARDED_PATH = /^\/(?:api|apis|version|openapi)(?:\/|$)/;

/** The request pipeline, in order, in one place: id → log → security headers → public → authn → features → 404. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.use(requestId);
  if (deps.observe) app.use(deps.observe);
  app.use(accessLog(deps.logger));
  // kapi's own answers get browser security headers; forwarded ones come back as kube-apiserver sent them.
  const securityHeaders = helmet({ contentSecurityPolicy: false, strictTransportSecurity: false });
  app.use((req, res, next) => (FORWARDED_PATH.test(req.path) ? next() : securityHeaders(req, res, next)));

  app.use(healthRoutes(deps.readiness));
  for (const router of deps.publicRoutes ?? []) app.use(router);

  if (deps.authenticate) app.use(deps.authenticate);
  app.use(
    '/kapis/resources.kapi.io/v1alpha3',
    nodeRoutes({ nodes: deps.nodes, allocations: deps.allocations, guard: deps.guard ?? allowAll }),
  );
  if (deps.forward) app.use(FORWARDED_PREFIXES, deps.forward);

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
