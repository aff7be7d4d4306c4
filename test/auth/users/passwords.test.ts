import bcrypt from 'bcrypt';
import { BroadcastChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { PasswordCheckPool } from '../../../src/auth/users/password-pool.js';
import { bcryptPasswords, normalizeBcryptHash, passwordVerifier } from '../../../src/auth/users/passwords.js';

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
    const compared: string[] = [];
    const verifier = passwordVerifier(async (password, hash) => {
      compared.push(hash);
      return bcrypt.compare(password, hash);
    });
    await expect(verifier.verify('guess', undefined)).resolves.toBe(false);
    await expect(verifier.verify('guess', 'not a bcrypt hash')).resolves.toBe(false);
    // an early "no such user" return would compare nothing; a cheaper hash would answer faster than a real user's
    expect(compared).toHaveLength(2);
    for (const hash of compared) expect(bcrypt.getRounds(hash)).toBe(10);
  });
});

/** CPU time in microseconds of the whole process and of the calling (main) thread, since `since`. */
function cpuSince(since: { process: NodeJS.CpuUsage; main: NodeJS.CpuUsage }) {
  const total = ({ user, system }: NodeJS.CpuUsage) => user + system;
  return { process: total(process.cpuUsage(since.process)), main: total(process.threadCpuUsage(since.main)) };
}

test('when a password is being checked, then its CPU is spent off the main thread (libuv thread pool)', async () => {
  const hash = bcrypt.hashSync('secret', 12);
  const since = { process: process.cpuUsage(), main: process.threadCpuUsage() };
  await expect(bcryptPasswords.verify('secret', hash)).resolves.toBe(true);
  const used = cpuSince(since);
  // process accounting, not wall-clock time: a compare on the main thread would put its whole cost (a cost-12 hash
  // is some hundred milliseconds of CPU) on the main thread, however busy the machine is
  expect(used.main).toBeLessThan(used.process - used.main);
});

test('when a hash is $2y$, then it is rewritten to $2b$ and other hashes are unchanged', () => {
  expect(normalizeBcryptHash('$2y$10$x')).toBe('$2b$10$x');
  expect(normalizeBcryptHash('$2a$10$x')).toBe('$2a$10$x');
});

describe('PasswordCheckPool', () => {
  test('when passwords are checked on the low-priority pool, then matches and mismatches are told apart', async () => {
    const pool = new PasswordCheckPool(2);
    try {
      const verifier = passwordVerifier((password, hash) => pool.compare(password, hash));
      const hash = bcrypt.hashSync('pool secret', 4);
      const results = await Promise.all([
        verifier.verify('pool secret', hash),
        verifier.verify('wrong', hash),
        verifier.verify('pool secret', hash.replace('$2b$', '$2y$')),
        verifier.verify('pool secret', undefined),
      ]);
      expect(results).toEqual([true, false, true, false]);
    } finally {
      await pool.close();
    }
  });

  test('when a check is running, then the main thread keeps serving events (bcrypt runs on a worker thread)', async () => {
    const heldBcrypt = fileURLToPath(new URL('./fixtures/held-bcrypt.mjs', import.meta.url));
    const pool = new PasswordCheckPool(1, undefined, heldBcrypt);
    const channel = new BroadcastChannel('kapi-test-held-bcrypt');
    const events: string[] = [];
    channel.onmessage = (message) => {
      const { event, isMainThread, threadId } = (message as MessageEvent).data;
      if (event !== 'started') return;
      events.push(`check started on ${isMainThread ? 'the main thread' : 'a worker thread'}`);
      // the check waits for this answer: the main thread can give it only while the check runs elsewhere
      events.push('main thread served an event');
      channel.postMessage({ release: threadId });
    };
    try {
      const hash = bcrypt.hashSync('held secret', 4);
      const matches = await pool.compare('held secret', hash);
      events.push('check answered');
      expect(matches).toBe(true);
      expect(events).toEqual(['check started on a worker thread', 'main thread served an event', 'check answered']);
    } finally {
      channel.close();
      await pool.close();
    }
  });
});

describe('PasswordCheckPool when a worker dies', () => {
  test('when a worker thread exits, then its check fails instead of hanging and the pool keeps answering', async () => {
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
