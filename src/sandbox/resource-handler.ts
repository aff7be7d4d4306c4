import type { SandboxUser } from './identity.js';
import type { Exchange } from './exchange.js';
import { readPage } from './list-pager.js';
import { parseListOptions, type ListOptions } from './list-options.js';
import { PATCH_TYPES, type PatchType } from './patch.js';
import { groupResource, type RegistryStore } from './registry-store.js';
import { apiVersionOf, type ResourceType } from './resource-types.js';
import type { RequestInfo } from './request-info.js';
import { mediaType, readJsonBody, readObjectBody } from './request-body.js';
import { deletedStatus, methodNotAllowed, pathNotFound } from './status.js';
import { listItemJson, objectJson, type StoredObject } from './stored-object.js';
import { serveWatch, type WatchDeps } from './watch-stream.js';
import type { SandboxWebhooks } from './webhooks.js';

/**
 * The REST verbs on a stored type: get, list (paged), watch, create, update, patch, delete, deletecollection, and
 * the status subresource. Routing has resolved the type; this maps verbs to the registry store and renders answers.
 */
export interface ResourceHandlerDeps extends WatchDeps {
  objects: RegistryStore;
  webhooks?: SandboxWebhooks;
}

function dryRun(x: Exchange): boolean {
  return x.url.searchParams.getAll('dryRun').includes('All');
}

/** A list document assembled from the stored JSON of its items, without parsing any of them. */
function listParts(
  type: ResourceType,
  version: string,
  items: readonly StoredObject[],
  meta: Record<string, unknown>,
): string[] {
  const parts = [
    `{"kind":${JSON.stringify(type.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(type.group, version))},"metadata":${JSON.stringify(meta)},"items":[`,
  ];
  for (let i = 0; i < items.length; i++) {
    parts.push(i === 0 ? listItemJson(type, version, items[i]!) : `,${listItemJson(type, version, items[i]!)}`);
  }
  parts.push(']}');
  return parts;
}

export async function serveResource(
  x: Exchange,
  deps: ResourceHandlerDeps,
  type: ResourceType,
  info: RequestInfo,
  namespace: string,
  user?: SandboxUser,
): Promise<void> {
  const { objects, store } = deps;
  const version = info.apiVersion;
  const name = info.name;
  const subresource = info.subresource;
  if (subresource && subresource !== 'status') throw pathNotFound();
  if (subresource === 'status' && !type.subresources.includes('status')) throw pathNotFound();
  const cluster = type.namespaced && !namespace;
  const query = x.url.searchParams;

  switch (info.verb) {
    case 'get': {
      x.sendJson(200, objectJson(type, version, objects.get(type, namespace, name)));
      return;
    }
    case 'list': {
      if (subresource) throw methodNotAllowed();
      const options = parseListOptions(type, query);
      const page = readPage(
        store.collection(type),
        store.currentRv,
        type.namespaced && namespace ? `${namespace}/` : '',
        options,
      );
      const meta: Record<string, unknown> = { resourceVersion: String(page.rv) };
      if (page.continueToken) meta.continue = page.continueToken;
      if (page.remainingItemCount !== undefined) meta.remainingItemCount = page.remainingItemCount;
      x.sendJsonParts(200, listParts(type, version, page.items, meta));
      return;
    }
    case 'watch': {
      if (subresource) throw methodNotAllowed();
      serveWatch(x, deps, type, version, namespace, watchOptions(type, query, name));
      return;
    }
    case 'create': {
      if (name || cluster) throw methodNotAllowed();
      const body = await readObjectBody(x, type.kind);
      if (user && deps.webhooks?.anyFor(type, 'CREATE')) {
        // webhooks see the object as it would be stored (defaulted, validated), as kube-apiserver sends it
        const prepared = objects.create(type, namespace, structuredClone(body), { dryRun: true, version, user });
        const object = JSON.parse(objectJson(type, version, prepared)) as unknown;
        await deps.webhooks.admitCreate({ type, version, namespace, object, user, dryRun: dryRun(x) });
      }
      const created = objects.create(type, namespace, body, {
        dryRun: dryRun(x),
        version,
        user,
      });
      x.sendJson(201, objectJson(type, version, created));
      return;
    }
    case 'update': {
      if (!name) throw methodNotAllowed();
      const updated = objects.update(
        type,
        namespace,
        name,
        await readObjectBody(x, type.kind),
        subresource === 'status' ? 'status' : '',
        { dryRun: dryRun(x), version, user },
      );
      x.sendJson(200, objectJson(type, version, updated));
      return;
    }
    case 'patch': {
      if (!name) throw methodNotAllowed();
      const patchType = mediaType(x);
      const patch = await readJsonBody(x, PATCH_TYPES);
      const patched = objects.patch(
        type,
        namespace,
        name,
        patchType as PatchType,
        patch,
        subresource === 'status' ? 'status' : '',
        {
          dryRun: dryRun(x),
          version,
          user,
        },
      );
      x.sendJson(200, objectJson(type, version, patched));
      return;
    }
    case 'delete': {
      if (subresource) throw methodNotAllowed();
      const body = (await readObjectBody(x).catch(() => undefined)) as
        { preconditions?: { uid?: string; resourceVersion?: string } } | undefined;
      const result = objects.delete(type, namespace, name, { dryRun: dryRun(x), preconditions: body?.preconditions });
      if (type.returnsDeletedObject || !result.deleted) x.sendJson(200, objectJson(type, version, result.object));
      else x.sendObject(200, deletedStatus(groupResource(type), name, result.object.uid));
      return;
    }
    case 'deletecollection': {
      if (subresource || cluster) throw methodNotAllowed();
      const options = parseListOptions(type, query);
      const deleted = objects.deleteCollection(type, namespace, options.filter, { dryRun: dryRun(x) });
      x.sendJsonParts(200, listParts(type, version, deleted, { resourceVersion: String(store.currentRv) }));
      return;
    }
    default:
      throw methodNotAllowed();
  }
}

/** A watch's options; a name (the legacy /watch/.../<name> form) narrows it to one object. */
export function watchOptions(type: ResourceType, query: URLSearchParams, name: string): ListOptions {
  const options = parseListOptions(type, query, true);
  if (name) {
    const pinned = parseListOptions(type, new URLSearchParams({ fieldSelector: `metadata.name=${name}` }), true);
    options.filter = {
      label: options.filter?.label,
      fields: [...(options.filter?.fields ?? []), ...(pinned.filter?.fields ?? [])],
    };
  }
  return options;
}
