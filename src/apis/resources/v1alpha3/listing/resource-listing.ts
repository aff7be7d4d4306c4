import type { ServerResponse } from 'node:http';
import type { Authorizer, UserInfo } from '../../../../auth/identity.js';
import { decodeStoredBody, type StoredBody } from '../../../../kube/compact/body-arena.js';
import { ObjectTable } from '../../../../kube/compact/object-table.js';
import {
  BY_CREATION,
  BY_NAME,
  TableViews,
  byStatusText,
  byTime,
  type SortKey,
} from '../../../../kube/compact/table-views.js';
import {
  CacheNotSyncedError,
  type ListingCache,
  type ListingCaches,
  type ListedKind,
} from '../../../../kube/compact/listing-caches.js';
import { KubeApiError, type KubeClient } from '../../../../kube/client.js';
import { matchesLabelSelector, parseLabelSelector, type LabelSelector } from '../../../../kube/label-selector.js';
import type { Reflector } from '../../../../kube/reflector.js';
import { callerHeaders } from '../../../caller.js';
import { ApiError, NotFoundError, ServiceUnavailableError, credentialsRefused } from '../../../../server/errors.js';
import { KINDS_BY_RESOURCE, kubePath, type KindDefinition } from '../kinds/kind-table.js';
import { bodyHeader, objectRecord, tableShape } from '../kinds/object-record.js';
import { pageWindow } from '../node-list.js';
import { allowGet, listScope, type ListScope, type NamespaceNames } from './listing-access.js';
import { parseListingQuery, slotFilter, type ListingQuery } from './listing-query.js';

/**
 * The listing of every kind as one pipeline: parse → authorize → filter → sort → page, over the kind's table (from
 * its on-demand cache, or, for secrets, from one list read as the caller). The answer is the page's bodies as stored,
 * spliced into `{"items":[…],"totalItems":N}`: no object is parsed or serialized again per request.
 */
export interface ListingAnswer {
  readonly totalItems: number;
  /**
   * The page's items: JSON each, or for a long page the stored (compressed) bodies copied out, decoded as the answer
   * is written so that a page of every pod never holds all of them decoded at once.
   */
  readonly items: readonly (Buffer | StoredBody)[];
}

/** Pages longer than this are copied out compressed and decoded while written. */
const DECODED_PAGE_ITEMS = 1_000;

export interface ResourceListingDeps {
  caches: ListingCaches;
  client: KubeClient;
  /** Undefined when features are tested alone: everything is allowed. */
  authorizer?: Authorizer;
  namespaces: NamespaceNames;
  /**
   * Watches kapi always holds, by resource (the pods for the node listing's allocations, the namespaces for
   * authorization and logs): those kinds' listings attach to them instead of opening a second watch.
   */
  shared?: Readonly<Partial<Record<string, Reflector<unknown>>>>;
}

/** Per kind, the listed kind the cache registry runs (made once). */
function listedKinds(shared: Readonly<Partial<Record<string, Reflector<unknown>>>>): Map<string, ListedKind> {
  const kinds = new Map<string, ListedKind>();
  for (const definition of KINDS_BY_RESOURCE.values()) {
    if (definition.source !== 'watch' && definition.source !== 'shared') continue;
    const header = bodyHeader(definition);
    kinds.set(definition.resource, {
      name: `resources/${definition.resource}`,
      listPath: kubePath(definition),
      shape: tableShape(definition),
      toRecord: (raw) => objectRecord(definition, header, raw),
      ...(shared[definition.resource] && { shared: shared[definition.resource] }),
    });
  }
  return kinds;
}

/** The sort key a `sortBy` value names for a kind. */
export function sortKeyOf(definition: KindDefinition, sortBy: string): SortKey {
  if (sortBy === 'name') return BY_NAME;
  if (sortBy === 'status' && definition.sortByStatus && definition.status)
    return byStatusText(definition.status.values);
  const index = definition.times.findIndex((t) => t.sortBy.includes(sortBy));
  return index >= 0 ? byTime(index) : BY_CREATION;
}

const everyone: Authorizer = { authorize: () => Promise.resolve({ allowed: true }) };
const anybody: UserInfo = { username: 'system:anonymous', groups: [] };

/** How long kube-apiserver's discovery of an optional API is taken as it was. */
const API_PRESENCE_MS = 10_000;

export class ResourceListing {
  private readonly kinds: Map<string, ListedKind>;
  private readonly authorizer: Authorizer;
  /** The resources each optional group version is served with, as last discovered. */
  private readonly apiPresence = new Map<string, { resources: ReadonlySet<string>; until: number }>();

  constructor(private readonly deps: ResourceListingDeps) {
    this.kinds = listedKinds(deps.shared ?? {});
    this.authorizer = deps.authorizer ?? everyone;
  }

  /** The names of the caches that can run, for metrics (a fixed set). */
  cacheNames(): string[] {
    return [...this.kinds.values()].map((kind) => kind.name);
  }

  async list(
    definition: KindDefinition,
    user: UserInfo | undefined,
    routeNamespace: string | undefined,
    rawQuery: Readonly<Record<string, unknown>>,
    signal?: AbortSignal,
  ): Promise<ListingAnswer> {
    const query = parseListingQuery(definition, rawQuery);
    const scope = await listScope(
      this.authorizer,
      user ?? anybody,
      definition,
      { routeNamespace, namespaceFilter: query.namespace, signal },
      this.deps.namespaces,
    );
    if (definition.source === 'passthrough') return this.listThroughKube(definition, user ?? anybody, scope, query);
    // a kind of an API this cluster does not serve: none, at once (no watch that would never sync)
    if (definition.optionalApi && !(await this.served(definition))) return { totalItems: 0, items: [] };
    const cache = await this.cacheOf(definition);
    const answer = this.page(
      definition,
      cache.table,
      cache.views,
      scope,
      query,
      await this.extraFilter(definition, query),
    );
    if (definition.resource !== 'storageclasses' || answer.items.length === 0) return answer;
    const counts = await this.claimsPerStorageClass();
    return { ...answer, items: answer.items.map((item) => withClaimCount(parseListedItem(item), counts)) };
  }

  /**
   * How many PersistentVolumeClaims name each StorageClass (`spec.storageClassName`, or the beta annotation older
   * claims carry), for KubeSphere's `pvc-count` annotation on storage classes, from the claims' cache.
   */
  private async claimsPerStorageClass(): Promise<Map<string, number>> {
    const claims = KINDS_BY_RESOURCE.get('persistentvolumeclaims') as KindDefinition;
    const field = claims.fields.findIndex((f) => f.parameter === 'storageClassName');
    const { table } = await this.cacheOf(claims);
    const counts = new Map<string, number>();
    for (let slot = 0; slot < table.slotLimit; slot++) {
      if (!table.has(slot)) continue;
      const named = table.field(slot, field) ?? table.annotations(slot)?.[BETA_STORAGE_CLASS_ANNOTATION];
      if (typeof named === 'string' && named !== '') counts.set(named, (counts.get(named) ?? 0) + 1);
    }
    return counts;
  }

  async get(
    definition: KindDefinition,
    user: UserInfo | undefined,
    namespace: string | undefined,
    name: string,
  ): Promise<Buffer> {
    await allowGet(this.authorizer, user ?? anybody, definition, namespace, name);
    if (definition.source === 'passthrough') return this.getThroughKube(definition, user ?? anybody, namespace, name);
    if (definition.optionalApi && !(await this.served(definition))) throw notFound(definition, name);
    const cache = await this.cacheOf(definition);
    const slot = cache.table.slotOf(namespace ?? '', name);
    // kube-apiserver's own answer for a missing object (KubeSphere answers 500 here)
    if (slot < 0) throw notFound(definition, name);
    if (definition.resource !== 'storageclasses') return cache.table.body(slot);
    return withClaimCount(JSON.parse(cache.table.body(slot).toString('utf8')), await this.claimsPerStorageClass());
  }

  /**
   * For kapi's other APIs, which authorize their callers themselves (a user reading their own User): the listing of
   * a cached kind with no review, restricted to `names` when given (the workspaces a caller is a member of), or to
   * all but `names.except`.
   */
  async listCached(
    definition: KindDefinition,
    rawQuery: Readonly<Record<string, unknown>>,
    names?: ReadonlySet<string> | { readonly except: ReadonlySet<string> },
  ): Promise<ListingAnswer> {
    const query = parseListingQuery(definition, rawQuery);
    const cache = await this.cacheOf(definition);
    const within =
      names &&
      ('except' in names
        ? {
            key: `except=${[...names.except].sort().join(',')}`,
            matches: (table: ObjectTable, slot: number) => !names.except.has(table.name(slot)),
          }
        : {
            key: `names=${[...names].sort().join(',')}`,
            matches: (table: ObjectTable, slot: number) => names.has(table.name(slot)),
          });
    return this.page(definition, cache.table, cache.views, { kind: 'all' }, query, within);
  }

  /** One cached object as answered, with no review (see `listCached`); undefined when there is none. */
  async readCached(
    definition: KindDefinition,
    namespace: string | undefined,
    name: string,
  ): Promise<Buffer | undefined> {
    const cache = await this.cacheOf(definition);
    const slot = cache.table.slotOf(namespace ?? '', name);
    return slot < 0 ? undefined : cache.table.body(slot);
  }

  /**
   * How many objects of the kind are cached, in one namespace or all, with no review (see `listCached`); with
   * `statuses`, only those whose derived status is one of them (values of the kind's `status`).
   */
  async cachedCount(definition: KindDefinition, namespace?: string, statuses?: readonly string[]): Promise<number> {
    const { table } = await this.cacheOf(definition);
    if (!statuses) return namespace === undefined ? table.size : table.countIn(namespace);
    const wanted = new Set(statuses.map((status) => definition.status?.values.indexOf(status) ?? -1));
    wanted.delete(-1);
    let found = 0;
    const count = (slot: number) => {
      if (wanted.has(table.status(slot))) found++;
    };
    if (namespace !== undefined) for (const slot of table.slotsIn(namespace)) count(slot);
    else for (let slot = 0; slot < table.slotLimit; slot++) if (table.has(slot)) count(slot);
    return found;
  }

  /** The cached objects whose labels `matches` accepts, parsed, with no review (see `listCached`). */
  async cachedWhere(
    definition: KindDefinition,
    matches: (labels: Readonly<Record<string, string>> | undefined) => boolean,
    namespace?: string,
  ): Promise<unknown[]> {
    const { table } = await this.cacheOf(definition);
    const found: unknown[] = [];
    for (let slot = 0; slot < table.slotLimit; slot++) {
      if (!table.has(slot) || (namespace !== undefined && table.namespace(slot) !== namespace)) continue;
      if (matches(table.labels(slot))) found.push(JSON.parse(table.body(slot).toString('utf8')));
    }
    return found;
  }

  /** The names of the cached objects whose filter field `parameter` (one of the kind's fields) is `value`. */
  async cachedNamesWithField(definition: KindDefinition, parameter: string, value: string): Promise<Set<string>> {
    const { table, slots } = await this.slotsWithField(definition, parameter, new Set([value]));
    return new Set(slots.map((slot) => table.name(slot)));
  }

  /** The cached objects, parsed, whose filter field `parameter` is (or includes) one of `values`. */
  async cachedWithField(
    definition: KindDefinition,
    parameter: string,
    values: ReadonlySet<string>,
  ): Promise<unknown[]> {
    const { table, slots } = await this.slotsWithField(definition, parameter, values);
    return slots.map((slot) => JSON.parse(table.body(slot).toString('utf8')));
  }

  /** The slots whose field `parameter` is (or includes) one of `values`, each once, from the field's index. */
  private async slotsWithField(definition: KindDefinition, parameter: string, values: ReadonlySet<string>) {
    const field = definition.fields.findIndex((candidate) => candidate.parameter === parameter);
    if (field < 0) throw new Error(`${definition.resource} has no field ${parameter}`);
    const { table, views } = await this.cacheOf(definition);
    const index = views.byField(field);
    const slots = new Set<number>();
    for (const value of values) for (const slot of index.slotsWith(value)) slots.add(slot);
    return { table, slots: [...slots] };
  }

  /**
   * Whether kube-apiserver serves the kind's resource: its group version's discovery, asked at most every
   * API_PRESENCE_MS (a CRD installed or removed shows within that).
   */
  private async served(definition: KindDefinition): Promise<boolean> {
    const groupVersion = `${definition.group}/${definition.version}`;
    const now = Date.now();
    let known = this.apiPresence.get(groupVersion);
    if (!known || known.until <= now) {
      let resources: ReadonlySet<string>;
      try {
        const discovery = await this.deps.client.request<{ resources?: { name?: unknown }[] }>({
          path: `/apis/${groupVersion}`,
          timeoutMs: 10_000,
        });
        resources = new Set((discovery.resources ?? []).map((resource) => String(resource?.name)));
      } catch (error) {
        if (!(error instanceof KubeApiError && error.code === 404))
          throw new ServiceUnavailableError('kube-apiserver could not say which APIs it serves; try again', 1);
        resources = new Set();
      }
      known = { resources, until: now + API_PRESENCE_MS };
      this.apiPresence.set(groupVersion, known);
    }
    return known.resources.has(definition.resource);
  }

  private async cacheOf(definition: KindDefinition): Promise<ListingCache> {
    const kind = this.kinds.get(definition.resource);
    if (!kind) throw new Error(`no cache for ${definition.resource}`);
    try {
      return await this.deps.caches.use(kind);
    } catch (error) {
      if (error instanceof CacheNotSyncedError)
        throw new ServiceUnavailableError(error.message, error.retryAfterSeconds);
      throw error;
    }
  }

  private page(
    definition: KindDefinition,
    table: ObjectTable,
    views: TableViews,
    scope: ListScope,
    query: ListingQuery,
    extra?: { key: string; matches(table: ObjectTable, slot: number): boolean },
  ): ListingAnswer {
    const alsoNamed = definition.alsoNamed ? definition.fields.length : undefined;
    const filter = slotFilter(query.filter, alsoNamed, extra);
    const { start } = pageWindow(query.page, query.limit, Number.MAX_SAFE_INTEGER);
    const selection = views.select({
      sort: sortKeyOf(definition, query.sortBy),
      ascending: query.ascending,
      filter,
      namespaces: scope.kind === 'all' ? undefined : scope.namespaces,
      offset: start,
      limit: query.limit,
    });
    const long = selection.slots.length > DECODED_PAGE_ITEMS;
    return {
      totalItems: selection.total,
      items: selection.slots.map((slot) => (long ? table.storedBody(slot) : table.body(slot))),
    };
  }

  /**
   * `serviceName` (pods): the Service of that name in each namespace, by its selector, from the Service cache. A
   * Service without a selector selects no pod (as KubeSphere's filter).
   */
  private async extraFilter(
    definition: KindDefinition,
    query: ListingQuery,
  ): Promise<{ key: string; matches(table: ObjectTable, slot: number): boolean } | undefined> {
    if (definition.resource !== 'pods' || query.serviceName === undefined) return undefined;
    const services = await this.cacheOf(KINDS_BY_RESOURCE.get('services') as KindDefinition);
    const selectors = new Map<string, LabelSelector>();
    const texts: string[] = [];
    for (const [namespace] of services.table.namespaceCounts()) {
      const slot = services.table.slotOf(namespace, query.serviceName);
      if (slot < 0) continue;
      const selector = (JSON.parse(services.table.body(slot).toString('utf8')) as { spec?: { selector?: unknown } })
        .spec?.selector;
      if (!selector || typeof selector !== 'object' || Object.keys(selector).length === 0) continue;
      const text = Object.entries(selector as Record<string, string>)
        .map(([key, value]) => `${key}=${value}`)
        .sort()
        .join(',');
      selectors.set(namespace, parseLabelSelector(text));
      texts.push(`${namespace}:${text}`);
    }
    return {
      key: `service=${query.serviceName}:${texts.join(';')}`,
      matches: (table, slot) => {
        const selector = selectors.get(table.namespace(slot));
        return selector !== undefined && matchesLabelSelector(selector, table.labels(slot));
      },
    };
  }

  /**
   * A kind kapi does not cache (secrets): listed from kube-apiserver as the caller — kube-apiserver authorizes it
   * again and kapi needs no right to read them — into a table of this answer alone, then paged like the others.
   */
  private async listThroughKube(
    definition: KindDefinition,
    user: UserInfo,
    scope: ListScope,
    query: ListingQuery,
  ): Promise<ListingAnswer> {
    const table = new ObjectTable(tableShape(definition), { compress: false });
    const views = new TableViews(table);
    const header = bodyHeader(definition);
    const namespaces = scope.kind === 'all' ? [undefined] : [...scope.namespaces];
    for (const namespace of namespaces) {
      for (const raw of await this.readThroughKube(definition, user, namespace, query)) {
        table.upsert(objectRecord(definition, header, raw));
      }
    }
    return this.page(definition, table, views, { kind: 'all' }, query);
  }

  private async readThroughKube(
    definition: KindDefinition,
    user: UserInfo,
    namespace: string | undefined,
    query: ListingQuery,
  ): Promise<unknown[]> {
    const items: unknown[] = [];
    let token: string | undefined;
    do {
      const page = await this.asCaller<{ items?: unknown[]; metadata?: { continue?: string } }>(user, {
        path: kubePath(definition, namespace),
        query: {
          limit: 500,
          continue: token,
          labelSelector: query.labelSelectorText,
          fieldSelector: query.fieldSelector,
        },
      });
      items.push(...(page.items ?? []));
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
  }

  private async getThroughKube(
    definition: KindDefinition,
    user: UserInfo,
    namespace: string | undefined,
    name: string,
  ): Promise<Buffer> {
    const raw = await this.asCaller<unknown>(user, {
      path: `${kubePath(definition, namespace)}/${encodeURIComponent(name)}`,
    });
    return objectRecord(definition, bodyHeader(definition), raw).body;
  }

  /** A read as the caller (impersonated, as forwarded requests are); kube-apiserver's refusals pass through. */
  private async asCaller<T>(
    user: UserInfo,
    request: { path: string; query?: Record<string, string | number | undefined> },
  ): Promise<T> {
    const headers = callerHeaders(user);
    if (!headers) throw new ApiError(403, 'Forbidden', 'the caller’s identity cannot be sent to kube-apiserver');
    try {
      return await this.deps.client.request<T>({ ...request, headers, timeoutMs: 30_000 });
    } catch (error) {
      // a 401 is about kapi's own credentials (it impersonates the caller), never the caller's
      if (error instanceof KubeApiError && error.code === 401) throw credentialsRefused();
      if (error instanceof KubeApiError && error.status && error.code >= 400 && error.code < 500) {
        const status = error.status;
        throw new ApiError(error.code, status.reason, status.message, status.details);
      }
      if (error instanceof KubeApiError) throw new ServiceUnavailableError(`kube-apiserver answered ${error.code}`, 1);
      throw new ServiceUnavailableError('kube-apiserver could not be reached; try again', 1);
    }
  }
}

const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';
/** KubeSphere's count of a storage class's claims (its console's Volumes column; it reads the annotations it sits in). */
export const PVC_COUNT_ANNOTATION = 'kapi.io/pvc-count';

/** A storage class as answered, with the number of its claims in `kapi.io/pvc-count` (pure). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function withClaimCount(storageClass: any, counts: ReadonlyMap<string, number>): Buffer {
  const metadata = storageClass.metadata ?? {};
  const count = String(counts.get(metadata.name) ?? 0);
  const annotations = { ...metadata.annotations, [PVC_COUNT_ANNOTATION]: count };
  return Buffer.from(JSON.stringify({ ...storageClass, metadata: { ...metadata, annotations } }));
}

function notFound(definition: KindDefinition, name: string): NotFoundError {
  const qualified = definition.group ? `${definition.resource}.${definition.group}` : definition.resource;
  return new NotFoundError(`${qualified} "${name}" not found`, {
    name,
    ...(definition.group && { group: definition.group }),
    kind: definition.resource,
  });
}

const OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');
/** What is written before waiting for the client to take it. */
const CHUNK_BYTES = 256 * 1024;

const itemJson = (item: Buffer | StoredBody): Buffer => (Buffer.isBuffer(item) ? item : decodeStoredBody(item));

/** A listed item parsed, for the answers that reshape items (a long page's items are stored compressed). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const parseListedItem = (item: Buffer | StoredBody): any => JSON.parse(itemJson(item).toString('utf8'));

/**
 * Writes `{"items":[…],"totalItems":N}` from the items' JSON, without parsing them: at once for a page, in chunks
 * that wait for the client (backpressure) for a long one.
 */
export async function writeListing(res: ServerResponse, answer: ListingAnswer): Promise<void> {
  const tail = Buffer.from(`],"totalItems":${answer.totalItems}}`);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (answer.items.every((item) => Buffer.isBuffer(item))) {
    const parts: Buffer[] = [OPEN];
    answer.items.forEach((item, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(item as Buffer);
    });
    parts.push(tail);
    const body = Buffer.concat(parts);
    res.setHeader('Content-Length', body.length);
    res.end(body);
    return;
  }
  let chunk: Buffer[] = [OPEN];
  let bytes = 0;
  for (let i = 0; i < answer.items.length; i++) {
    if (i > 0) chunk.push(COMMA);
    const json = itemJson(answer.items[i] as Buffer | StoredBody);
    chunk.push(json);
    bytes += json.length;
    if (bytes >= CHUNK_BYTES) {
      if (res.destroyed) return;
      const flushed = res.write(Buffer.concat(chunk));
      chunk = [];
      bytes = 0;
      if (!flushed) await once(res, 'drain');
    }
  }
  chunk.push(tail);
  res.end(Buffer.concat(chunk));
}

function once(res: ServerResponse, event: 'drain'): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off(event, done);
      res.off('close', done);
      resolve();
    };
    res.on(event, done);
    res.on('close', done);
  });
}
