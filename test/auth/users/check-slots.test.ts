import { CheckSlots, type SlotOutcome } from '../../../src/auth/users/check-slots.js';

const LATER = () => Date.now() + 60_000;

/** The outcomes settled so far, by name, after pending callbacks ran. */
async function settled(waits: Record<string, Promise<SlotOutcome>>): Promise<Record<string, SlotOutcome | 'waiting'>> {
  const out: Record<string, SlotOutcome | 'waiting'> = {};
  for (const [name, wait] of Object.entries(waits)) {
    out[name] = 'waiting';
    void wait.then((outcome) => (out[name] = outcome));
  }
  await new Promise((resolve) => setImmediate(resolve));
  return out;
}

describe('CheckSlots', () => {
  test('when the budget is used up, then later attempts wait in line and get the slots in arrival order', async () => {
    const slots = new CheckSlots(100);
    expect(await slots.take('k', 2, LATER())).toBe('taken');
    expect(await slots.take('k', 2, LATER())).toBe('taken');
    const waits = { a: slots.take('k', 2, LATER()), b: slots.take('k', 2, LATER()) };
    expect(await settled(waits)).toEqual({ a: 'waiting', b: 'waiting' });
    slots.release('k', 2);
    // a newcomer asking right after a release queues behind those already waiting
    const c = slots.take('k', 2, LATER());
    expect(await settled({ ...waits, c })).toEqual({ a: 'taken', b: 'waiting', c: 'waiting' });
    slots.release('k', 2);
    expect(await settled({ ...waits, c })).toEqual({ a: 'taken', b: 'taken', c: 'waiting' });
    expect(slots.inFlight('k')).toBe(2);
  });

  test('when a failure leaves a smaller budget, then fewer slots are handed out', async () => {
    const slots = new CheckSlots(100);
    for (let i = 0; i < 3; i++) await slots.take('k', 3, LATER());
    const waits = { a: slots.take('k', 3, LATER()), b: slots.take('k', 3, LATER()) };
    // a check failed: the budget is 2 now, and 2 are still in flight
    slots.release('k', 2);
    expect(await settled(waits)).toEqual({ a: 'waiting', b: 'waiting' });
    slots.release('k', 2);
    expect(await settled(waits)).toEqual({ a: 'taken', b: 'waiting' });
  });

  test('when the limit is reached, then everyone in line is told to decide again (and gets its 429)', async () => {
    const slots = new CheckSlots(100);
    await slots.take('k', 1, LATER());
    const waits = { a: slots.take('k', 1, LATER()), b: slots.take('k', 1, LATER()) };
    slots.release('k', 0);
    expect(await settled(waits)).toEqual({ a: 'recheck', b: 'recheck' });
    expect(slots.inFlight('k')).toBe(0);
  });

  test('when a wait outlasts its bound, then it times out holding nothing and leaves the line', async () => {
    const slots = new CheckSlots(100);
    await slots.take('k', 1, LATER());
    expect(await slots.take('k', 1, Date.now() + 20)).toBe('timeout');
    const next = slots.take('k', 1, LATER());
    slots.release('k', 1);
    expect(await next).toBe('taken');
  });

  test('when the line is full, then a further attempt is refused at once', async () => {
    const slots = new CheckSlots(2);
    await slots.take('k', 1, LATER());
    void slots.take('k', 1, LATER());
    void slots.take('k', 1, LATER());
    expect(await slots.take('k', 1, LATER())).toBe('timeout');
  });

  test('when keys differ, then their slots are counted apart', async () => {
    const slots = new CheckSlots(100);
    expect(await slots.take('a', 1, LATER())).toBe('taken');
    expect(await slots.take('b', 1, LATER())).toBe('taken');
    expect([slots.inFlight('a'), slots.inFlight('b')]).toEqual([1, 1]);
  });
});
