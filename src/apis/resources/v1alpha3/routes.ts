import type { V1Node } from '@kubernetes/client-node';
import { Router, type Request, type Response } from 'express';
import type { AccessGuard } from '../../../auth/identity.js';
import type { NodeCache, PodAllocationIndex } from '../../../kube/caches.js';
import { NotFoundError } from '../../../server/errors.js';
import { methodNotAllowed } from '../../method-not-allowed.js';
import { annotateAllocation } from './allocation-annotations.js';
import { parseListQuery } from './list-query.js';
import { toNodeItem } from './node-item.js';
import { NodeLister } from './node-lister.js';
import { RESOURCES_BASE, listNodes, readNode } from './operations.js';
import { mountOperation } from '../../../openapi/operation.js';

export interface NodeRoutesDeps {
  nodes: NodeCache;
  allocations: PodAllocationIndex;
  guard: AccessGuard;
}

/**
 * `GET /nodes` and `GET /nodes/{name}` (mounted under /kapis/resources.kapi.io/v1alpha3), answered from the watched
 * caches only: no call to kube-apiserver per request. Only the returned page is copied and annotated.
 */
export function nodeRoutes(deps: NodeRoutesDeps): Router {
  const { nodes, allocations, guard } = deps;
  const lister = new NodeLister(nodes);
  const present = (node: V1Node): V1Node =>
    toNodeItem(annotateAllocation(node, allocations.allocatedOn(node.metadata?.name ?? '')));

  const router = Router();

  mountOperation(router, RESOURCES_BASE, listNodes, guard({ verb: 'list', resource: 'nodes' }), (req, res) => {
    const query = parseListQuery(req.query as Record<string, unknown>);
    const page = lister.list(query);
    res.json({ items: page.items.map(present), totalItems: page.totalItems });
  });
  router.all('/nodes', methodNotAllowed);

  mountOperation(
    router,
    RESOURCES_BASE,
    readNode,
    guard((req) => ({ verb: 'get', resource: 'nodes', name: String(req.params['name']) })),
    (req: Request, res: Response) => {
      const name = String(req.params['name']);
      const node = nodes.get(name);
      // kube-apiserver's own answer for a missing object (KubeSphere answers 500 here).
      if (!node) throw new NotFoundError(`nodes "${name}" not found`, { name, kind: 'nodes' });
      res.json(present(node));
    },
  );
  router.all('/nodes/:name', methodNotAllowed);

  return router;
}
