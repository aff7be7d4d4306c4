import bcrypt from 'bcrypt';
import { BroadcastChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { PasswordCheckPool, type EscalationOptions } from '../../../src/auth/users/password-pool.js';
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
    // a held check gets no CPU: no copy of it is wanted here
    const pool = new PasswordCheckPool(1, undefined, heldBcrypt, { hedgeAfterMs: 3_600_000 });
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

describe('PasswordCheckPool priorities', () => {
  const heldBcrypt = fileURLToPath(new URL('./fixtures/held-bcrypt.mjs', import.meta.url));

  /** The checks' starts (thread and nice value), each held until `release` is called with its thread. */
  function heldChecks() {
    const channel = new BroadcastChannel('kapi-test-held-bcrypt');
    const started: { threadId: number; nice: number | undefined; password: string }[] = [];
    const finished: { threadId: number; password: string }[] = [];
    const waiters: (() => void)[] = [];
    channel.onmessage = (message) => {
      const { event, threadId, nice, password } = (message as MessageEvent).data;
      if (event === 'started') started.push({ threadId, nice, password });
      else if (event === 'finished') finished.push({ threadId, password });
      for (const wake of waiters.splice(0)) wake();
    };
    const reach = async (list: unknown[], count: number) => {
      while (list.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    return {
      started,
      finished,
      /** Resolves once `count` checks have started. */
      startedCount: (count: number) => reach(started, count),
      /** Resolves once `count` checks have run to their end (never, for a check whose thread was killed). */
      finishedCount: (count: number) => reach(finished, count),
      release: (threadId: number) => channel.postMessage({ release: threadId }),
      close: () => channel.close(),
    };
  }

  /** A pool of one low-priority worker whose checks are held (`heldChecks`); both are closed after `run`, whatever happens. */
  async function withHeldPool(
    escalation: EscalationOptions,
    run: (pool: PasswordCheckPool, checks: ReturnType<typeof heldChecks>) => Promise<void>,
  ): Promise<void> {
    const checks = heldChecks();
    const pool = new PasswordCheckPool(1, undefined, heldBcrypt, escalation);
    try {
      await run(pool, checks);
    } finally {
      checks.close();
      await pool.close();
    }
  }

  test('when checks wait past the escalation time, queued or on a busy low-priority worker, then normal-priority workers take them', async () => {
    // the first check is young when it comes (the low-priority worker is idle); the second waits
    await withHeldPool({ escalateAfterMs: 1, hedgeAfterMs: 1, threads: 2, idleMs: 3_600_000 }, async (pool, checks) => {
      const hash = bcrypt.hashSync('held secret', 4);
      const first = pool.compare('held secret', hash);
      const second = pool.compare('held secret', hash);
      // all at once while the first is held: the first on the low-priority worker and a copy of it, and the second
      await checks.startedCount(3);
      expect(new Set(checks.started.map((check) => check.threadId)).size).toBe(3);
      if (process.platform === 'linux') expect(checks.started.map((check) => check.nice).sort()).toEqual([0, 0, 19]);
      expect(pool.escalatedWorkers).toBe(2);
      for (const check of checks.started) checks.release(check.threadId);
      expect(await Promise.all([first, second])).toEqual([true, true]);
    });
  });

  // the copies are told apart by their nice values, which only Linux gives
  const onLinux = process.platform === 'linux' ? test : test.skip;

  onLinux(
    'when normal-priority workers are busy, then a check long on a low-priority worker is run again by one, and no young check goes to a low-priority worker',
    async () => {
      await withHeldPool(
        { escalateAfterMs: 1, hedgeAfterMs: 1, threads: 2, idleMs: 3_600_000 },
        async (pool, checks) => {
          const started = (nice: number, password: string) =>
            checks.started.filter((check) => check.nice === nice && check.password === password);
          const [one, two, three] = ['one', 'two', 'three'].map((password) => bcrypt.hashSync(password, 4));
          // one on the low-priority worker (held, as on a machine that gives it no CPU); two waits, then escalates
          const first = pool.compare('one', one!);
          const second = pool.compare('two', two!);
          await checks.startedCount(3);
          expect([started(19, 'one').length, started(0, 'two').length, started(0, 'one').length]).toEqual([1, 1, 1]);
          // the copy answers one while the low-priority worker still holds it
          checks.release(started(0, 'one')[0]!.threadId);
          await expect(first).resolves.toBe(true);
          checks.release(started(19, 'one')[0]!.threadId);
          // the low-priority worker is idle again, but two still runs at normal priority: three goes to one too
          const third = pool.compare('three', three!);
          await checks.startedCount(4);
          expect(started(0, 'three')).toHaveLength(1);
          for (const check of checks.started) checks.release(check.threadId);
          expect(await Promise.all([second, third])).toEqual([true, true]);
        },
      );
    },
  );

  onLinux(
    'when a check on a low-priority worker gets no CPU (a busy machine), then a normal-priority copy runs it, though no other check waits',
    async () => {
      // a held check sleeps: its thread's CPU time stays still, as a nice-19 thread's does beside busy processes
      await withHeldPool({ escalateAfterMs: 3_600_000, hedgeAfterMs: 1 }, async (pool, checks) => {
        const hash = bcrypt.hashSync('starved', 4);
        const answer = pool.compare('starved', hash);
        await checks.startedCount(2);
        expect(checks.started.map((check) => `${check.nice} ${check.password}`).sort()).toEqual([
          '0 starved',
          '19 starved',
        ]);
        expect(pool.escalatedWorkers).toBe(1);
        for (const check of checks.started) checks.release(check.threadId);
        await expect(answer).resolves.toBe(true);
      });
    },
  );

  onLinux(
    'when more checks wait than twice the low-priority workers, then the oldest runs at normal priority at once',
    async () => {
      await withHeldPool({ escalateAfterMs: 3_600_000, hedgeAfterMs: 3_600_000 }, async (pool, checks) => {
        const hashes = ['one', 'two', 'three', 'four'].map((password) => [password, bcrypt.hashSync(password, 4)]);
        // one holds the low-priority worker; two, three and four wait: a pile-up (more than 2 × 1)
        const answers = hashes.map(([password, hash]) => pool.compare(password!, hash!));
        await checks.startedCount(2);
        expect(checks.started.map((check) => `${check.nice} ${check.password}`).sort()).toEqual(['0 two', '19 one']);
        // the rest follow as workers free up
        for (let i = 0; i < 4; i++) {
          await checks.startedCount(i + 1);
          checks.release(checks.started[i]!.threadId);
        }
        expect(await Promise.all(answers)).toEqual([true, true, true, true]);
      });
    },
  );

  test('when the pool closes while a check runs, then the check ends before its worker does (a thread is never killed inside bcrypt)', async () => {
    // bcrypt's native code aborts the whole process when its thread is terminated mid-check (node-addon-api)
    await withHeldPool({ hedgeAfterMs: 3_600_000 }, async (pool, checks) => {
      const hash = bcrypt.hashSync('held secret', 4);
      const answer = pool.compare('held secret', hash);
      await checks.startedCount(1);
      const closing = pool.close();
      // the caller is answered at once: a closed pool lets no one in
      await expect(answer).resolves.toBe(false);
      checks.release(checks.started[0]!.threadId);
      await closing;
      // a terminated worker would never have finished the check
      await checks.finishedCount(1);
      expect(checks.finished.map((check) => check.password)).toEqual(['held secret']);
    });
  });

  test('when a check is young, then it waits for the low-priority worker and no other worker starts', async () => {
    await withHeldPool({ escalateAfterMs: 3_600_000, hedgeAfterMs: 3_600_000 }, async (pool, checks) => {
      const hash = bcrypt.hashSync('held secret', 4);
      const first = pool.compare('held secret', hash);
      const second = pool.compare('held secret', hash);
      await checks.startedCount(1);
      expect(pool.escalatedWorkers).toBe(0);
      checks.release(checks.started[0]!.threadId);
      await expect(first).resolves.toBe(true);
      // the second starts only now, on the same low-priority worker
      await checks.startedCount(2);
      expect(checks.started[1]!.threadId).toBe(checks.started[0]!.threadId);
      checks.release(checks.started[1]!.threadId);
      await expect(second).resolves.toBe(true);
      expect(pool.escalatedWorkers).toBe(0);
    });
  });

  test('when a normal-priority worker stays idle, then it is stopped; the low-priority ones stay', async () => {
    const pool = new PasswordCheckPool(1, undefined, undefined, { escalateAfterMs: 0, threads: 2, idleMs: 1 });
    try {
      const hash = bcrypt.hashSync('pool secret', 4);
      expect(await Promise.all([1, 2, 3].map(() => pool.compare('pool secret', hash)))).toEqual([true, true, true]);
      while (pool.escalatedWorkers > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await expect(pool.compare('pool secret', hash)).resolves.toBe(true);
    } finally {
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
