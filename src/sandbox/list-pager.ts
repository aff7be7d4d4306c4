import type { ListOptions } from './list-options.js';
import { matchesFilter } from './object-filter.js';
import { badRequest, expired, tooLargeResourceVersion } from './status.js';
import type { Collection } from './store.js';
import type { StoredObject } from './stored-object.js';

/**
 * Reads one page of a list the way kube-apiserver over etcd does: objects in key order, from a consistent snapshot
 * (the current state, or an older resourceVersion rebuilt from history), `limit` at a time, with an opaque continue
 * token (`{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}`, base64url) that pins later pages to the first page's
 * snapshot. A snapshot older than the history window is 410 Expired.
 */
export interface ListPage {
  rv: number;
  items: StoredObject[];
  continueToken?: string;
  /** Objects after this page, when no selector filtered the list (kube's remainingItemCount). */
  remainingItemCount?: number;
}

interface ContinueToken {
  rv: number;
  /** Relative to the list's key prefix. */
  start: string;
}

export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}

export function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new Error('illegal base64 data');
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (err) {
    throw badRequest(`invalid continue token: continue key is not valid: ${(err as Error).message}`);
  }
  const { v, rv, start } = (parsed ?? {}) as { v?: unknown; rv?: unknown; start?: unknown };
  if (v !== 'meta.k8s.io/v1') {
    throw badRequest(
      'invalid continue token: continue key is not valid: server does not recognize this encoded version',
    );
  }
  if (typeof rv !== 'number' || !Number.isInteger(rv) || rv === 0) {
    throw badRequest(
      'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
  if (typeof start !== 'string' || start.length === 0) {
    throw badRequest(
      'invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)',
    );
  }
  return { rv, start };
}

const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** Which snapshot a list reads: undefined means the current state. */
function snapshotRv(options: ListOptions, token: ContinueToken | undefined, currentRv: number): number | undefined {
  if (token) {
    if (token.rv > currentRv) throw tooLargeResourceVersion(token.rv, currentRv);
    return token.rv > 0 && token.rv < currentRv ? token.rv : undefined;
  }
  const { resourceVersion, resourceVersionMatch, limit } = options;
  if (resourceVersion === '' || resourceVersion === '0') return undefined;
  const wanted = Number(resourceVersion);
  if (wanted > currentRv) throw tooLargeResourceVersion(wanted, currentRv);
  // NotOlderThan: the current state will do. Exact (or the legacy "rv with limit"): that very snapshot.
  const exact = resourceVersionMatch === 'Exact' || (resourceVersionMatch === '' && limit > 0);
  return exact && wanted < currentRv ? wanted : undefined;
}

/** `prefix` narrows the key range: '' for everything, `<namespace>/` for one namespace. */
export function readPage(collection: Collection, currentRv: number, prefix: string, options: ListOptions): ListPage {
  const token = options.continueToken ? decodeContinue(options.continueToken) : undefined;
  const atRv = snapshotRv(options, token, currentRv);
  let overrides: Map<string, StoredObject | null> | undefined;
  if (atRv !== undefined) {
    if (!collection.history.covers(atRv)) {
      if (token) throw expired(CONTINUE_TOO_OLD, encodeContinue(-1, token.start));
      throw expired('The resourceVersion for the provided list is too old.');
    }
    overrides = collection.history.stateAt(atRv);
    if (overrides.size === 0) overrides = undefined;
  }

  const keys = collection.sortedKeys();
  const rangeEnd = collection.lowerBound(`${prefix}\uffff`);
  const startKey = token ? prefix + token.start : prefix;
  let index = Math.max(collection.lowerBound(startKey), collection.lowerBound(prefix));
  const pendingOverrides = overrides
    ? [...overrides.keys()].filter((k) => k.startsWith(prefix) && k >= startKey).sort()
    : [];
  let overrideIndex = 0;

  /** The next object of the snapshot in key order, merging current keys with keys changed since the snapshot. */
  const next = (): StoredObject | undefined => {
    for (;;) {
      const current = index < rangeEnd ? keys[index] : undefined;
      const changed = overrideIndex < pendingOverrides.length ? pendingOverrides[overrideIndex] : undefined;
      if (current === undefined && changed === undefined) return undefined;
      let key: string;
      if (changed === undefined || (current !== undefined && current < changed)) {
        key = current as string;
        index++;
      } else {
        key = changed;
        overrideIndex++;
        if (current === changed) index++;
      }
      const object = overrides?.has(key) ? overrides.get(key) : collection.get(key);
      if (object) return object;
    }
  };

  const items: StoredObject[] = [];
  const limit = options.limit;
  let object: StoredObject | undefined;
  while ((object = next())) {
    if (!matchesFilter(options.filter, object)) continue;
    items.push(object);
    if (limit > 0 && items.length === limit) break;
  }
  const page: ListPage = { rv: atRv ?? currentRv, items };
  if (limit > 0 && items.length === limit) {
    // Like etcd, "more" means more keys in range, whether or not they will match the selector.
    let remaining = 0;
    if (!overrides && !options.filter) {
      remaining = rangeEnd - index;
    } else {
      while (next()) {
        remaining++;
        if (options.filter) break;
      }
    }
    if (remaining > 0) {
      const last = items[items.length - 1] as StoredObject;
      page.continueToken = encodeContinue(page.rv, `${last.key.slice(prefix.length)}\u0000`);
      if (!options.filter) page.remainingItemCount = remaining;
    }
  }
  return page;
}
