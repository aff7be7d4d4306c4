import type { UserInfo } from '../auth/identity.js';
import { AUTHENTICATED_GROUP } from '../auth/authenticate.js';
import { passableTokenOf, type ProbeToken } from '../auth/passable-token.js';
import { KubeApiError, type KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';

/**
 * Token pass-through (SPEC §5): where kube-apiserver trusts kapi as an OpenID issuer (`--oidc-issuer-url` naming
 * kapi's issuer, `--oidc-client-id=kapi`, `--oidc-username-claim=username`, `--oidc-username-prefix=-`,
 * `--oidc-groups-claim=groups`), a request goes on with the caller's own access token instead of kapi's credentials and
 * Impersonate-*: kube-apiserver authenticates and audits the user natively and pays no impersonation checks.
 *
 * Whether the cluster accepts kapi's tokens is found out, never configured: a TokenReview (kapi's own credentials; the
 * same authenticators a request meets) of a probe token kapi signs for nobody (never a caller's: a review's token may
 * be audited) must name exactly the probe's user and groups. A prefix, another username claim or a missing groups
 * claim is a mismatch, and kapi impersonates. The verdict is about tokens of the key that signed the probe (the active
 * one); it is asked again every `recheckMs` (a cluster turned on or off is noticed), sooner after a review that could
 * not be made, and a 401 to a passed token turns pass-through off at once. Until the first verdict, and whenever in
 * doubt, kapi impersonates.
 */
export const PASS_THROUGH_STATES = ['unknown', 'accepted', 'refused'] as const;
export type PassThroughState = (typeof PASS_THROUGH_STATES)[number];

/** kube-apiserver's verdict on one token: who it authenticated as, or that it did not. */
export type TokenReviewAnswer =
  { authenticated: true; username: string; groups: readonly string[] } | { authenticated: false };

export interface TokenPassThroughDeps {
  /** A TokenReview of `token` at kube-apiserver; rejects when it cannot be asked (not served, refused, unreachable). */
  review(token: string): Promise<TokenReviewAnswer>;
  /** A fresh probe token, or undefined when kube-apiserver could not verify kapi's tokens at all. */
  probe(): ProbeToken | undefined;
  logger: Logger;
  clock: () => number;
  /** How long a verdict stands before it is asked again. */
  recheckMs?: number;
  /** How soon a review that could not be made (kube-apiserver unreachable, 5xx) is tried again; the verdict stays. */
  retryMs?: number;
}

const RECHECK_MS = 60_000;
const RETRY_MS = 5_000;

export class TokenPassThrough {
  private state: PassThroughState = 'unknown';
  /** The key whose tokens the verdict is about. */
  private verdictKid: string | undefined;
  private nextCheckAt = Number.NEGATIVE_INFINITY;
  private checking = false;
  /** Bumped by a 401: a review started before it must not overwrite what the 401 said. */
  private generation = 0;
  private lastFailure: string | undefined;
  private readonly recheckMs: number;
  private readonly retryMs: number;

  constructor(private readonly deps: TokenPassThroughDeps) {
    this.recheckMs = deps.recheckMs ?? RECHECK_MS;
    this.retryMs = deps.retryMs ?? RETRY_MS;
  }

  get current(): PassThroughState {
    return this.state;
  }

  /**
   * The token to send for `user` instead of impersonating, or undefined (impersonate). Starts a review when the
   * verdict is due; the request itself never waits for it.
   */
  tokenFor(user: UserInfo): string | undefined {
    const passable = passableTokenOf(user);
    if (!passable) return undefined;
    if (!this.checking && this.deps.clock() >= this.nextCheckAt) this.check();
    return this.state === 'accepted' && passable.kid === this.verdictKid ? passable.token : undefined;
  }

  /** kube-apiserver answered 401 to a passed token: impersonate from now on, until a review says otherwise. */
  refusedByCluster(): void {
    this.generation++;
    this.settle('refused', 'kube-apiserver refused a passed-through token (401)', undefined);
  }

  private check(): void {
    const probe = this.deps.probe();
    if (!probe) {
      this.settle(
        'refused',
        'kapi’s tokens cannot be verified by kube-apiserver (HS256 key or no https issuer)',
        undefined,
      );
      return;
    }
    this.checking = true;
    const generation = this.generation;
    this.deps
      .review(probe.token)
      .then(
        (answer) => {
          if (generation !== this.generation) return;
          const mismatch = reviewMismatch(probe, answer);
          this.settle(
            mismatch ? 'refused' : 'accepted',
            mismatch ?? 'kube-apiserver authenticates kapi’s tokens as kapi',
            probe.kid,
          );
        },
        (error: unknown) => {
          if (generation !== this.generation) return;
          const why = `a TokenReview could not be made: ${error instanceof Error ? error.message : String(error)}`;
          // kube-apiserver answered (not served, forbidden): a verdict; otherwise keep the one there is, ask again soon
          if (error instanceof KubeApiError && error.code < 500) return this.settle('refused', why, undefined);
          this.nextCheckAt = this.deps.clock() + this.retryMs;
          if (why !== this.lastFailure)
            this.deps.logger.warn('token pass-through: kube-apiserver could not be asked', {
              component: 'token-pass-through',
              reason: why,
            });
          this.lastFailure = why;
        },
      )
      .finally(() => {
        this.checking = false;
      });
  }

  private settle(state: PassThroughState, why: string, kid: string | undefined): void {
    this.nextCheckAt = this.deps.clock() + this.recheckMs;
    this.lastFailure = undefined;
    this.verdictKid = kid;
    if (state === this.state) return;
    const before = this.state;
    this.state = state;
    // a change of mode is worth a line; the reason never holds a token
    this.deps.logger.info(state === 'accepted' ? 'token pass-through on' : 'token pass-through off: impersonating', {
      component: 'token-pass-through',
      before,
      reason: why,
    });
  }
}

/**
 * Why a review's answer shows kube-apiserver does not see the holder of a token as kapi would impersonate them, or
 * undefined when it does (kube-apiserver adds system:authenticated itself).
 */
export function reviewMismatch(
  expected: { username: string; groups: readonly string[] },
  answer: TokenReviewAnswer,
): string | undefined {
  if (!answer.authenticated) return 'kube-apiserver does not authenticate kapi’s tokens';
  if (answer.username !== expected.username)
    return 'kube-apiserver maps kapi’s tokens to other usernames (a prefix or another username claim)';
  const seen = new Set(answer.groups);
  seen.add(AUTHENTICATED_GROUP);
  const wanted = new Set(expected.groups);
  wanted.add(AUTHENTICATED_GROUP);
  if (seen.size !== wanted.size || [...wanted].some((group) => !seen.has(group)))
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
