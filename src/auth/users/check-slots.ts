/**
 * Password checks in flight per limited key (a client address, a user, a login name), handed out in arrival order.
 *
 * A key allows as many checks at once as its failure budget has left (`capacity`): if every one of them failed, the
 * limit would be reached and no more. An attempt beyond that waits in line; when a check settles, the slot goes to
 * the first in line (never to whoever asks next), so under a storm of correct logins every attempt waits about as
 * long as the checks ahead of it take, and none is overtaken until it gives up. Pure bookkeeping: no I/O, no clock
 * but the timer of a wait.
 */
export type SlotOutcome =
  /** The slot is the caller's; it gives it back with `release`. */
  | 'taken'
  /** The budget changed under the waiting caller (a failure reached the limit): decide again, holding nothing. */
  | 'recheck'
  /** No slot before `giveUpAt`, or the line was full: holding nothing. */
  | 'timeout';

interface Waiter {
  resolve(outcome: SlotOutcome): void;
}

interface KeySlots {
  inFlight: number;
  readonly line: Waiter[];
}

export class CheckSlots {
  private readonly keys = new Map<string, KeySlots>();

  /** `maxWaiting`: waiting attempts per key beyond this are refused at once (a flood must not hold memory). */
  constructor(private readonly maxWaiting: number) {}

  inFlight(key: string): number {
    return this.keys.get(key)?.inFlight ?? 0;
  }

  /** Takes a slot of `key` now when fewer than `capacity` are taken and nobody waits, else waits in line. */
  take(key: string, capacity: number, giveUpAt: number): Promise<SlotOutcome> {
    let slots = this.keys.get(key);
    if (!slots) this.keys.set(key, (slots = { inFlight: 0, line: [] }));
    if (slots.line.length === 0 && slots.inFlight < capacity) {
      slots.inFlight++;
      return Promise.resolve('taken');
    }
    const remaining = giveUpAt - Date.now();
    if (remaining <= 0 || slots.line.length >= this.maxWaiting) {
      this.forgetIfIdle(key, slots);
      return Promise.resolve('timeout');
    }
    const line = slots.line;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve: (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        },
      };
      const timer = setTimeout(() => {
        const at = line.indexOf(waiter);
        if (at !== -1) line.splice(at, 1);
        this.forgetIfIdle(key, slots);
        resolve('timeout');
      }, remaining);
      timer.unref();
      line.push(waiter);
    });
  }

  /**
   * Gives back one slot of `key`; `capacity` is the key's budget now (after what this check recorded). Slots go to
   * those in line, first come first served, as long as the budget allows; with no budget left (the limit is reached)
   * everyone in line is told to decide again, and gets its 429.
   */
  release(key: string, capacity: number): void {
    const slots = this.keys.get(key);
    if (!slots) return;
    slots.inFlight = Math.max(0, slots.inFlight - 1);
    this.handOut(key, slots, capacity);
  }

  private handOut(key: string, slots: KeySlots, capacity: number): void {
    if (capacity <= 0) {
      for (const waiter of slots.line.splice(0)) waiter.resolve('recheck');
    }
    while (slots.line.length > 0 && slots.inFlight < capacity) {
      slots.inFlight++;
      slots.line.shift()!.resolve('taken');
    }
    this.forgetIfIdle(key, slots);
  }

  private forgetIfIdle(key: string, slots: KeySlots): void {
    if (slots.inFlight === 0 && slots.line.length === 0 && this.keys.get(key) === slots) this.keys.delete(key);
  }
}
