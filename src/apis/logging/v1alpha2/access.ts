import { forbidden } from '../../../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../auth/identity.js';
import type { CachedNamespace } from '../../../kube/namespace-cache.js';
import type { NamespaceScope } from './log-backend.js';
import type { LogFilter } from './query.js';
import { fieldMatcher } from './text-match.js';

/** The right every log read needs, as kube-apiserver checks it for `kubectl logs`. */
export const READ_LOGS: ResourceAttributes = { verb: 'get', resource: 'pods', subresource: 'log' };

export interface NamespaceList {
  list(): readonly CachedNamespace[];
  get(name: string): CachedNamespace | undefined;
}

/** Reviews in flight at once for one request's per-namespace checks. */
const REVIEW_CONCURRENCY = 16;

/**
 * The namespaces whose logs `user` may read for this filter. One cluster-wide review first (cached): allowed means
 * every namespace. Otherwise each named namespace must be allowed (else 403, as kube-apiserver answers), and with
 * none named the user gets the existing namespaces it may read, each decided by the authorizer's cached reviews, so
 * repeated queries cost no new review per namespace.
 */
export async function readableNamespaces(
  authorizer: Authorizer,
  user: UserInfo,
  filter: LogFilter,
  namespaces: NamespaceList,
): Promise<NamespaceScope> {
  if ((await authorizer.authorize(user, READ_LOGS)).allowed) return { kind: 'all' };

  const readable = new Map<string, number>();
  if (filter.namespaces) {
    for (const namespace of new Set(filter.namespaces)) {
      const wanted = { ...READ_LOGS, namespace };
      const decision = await authorizer.authorize(user, wanted);
      if (!decision.allowed) throw forbidden(user.username, wanted, decision.reason);
      readable.set(namespace, namespaces.get(namespace)?.createdAt ?? 0);
    }
    return { kind: 'some', namespaces: readable };
  }

  const wanted = fieldMatcher(undefined, filter.namespaceQuery);
  const candidates = namespaces.list().filter((ns) => wanted(ns.name));
  for (let at = 0; at < candidates.length; at += REVIEW_CONCURRENCY) {
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
