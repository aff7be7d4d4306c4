import { forbidden } from '../../../../auth/authorization/access-guard.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../../auth/identity.js';
import { InvalidParameterError, ServiceUnavailableError } from '../../../../server/errors.js';
import type { KindDefinition } from '../kinds/kind-table.js';

/**
 * What a listing may answer, decided by the cluster's own RBAC (SubjectAccessReviews through the cached authorizer)
 * before anything is read: the class of fault behind CVE-2024-46528, where KubeSphere answered from its caches
 * whatever was asked. A cluster-scoped kind needs `list` at the cluster scope; a namespace's objects need `list` in
 * that namespace; across namespaces, `list` at the cluster scope gives every namespace, and otherwise each namespace
 * is reviewed (in batches, each decision cached as every review is) and only those allowed are answered.
 */
export type ListScope =
  /** every object of the kind */
  | { readonly kind: 'all' }
  /** only the objects of these namespaces */
  | { readonly kind: 'some'; readonly namespaces: ReadonlySet<string> };

export interface NamespaceNames {
  /** False until the first list arrived. */
  readonly synced: boolean;
  list(): readonly { readonly name: string }[];
}

/** More namespaces than this are not reviewed one by one for a caller without cluster-wide `list`. */
export const MAX_REVIEWED_NAMESPACES = 500;
const REVIEW_CONCURRENCY = 16;

export function attributesOf(definition: KindDefinition, verb: 'list' | 'get'): ResourceAttributes {
  return { verb, resource: definition.resource, ...(definition.group && { group: definition.group }) };
}

export interface ScopeRequest {
  /** The namespace of a `/namespaces/{namespace}/…` route. */
  readonly routeNamespace: string | undefined;
  /** The `namespace` filter parameter (cluster route). */
  readonly namespaceFilter: string | undefined;
  readonly signal?: AbortSignal;
}

/** The scope a `list` may answer, or a 403 `Status` worded as kube-apiserver words it. */
export async function listScope(
  authorizer: Authorizer,
  user: UserInfo,
  definition: KindDefinition,
  request: ScopeRequest,
  namespaces: NamespaceNames,
): Promise<ListScope> {
  const list = attributesOf(definition, 'list');
  const allow = async (attributes: ResourceAttributes) => {
    const decision = await authorizer.authorize(user, attributes);
    if (!decision.allowed) throw forbidden(user.username, attributes, decision.reason);
  };
  if (!definition.namespaced) {
    await allow(list);
    return { kind: 'all' };
  }
  const filter = request.namespaceFilter;
  if (request.routeNamespace !== undefined) {
    await allow({ ...list, namespace: request.routeNamespace });
    // a namespace filter that names another namespace selects nothing of this one
    const names = filter === undefined || filter === request.routeNamespace ? [request.routeNamespace] : [];
    return { kind: 'some', namespaces: new Set(names) };
  }
  const clusterWide = await authorizer.authorize(user, list);
  if (clusterWide.allowed)
    return filter === undefined ? { kind: 'all' } : { kind: 'some', namespaces: new Set([filter]) };
  if (filter !== undefined) {
    await allow({ ...list, namespace: filter });
    return { kind: 'some', namespaces: new Set([filter]) };
  }
  if (!namespaces.synced) {
    throw new ServiceUnavailableError('the namespaces are not known yet (the cache has not synced); try again', 1);
  }
  const candidates = namespaces.list().map((ns) => ns.name);
  if (candidates.length > MAX_REVIEWED_NAMESPACES) {
    throw new InvalidParameterError(
      'namespace',
      `the caller may not list ${definition.resource} at the cluster scope, and the cluster's ${candidates.length} ` +
        `namespaces are more than ${MAX_REVIEWED_NAMESPACES} to review one by one: name one (the namespace ` +
        `parameter, or /namespaces/{namespace}/${definition.resource})`,
    );
  }
  const allowed = new Set<string>();
  for (let at = 0; at < candidates.length; at += REVIEW_CONCURRENCY) {
    request.signal?.throwIfAborted();
    const batch = candidates.slice(at, at + REVIEW_CONCURRENCY);
    const decisions = await Promise.all(batch.map((namespace) => authorizer.authorize(user, { ...list, namespace })));
    decisions.forEach((decision, i) => {
      if (decision.allowed) allowed.add(batch[i] as string);
    });
  }
  if (allowed.size === 0) throw forbidden(user.username, list, clusterWide.reason);
  return { kind: 'some', namespaces: allowed };
}

/** A `get` needs `get` on that object. */
export async function allowGet(
  authorizer: Authorizer,
  user: UserInfo,
  definition: KindDefinition,
  namespace: string | undefined,
  name: string,
): Promise<void> {
  // kube-apiserver takes a namespace's own name as the namespace of a request for it (RequestInfo), so a Role in
  // namespace a lets its holder get namespace a; the review asks the same question
  const scope = namespace ?? (definition.resource === 'namespaces' && definition.group === '' ? name : undefined);
  const attributes = { ...attributesOf(definition, 'get'), name, ...(scope !== undefined && { namespace: scope }) };
  const decision = await authorizer.authorize(user, attributes);
  if (!decision.allowed) throw forbidden(user.username, attributes, decision.reason);
}
