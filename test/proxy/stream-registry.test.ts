import type { UserInfo } from '../../src/auth/identity.js';
import { StreamRegistry } from '../../src/proxy/stream-registry.js';

const user = (username: string, sessionId?: string, uid?: string): UserInfo => ({
  username,
  groups: [],
  ...(sessionId ? { sessionId } : {}),
  ...(uid ? { uid } : {}),
});

/** Registers one stream per entry and records which ones were cut, by label. */
function openStreams(registry: StreamRegistry, streams: Record<string, UserInfo>) {
  const cut: string[] = [];
  const unregister: Record<string, () => void> = {};
  for (const [label, info] of Object.entries(streams))
    unregister[label] = registry.register(info, () => cut.push(label));
  return { cut, unregister };
}

const nextTick = () => new Promise((resolve) => process.nextTick(resolve));

describe('StreamRegistry', () => {
  test('when a session ends, then only the streams of that session are cut, each once', () => {
    const registry = new StreamRegistry();
    const { cut } = openStreams(registry, {
      watch: user('alice', 's1'),
      exec: user('alice', 's1'),
      otherSession: user('alice', 's2'),
      bob: user('bob', 's3'),
    });
    registry.endSession('s1');
    registry.endSession('s1');
    expect(cut.sort()).toEqual(['exec', 'watch']);
    expect(registry.size).toBe(2);
  });

  test.each([
    ['no uid (disabled)', undefined, ['first', 'second', 'noUid']],
    ['the deleted incarnation’s uid', 'u1', ['first', 'noUid']],
  ])(
    'when a user ends with %s, then that user’s matching streams are cut and no one else’s',
    (_case, uid, expected) => {
      const registry = new StreamRegistry();
      const { cut } = openStreams(registry, {
        first: user('alice', 's1', 'u1'),
        second: user('alice', 's2', 'u2'),
        noUid: user('alice', 's3'),
        bob: user('bob', 's4', 'u1'),
      });
      registry.endUser('alice', uid);
      expect(cut.sort()).toEqual([...expected].sort());
      registry.endSession('s4');
      expect(cut).toContain('bob');
      expect(registry.size).toBe(expected.length === 3 ? 0 : 1);
    },
  );

  test('when a stream closed by itself (unregistered), then ending its session or user does not call it', () => {
    const registry = new StreamRegistry();
    const { cut, unregister } = openStreams(registry, { watch: user('alice', 's1') });
    unregister.watch!();
    unregister.watch!();
    registry.endSession('s1');
    registry.endUser('alice');
    expect(cut).toEqual([]);
    expect(registry.size).toBe(0);
  });

  test('when a stream registers after its session ended, then it is cut on the next tick, not during register', async () => {
    const registry = new StreamRegistry();
    registry.endSession('s1');
    const { cut } = openStreams(registry, { late: user('alice', 's1'), other: user('alice', 's2') });
    expect(cut).toEqual([]);
    await nextTick();
    expect(cut).toEqual(['late']);
    expect(registry.size).toBe(1);
  });

  test('when a close function throws, then the other streams are still cut', () => {
    const registry = new StreamRegistry();
    const cut: string[] = [];
    registry.register(user('alice', 's1'), () => {
      throw new Error('already gone');
    });
    registry.register(user('alice', 's1'), () => cut.push('second'));
    expect(() => registry.endSession('s1')).not.toThrow();
    expect(cut).toEqual(['second']);
    expect(registry.size).toBe(0);
  });

  test('when a close function ends the same session again (re-entrantly), then nothing is cut twice', () => {
    const registry = new StreamRegistry();
    let calls = 0;
    registry.register(user('alice', 's1'), () => {
      calls++;
      registry.endSession('s1');
      registry.endUser('alice');
    });
    registry.register(user('alice', 's1'), () => calls++);
    registry.endSession('s1');
    expect(calls).toBe(2);
  });

  test('when a stream has no session id (not a kapi login), then it is still cut by its user', () => {
    const registry = new StreamRegistry();
    const { cut } = openStreams(registry, { watch: user('alice') });
    registry.endSession('s1');
    expect(cut).toEqual([]);
    registry.endUser('alice');
    expect(cut).toEqual(['watch']);
  });

  test('when a user is disabled after the identity was checked but before its stream registered, then the stream is cut as it registers', async () => {
    let now = 100;
    const registry = new StreamRegistry(() => now);
    const checked = { ...user('alice', 's1', 'u1'), checkedAt: 100 };
    now = 105;
    registry.endUser('alice');
    const { cut } = openStreams(registry, { headOnItsWay: checked, bob: { ...user('bob', 's2'), checkedAt: 100 } });
    expect(cut).toEqual([]);
    await nextTick();
    expect(cut).toEqual(['headOnItsWay']);
    expect(registry.size).toBe(1);
  });

  test('when a user was disabled (and enabled again) before the identity was checked, then its new stream stays', async () => {
    let now = 100;
    const registry = new StreamRegistry(() => now);
    registry.endUser('alice');
    now = 200;
    const { cut } = openStreams(registry, { later: { ...user('alice', 's1'), checkedAt: 150 } });
    await nextTick();
    expect(cut).toEqual([]);
    expect(registry.size).toBe(1);
  });

  test('when another incarnation of the user was deleted meanwhile, then this one’s stream stays', async () => {
    let now = 100;
    const registry = new StreamRegistry(() => now);
    now = 110;
    registry.endUser('alice', 'u-old');
    const { cut } = openStreams(registry, { current: { ...user('alice', 's1', 'u-new'), checkedAt: 100 } });
    await nextTick();
    expect(cut).toEqual([]);
  });

  test('when a session ended (expired) before the identity was checked, then a stream checked later stays (a refresh extended it)', async () => {
    let now = 100;
    const registry = new StreamRegistry(() => now);
    registry.endSession('s1');
    now = 200;
    const { cut } = openStreams(registry, {
      checkedBefore: { ...user('alice', 's1'), checkedAt: 90 },
      checkedAfter: { ...user('alice', 's1'), checkedAt: 150 },
    });
    await nextTick();
    expect(cut).toEqual(['checkedBefore']);
  });

  test('when very many sessions ended, then the oldest are forgotten first (bounded memory)', async () => {
    const registry = new StreamRegistry();
    for (let i = 0; i <= 10_000; i++) registry.endSession(`s${i}`);
    const { cut } = openStreams(registry, { oldest: user('alice', 's0'), newest: user('alice', 's10000') });
    await nextTick();
    expect(cut).toEqual(['newest']);
  });
});
