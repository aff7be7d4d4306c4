/**
 * A login storm beyond what bcrypt can keep up with: the password pool refuses checks once 256 (here: a few) wait,
 * and the token endpoint answers 503 temporarily_unavailable. A refused check says nothing about the password, so it
 * never counts as a failed login: no lockout, no status write, no address limit.
 */
import bcrypt from 'bcrypt';
import { PasswordCheckPool } from '../../../src/auth/users/password-pool.js';
import { PasswordChecksBusy, passwordVerifier } from '../../../src/auth/users/passwords.js';
import { client, testIdentity, tokenRequest, type TestIdentity } from '../identity-app.js';

describe('PasswordCheckPool queue bound', () => {
  test('when the waiting checks reach the bound, then further checks are refused at once and the queued ones still answer', async () => {
    const pool = new PasswordCheckPool(1, 2);
    try {
      const hash = bcrypt.hashSync('pool secret', 4);
      // one on the worker, two waiting
      const admitted = [
        pool.compare('pool secret', hash),
        pool.compare('wrong', hash),
        pool.compare('pool secret', hash),
      ];
      await expect(pool.compare('pool secret', hash)).rejects.toBeInstanceOf(PasswordChecksBusy);
      expect(await Promise.all(admitted)).toEqual([true, false, true]);
      // drained: checks are taken again
      await expect(pool.compare('pool secret', hash)).resolves.toBe(true);
    } finally {
      await pool.close();
    }
  });

  test('when no check may wait at all, then one an idle worker takes at once is still served', async () => {
    const pool = new PasswordCheckPool(1, 0);
    try {
      const hash = bcrypt.hashSync('idle', 4);
      const first = pool.compare('idle', hash);
      await expect(pool.compare('idle', hash)).rejects.toBeInstanceOf(PasswordChecksBusy);
      await expect(first).resolves.toBe(true);
    } finally {
      await pool.close();
    }
  });
});

describe('the token endpoint while password checks are saturated', () => {
  let saturated: boolean;
  let logins: Array<[string, string]>;
  let t: TestIdentity;

  beforeEach(() => {
    saturated = true;
    logins = [];
    t = testIdentity({
      passwords: passwordVerifier((password, hash) =>
        saturated ? Promise.reject(new PasswordChecksBusy(256)) : bcrypt.compare(password, hash),
      ),
      onLogin: (grant, result) => logins.push([grant, result]),
    });
    t.users.add('alice', { password: 'alice-pw' });
  });

  const attempt = (username: string, password: string) =>
    tokenRequest(t.app, { grant_type: 'password', username, password, ...client }, '10.1.0.1');

  test('when a login arrives, then 503 temporarily_unavailable in RFC 6749 JSON, with Retry-After and no-store', async () => {
    const res = await attempt('alice', 'alice-pw');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'too many logins are being checked right now; try again',
    });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(logins).toEqual([['password', 'error']]);
  });

  test('when more refused logins than the failure limit arrive, then nothing is recorded and the user can log in after', async () => {
    // TEST_SETTINGS allow 3 failures: five refused attempts, right and wrong passwords and an unknown name
    for (const [username, password] of [
      ['alice', 'wrong'],
      ['alice', 'alice-pw'],
      ['alice', 'wrong'],
      ['nobody', 'x'],
      ['alice', 'wrong'],
    ] as const) {
      expect((await attempt(username, password)).status).toBe(503);
    }
    expect(t.users.statusWrites).toBe(0);
    expect(t.users.users.get('alice')).toMatchObject({ state: 'Active', failedLogins: [] });
    expect(logins.every(([, result]) => result === 'error')).toBe(true);

    saturated = false;
    const res = await attempt('alice', 'alice-pw');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer' });
  });
});
