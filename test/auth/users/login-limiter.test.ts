import { LoginLimiter, type Admission, type AdmittedLogin } from '../../../src/auth/users/login-limiter.js';
import { InMemoryUserStore } from '../fakes.js';

const NOW = Date.parse('2031-01-01T12:00:00Z');
const LIMIT = { maxFailures: 3, windowSeconds: 600 };
const clock = () => NOW;
const limit = () => LIMIT;

function setUp(maxWaitMs = 60_000) {
  const users = new InMemoryUserStore();
  users.add('alice', { hash: '$2b$04$x' });
  const lookups: string[] = [];
  const limiter = new LoginLimiter(users, maxWaitMs);
  const admit = (login: string, sourceIp = '10.0.0.1') =>
    limiter.admit(
      {
        sourceIp,
        login,
        lookup: async (name) => {
          lookups.push(name);
          return users.find(name);
        },
      },
      clock,
      limit,
    );
  return { users, limiter, admit, lookups };
}

function admitted(admission: Admission): AdmittedLogin {
  if (!('admitted' in admission)) throw new Error(`not admitted: ${JSON.stringify(admission)}`);
  return admission.admitted;
}

/** Whether the promise has settled after the pending callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('LoginLimiter', () => {
  test('when checks in flight use up the failure budget, then the next attempt waits and goes in when one succeeds', async () => {
    const { admit } = setUp();
    const first = await Promise.all([admit('alice'), admit('alice'), admit('alice')]);
    const fourth = admit('alice');
    expect(await isSettled(fourth)).toBe(false);
    await admitted(first[0]!).succeeded(NOW);
    const next = admitted(await fourth);
    expect(next.user?.name).toBe('alice');
  });

  test('when a check settles while others wait, then the first in line goes in, never a later arrival', async () => {
    const { admit } = setUp();
    const first = (await Promise.all([admit('alice'), admit('alice'), admit('alice')])).map(admitted);
    const a = admit('alice');
    const b = admit('alice');
    expect([await isSettled(a), await isSettled(b)]).toEqual([false, false]);
    // c arrives the moment the check settles, before those waiting had a turn
    const settling = first[0]!.succeeded(NOW);
    const c = admit('alice');
    await settling;
    expect([await isSettled(a), await isSettled(b), await isSettled(c)]).toEqual([true, false, false]);
    await first[1]!.succeeded(NOW);
    expect([await isSettled(b), await isSettled(c)]).toEqual([true, false]);
    await first[2]!.succeeded(NOW);
    expect(await isSettled(c)).toBe(true);
    for (const login of [a, b, c]) expect('admitted' in (await login)).toBe(true);
  });

  test('when many correct logins of one user succeed at once, then their status is written once or twice, not each time', async () => {
    const { admit, users } = setUp();
    const writes: string[] = [];
    const update = users.updateStatus.bind(users);
    users.updateStatus = async (name, change) => {
      writes.push(name);
      await new Promise((resolve) => setTimeout(resolve, 10));
      return update(name, change);
    };
    const logins = (await Promise.all([admit('alice'), admit('alice'), admit('alice')])).map(admitted);
    await Promise.all(logins.map((login) => login.succeeded(NOW)));
    expect(writes.length).toBeGreaterThanOrEqual(1);
    expect(writes.length).toBeLessThanOrEqual(2);
    expect(users.statusWrites).toBe(writes.length);
  });

  test('when a check in flight fails and the limit is reached, then the waiting attempts get 429', async () => {
    const { admit } = setUp();
    const first = (await Promise.all([admit('alice'), admit('alice'), admit('alice')])).map(admitted);
    const waiting = [admit('alice', '10.0.0.2'), admit('alice', '10.0.0.3')];
    for (const login of first) await login.failed(NOW);
    for (const answer of await Promise.all(waiting)) {
      expect(answer).toEqual({ retryAfterSeconds: 600, limitedBy: 'user or name' });
    }
  });

  test('when the checks in flight do not settle within the wait, then the attempt is busy (503) and counts for nothing', async () => {
    const { admit, users } = setUp(20);
    const first = (await Promise.all([admit('alice'), admit('alice'), admit('alice')])).map(admitted);
    expect(await admit('alice')).toEqual({ busy: true });
    for (const login of first) login.withdrawn();
    expect(users.users.get('alice')!.failedLogins).toEqual([]);
    expect('admitted' in (await admit('alice'))).toBe(true);
  });

  test('when an address reached its limit, then the user is not even looked up', async () => {
    const { admit, lookups } = setUp();
    for (const name of ['ghost-1', 'ghost-2', 'ghost-3']) await admitted(await admit(name, '203.0.113.5')).failed(NOW);
    lookups.length = 0;
    expect(await admit('ghost-4', '203.0.113.5')).toEqual({ retryAfterSeconds: 600, limitedBy: 'address' });
    expect(lookups).toEqual([]);
  });

  test('when our failure is not in the cached status yet, then it still counts; a newer User version replaces it', async () => {
    const users = new InMemoryUserStore();
    users.add('alice', { hash: '$2b$04$x' });
    // a cluster whose status writes the watch has not delivered yet
    users.updateStatus = async () => {};
    const limiter = new LoginLimiter(users, 60_000);
    const admit = () =>
      limiter.admit({ sourceIp: '10.9.9.9', login: 'alice', lookup: (name) => users.find(name) }, clock, limit);
    for (let i = 0; i < 3; i++) await admitted(await admit()).failed(NOW);
    expect(await admit()).toMatchObject({ limitedBy: 'address' });
    // another address: the user's own count holds it
    const fromElsewhere = () =>
      limiter.admit({ sourceIp: '10.9.9.8', login: 'alice', lookup: (name) => users.find(name) }, clock, limit);
    expect(await fromElsewhere()).toEqual({ retryAfterSeconds: 600, limitedBy: 'user or name' });
    // an operator rewrites the status (a new version without failures): the user may try again at once
    users.setState('alice', 'Active');
    expect('admitted' in (await fromElsewhere())).toBe(true);
  });
});
