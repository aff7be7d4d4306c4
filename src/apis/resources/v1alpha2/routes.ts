import { Router } from 'express';
import { forbidden } from '../../../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes } from '../../../auth/identity.js';
import { mountOperation } from '../../../openapi/operation.js';
import { UnauthorizedError } from '../../../server/errors.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../v1alpha3/kinds/kind-table.js';
import type { ResourceListing } from '../v1alpha3/listing/resource-listing.js';
import { componentNamespaces, componentStatuses } from './components.js';
import { listComponents } from './operations.js';

export interface ComponentRouteDeps {
  listing: ResourceListing;
  authorizer: Authorizer;
  /** The namespace kapi runs in (its components' namespace, as kubesphere-system is KubeSphere's). */
  kapiNamespace: string;
}

const LIST_COMPONENTS: ResourceAttributes = { verb: 'list', group: 'resources.kapi.io', resource: 'components' };

/** The system components of KubeSphere 3.4's cluster overview, from the listing's Service and pod caches. */
export function componentRoutes(deps: ComponentRouteDeps): Router {
  const router = Router();
  const services = KINDS_BY_RESOURCE.get('services') as KindDefinition;
  const pods = KINDS_BY_RESOURCE.get('pods') as KindDefinition;
  mountOperation(router, '', listComponents, (req, res, next) => {
    const user = req.user;
    if (!user) return next(new UnauthorizedError());
    (async () => {
      const decision = await deps.authorizer.authorize(user, LIST_COMPONENTS);
      if (!decision.allowed) throw forbidden(user.username, LIST_COMPONENTS, decision.reason);
      const components = [];
      for (const namespace of componentNamespaces(deps.kapiNamespace)) {
        const namespaceServices = await deps.listing.cachedWhere(services, () => true, namespace);
        if (namespaceServices.length === 0) continue;
        const namespacePods = await deps.listing.cachedWhere(pods, () => true, namespace);
        components.push(...componentStatuses(namespaceServices, namespacePods));
      }
      res.json(components);
    })().catch(next);
  });
  return router;
}
