import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { Logger } from '../../observability/logger.js';
import { ServiceUnavailableError } from '../../server/errors.js';
import type { AccessDecision, Authorizer, ResourceAttributes, UserInfo } from '../identity.js';
import { LruMap } from '../lru-map.js';

const SAR_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

export interface SubjectAccessReviewOptions {
  client: KubeClient;
  logger: Logger;
  /** How long a decision is reused; at most 10 s, so a changed RoleBinding takes effect quickly. */
  ttlMs?: number;
  maxEntries?: number;
  clock?: () => number;
  timeoutMs?: number;
  /** Each decision asked for: served from the cache (hit) or needing a review (miss, joined or sent). */
  onCacheLookup?: (result: 'hit' | 'miss') => void;
}

interface ReviewStatus {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

const MAX_TTL_MS = 10_000;

/**
 * Asks the cluster's own RBAC (a SubjectAccessReview for the user, its groups and the attributes). Decisions are
 * reused for a few seconds from a bounded LRU, and identical questions asked at once share one review. When the
 * cluster cannot answer, the request fails with 503 — it is never allowed by default.
 */
export class SubjectAccessReviewAuthorizer implements Authorizer {
  private readonly decisions: LruMap<string, { decision: AccessDecision; until: number }>;
  private readonly pending = new Map<string, Promise<AccessDecision>>();
  private readonly ttlMs: number;
  private readonly clock: () => number;

  constructor(private readonly options: SubjectAccessReviewOptions) {
    this.ttlMs = Math.min(options.ttlMs ?? MAX_TTL_MS, MAX_TTL_MS);
    this.decisions = new LruMap(options.maxEntries ?? 10_000);
    this.clock = options.clock ?? Date.now;
  }

  async authorize(user: UserInfo, attributes: ResourceAttributes): Promise<AccessDecision> {
    const key = decisionKey(user, attributes);
    const cached = attributes.fresh ? undefined : this.decisions.get(key);
    if (cached && cached.until > this.clock()) {
      this.options.onCacheLookup?.('hit');
      return cached.decision;
    }
    this.options.onCacheLookup?.('miss');
    let review = this.pending.get(key);
    if (!review) {
      review = this.review(user, attributes).finally(() => this.pending.delete(key));
      this.pending.set(key, review);
    }
    const decision = await review;
    if (!attributes.fresh) this.decisions.set(key, { decision, until: this.clock() + this.ttlMs });
    return decision;
  }

  private async review(user: UserInfo, attributes: ResourceAttributes): Promise<AccessDecision> {
    let answer: ReviewStatus;
    try {
      answer = await this.options.client.request<ReviewStatus>({
        method: 'POST',
        path: SAR_PATH,
        body: reviewOf(user, attributes),
        timeoutMs: this.options.timeoutMs ?? 5_000,
      });
    } catch (err) {
      this.options.logger.error('SubjectAccessReview failed', {
        user: user.username,
        error: err instanceof KubeApiError ? `HTTP ${err.code}: ${err.message}` : String(err),
      });
      throw new ServiceUnavailableError('the authorization check could not be made; try again');
    }
    const status = answer?.status ?? {};
    if (status.evaluationError) {
      this.options.logger.warn('SubjectAccessReview evaluation error', {
        user: user.username,
        error: status.evaluationError,
      });
    }
    const allowed = status.allowed === true && status.denied !== true;
    return status.reason ? { allowed, reason: status.reason } : { allowed };
  }
}

/** The SubjectAccessReview body; `group` '' is the core API group. */
export function reviewOf(user: UserInfo, attributes: ResourceAttributes): Record<string, unknown> {
  if (attributes.path !== undefined) {
    const spec: Record<string, unknown> = {
      user: user.username,
      groups: user.groups,
      nonResourceAttributes: { path: attributes.path, verb: attributes.verb },
    };
    if (user.uid) spec.uid = user.uid;
    return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec };
  }
  const resourceAttributes: Record<string, string> = {
    verb: attributes.verb,
    group: attributes.group ?? '',
    resource: attributes.resource,
  };
  for (const field of ['version', 'namespace', 'name', 'subresource'] as const) {
    const value = attributes[field];
    if (value) resourceAttributes[field] = value;
  }
  const spec: Record<string, unknown> = { user: user.username, groups: user.groups, resourceAttributes };
  if (user.uid) spec.uid = user.uid;
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec };
}

/** Everything the decision depends on; groups sorted so their order does not split the cache. */
function decisionKey(user: UserInfo, a: ResourceAttributes): string {
  return JSON.stringify([
    user.username,
    user.uid ?? '',
    [...user.groups].sort(),
    a.verb,
    a.group ?? '',
    a.version ?? '',
    a.resource,
    a.subresource ?? '',
    a.namespace ?? '',
    a.name ?? '',
    a.path ?? null,
  ]);
}
