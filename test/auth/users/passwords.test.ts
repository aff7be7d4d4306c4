import bcrypt from 'bcrypt';
import { bcryptPasswords, normalizeBcryptHash } from '../../../src/auth/users/passwords.js';

const hash2b = bcrypt.hashSync('correct horse', 4);

describe('bcryptPasswords.verify', () => {
  const cases: Array<[string, string, string | undefined, boolean]> = [
    ['when the password matches a $2b$ hash, then it verifies', 'correct horse', hash2b, true],
    ['when the password matches a $2a$ hash, then it verifies', 'correct horse', hash2b.replace('$2b$', '$2a$'), true],
    [
      'when the password matches a $2y$ hash (KubeSphere, htpasswd), then it verifies',
      'correct horse',
      hash2b.replace('$2b$', '$2y$'),
      true,
    ],
    ['when the password is wrong, then it does not verify', 'wrong horse', hash2b, false],
    [
      'when the password is wrong against $2y$, then it does not verify',
      'wrong',
      hash2b.replace('$2b$', '$2y$'),
      false,
    ],
    ['when there is no user (no hash), then it does not verify', 'correct horse', undefined, false],
    [
      'when the stored value is not a bcrypt hash (a plain password), then it never verifies',
      'correct horse',
      'correct horse',
      false,
    ],
    [
      'when the password is huge, then it does not verify',
      'x'.repeat(5000),
      bcrypt.hashSync('x'.repeat(5000), 4),
      false,
    ],
  ];
  test.each(cases)('%s', async (_name, password, hash, expected) => {
    await expect(bcryptPasswords.verify(password, hash)).resolves.toBe(expected);
  });

  test('when there is no user, then the check still costs a full bcrypt comparison (no timing oracle)', async () => {
    const started = process.hrtime.bigint();
    await bcryptPasswords.verify('guess', undefined);
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    // cost 10 takes tens of milliseconds; an early "no such user" return would take microseconds
    expect(elapsedMs).toBeGreaterThan(10);
  });
});

test('when a password is being checked, then the event loop keeps serving (bcrypt runs off the main thread)', async () => {
  const hash = bcrypt.hashSync('secret', 10);
  const checking = bcryptPasswords.verify('secret', hash);
  // a synchronous compare at cost 10 would hold the loop for tens of milliseconds; timers keep firing meanwhile
  const started = Date.now();
  let ticks = 0;
  let longestGapMs = 0;
  let last = started;
  const timer = setInterval(() => {
    const now = Date.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
    ticks++;
  }, 1);
  await expect(checking).resolves.toBe(true);
  clearInterval(timer);
  expect(ticks).toBeGreaterThan(3);
  expect(longestGapMs).toBeLessThan(40);
});

test('when a hash is $2y$, then it is rewritten to $2b$ and other hashes are unchanged', () => {
  expect(normalizeBcryptHash('$2y$10$x')).toBe('$2b$10$x');
  expect(normalizeBcryptHash('$2a$10$x')).toBe('$2a$10$x');
});

describe('PasswordCheckPool', () => {
  test('when passwords are checked on the low-priority pool, then matches and mismatches are told apart and the loop stays free', async () => {
    const { PasswordCheckPool } = await import('../../../src/auth/users/password-pool.js');
    const { passwordVerifier } = await import('../../../src/auth/users/passwords.js');
    const pool = new PasswordCheckPool(2);
    try {
      const verifier = passwordVerifier((password, hash) => pool.compare(password, hash));
      const hash = bcrypt.hashSync('pool secret', 10);
      let longestGapMs = 0;
      let last = Date.now();
      const timer = setInterval(() => {
        const now = Date.now();
        longestGapMs = Math.max(longestGapMs, now - last);
        last = now;
      }, 2);
      const results = await Promise.all([
        verifier.verify('pool secret', hash),
        verifier.verify('wrong', hash),
        verifier.verify('pool secret', hash.replace('$2b$', '$2y$')),
        verifier.verify('pool secret', undefined),
      ]);
      clearInterval(timer);
      expect(results).toEqual([true, false, true, false]);
      expect(longestGapMs).toBeLessThan(40);
    } finally {
      await pool.close();
    }
  });
});

describe('PasswordCheckPool when a worker dies', () => {
  test('when a worker thread exits, then its check fails instead of hanging and the pool keeps answering', async () => {
    const { PasswordCheckPool } = await import('../../../src/auth/users/password-pool.js');
    const pool = new PasswordCheckPool(1);
    try {
      const hash = bcrypt.hashSync('again', 4);
      const workers = (pool as unknown as { idle: import('node:worker_threads').Worker[] }).idle;
      await workers[0]!.terminate();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(pool.compare('again', hash)).resolves.toBe(true);
    } finally {
      await pool.close();
    }
  });
});
