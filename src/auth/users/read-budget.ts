/**
 * A token bucket: `burst` reads at once after a quiet spell, `perSecond` sustained. Pure (the clock is given), so a
 * flood of attempts costs the cluster at most this rate whatever they try.
 */
export class ReadBudget {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** Spends one read if one is left; false (and nothing spent) when the bucket is empty. */
  take(): boolean {
    const now = this.now();
    // a clock that steps back refills nothing rather than going negative
    const elapsedMs = Math.max(0, now - this.refilledAt);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs / 1000) * this.perSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
