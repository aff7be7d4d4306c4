/** In-flight requests by user; users with none are dropped, so the map holds only those with requests running. */
export class InFlightCounts {
  private readonly byUser = new Map<string, number>();
  total = 0;

  of(user: string): number {
    return this.byUser.get(user) ?? 0;
  }

  add(user: string): void {
    this.byUser.set(user, this.of(user) + 1);
    this.total++;
  }

  remove(user: string): void {
    const left = this.of(user) - 1;
    if (left > 0) this.byUser.set(user, left);
    else this.byUser.delete(user);
    this.total--;
  }
}
