import { Router } from 'express';
import type { Authorizer, UserInfo } from '../../../auth/identity.js';
import { isObjectName } from '../../../auth/kube-names.js';
import type { KubeClient } from '../../../kube/client.js';
import { mountOperation } from '../../../openapi/operation.js';
import { parseImageReference, type ImageReference } from '../../../registry/image-reference.js';
import { pullSecretCredentials } from '../../../registry/pull-secret.js';
import type { LookupFailure, RegistryAccess, RegistryClient } from '../../../registry/registry-client.js';
import { ApiError, BadRequestError, NotFoundError } from '../../../server/errors.js';
import { asCaller, requireRight, withCaller } from '../../caller.js';
import { failureStatus, tagPage, tagPageQuery } from './images.js';
import { RESOURCES_BASE, listRepositoryTags, readImageConfig } from './operations.js';

export interface ImageRouteDeps {
  authorizer: Authorizer;
  /** For the pull secret, read as the caller. */
  client: KubeClient;
  registries: RegistryClient;
}

/** The annotation of a pull secret whose registry's TLS certificate is not verified (KubeSphere's, renamed). */
export const FORCE_INSECURE_ANNOTATION = 'secret.kapi.io/force-insecure';

const one = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The console's image lookup (the workload form's image field): an image's config and a repository's tags, from the
 * registry the image names, with the project's pull secret read as the caller (who must be allowed to read it).
 */
export function imageRoutes(deps: ImageRouteDeps): Router {
  const router = Router();

  /** The registry access a lookup in `namespace` gets: the pull secret's entry for `registry`, when one is named. */
  async function accessFor(caller: UserInfo, namespace: string, secret: string | undefined, registry: string) {
    if (secret === undefined || secret === '') return {} satisfies RegistryAccess;
    if (!isObjectName(secret)) throw new BadRequestError(`"${secret}" is not a secret name`);
    const object = await asCaller(
      deps.client,
      caller,
      { path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(secret)}` },
      { name: secret, group: '', kind: 'secrets' },
    );
    const read = pullSecretCredentials(object ?? {}, secret, registry);
    if ('error' in read) throw new BadRequestError(read.error);
    return {
      ...(read.credentials && { credentials: read.credentials }),
      plainHttp: read.plainHttp,
      insecure: object?.metadata?.annotations?.[FORCE_INSECURE_ANNOTATION] === 'true',
    } satisfies RegistryAccess;
  }

  const refused = (failure: LookupFailure, name: string, kind: string) =>
    failureStatus(failure) === 404
      ? new NotFoundError(failure.message, { name, group: '', kind })
      : new ApiError(400, 'BadRequest', failure.message, { name, group: '', kind });

  function parsedImage(text: string | undefined, parameter: string): ImageReference {
    if (text === undefined || text === '') throw new BadRequestError(`${parameter} is required`);
    const image = parseImageReference(text);
    if ('error' in image) throw new BadRequestError(`${parameter}: ${image.error}`);
    return image;
  }

  mountOperation(
    router,
    RESOURCES_BASE,
    readImageConfig,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      await requireRight(deps.authorizer, caller, {
        verb: 'get',
        group: 'resources.kapi.io',
        resource: 'imageconfig',
        namespace,
      });
      const text = one(req.query.image);
      const image = parsedImage(text, 'image');
      const access = await accessFor(caller, namespace, one(req.query.secret), image.registry);
      const config = await deps.registries.imageConfig(image, access);
      if ('failure' in config) throw refused(config as LookupFailure, text as string, 'images');
      res.json(config);
    }),
  );

  mountOperation(
    router,
    RESOURCES_BASE,
    listRepositoryTags,
    withCaller(async (caller, req, res) => {
      const namespace = String(req.params.namespace);
      await requireRight(deps.authorizer, caller, {
        verb: 'get',
        group: 'resources.kapi.io',
        resource: 'repositorytags',
        namespace,
      });
      const paging = tagPageQuery(req.query as Record<string, unknown>);
      if ('error' in paging) throw new BadRequestError(paging.error);
      const text = one(req.query.repository);
      // a repository is an image without its tag: parsed alike, a tag or digest refused
      const image = parsedImage(text, 'repository');
      if (image.digest || /:[^/]*$/.test(text as string))
        throw new BadRequestError('repository: name a repository, without a tag or digest');
      const access = await accessFor(caller, namespace, one(req.query.secret), image.registry);
      const tags = await deps.registries.tags(image.registry, image.repository, access);
      if (!Array.isArray(tags)) throw refused(tags, text as string, 'repositories');
      res.json({ registry: image.registry, repository: image.repository, ...tagPage(tags, paging) });
    }),
  );
  return router;
}
