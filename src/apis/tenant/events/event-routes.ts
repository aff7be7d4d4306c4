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
import { parseEventQuery } from './event-query.js';
import { scopeOf, searchEvents } from './event-search.js';

export interface EventRouteDeps {
  authorizer: Authorizer;
  namespaces: WatchedNamespaces;
  events: EventIndex;
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
      res.json(searchEvents(await deps.events.records(), query, scope));
    }),
  );
  return router;
}
