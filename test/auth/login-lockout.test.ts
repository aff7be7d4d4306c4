import { TOO_MANY_ATTEMPTS } from '../../src/auth/oauth/oauth-error.js';
import { bcryptPasswords, type PasswordVerifier } from '../../src/auth/users/passwords.js';
import { client, login, testIdentity, tokenRequest, type TestIdentity } from './identity-app.js';

// TEST_SETTINGS: 3 failures per 600 s
const attempt = (t: TestIdentity, username: string, password: string, ip: string) =>
  tokenRequest(t.app, { grant_type: 'password', username, password, ...client }, ip);

function withAlice(): TestIdentity {
  const t = testIdentity();
  t.users.add('alice', { password: 'alice-pw', email: 'alice@example.com' });
  return t;
}

describe('per-user lockout', () => {
  test('when a user fails the limit from several addresses, then even the right password gets 429 + Retry-After', async () => {
    const t = withAlice();
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
      expect((await attempt(t, 'alice', 'wrong', ip)).status).toBe(400);
    }
    const locked = await attempt(t, 'alice', 'alice-pw', '10.0.0.4');
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual({ error: 'invalid_grant', error_description: TOO_MANY_ATTEMPTS });
    expect(Number(locked.headers['retry-after'])).toBe(600);
    expect(locked.headers['cache-control']).toBe('no-store');
    // the lock lives in the User's status, where every replica reads it
    const status = t.users.users.get('alice')!;
    expect(status.state).toBe('AuthLimitExceeded');
    expect(status.lockedUntil).toBe(t.clock.now + 600_000);
    expect(status.failedLogins.map((f) => f.sourceIP)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
  });

  test('when the e-mail is used instead of the name, then the failures count for the same user', async () => {
    const t = withAlice();
    await attempt(t, 'alice', 'wrong', '10.0.0.1');
    await attempt(t, 'alice@example.com', 'wrong', '10.0.0.2');
    await attempt(t, 'ALICE@example.com', 'wrong', '10.0.0.3');
    expect((await attempt(t, 'alice', 'alice-pw', '10.0.0.4')).status).toBe(429);
  });

  test('when the lock has passed, then the user logs in and the status is cleared', async () => {
    const t = withAlice();
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) await attempt(t, 'alice', 'wrong', ip);
    t.clock.advance(300);
    const stillLocked = await attempt(t, 'alice', 'alice-pw', '10.0.0.4');
    expect(stillLocked.status).toBe(429);
    expect(Number(stillLocked.headers['retry-after'])).toBe(300);
    t.clock.advance(301);
    await login(t.app, 'alice', 'alice-pw', '10.0.0.4');
    expect(t.users.users.get('alice')).toMatchObject({ state: 'Active', failedLogins: [], lockedUntil: undefined });
  });

  test('when a lock is cleared by an operator (status edited), then the user may log in at once', async () => {
    const t = withAlice();
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) await attempt(t, 'alice', 'wrong', ip);
    const user = t.users.users.get('alice')!;
    t.users.users.set('alice', { ...user, state: 'Active', lockedUntil: undefined, failedLogins: [] });
    expect((await attempt(t, 'alice', 'alice-pw', '10.0.0.9')).status).toBe(200);
  });

  test('when failures are fewer than the limit and then a success, then the failures are forgotten', async () => {
    const t = withAlice();
    await attempt(t, 'alice', 'wrong', '10.0.0.1');
    await attempt(t, 'alice', 'wrong', '10.0.0.2');
    await login(t.app, 'alice', 'alice-pw', '10.0.0.3');
    await attempt(t, 'alice', 'wrong', '10.0.0.4');
    await attempt(t, 'alice', 'wrong', '10.0.0.5');
    expect((await attempt(t, 'alice', 'alice-pw', '10.0.0.6')).status).toBe(200);
  });

  test('when many wrong guesses arrive at once, then no more than the limit are checked', async () => {
    const t = withAlice();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => attempt(t, 'alice', `guess-${i}`, `10.1.0.${i}`)),
    );
    const checked = answers.filter((res) => res.status === 400).length;
    expect(checked).toBeLessThanOrEqual(3);
    expect(answers.every((res) => res.status === 400 || res.status === 429)).toBe(true);
  });
});

describe('per-address and unknown-name limits', () => {
  test('when one address fails the limit on different names, then that address is refused, others are not', async () => {
    const t = withAlice();
    for (const name of ['bob', 'carol', 'dave']) await attempt(t, name, 'x', '203.0.113.7');
    expect((await attempt(t, 'alice', 'alice-pw', '203.0.113.7')).status).toBe(429);
    expect((await attempt(t, 'alice', 'alice-pw', '203.0.113.8')).status).toBe(200);
    // refused before any lookup, the attempt is still audited with the name it tried
    const limited = t.lines.map((line) => JSON.parse(line)).find((entry) => entry.result === 'limited');
    expect(limited).toMatchObject({ user: 'alice', sourceIp: '203.0.113.7', reason: 'too many failures (address)' });
  });

  test('when an unknown name fails the limit, then it is answered exactly like a locked user (no user enumeration)', async () => {
    const t = withAlice();
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
      await attempt(t, 'alice', 'wrong', ip);
      await attempt(t, 'ghost', 'wrong', ip);
    }
    const known = await attempt(t, 'alice', 'wrong', '10.0.0.4');
    const unknown = await attempt(t, 'ghost', 'wrong', '10.0.0.5');
    expect(unknown.status).toBe(known.status);
    expect(unknown.status).toBe(429);
    expect(unknown.body).toEqual(known.body);
    expect(unknown.headers['retry-after']).toBeDefined();
  });

  test('when an audit line is written for a limited attempt, then it says so', async () => {
    const t = withAlice();
    for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) await attempt(t, 'alice', 'wrong', ip);
    const audit = t.lines.map((line) => JSON.parse(line)).filter((entry) => entry.audit === 'login');
    expect(audit.map((entry) => entry.result)).toEqual(['failure', 'failure', 'failure', 'limited']);
    expect(audit[3]).toMatchObject({ user: 'alice', result: 'limited' });
    expect(audit[0]).toMatchObject({
      user: 'alice',
      client: 'kapi',
      sourceIp: '10.0.0.1',
      grant: 'password',
      reason: 'wrong password',
    });
  });
});

describe('parallel logins from one address (SPEC §2: only failures count)', () => {
  const ROUNDS = 10;
  const PARALLEL = 16;

  test('when one user logs in 16 times at once, 10 rounds, then every login succeeds', async () => {
    const t = withAlice();
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        Array.from({ length: PARALLEL }, () => attempt(t, 'alice', 'alice-pw', '198.51.100.1')),
      );
      expect(answers.map((res) => res.status)).toEqual(Array(PARALLEL).fill(200));
    }
  });

  test('when 16 users behind one address log in at once, 10 rounds, then every login succeeds', async () => {
    const t = testIdentity();
    const names = Array.from({ length: PARALLEL }, (_, i) => `user-${i}`);
    for (const name of names) t.users.add(name, { password: `${name}-pw` });
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(names.map((name) => attempt(t, name, `${name}-pw`, '198.51.100.2')));
      expect(answers.map((res) => res.status)).toEqual(Array(PARALLEL).fill(200));
    }
  });

  test('when wrong passwords for one user arrive at once from many addresses, then only the limit is checked', async () => {
    const checks = countingPasswords();
    const t = testIdentity({ passwords: checks.verifier });
    t.users.add('alice', { password: 'alice-pw' });
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => attempt(t, 'alice', `guess-${i}`, `10.2.0.${i}`)),
    );
    expect(checks.count).toBe(3);
    expect(answers.filter((res) => res.status === 400)).toHaveLength(3);
    expect(answers.filter((res) => res.status === 429)).toHaveLength(21);
  });

  test('when wrong guesses on many names arrive at once from one address, then only the limit is checked', async () => {
    const checks = countingPasswords();
    const t = testIdentity({ passwords: checks.verifier });
    t.users.add('alice', { password: 'alice-pw' });
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => attempt(t, i % 2 ? 'alice' : `ghost-${i}`, `guess-${i}`, '203.0.113.9')),
    );
    expect(checks.count).toBe(3);
    expect(answers.filter((res) => res.status === 400)).toHaveLength(3);
    expect(answers.filter((res) => res.status === 429)).toHaveLength(21);
  });

  test('when good and wrong passwords of one user race, then every good one succeeds', async () => {
    const t = withAlice();
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => attempt(t, 'alice', i < 2 ? `guess-${i}` : 'alice-pw', `10.3.0.${i}`)),
    );
    // two failures stay below the limit of three: nothing is refused
    expect(answers.filter((res) => res.status === 400)).toHaveLength(2);
    expect(answers.filter((res) => res.status === 200)).toHaveLength(14);
  });
});

/** bcrypt as production runs it, counting the checks made. */
function countingPasswords(): { verifier: PasswordVerifier; readonly count: number } {
  let count = 0;
  return {
    verifier: {
      verify(password, hash) {
        count++;
        return bcryptPasswords.verify(password, hash);
      },
    },
    get count() {
      return count;
    },
  };
}
