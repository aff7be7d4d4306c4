import type { UserInfo } from '../auth/identity.js';
import { AUTHENTICATED_GROUP } from '../auth/authenticate.js';
import { passableTokenOf } from '../auth/passable-token.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';

/**
 * Token pass-through (SPEC §5): where kube-apiserver trusts kapi as an OpenID issuer (`--oidc-issuer-url` naming
 * kapi's issuer, `--oidc-client-id=kapi`, `--oidc-username-claim=username`, `--oidc-username-prefix=-`,
 * `--oidc-groups-claim=groups`), a request goes on with the caller's own access token instead of kapi's credentials and
 * Impersonate-*: kube-apiserver authenticates and audits the user natively and pays no impersonation checks.
 *
 * Whether the cluster accepts kapi's tokens is found out, never configured: a TokenReview of a caller's token (kapi's
 * own credentials; the same authenticators a request meets) must name exactly the user and groups kapi would
 * impersonate. A prefix, another username claim or a missing groups claim is a mismatch, and kapi impersonates. The
 * answer is asked again every `recheckMs` (a cluster turned on or off is noticed), and a 401 to a passed token turns
 * pass-through off at once. Until the first answer, and whenever in doubt, kapi impersonates.
 */
export const PASS_THROUGH_STATES = ['unknown', 'accepted', 'refused'] as const;
export type PassThroughState = (typeof PASS_THROUGH_STATES)[number];

/** kube-apiserver's verdict on one token: who it authenticated as, or that it did not. */
export type TokenReviewAnswer =
  { authenticated: true; username: string; groups: readonly string[] } | { authenticated: false };

export interface TokenPassThroughDeps {
  /** A TokenReview of `token` at kube-apiserver; rejects when it cannot be asked (not served, refused, unreachable). */
  review(token: string): Promise<TokenReviewAnswer>;
  logger: Logger;
  clock: () => number;
  /** How long a verdict stands before the next request's token is reviewed again. */
  recheckMs?: number;
}

const RECHECK_MS = 60_000;

export class TokenPassThrough {
  private state: PassThroughState = 'unknown';
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking = false;
  private readonly recheckMs: number;

  constructor(private readonly deps: TokenPassThroughDeps) {
    this.recheckMs = deps.recheckMs ?? RECHECK_MS;
  }

  get current(): PassThroughState {
    return this.state;
  }

  /**
   * The token to send for `user` instead of impersonating, or undefined (impersonate). Starts a review of this
   * caller's token when the verdict is due; the request itself never waits for it.
   */
  tokenFor(user: UserInfo): string | undefined {
    const passable = passableTokenOf(user);
    if (!passable) return undefined;
    if (!this.checking && this.deps.clock() - this.checkedAt >= this.recheckMs) this.check(user, passable.token);
    return this.state === 'accepted' ? passable.token : undefined;
  }

  /** kube-apiserver answered 401 to a passed token: impersonate from now on, until a review says otherwise. */
  refusedByCluster(): void {
    this.settle('refused', 'kube-apiserver refused a passed-through token (401)');
  }

  private check(user: UserInfo, token: string): void {
    this.checking = true;
    this.deps
      .review(token)
      .then(
        (answer) => {
          const mismatch = reviewMismatch(user, answer);
          this.settle(
            mismatch ? 'refused' : 'accepted',
            mismatch ?? 'kube-apiserver authenticates kapi’s tokens as kapi',
          );
        },
        (error: unknown) =>
          this.settle(
            'refused',
            `a TokenReview could not be made: ${error instanceof Error ? error.message : String(error)}`,
          ),
      )
      .finally(() => {
        this.checking = false;
      });
  }

  private settle(state: PassThroughState, why: string): void {
    this.checkedAt = this.deps.clock();
    if (state === this.state) return;
    const before = this.state;
    this.state = state;
    // a change of mode is worth a line; the reason never holds the token
    this.deps.logger.info(state === 'accepted' ? 'token pass-through on' : 'token pass-through off: impersonating', {
      component: 'token-pass-through',
      before,
      reason: why,
    });
  }
}

/**
 * Why a review's answer does not let kapi pass `user`'s token on, or undefined when it does: kube-apiserver must see
 * exactly the user and groups kapi would impersonate (it adds system:authenticated itself).
 */
export function reviewMismatch(user: UserInfo, answer: TokenReviewAnswer): string | undefined {
  if (!answer.authenticated) return 'kube-apiserver does not authenticate kapi’s tokens';
  if (answer.username !== user.username)
    return 'kube-apiserver maps kapi’s tokens to other usernames (a prefix or another username claim)';
  const seen = new Set(answer.groups);
  seen.add(AUTHENTICATED_GROUP);
  const expected = new Set(user.groups);
  expected.add(AUTHENTICATED_GROUP);
  if (seen.size !== expected.size || [...expected].some((group) => !seen.has(group)))
    return 'kube-apiserver sees other groups than kapi impersonates (no groups claim, or a prefix)';
  return undefined;
}

/** kube-apiserver's TokenReview (authentication.k8s.io/v1, served by every supported release) of `token`. */
export async function reviewToken(client: KubeClient, token: string): Promise<TokenReviewAnswer> {
  const review = await client.request<{
    status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] } };
  }>({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/tokenreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    timeoutMs: 10_000,
  });
  const user = review?.status?.user;
  return review?.status?.authenticated === true && typeof user?.username === 'string'
    ? { authenticated: true, username: user.username, groups: Array.isArray(user.groups) ? user.groups : [] }
    : { authenticated: false };
}
