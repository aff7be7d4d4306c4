import { afterEach, describe, expect, it } from '@jest/globals';
import { createHook } from 'node:async_hooks';
import { KubeClient } from '../../src/kube/client.js';
import type { KubeConnection } from '../../src/kube/connection.js';
import { Reflector, type ReflectorOptions } from '../../src/kube/reflector.js';
import { createLogger } from '../../src/observability/logger.js';
import { FakeKubeApiserver, capturingLogger, connectTo, eventually, node } from './fake-kube-apiserver.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

interface Item {
  name: string;
  zone: string | undefined;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(
  options: Partial<ReflectorOptions<Item>> = {},
  given?: { fake: FakeKubeApiserver; connection: KubeConnection },
) {
  const fake = given?.fake ?? (await FakeKubeApiserver.start('/api/v1/nodes'));
  const connection: KubeConnection = given?.connection ?? (await connectTo(fake));
  if (!given) {
    cleanups.push(
      () => connection.close(),
      () => fake.stop(),
    );
  }
  const reflector = new Reflector<Item>({
    client: new KubeClient(connection),
    logger: createLogger('error', { silent: true }),
    name: 'nodes',
    listPath: '/api/v1/nodes',
    transform: (raw: any) => ({ name: raw.metadata.name, zone: raw.metadata.labels?.zone }),
    pageSize: 2,
    backoff: { initialMs: 20, maxMs: 200 },
    ...options,
  });
  cleanups.push(() => reflector.stop());
  const events: string[] = [];
  reflector.on('added', (obj) => events.push(`added ${obj.name}`));
  reflector.on('modified', (obj, old) => events.push(`modified ${obj.name} ${old?.zone}->${obj.zone}`));
  reflector.on('deleted', (obj) => events.push(`deleted ${obj.name}`));
  return { fake, reflector, events };
}

/**
 * A reflector whose backoff outlasts any test (10 minutes), on a connection probing kube-apiserver's readiness every
 * `probeIntervalMs`: only a probe can bring it back within a test.
 */
async function withProbe(probeIntervalMs: number) {
  const fake = await FakeKubeApiserver.start('/api/v1/nodes');
  const connection = await connectTo(fake, probeIntervalMs);
  cleanups.push(
    () => connection.close(),
    () => fake.stop(),
  );
  return setup({ backoff: { initialMs: 600_000, maxMs: 600_000 } }, { fake, connection });
}

const names = (reflector: Reflector<Item>) =>
  reflector
    .list()
    .map((item) => item.name)
    .sort();
const lastWatch = (fake: FakeKubeApiserver) => fake.requests.filter((r) => r.kind === 'watch').at(-1)!;

describe('Reflector list', () => {
  it('when the collection spans several pages, then it follows continue tokens and holds every object', async () => {
    const { fake, reflector, events } = await setup();
    for (const name of ['a', 'b', 'c', 'd', 'e']) fake.put(node(name));
    expect(reflector.readiness.notReadyReason()).toMatch(/not synced/);
    expect(reflector.readiness.name).toBe('cache:nodes');

    reflector.start();
    await reflector.waitForSync();

    expect(names(reflector)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(reflector.size).toBe(5);
    expect(reflector.synced).toBe(true);
    expect(reflector.readiness.notReadyReason()).toBeUndefined();
    const lists = fake.requests.filter((r) => r.kind === 'list');
    expect(lists.map((r) => [r.query.get('limit'), r.query.get('continue')])).toEqual([
      ['2', null],
      ['2', '0:2'],
      ['2', '0:4'],
    ]);
    expect(events).toEqual(['added a', 'added b', 'added c', 'added d', 'added e']);
    await eventually(() => expect(lastWatch(fake)?.query.get('resourceVersion')).toBe(fake.resourceVersion));
    const watch = lastWatch(fake).query;
    expect(watch.get('allowWatchBookmarks')).toBe('true');
    expect(Number(watch.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
    expect(Number(watch.get('timeoutSeconds'))).toBeLessThanOrEqual(600);
  });

  it('when a list page arrives a few bytes at a time, then every object is read whole', async () => {
    const { fake, reflector } = await setup({ pageSize: 3 });
    for (const name of ['a', 'b', 'c', 'd']) fake.put(node(name, { zone: `z-"{[${name}` }));
    fake.pieceBytes = 7;
    reflector.start();
    await reflector.waitForSync();
    expect(names(reflector)).toEqual(['a', 'b', 'c', 'd']);
    expect(reflector.get('c')?.zone).toBe('z-"{[c');
  });

  it('when a list answer is cut off, then that list counts as failed and a new one fills the cache', async () => {
    const { fake, reflector } = await setup();
    for (const name of ['a', 'b', 'c']) fake.put(node(name));
    fake.truncateNextListAt = 40;
    reflector.start();
    await reflector.waitForSync();
    expect(names(reflector)).toEqual(['a', 'b', 'c']);
    expect(fake.count('list')).toBeGreaterThan(2);
  });

  it('when a continue token expires while paging, then the list starts over and the cache is complete', async () => {
    const { fake, reflector } = await setup();
    for (const name of ['a', 'b', 'c', 'd', 'e']) fake.put(node(name));
    fake.expireNextContinue = true;

    reflector.start();
    await reflector.waitForSync();

    expect(names(reflector)).toEqual(['a', 'b', 'c', 'd', 'e']);
    const pages = fake.requests.filter((r) => r.kind === 'list').map((r) => r.query.get('continue'));
    expect(pages).toEqual([null, '0:2', null, '1:2', '1:4']);
  });

  it('when selectors are given, then list and watch both send them', async () => {
    const { fake, reflector } = await setup({ fieldSelector: 'status.phase!=Failed', labelSelector: 'zone=a' });
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.count('watch')).toBe(1));
    for (const request of fake.requests) {
      expect(request.query.get('fieldSelector')).toBe('status.phase!=Failed');
      expect(request.query.get('labelSelector')).toBe('zone=a');
    }
  });
});

describe('Reflector sinks', () => {
  it('when a sink attaches as the first list ends, before the watch opens, then it gets a full list at once', async () => {
    const { fake, reflector } = await setup();
    for (const name of ['a', 'b', 'c']) fake.put(node(name));
    const put: string[] = [];
    let listed!: () => void;
    const ended = new Promise<void>((resolve) => (listed = resolve));
    const sink = {
      beginList: () => undefined,
      put: (key: string) => put.push(key),
      remove: () => undefined,
      endList: () => listed(),
    };
    // 'synced' is told inside the first list, before the loop goes on to open the watch
    reflector.on('synced', () => reflector.attach(sink));
    reflector.start();
    await ended;
    expect(put.sort()).toEqual(['a', 'b', 'c']);
    expect(fake.requests.filter((r) => r.kind === 'list').length).toBeGreaterThanOrEqual(2);
  });
});

describe('Reflector watch', () => {
  it('when events arrive split across chunk boundaries, then each is applied once, in order', async () => {
    const { fake, reflector, events } = await setup();
    fake.put(node('a', { zone: 'one' }));
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    const revision = reflector.revision;
    fake.pieceBytes = 7; // pieces split JSON tokens and the multi-byte characters below

    fake.put(node('b', { zone: 'zoné-東京' }));
    fake.put(node('a', { zone: 'two' }));
    fake.remove('b');
    fake.put(node('c'));

    await eventually(() => expect(names(reflector)).toEqual(['a', 'c']));
    expect(events.slice(1)).toEqual(['added b', 'modified a one->two', 'deleted b', 'added c']);
    expect(reflector.get('a')?.zone).toBe('two');
    expect(reflector.revision).toBe(revision + 4);
  });

  it('when a bookmark arrives, then the next watch resumes from it and nothing changes in the cache', async () => {
    const { fake, reflector, events } = await setup();
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    const revision = reflector.revision;

    fake.bookmark();
    const bookmarked = fake.resourceVersion;
    await new Promise((resolve) => setTimeout(resolve, 50));
    fake.dropWatches();

    await eventually(() => expect(lastWatch(fake).query.get('resourceVersion')).toBe(bookmarked));
    expect(reflector.revision).toBe(revision);
    expect(events).toEqual(['added a']);
    expect(fake.count('list')).toBe(1);
  });

  it.each(['event', 'http'] as const)(
    'when the resourceVersion has expired (410 as %s), then it relists, deleting what vanished and keeping unchanged objects quiet',
    async (expiredAs) => {
      const { fake, reflector, events } = await setup();
      for (const name of ['a', 'b', 'c']) fake.put(node(name, { zone: 'one' }));
      reflector.start();
      await reflector.waitForSync();
      await eventually(() => expect(fake.openWatches).toBe(1));
      const unchanged = reflector.get('c');
      fake.expiredAs = expiredAs;

      fake.changeWithoutHistory(() => {
        fake.remove('a');
        fake.put(node('b', { zone: 'two' }));
        fake.put(node('d'));
      });
      fake.dropWatches();

      await eventually(() => expect(names(reflector)).toEqual(['b', 'c', 'd']));
      expect(events.slice(3)).toEqual(['deleted a', 'modified b one->two', 'added d']);
      expect(reflector.get('c')).toBe(unchanged);
      expect(fake.count('list')).toBe(4); // 2 pages, then 2 pages again
      await eventually(() => expect(lastWatch(fake).query.get('resourceVersion')).toBe(fake.resourceVersion));
      expect(reflector.readiness.notReadyReason()).toBeUndefined();
    },
  );

  it('when the connection drops, then it re-watches from the last resourceVersion and misses nothing', async () => {
    const { fake, reflector } = await setup();
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    fake.put(node('b'));
    await eventually(() => expect(reflector.size).toBe(2));
    const seen = fake.resourceVersion;

    fake.dropWatches();
    fake.put(node('c')); // made while no watch is open: replayed from history
    fake.remove('a');

    await eventually(() => expect(names(reflector)).toEqual(['b', 'c']));
    expect(lastWatch(fake).query.get('resourceVersion')).toBe(seen);
    expect(fake.count('list')).toBe(1);
  });

  it('when the server ends a watch at its timeout, then it watches again at once without relisting', async () => {
    // A backoff longer than the test: the second watch can only come if it is made at once, not after a sleep.
    const { fake, reflector } = await setup({
      watchTimeoutSeconds: { min: 1, max: 1 },
      backoff: { initialMs: 3_600_000, maxMs: 3_600_000 },
    });
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    fake.put(node('a'));
    await eventually(() => expect(fake.count('watch')).toBe(2));
    expect(fake.count('list')).toBe(1);
  });

  it('when watches end at once without events, then that counts as a failure and is retried with backoff', async () => {
    const { fake, reflector } = await setup({ backoff: { initialMs: 20, maxMs: 1000 } });
    reflector.start();
    await reflector.waitForSync();
    fake.endWatchesAtOnce = true;
    fake.dropWatches();

    // After the drop it watches again at once; each empty watch then waits longer than the last (20, 40, 80 ms
    // ±25%). Lower bounds only: a busy machine makes the gaps longer, never shorter; a tight loop has none.
    const from = fake.count('watch');
    await eventually(() => expect(fake.count('watch')).toBeGreaterThanOrEqual(from + 4));
    const at = fake.requests.filter((r) => r.kind === 'watch').map((r) => r.at);
    const gaps = at.slice(from, from + 4).map((t, i) => t - at[from - 1 + i]!);
    expect(gaps[1]).toBeGreaterThanOrEqual(15);
    expect(gaps[2]).toBeGreaterThanOrEqual(30);
    expect(gaps[3]).toBeGreaterThanOrEqual(60);
  });

  it('when a watch goes silent past its timeout and grace, then it is aborted and opened again', async () => {
    const { fake, reflector } = await setup({ watchTimeoutSeconds: { min: 1, max: 1 }, idleGraceMs: 100 });
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    fake.hangWatches = true;
    fake.dropWatches();
    await eventually(() => {
      expect(fake.count('watch')).toBe(2);
      expect(fake.openWatches).toBe(1);
    });
    fake.hangWatches = false;
    fake.put(node('late')); // the hung watch never delivers it; only a new watch can

    await eventually(() => expect(reflector.get('late')).toBeDefined());
    const [, hung, next] = fake.requests.filter((r) => r.kind === 'watch');
    expect(next!.at - hung!.at).toBeGreaterThanOrEqual(1000);
  });

  it('when a watch sends a line that is not JSON, then it re-watches from the last good resourceVersion', async () => {
    const { fake, reflector } = await setup();
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    const seen = fake.resourceVersion;

    fake.sendRaw('{"type":"ADDED","object":{oops\n');

    await eventually(() => expect(fake.count('watch')).toBe(2));
    expect(lastWatch(fake).query.get('resourceVersion')).toBe(seen);
    fake.put(node('b'));
    await eventually(() => expect(reflector.size).toBe(2));
  });
});

describe('Reflector failures and readiness', () => {
  it('when kube-apiserver answers 500, then it backs off with growing delays and recovers', async () => {
    const { fake, reflector } = await setup({ backoff: { initialMs: 40, maxMs: 1000 } });
    fake.put(node('a'));
    fake.failNext(3, 500, 'list');

    reflector.start();
    await eventually(() => expect(fake.count('list')).toBeGreaterThanOrEqual(2));
    expect(reflector.readiness.notReadyReason()).toMatch(/not synced yet \(last error: HTTP 500: injected failure\)/);
    await reflector.waitForSync();

    const at = fake.requests.filter((r) => r.kind === 'list').map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps).toHaveLength(3);
    expect(gaps[0]).toBeGreaterThanOrEqual(30); // 40 ms ± 25%
    expect(gaps[2]).toBeGreaterThanOrEqual(120); // 160 ms ± 25%
    expect(reflector.readiness.notReadyReason()).toBeUndefined();
  });

  it('when the watch stays broken longer than staleAfterMs, then readiness fails, and passes again on recovery', async () => {
    const { fake, reflector } = await setup({ staleAfterMs: 300, backoff: { initialMs: 20, maxMs: 50 } });
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));

    fake.failAll(503);
    fake.dropWatches();
    await eventually(() => expect(fake.count('watch')).toBeGreaterThanOrEqual(2));
    expect(reflector.readiness.notReadyReason()).toBeUndefined(); // broken, but not yet for long
    await eventually(() =>
      expect(reflector.readiness.notReadyReason()).toMatch(/not kept current for \d+ s \(last error: HTTP 503/),
    );

    fake.failAll(undefined);
    fake.put(node('b'));
    await eventually(() => expect(reflector.readiness.notReadyReason()).toBeUndefined());
    await eventually(() => expect(reflector.get('b')).toBeDefined());
  });

  it('when kube-apiserver restarts, then connections are refused for a while and the watch resumes after it', async () => {
    const { fake, reflector } = await setup({ backoff: { initialMs: 100, maxMs: 400 } });
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    const seen = fake.resourceVersion;

    await fake.restart(300);
    await eventually(() => expect(fake.openWatches).toBe(1));
    fake.put(node('b'));

    await eventually(() => expect(reflector.get('b')).toBeDefined());
    expect(
      fake.requests
        .filter((r) => r.kind === 'watch')
        .at(-1)!
        .query.get('resourceVersion'),
    ).toBe(seen);
    expect(fake.count('list')).toBe(1);
    expect(reflector.readiness.notReadyReason()).toBeUndefined();
  });

  it('when kube-apiserver comes back during a long backoff, then the cache resumes at the next probe of its readiness, not at the backoff’s end', async () => {
    // a backoff longer than the test's own timeout: only the readiness probe can bring the cache back in time
    const { fake, reflector } = await withProbe(50);
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));

    await fake.restart(200);
    fake.put(node('b'));
    await eventually(() => expect(reflector.get('b')).toBeDefined());
    expect(fake.readinessProbes).toBeGreaterThan(0);
    expect(reflector.readiness.notReadyReason()).toBeUndefined();
  });

  it('when etcd is down behind kube-apiserver, then its readiness probe does not wake the caches into failing lists', async () => {
    const { fake, reflector } = await withProbe(20);
    fake.put(node('a'));
    fake.failAll(503);
    reflector.start();
    await eventually(() => expect(fake.readinessProbes).toBeGreaterThanOrEqual(5));
    expect(fake.count('list')).toBe(1);
    fake.failAll(undefined);
    await reflector.waitForSync();
    expect(fake.count('list')).toBe(2);
  });

  it('when its own lists fail while kube-apiserver stays ready (a broken kind), then the probe never cuts its backoff short', async () => {
    const { fake, reflector } = await withProbe(20);
    // only the lists fail: kube-apiserver's own /readyz answers 200 throughout
    fake.failNext(1, 500, 'list');
    reflector.start();
    await eventually(() => expect(fake.readinessProbes).toBeGreaterThanOrEqual(5));
    expect(fake.count('list')).toBe(1);
    expect(reflector.synced).toBe(false);
  });

  it('when kube-apiserver’s watch cache is behind the resourceVersion (504 Too large), then it watches again from it without a warning or a relist', async () => {
    const { logger, lines } = capturingLogger();
    const { fake, reflector } = await setup({ logger });
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));
    const resumeFrom = lastWatch(fake).query.get('resourceVersion');

    fake.watchCacheBehindNext(2);
    fake.dropWatches();

    await eventually(() => expect(fake.openWatches).toBe(1));
    const watches = fake.requests.filter((r) => r.kind === 'watch').slice(-3);
    expect(watches.map((w) => w.query.get('resourceVersion'))).toEqual([resumeFrom, resumeFrom, resumeFrom]);
    expect(fake.count('list')).toBe(1);
    expect(reflector.readiness.notReadyReason()).toBeUndefined();
    // (the dropped connection itself is a failure; the 504s that follow are not)
    const failures = lines.filter((line) => line.level === 'warn' || line.level === 'error');
    expect(failures.filter((line) => /too large|504/i.test(JSON.stringify(line)))).toEqual([]);
    expect(lines.filter((line) => line.message.startsWith('watch cache behind'))).toHaveLength(2);
  });

  it('when re-watching keeps failing, then it relists after a few attempts', async () => {
    const { fake, reflector } = await setup();
    reflector.start();
    await reflector.waitForSync();
    await eventually(() => expect(fake.openWatches).toBe(1));

    fake.failNext(5, 500, 'watch');
    fake.dropWatches();

    await eventually(() => expect(fake.count('list')).toBe(2));
    await eventually(() => expect(fake.openWatches).toBe(1));
  });

  it('when an outage lasts many attempts, then only a few warnings are logged', async () => {
    const { logger, lines } = capturingLogger();
    const { fake, reflector } = await setup({ logger, backoff: { initialMs: 1, maxMs: 2 } });
    fake.failNext(40, 500, 'list');
    reflector.start();
    await reflector.waitForSync();

    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings.length).toBeLessThanOrEqual(6); // attempts 1, 2, 4, 8, 16, 32
    expect(warnings[0]).toMatchObject({ cache: 'nodes', failures: 1, error: 'HTTP 500: injected failure' });
    expect(lines.some((l) => l.message === 'cache is current again')).toBe(true);
  });

  it('when waitForSync times out, then it rejects naming the cache and the last error', async () => {
    const { fake, reflector } = await setup();
    fake.failAll(403);
    reflector.start();
    await expect(reflector.waitForSync(200)).rejects.toThrow(
      /cache nodes did not sync within 200 ms; last error: HTTP 403/,
    );
  });

  it('when an event handler throws, then the cache and the other handlers carry on', async () => {
    const { fake, reflector, events } = await setup();
    reflector.on('added', () => {
      throw new Error('handler bug');
    });
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    expect(events).toEqual(['added a']);
    expect(reflector.size).toBe(1);
  });

  it('when unsubscribed, then a handler hears nothing more', async () => {
    const { fake, reflector } = await setup();
    const heard: string[] = [];
    const off = reflector.on('added', (obj) => heard.push(obj.name));
    fake.put(node('a'));
    reflector.start();
    await reflector.waitForSync();
    off();
    fake.put(node('b'));
    await eventually(() => expect(reflector.size).toBe(2));
    expect(heard).toEqual(['a']);
  });
});

describe('Reflector stop', () => {
  it('when stopped, then the watch closes, no request follows, readiness fails and no timer is left', async () => {
    const timers = new Map<number, number>(); // live timers made during this test: async id → delay
    const long = () => [...timers.values()].filter((delay) => delay > 100); // not the test's own polling
    const hook = createHook({
      init: (id, type, _trigger, resource) => {
        if (type === 'Timeout') timers.set(id, (resource as { _idleTimeout?: number })._idleTimeout ?? -1);
      },
      destroy: (id) => timers.delete(id),
    }).enable();
    try {
      const { fake, reflector } = await setup();
      fake.put(node('a'));
      reflector.start();
      await reflector.waitForSync();
      await eventually(() => expect(fake.openWatches).toBe(1));
      expect(long().length).toBeGreaterThan(0); // the watch's idle watchdog, at least

      await reflector.stop();

      await eventually(() => expect(fake.openWatches).toBe(0));
      const requests = fake.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(fake.requests.length).toBe(requests);
      expect(reflector.readiness.notReadyReason()).toBe('stopped');
      await reflector.stop(); // idempotent
      // with the server and the connection gone too, every timer made since start is gone (watchdog, backoff sleeps)
      while (cleanups.length) await cleanups.pop()!();
      await eventually(() => expect(long()).toEqual([]));
    } finally {
      hook.disable();
    }
  });

  it('when stopped while backing off before the first sync, then waiters are rejected and the loop ends', async () => {
    // A backoff longer than the test: stop() returning at all proves it does not sleep the backoff out.
    const { fake, reflector } = await setup({ backoff: { initialMs: 3_600_000, maxMs: 3_600_000 } });
    fake.failAll(500);
    reflector.start();
    const waiting = reflector.waitForSync();
    await eventually(() => expect(fake.count('list')).toBe(1));

    await reflector.stop();

    await expect(waiting).rejects.toThrow(/stopped before it synced/);
    await expect(reflector.waitForSync()).rejects.toThrow(/stopped before it synced/);
  });
});
