import type http from 'node:http';
import express, { type RequestHandler, type Router } from 'express';
import helmet from 'helmet';
import type { NodeCache, PodAllocationIndex, ReadinessCheck } from '../kube/caches.js';
import type { Logger } from '../observability/logger.js';
import { accessLog } from '../observability/access-log.js';
import { allowAll, type AccessGuard } from '../auth/identity.js';
import { nodeRoutes } from '../apis/resources/v1alpha3/routes.js';
import { listingRoutes } from '../apis/resources/v1alpha3/listing/listing-routes.js';
import type { ResourceListing } from '../apis/resources/v1alpha3/listing/resource-listing.js';
import { apiDocsRoutes } from '../apidocs/routes.js';
import type { LoggingRouters } from '../apis/logging/v1alpha2/routes.js';
import { errorHandler, notFound } from './error-handler.js';
import { healthRoutes } from './health.js';
import { requestId } from './request-id.js';
import { forwardedRequests, withForwarding } from './forwarded-requests.js';
import type { RequestAuthenticator } from '../auth/authenticate.js';
import type { Metrics } from '../observability/metrics.js';
import type { ForwardRequest } from '../proxy/forwarder.js';

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
  /** Forwards /api, /apis, /version and /openapi to kube-apiserver as the caller, beside Express. */
  forwarding?: { authenticate: RequestAuthenticator; forward: ForwardRequest };
  /** Proxies trusted to name the client in X-Forwarded-For (req.ip: audit lines, login limits). */
  trustedProxies?: readonly string[];
  /** Request metrics, when the metrics listener is on. */
  metrics?: Metrics;
  /** The logging API (SPEC §6), at the logging group and at the tenant group KubeSphere 3.4 clients use. */
  logging?: LoggingRouters;
  /** The account API (SPEC §14: password changes, login records), mounted after authentication. */
  account?: Router;
  /** Every other kind's listing (SPEC §13), beside the node listing. */
  listing?: ResourceListing;
  /**
   * `resources.kapi.io/v1alpha3` routes that are not a kind's listing (the image lookup), mounted at that base before
   * the listing, whose `namespaces/{ns}/{resource}` would take their names.
   */
  resourceRoutes?: readonly Router[];
  /** kapi's other APIs for authenticated callers, each router holding its full paths (config.kapi.io, …). */
  platformRoutes?: readonly Router[];
}

/**
 * The request pipeline, in order, in one place: forwarded paths (/api, /apis, /version, /openapi) take their own lean
 * pipeline (forwarded-requests.ts: id → metrics → audit log → authn → kube-apiserver); kapi's own paths go through
 * Express: id → metrics → audit log → security headers → public: health, API documents, OAuth → authn → features →
 * 404; errors → Status.
 */
export function createApp(deps: AppDeps): http.RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', deps.trustedProxies?.length ? [...deps.trustedProxies] : false);
  app.use(requestId);
  if (deps.metrics) app.use(deps.metrics.observe());
  app.use(accessLog(deps.logger));

  app.use(helmet({ contentSecurityPolicy: false, strictTransportSecurity: false }));
  app.use(strictTransportSecurity);
  app.use(healthRoutes(deps.readiness));
  app.use(apiDocsRoutes());
  for (const router of deps.publicRoutes ?? []) app.use(router);

  if (deps.authenticate) app.use(deps.authenticate);
  app.use(
    '/kapis/resources.kapi.io/v1alpha3',
    nodeRoutes({ nodes: deps.nodes, allocations: deps.allocations, guard: deps.guard ?? allowAll }),
  );
  for (const router of deps.resourceRoutes ?? []) app.use('/kapis/resources.kapi.io/v1alpha3', router);
  if (deps.listing) app.use('/kapis/resources.kapi.io/v1alpha3', listingRoutes(deps.listing));
  for (const router of deps.platformRoutes ?? []) app.use(router);
  if (deps.account) app.use(deps.account);
  if (deps.logging) {
    app.use('/kapis/logging.kapi.io/v1alpha2', deps.logging.logging);
    app.use('/kapis/tenant.kapi.io/v1alpha2', deps.logging.tenant);
  }

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  if (!deps.forwarding) return app;
  return withForwarding(
    forwardedRequests({
      logger: deps.logger,
      metrics: deps.metrics,
      trustedProxies: deps.trustedProxies,
      ...deps.forwarding,
    }),
    app,
  );
}

/**
 * HSTS on what kapi serves over its own TLS listener (its login page, documents and APIs), so a browser that met kapi
 * over HTTPS never falls back to plain HTTP for it; never over plain HTTP (RFC 6797 §7.2), and not on the strength of
 * a proxy's X-Forwarded-Proto. No includeSubDomains: kapi does not own its domain's other hosts.
 */
function strictTransportSecurity(req: express.Request, res: express.Response, next: express.NextFunction): void {
  if ((req.socket as { encrypted?: boolean }).encrypted) res.setHeader('Strict-Transport-Security', 'max-age=31536000');
  next();
}
