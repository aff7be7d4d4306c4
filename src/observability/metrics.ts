import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './request-metrics.js';
import { codeLabel, methodLabel, RouteLabels } from './route-labels.js';

/**
 * Prometheus metrics, served on their own port. Every label value comes from a bounded set (route-labels.ts): routes
 * by their template, never the raw path, so no client can grow the number of series.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly routes: RouteLabels;
  /** kapi_http_requests_total and kapi_http_request_duration_seconds (watches excluded from the latency). */
  readonly requests = new RequestMetrics(
    this.registry,
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  readonly logins = new Counter({
    name: 'kapi_login_attempts_total',
    help: 'Token requests by grant type and result',
    labelNames: ['grant', 'result'] as const,
    registers: [this.registry],
  });
  readonly activeWatches = new Gauge({
    name: 'kapi_forwarded_watches',
    help: 'Watch and upgraded streams currently relayed to kube-apiserver',
    registers: [this.registry],
  });
  readonly forwardedStreams = new Gauge({
    name: 'kapi_forwarded_streams',
    help: 'Long-running streams currently relayed to kube-apiserver by kind (watch, log, exec, attach, portforward)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  /** Counts relayed streams in both gauges; handed to the forwarder (open and close only, never per request). */
  readonly streams = {
    inc: (kind: string) => {
      this.activeWatches.inc();
      this.forwardedStreams.inc({ kind });
    },
    dec: (kind: string) => {
      this.activeWatches.dec();
      this.forwardedStreams.dec({ kind });
    },
  };
  readonly configurationReloads = new Counter({
    name: 'kapi_configuration_reloads_total',
    help: 'ClusterConfiguration reloads by result: applied, invalid (the last good one stays), defaults (no object)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly tokenRefreshes = new Counter({
    name: 'kapi_token_refreshes_total',
    help: 'Refresh grants that reached a login session, by result: rotated, replayed (within the grace), reused',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly sessionRevocations = new Counter({
    name: 'kapi_session_revocations_total',
    help: 'Login sessions this replica ended, by why: revoke (RFC 7009), logout, refresh_reuse, single_login, session_cap, code_reuse, password_change',
    labelNames: ['via'] as const,
    registers: [this.registry],
  });
  readonly listingCacheEvents = new Counter({
    name: 'kapi_cache_lifecycle_total',
    help: 'On-demand listing caches started (first use) and stopped (idle, shutdown), by cache and event: start, stop',
    labelNames: ['cache', 'event'] as const,
    registers: [this.registry],
  });
  readonly monitoringQueries = new Counter({
    name: 'kapi_monitoring_queries_total',
    help: 'PromQL queries the monitoring API needed, by result: ok or error (asked of the monitoring backend), cached (answered from the shared cache)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly authorizationCacheLookups = new Counter({
    name: 'kapi_authorization_cache_lookups_total',
    help: 'Authorization decisions asked for, by SubjectAccessReview cache result: hit or miss (a review was needed)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** `routes`: the templates of kapi's own routes (forwarded paths are labelled by resource). */
  constructor(options: { processMetrics?: boolean; routes?: Iterable<string>; maxResourceRoutes?: number } = {}) {
    this.routes = new RouteLabels(options.routes ?? [], options.maxResourceRoutes);
    // The event-loop lag is sampled every 100 ms, not prom-client's default 10 ms: that timer woke an idle kapi 100
    // times a second, and between requests that come one at a time it was most of the loop's extra turns.
    if (options.processMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    // every known label value from the start, so rates and alerts see a 0 before the first event
    for (const result of ['applied', 'invalid', 'defaults']) this.configurationReloads.inc({ result }, 0);
    for (const result of ['rotated', 'replayed', 'reused']) this.tokenRefreshes.inc({ result }, 0);
    for (const via of [
      'revoke',
      'logout',
      'refresh_reuse',
      'single_login',
      'session_cap',
      'code_reuse',
      'password_change',
    ])
      this.sessionRevocations.inc({ via }, 0);
    for (const result of ['hit', 'miss']) this.authorizationCacheLookups.inc({ result }, 0);
    for (const kind of ['watch', 'log', 'exec', 'attach', 'portforward']) this.forwardedStreams.set({ kind }, 0);
  }

  /**
   * Each watched cache's state, read at scrape time: `kapi_cache_synced` (1 once the first list is in and until it
   * stops) and `kapi_cache_last_event_timestamp_seconds` (when kube-apiserver was last heard from: the age of the
   * last event is `time() - …`).
   */
  cachesFrom(read: () => readonly { name: string; synced: boolean; lastEventAt: number | undefined }[]): void {
    new Gauge({
      name: 'kapi_cache_synced',
      help: 'Whether each watched cache has synced (1) or not (0)',
      labelNames: ['cache'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const cache of read()) this.set({ cache: cache.name }, cache.synced ? 1 : 0);
      },
    });
    new Gauge({
      name: 'kapi_cache_last_event_timestamp_seconds',
      help: 'When each watched cache last heard from kube-apiserver (list, watch opened, event or bookmark), Unix time',
      labelNames: ['cache'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const cache of read()) {
          if (cache.lastEventAt !== undefined) this.set({ cache: cache.name }, cache.lastEventAt / 1000);
        }
      },
    });
  }

  /** `kapi_ready`: 1 when every readiness check passes (what /readyz answers), read at scrape time. */
  readyFrom(checks: readonly { notReadyReason(): string | undefined }[]): void {
    new Gauge({
      name: 'kapi_ready',
      help: 'Whether this replica is ready (1) or not (0), as /readyz answers',
      registers: [this.registry],
      collect() {
        this.set(checks.every((check) => check.notReadyReason() === undefined) ? 1 : 0);
      },
    });
  }

  /** A gauge read at scrape time, e.g. the number of cached objects. */
  gaugeFrom(name: string, help: string, read: () => Record<string, number>, labelName = 'cache'): void {
    new Gauge({
      name,
      help,
      labelNames: [labelName],
      registers: [this.registry],
      collect() {
        for (const [label, value] of Object.entries(read())) this.set({ [labelName]: label }, value);
      },
    });
  }

  /** Express middleware: counts and times each request by its route family. */
  observe() {
    return (req: Request, res: Response, next: NextFunction): void => {
      this.track(req.method, req.path, req.originalUrl, res);
      next();
    };
  }

  /** Counts and times a request when its answer is finished; `target` is the raw request target (for `watch=`). */
  track(method: string, path: string, target: string, res: ServerResponse): void {
    const started = performance.now();
    res.on('finish', () => this.answered(method, path, target, res.statusCode, (performance.now() - started) / 1000));
  }

  /** A request whose answer went out whole, `seconds` after it came in (a watch's time is not a latency). */
  answered(method: string, path: string, target: string, code: number, seconds: number): void {
    // Labelled once answered: a resource route is learned from kube-apiserver's answer (route-labels.ts).
    const route = this.routes.label(path, code);
    const verb = methodLabel(method);
    this.requests.count(route, verb, codeLabel(code));
    // The raw target, not a parsed query: parsing it would cost every forwarded request.
    if (!WATCH_QUERY.test(target)) this.requests.time(route, verb, seconds);
  }
}

/** How often the event-loop lag (nodejs_eventloop_lag_*) is sampled. */
const EVENT_LOOP_SAMPLE_MS = 100;

const WATCH_QUERY = /[?&]watch=(?:1|true)(?:&|$)/;
