import { Router, type Request, type Response } from 'express';
import type { Authorizer } from '../../../auth/identity.js';
import type { Logger } from '../../../observability/logger.js';
import { ApiError, NotFoundError, ServiceUnavailableError, UnauthorizedError } from '../../../server/errors.js';
import { readableNamespaces, type NamespaceList } from './access.js';
import type { LogBackend, LogSearch, NamespaceScope, SkippedContainers } from './log-backend.js';
import { LOGGING_BASE, SKIPPED_TRAILER, TENANT_BASE, queryLogs, queryTenantLogs } from './operations.js';
import { parseLogQuery, type LogQuery } from './query.js';
import { DEFAULT_LOG_WRITE_TIMEOUT_MS, type LogRequestLimits } from './request-limits.js';
import { watchForStalledReader } from './stalled-reader.js';
import { expressPath, mountOperation } from '../../../openapi/operation.js';
import { REMOVED_ROUTES, removedRouteMessage, type RemovedRouteParams } from './removed-routes.js';
import { methodNotAllowed } from '../../method-not-allowed.js';

export interface LoggingRoutesDeps {
  backend: LogBackend;
  /** Decides `get pods/log`; absent only when the feature is tested alone (everything readable). */
  authorizer: Authorizer | undefined;
  namespaces: NamespaceList;
  logger: Logger;
  /** Exports and queries in flight per replica and per user (429 beyond); unlimited when absent (tests). */
  limits?: LogRequestLimits;
  /** An answer whose client takes none of it for this long is ended; default DEFAULT_LOG_WRITE_TIMEOUT_MS. */
  writeTimeoutMs?: number;
  now?: () => number;
}

export interface LoggingRouters {
  /** Mounted at /kapis/logging.kapi.io/v1alpha2: `/logs` and the removed routes' 404s. */
  logging: Router;
  /** Mounted at /kapis/tenant.kapi.io/v1alpha2, where KubeSphere 3.4 clients ask: `/logs` only. */
  tenant: Router;
}

/** `GET /logs` (SPEC §6): parse → which namespaces the caller may read → the backend's answer. */
export function loggingRoutes(deps: LoggingRoutesDeps): LoggingRouters {
  const now = deps.now ?? Date.now;

  const writeTimeoutMs = deps.writeTimeoutMs ?? DEFAULT_LOG_WRITE_TIMEOUT_MS;

  const logs = async (req: Request, res: Response): Promise<void> => {
    const nowSeconds = Math.floor(now() / 1000);
    const query = parseLogQuery(req.query as Record<string, unknown>, nowSeconds);
    // A place among the requests in flight (else 429), held until the answer is out or the client has gone.
    const user = req.user?.username ?? '';
    const release = deps.limits?.admit(query.operation === 'export' ? 'export' : 'query', user);
    if (release) res.once('close', release);
    // A client that stops reading would hold the lines waiting for it (and its place) for ever: its answer is ended.
    const stopWatching = watchForStalledReader(res, writeTimeoutMs, () => {
      deps.logger.warn('logging answer ended: its client took none of it for too long', {
        requestId: req.requestId,
        user: user || undefined,
        operation: query.operation,
        writeTimeoutSeconds: writeTimeoutMs / 1000,
      });
      res.destroy();
    });
    res.once('close', stopWatching);
    // listening before the scope is worked out: its per-namespace reviews stop when the client has gone
    const abort = new AbortController();
    const clientGone = () => {
      if (!res.writableFinished) abort.abort(new Error('the client went away'));
    };
    res.on('close', clientGone);
    try {
      const scope = await scopeFor(deps, req, query, abort.signal, nowSeconds).catch((error: unknown) => {
        if (abort.signal.aborted) return undefined;
        throw error;
      });
      if (!scope) return; // nobody left to answer
      const search: LogSearch = { filter: query, scope, signal: abort.signal };
      try {
        await answer(deps.backend, search, query, req, res);
      } catch (error) {
        if (abort.signal.aborted) return;
        if (error instanceof ApiError) throw error;
        deps.logger.error('log backend failed', {
          requestId: req.requestId,
          backend: deps.backend.name,
          error: error instanceof Error ? error.message : String(error),
        });
        throw new ServiceUnavailableError(`the ${deps.backend.name} log backend could not answer; try again`);
      }
    } finally {
      res.off('close', clientGone);
    }
  };

  const logging = Router();
  const tenant = Router();
  mountOperation(logging, LOGGING_BASE, queryLogs, logs);
  mountOperation(tenant, TENANT_BASE, queryTenantLogs, logs);
  for (const router of [logging, tenant]) router.all('/logs', methodNotAllowed);
  for (const template of REMOVED_ROUTES) {
    logging.all(expressPath(template, LOGGING_BASE), (req: Request) => {
      throw new NotFoundError(
        removedRouteMessage(req.params as RemovedRouteParams, req.query as Record<string, unknown>),
      );
    });
  }
  return { logging, tenant };
}

async function scopeFor(
  deps: LoggingRoutesDeps,
  req: Request,
  query: LogQuery,
  signal: AbortSignal,
  now: number,
): Promise<NamespaceScope> {
  if (!deps.authorizer) return { kind: 'all' };
  if (!req.user) throw new UnauthorizedError();
  return readableNamespaces(deps.authorizer, req.user, query, deps.namespaces, { now, signal });
}

async function answer(backend: LogBackend, search: LogSearch, query: LogQuery, req: Request, res: Response) {
  switch (query.operation) {
    case 'query': {
      const { result, skipped } = await backend.query(search, query);
      res.json({ query: result, ...(skipped && { skipped }) });
      return;
    }
    case 'statistics': {
      const { result, skipped } = await backend.statistics(search);
      res.json({ statistics: result, ...(skipped && { skipped }) });
      return;
    }
    case 'histogram': {
      const { result, skipped } = await backend.histogram(search, query.interval);
      res.json({ histogram: result, ...(skipped && { skipped }) });
      return;
    }
    case 'export':
      await exportLogs(backend, search, query, req, res);
      return;
  }
}

/**
 * Streams the export. Headers go out with the first text, so an error found before any (a 400, a 403) is still a
 * Status; after that, a failure can only cut the stream. The trailer counts containers that could not be read.
 */
async function exportLogs(backend: LogBackend, search: LogSearch, query: LogQuery, req: Request, res: Response) {
  const { signal } = search;
  const start = () => {
    if (res.headersSent) return;
    res.status(200);
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="logs.txt"');
    res.setHeader('Cache-Control', 'no-store');
    if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) res.setHeader('Trailer', SKIPPED_TRAILER);
  };
  const write = (text: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason as Error);
        return;
      }
      start();
      if (res.write(text)) {
        resolve();
        return;
      }
      const done = () => {
        res.off('drain', done);
        signal.removeEventListener('abort', done);
        if (signal.aborted) reject(signal.reason as Error);
        else resolve();
      };
      res.on('drain', done);
      signal.addEventListener('abort', done, { once: true });
    });
  const { skipped } = await backend.export(search, query.sort, write);
  start();
  if (res.getHeader('Trailer')) res.addTrailers({ [SKIPPED_TRAILER]: String(skippedCount(skipped)) });
  res.end();
}

function skippedCount(skipped: SkippedContainers | undefined): number {
  return skipped?.containers ?? 0;
}
