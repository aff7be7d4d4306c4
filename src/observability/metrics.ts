import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics, served on their own port. Routes are labelled by their pattern (never the raw path, which
 * would explode label cardinality with node names).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'kapi_http_requests_total',
    help: 'HTTP requests by route pattern, method and status code',
    labelNames: ['route', 'method', 'code'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'kapi_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern (time to the last byte; watches excluded)',
    labelNames: ['route', 'method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
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

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
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
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        const route = routeFamily(req.path);
        this.requests.inc({ route, method: req.method, code: String(res.statusCode) });
        // The raw URL, not req.query: asking Express for the query parses it on every forwarded request.
        if (!WATCH_QUERY.test(req.originalUrl)) {
          this.latency.observe({ route, method: req.method }, Number(process.hrtime.bigint() - started) / 1e9);
        }
      });
      next();
    };
  }
}

const WATCH_QUERY = /[?&]watch=(?:1|true)(?:&|$)/;

/** Bounded label values: the API family of a path, not the path itself. */
export function routeFamily(path: string): string {
  if (path.startsWith('/oauth/')) return path.split('/').slice(0, 3).join('/');
  if (path.startsWith('/kapis/')) {
    const parts = path.split('/');
    return parts.slice(0, 5).join('/');
  }
  if (path === '/api' || path.startsWith('/api/')) return '/api';
  if (path === '/apis' || path.startsWith('/apis/')) return '/apis';
  if (['/healthz', '/livez', '/readyz', '/version'].includes(path)) return path;
  return 'other';
}
