import { Router, type NextFunction, type Request, type Response } from 'express';
import { mountOperation } from '../../../../openapi/operation.js';
import { NotFoundError } from '../../../../server/errors.js';
import { methodNotAllowed } from '../../../method-not-allowed.js';
import { KINDS, KINDS_BY_RESOURCE, type KindDefinition } from '../kinds/kind-table.js';
import { RESOURCES_BASE } from '../operations.js';
import { KIND_OPERATIONS } from './listing-operations.js';
import { parseListedItem, writeListing, type ListingAnswer, type ResourceListing } from './resource-listing.js';
import { snapshotsByClass, withSnapshotCount } from './snapshot-counts.js';

/**
 * The listing routes of every kind but nodes (mounted under /kapis/resources.kapi.io/v1alpha3, after the node
 * routes): each kind's operations, then, for any other path of the group's shape, a 404 `Status` that names the
 * kinds served (an unknown kind) or the route a kind is served at (a namespaced kind read without its namespace, a
 * cluster-scoped kind asked inside one).
 */
export function listingRoutes(listing: ResourceListing): Router {
  const router = Router();
  const wrap =
    (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => {
      handler(req, res).catch(next);
    };
  const param = (req: Request, name: string) => String(req.params[name]);
  /** Aborted when the client goes away before its answer (reviews then stop); not on a normal end. */
  const aborted = (req: Request, res: Response) => {
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    return controller.signal;
  };

  /**
   * Volume snapshot classes are listed with how many snapshots each has (every namespace's, as KubeSphere counts them:
   * a number, never which), from kapi's watch of the snapshots, started once a class is listed.
   */
  const decorated = async (definition: KindDefinition, answer: ListingAnswer): Promise<ListingAnswer> => {
    if (definition.resource !== 'volumesnapshotclasses' || answer.items.length === 0) return answer;
    const counts = snapshotsByClass(
      (await listing.cachedWhere(KINDS_BY_RESOURCE.get('volumesnapshots') as KindDefinition, () => true)) as object[],
    );
    return {
      totalItems: answer.totalItems,
      items: answer.items.map((item) => Buffer.from(JSON.stringify(withSnapshotCount(parseListedItem(item), counts)))),
    };
  };

  for (const ops of KIND_OPERATIONS) {
    const { definition } = ops;
    mountOperation(
      router,
      RESOURCES_BASE,
      ops.list,
      wrap(async (req, res) => {
        const answer = await listing.list(
          definition,
          req.user,
          undefined,
          req.query as Record<string, unknown>,
          aborted(req, res),
        );
        await writeListing(res, await decorated(definition, answer));
      }),
    );
    router.all(`/${definition.resource}`, methodNotAllowed);
    if (ops.listNamespaced) {
      mountOperation(
        router,
        RESOURCES_BASE,
        ops.listNamespaced,
        wrap(async (req, res) => {
          const answer = await listing.list(
            definition,
            req.user,
            param(req, 'namespace'),
            req.query as Record<string, unknown>,
            aborted(req, res),
          );
          await writeListing(res, answer);
        }),
      );
      router.all(`/namespaces/:namespace/${definition.resource}`, methodNotAllowed);
    }
    mountOperation(
      router,
      RESOURCES_BASE,
      ops.read,
      wrap(async (req, res) => {
        const namespace = definition.namespaced ? param(req, 'namespace') : undefined;
        const body = await listing.get(definition, req.user, namespace, param(req, 'name'));
        res.type('application/json').send(body);
      }),
    );
    router.all(
      definition.namespaced ? `/namespaces/:namespace/${definition.resource}/:name` : `/${definition.resource}/:name`,
      methodNotAllowed,
    );
  }

  router.get('/:resources', (req) => unserved(param(req, 'resources'), false, false));
  router.get('/:resources/:name', (req) => unserved(param(req, 'resources'), false, true));
  router.get('/namespaces/:namespace/:resources', (req) => unserved(param(req, 'resources'), true, false));
  router.get('/namespaces/:namespace/:resources/:name', (req) => unserved(param(req, 'resources'), true, true));
  return router;
}

const SERVED = KINDS.map((definition) => definition.resource).sort();
const BY_RESOURCE = new Map(KINDS.map((definition) => [definition.resource, definition]));

/** The 404 for a path of the group's shape that no kind serves. */
function unserved(resource: string, inNamespace: boolean, named: boolean): never {
  const definition: KindDefinition | undefined = BY_RESOURCE.get(resource);
  if (!definition) {
    throw new NotFoundError(
      `the server could not find the requested resource: resources.kapi.io/v1alpha3 serves ${SERVED.join(', ')}; ` +
        `not ${JSON.stringify(resource)}`,
      { kind: resource },
    );
  }
  const at = definition.namespaced
    ? `${RESOURCES_BASE}/namespaces/{namespace}/${resource}${named ? '/{name}' : ''}`
    : `${RESOURCES_BASE}/${resource}${named ? '/{name}' : ''}`;
  const scope = definition.namespaced ? 'namespaced' : 'cluster-scoped';
  const asked = inNamespace ? 'inside a namespace' : 'without a namespace';
  throw new NotFoundError(`${resource} are ${scope} (asked ${asked}): ${named ? 'read one' : 'list them'} at ${at}`, {
    kind: resource,
  });
}
