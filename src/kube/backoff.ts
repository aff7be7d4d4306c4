/** How long to wait between failed list or watch attempts. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 30_000 };

/**
 * Exponential backoff with ±25% jitter for the `attempt`-th consecutive failure (1-based), capped at `maxMs`.
 * Jitter keeps many replicas that lost kube-apiserver at the same moment from coming back in lockstep.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random = Math.random): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  return Math.min(policy.maxMs, Math.round(base * (0.75 + 0.5 * random())));
}
