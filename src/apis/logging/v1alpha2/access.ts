import { forbidden } from '../../../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import type { CachedNamespace } from '../../../kube/namespace-cache.js';
import { InvalidParameterError, ServiceUnavailableError } from '../../../server/errors.js';
import type { NamespaceScope } from './log-backend.js';
import type { LogFilter } from './query.js';
import { MAX_UNNAMED_NAMESPACES } from './operations.js';
import { fieldMatcher } from './text-match.js';

/** The right every log read needs, as kube-apiserver checks it for `kubectl logs`. */
export const READ_LOGS: ResourceAttributes = { verb: 'get', resource: 'pods', subresource: 'log' };

export interface NamespaceList {
  /** False until the first list arrived: until then an absent namespace proves nothing. */
  readonly synced: boolean;
  list(): readonly CachedNamespace[];
  get(name: string): CachedNamespace | undefined;
}

/** Reviews in flight at once for one request's per-namespace checks. */
const REVIEW_CONCURRENCY = 16;

export interface AccessContext {
  /** Unix seconds: the creation time assumed for a named namespace the cache does not hold yet. */
  readonly now: number;
  /** Aborted when the client went away: no further reviews are asked for. */
  readonly signal?: AbortSignal;
}

/**
 * The namespaces whose logs `user` may read for this filter. One cluster-wide review first (cached): allowed means
 * every namespace. Otherwise each named namespace must be allowed (else 403, as kube-apiserver answers), and with
 * none named the user gets the existing namespaces it may read, each decided by the authorizer's cached reviews, so
 * repeated queries cost no new review per namespace; more than MAX_UNNAMED_NAMESPACES candidates is a 400.
 * A named namespace the cache does not hold (yet) counts as created now, so an earlier owner's logs stay hidden;
 * before the cache first synced, nothing is guessed: 503.
 */
export async function readableNamespaces(
  authorizer: Authorizer,
  user: UserInfo,
  filter: LogFilter,
  namespaces: NamespaceList,
  context: AccessContext,
): Promise<NamespaceScope> {
  if ((await authorizer.authorize(user, READ_LOGS)).allowed) return { kind: 'all' };
  if (!namespaces.synced) {
    throw new ServiceUnavailableError('the namespaces are not known yet (the cache has not synced); try again');
  }

  const readable = new Map<string, number>();
  if (filter.namespaces) {
    for (const namespace of new Set(filter.namespaces)) {
      context.signal?.throwIfAborted();
      const wanted = { ...READ_LOGS, namespace };
      const decision = await authorizer.authorize(user, wanted);
      if (!decision.allowed) throw forbidden(user.username, wanted, decision.reason);
      readable.set(namespace, namespaces.get(namespace)?.createdAt ?? context.now);
    }
    return { kind: 'some', namespaces: readable };
  }

  const wanted = fieldMatcher(undefined, filter.namespaceQuery);
  const candidates = namespaces.list().filter((ns) => wanted(ns.name));
  if (candidates.length > MAX_UNNAMED_NAMESPACES) {
    throw new InvalidParameterError(
      'namespaces',
      `none named, and ${candidates.length} namespaces match (more than ${MAX_UNNAMED_NAMESPACES} are not ` +
        'reviewed one by one): name the namespaces to read, or narrow them with namespace_query',
    );
  }
  for (let at = 0; at < candidates.length; at += REVIEW_CONCURRENCY) {
    context.signal?.throwIfAborted();
    const batch = candidates.slice(at, at + REVIEW_CONCURRENCY);
    const decisions = await Promise.all(
      batch.map((ns) => authorizer.authorize(user, { ...READ_LOGS, namespace: ns.name })),
    );
    decisions.forEach((decision, i) => {
      if (decision.allowed) readable.set(batch[i]!.name, batch[i]!.createdAt);
    });
  }
  return { kind: 'some', namespaces: readable };
}
