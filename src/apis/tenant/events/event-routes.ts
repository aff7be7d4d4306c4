import { Router } from 'express';
import type { Authorizer } from '../../../auth/identity.js';
import type { WatchedNamespaces } from '../../../kube/namespace-cache.js';
import { mountOperation } from '../../../openapi/operation.js';
import { InvalidParameterError, ServiceUnavailableError } from '../../../server/errors.js';
import { withCaller } from '../../caller.js';
import { MAX_REVIEWED_NAMESPACES } from '../../resources/v1alpha3/listing/listing-access.js';
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

/** Reviews in flight at once for one search. */
const REVIEW_CONCURRENCY = 16;

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
      const namespaces = deps.namespaces.list().map((ns) => ({
        name: ns.name,
        workspace: ns.workspace,
        createdMs: ns.createdAt * 1000,
      }));
      const list = { verb: 'list', resource: 'events' };
      const clusterWide = (await deps.authorizer.authorize(caller, list)).allowed;
      let allowed: (namespace: string) => boolean = () => true;
      if (!clusterWide) {
        // one review per namespace the filters leave (as the listings review a caller's namespaces)
        const candidates = [...scopeOf(query, namespaces, () => true, false).keys()];
        if (candidates.length > MAX_REVIEWED_NAMESPACES)
          throw new InvalidParameterError(
            'involved_object_namespace_filter',
            `the caller may not list events at the cluster scope, and the ${candidates.length} projects the query ` +
              `covers are more than ${MAX_REVIEWED_NAMESPACES} to review one by one: name them`,
          );
        const readable = new Set<string>();
        for (let at = 0; at < candidates.length; at += REVIEW_CONCURRENCY) {
          const batch = candidates.slice(at, at + REVIEW_CONCURRENCY);
          const decisions = await Promise.all(
            batch.map((namespace) => deps.authorizer.authorize(caller, { ...list, namespace })),
          );
          decisions.forEach((decision, i) => {
            if (decision.allowed) readable.add(batch[i] as string);
          });
        }
        allowed = (namespace) => readable.has(namespace);
      }
      // nothing readable: an empty answer, as KubeSphere gives
      const scope = scopeOf(query, namespaces, allowed, clusterWide);
      const aborted = new AbortController();
      res.on('close', () => aborted.abort());
      res.json(await deps.events.search(query, scope, aborted.signal));
    }),
  );
  return router;
}
