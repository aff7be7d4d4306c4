import { Router } from 'express';
import type { Authorizer } from '../../../auth/identity.js';
import type { WatchedNamespaces } from '../../../kube/namespace-cache.js';
import { mountOperation } from '../../../openapi/operation.js';
import { ApiError, ServiceUnavailableError } from '../../../server/errors.js';
import { withCaller } from '../../caller.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../resources/v1alpha3/kinds/kind-table.js';
import { listScope } from '../../resources/v1alpha3/listing/listing-access.js';
import type { EventIndex } from './event-index.js';
import { searchEvents as searchEventsOperation } from './event-operations.js';
import { parseEventQuery, type EventQuery } from './event-query.js';
import { scopeOf, searchEvents, type EventAnswer } from './event-search.js';
import { eventAnswerOf, eventSearchBody } from './search-body.js';
import type { SearchBackend } from '../../logging/v1alpha2/search/search-backend.js';

/** Where the events are searched: the cluster's own (watched), or a search engine's kube-events indices. */
export interface EventSource {
  search(query: EventQuery, scope: ReadonlyMap<string, number>, signal: AbortSignal): Promise<EventAnswer>;
}

/** The cluster's own events, watched by kapi. */
export function eventsApiSource(index: EventIndex): EventSource {
  return { search: async (query, scope) => searchEvents(await index.records(), query, scope) };
}

/** KubeSphere's kube-events indices (`<prefix>-YYYY.MM.DD`) in the log store kapi's logging reads. */
export function searchEngineSource(store: SearchBackend, indexPrefix: string): EventSource {
  return {
    search: async (query, scope, signal) =>
      eventAnswerOf(
        query,
        await store.searchIndices(
          indexPrefix,
          {
            startTime: query.startMs === undefined ? undefined : Math.floor(query.startMs / 1000),
            endTime: Math.floor(query.endMs / 1000),
          },
          eventSearchBody(query, scope),
          signal,
        ),
      ),
  };
}

export interface EventRouteDeps {
  authorizer: Authorizer;
  namespaces: WatchedNamespaces;
  events: EventSource;
}

const eventsKind = KINDS_BY_RESOURCE.get('events') as KindDefinition;

/**
 * The console's Event Search (`tenant.kapi.io/v1alpha2/events`): the query parsed first (a 400 before any review),
 * then the caller's scope (as the listing decides a caller's namespaces: one cluster-wide review, else one per
 * namespace), then the search over the watched events.
 */
export function eventRoutes(deps: EventRouteDeps): Router {
  const router = Router();
  mountOperation(
    router,
    '',
    searchEventsOperation,
    withCaller(async (caller, req, res) => {
      const query = parseEventQuery(req.query as Record<string, unknown>, Math.floor(Date.now() / 1000));
      if (!deps.namespaces.synced)
        throw new ServiceUnavailableError('the namespaces are not known yet (the cache has not synced); try again', 1);
      let allowed: ReadonlySet<string> | 'all';
      try {
        const scope = await listScope(
          deps.authorizer,
          caller,
          eventsKind,
          { routeNamespace: undefined, namespaceFilter: undefined },
          deps.namespaces,
        );
        allowed = scope.kind === 'all' ? 'all' : scope.namespaces;
      } catch (error) {
        // no namespace whose events the caller may list: nothing, as KubeSphere answers
        if (error instanceof ApiError && error.code === 403) allowed = new Set();
        else throw error;
      }
      const namespaces = deps.namespaces.list().map((ns) => ({
        name: ns.name,
        workspace: ns.workspace,
        createdMs: ns.createdAt * 1000,
      }));
      const scope = scopeOf(query, namespaces, (name) => allowed === 'all' || allowed.has(name), allowed === 'all');
      const aborted = new AbortController();
      res.on('close', () => aborted.abort());
      res.json(await deps.events.search(query, scope, aborted.signal));
    }),
  );
  return router;
}
