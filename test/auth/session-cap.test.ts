import { login, testIdentity, whoami } from './identity-app.js';

describe('sessions per user (maxSessionsPerUser)', () => {
  test('when a user logs in 3 more times than the cap, then the cap holds and the first 3 logins are the ones ended', async () => {
    const t = testIdentity({ settings: { maxSessionsPerUser: 4 } });
    t.users.add('alice', { password: 'alice-pw' });
    const logins = [];
    for (let i = 0; i < 7; i++) {
      logins.push(await login(t.app, 'alice', 'alice-pw'));
      // one login per millisecond or less is the same "first" on every replica (the id decides); keep them apart
      t.clock.now += 1;
    }
    expect([...t.sessions.sessions.values()].filter((s) => s.username === 'alice')).toHaveLength(4);
    const answers = await Promise.all(logins.map((tokens) => whoami(t.app, tokens.access_token)));
    expect(answers.map((res) => res.status)).toEqual([401, 401, 401, 200, 200, 200, 200]);
  });

  test("when another user is at the cap, then a login ends none of this user's sessions", async () => {
    const t = testIdentity({ settings: { maxSessionsPerUser: 1 } });
    t.users.add('alice', { password: 'alice-pw' });
    t.users.add('bob', { password: 'bob-pw' });
    const alice = await login(t.app, 'alice', 'alice-pw');
    t.clock.now += 1;
    const bob = await login(t.app, 'bob', 'bob-pw');
    await whoami(t.app, alice.access_token).expect(200);
    await whoami(t.app, bob.access_token).expect(200);
  });

  test('when the cap is lowered, then the next login ends every session beyond it', async () => {
    const t = testIdentity({ settings: { maxSessionsPerUser: 10 } });
    t.users.add('alice', { password: 'alice-pw' });
    for (let i = 0; i < 5; i++) {
      await login(t.app, 'alice', 'alice-pw');
      t.clock.now += 1;
    }
    t.settings.current = { ...t.settings.current, maxSessionsPerUser: 2 };
    const last = await login(t.app, 'alice', 'alice-pw');
    expect(t.sessions.sessions.size).toBe(2);
    await whoami(t.app, last.access_token).expect(200);
  });
});
