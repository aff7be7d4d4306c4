import type { Sandbox } from '../../src/sandbox/index.js';
import { call, configMap, openWatch, readEvents, testSandbox, type Json } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await testSandbox({ bookmarkIntervalMs: 150 });
});
afterAll(() => sandbox.stop());

const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

async function currentRv(path: string): Promise<string> {
  return (await call<Json>(sandbox, 'GET', path)).body.metadata.resourceVersion;
}

describe('watch', () => {
  test('when watching from a resourceVersion, then later ADDED, MODIFIED and DELETED events arrive in order as one JSON per line', async () => {
    await call(sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'w1' } } });
    const rv = await currentRv(cms('w1'));
    await call(sandbox, 'POST', cms('w1'), { body: configMap('a') });
    await call(sandbox, 'PATCH', `${cms('w1')}/a`, {
      body: { data: { a: '2' } },
      contentType: 'application/merge-patch+json',
    });
    const { res, abort } = await openWatch(sandbox, `${cms('w1')}?watch=1&resourceVersion=${rv}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const pending = readEvents(res, 3);
    await call(sandbox, 'DELETE', `${cms('w1')}/a`);
    const events = await pending;
    abort.abort();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[0]!.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' } });
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(rvs[0]).toBeGreaterThan(Number(rv));
  });

  test('when watching without a resourceVersion (watch=true), then the current objects come first as ADDED', async () => {
    const { res, abort } = await openWatch(sandbox, '/api/v1/nodes?watch=true');
    const events = await readEvents(res, 6);
    abort.abort();
    expect(events.map((e) => e.type)).toEqual(Array(6).fill('ADDED'));
    expect(events.map((e) => e.object.metadata.name)).toContain('node-1');
  });

  test('when sendInitialEvents is asked, then the state is followed by a bookmark marking its end', async () => {
    const { res, abort } = await openWatch(
      sandbox,
      '/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    );
    const events = await readEvents(res, 7);
    abort.abort();
    expect(events.slice(0, 6).every((e) => e.type === 'ADDED')).toBe(true);
    expect(events[6]).toMatchObject({
      type: 'BOOKMARK',
      object: { kind: 'Node', apiVersion: 'v1', metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
    const bad = await call<Json>(sandbox, 'GET', '/api/v1/nodes?watch=1&sendInitialEvents=true');
    expect(bad.status).toBe(422);
  });

  test('when watches of a resource are held, then their events and bookmarks wait for the release and then arrive in order', async () => {
    await call(sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'w-held' } } });
    const rv = await currentRv(cms('w-held'));
    const { res, abort } = await openWatch(
      sandbox,
      `${cms('w-held')}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`,
    );
    const events: Json[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) if (line.trim()) events.push(JSON.parse(line));
      }
    })().catch(() => undefined);
    const release = sandbox.holdWatches('', 'configmaps');
    try {
      const created = await call<Json>(sandbox, 'POST', cms('w-held'), { body: configMap('late') });
      expect(created.status).toBe(201);
      const createdAt = Number(created.body.metadata.resourceVersion);
      // a bookmark sent before the hold began may still be read now; anything of the write's time or later may not
      const sinceWrite = () => events.filter((e) => Number(e.object.metadata.resourceVersion) >= createdAt);
      // the write is answered, but its watcher hears nothing of it, nor of bookmarks, while held (bookmarks: 150 ms)
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(sinceWrite()).toEqual([]);
      release();
      while (sinceWrite().length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      const released = sinceWrite();
      expect(released[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'late' } } });
      expect(released.slice(1).every((e) => e.type === 'BOOKMARK')).toBe(true);
      // and in order: nothing from before the write comes after it
      expect(events.slice(events.indexOf(released[0]!)).every((e) => released.includes(e))).toBe(true);
    } finally {
      release();
      abort.abort();
      await reading;
    }
  });

  test('when bookmarks are allowed, then BOOKMARK events with only the resourceVersion arrive periodically', async () => {
    const rv = await currentRv('/api/v1/nodes');
    const { res, abort } = await openWatch(
      sandbox,
      `/api/v1/nodes?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`,
    );
    const events = await readEvents(res, 2, 2000);
    abort.abort();
    expect(events).toHaveLength(2);
    for (const event of events) {
      expect(event).toEqual({
        type: 'BOOKMARK',
        object: { kind: 'Node', apiVersion: 'v1', metadata: { resourceVersion: expect.stringMatching(/^\d+$/) } },
      });
    }
  });

  test('when the resourceVersion is older than the history, then the stream is a single ERROR 410 event', async () => {
    const rv = await currentRv(cms('default'));
    await call(sandbox, 'POST', cms('default'), { body: configMap('expire-me') });
    sandbox.compactHistory();
    const res = await fetch(`${sandbox.url}${cms('default')}?watch=1&resourceVersion=${rv}`, {
      headers: { Authorization: `Bearer ${sandbox.adminToken}` },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: expect.stringMatching(new RegExp(`^too old resource version: ${rv} \\(\\d+\\)$`)),
        reason: 'Expired',
        code: 410,
      },
    });
  });

  test('when dropWatches is called, then open watches end abruptly and a new watch from the last version resumes', async () => {
    const rv = await currentRv(cms('default'));
    const { res } = await openWatch(sandbox, `${cms('default')}?watch=1&resourceVersion=${rv}`);
    const reader = res.body!.getReader();
    const ended = (async () => {
      try {
        for (;;) if ((await reader.read()).done) return 'ended';
      } catch {
        return 'cut';
      }
    })();
    await new Promise((r) => setTimeout(r, 20));
    sandbox.dropWatches();
    expect(await ended).toBe('cut');
    await call(sandbox, 'POST', cms('default'), { body: configMap('after-drop') });
    const again = await openWatch(sandbox, `${cms('default')}?watch=1&resourceVersion=${rv}`);
    const events = await readEvents(again.res, 1);
    again.abort.abort();
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'after-drop' } } });
  });

  test('when a label selector is set, then an object that stops matching arrives as DELETED and one that starts as ADDED', async () => {
    await call(sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'w2' } } });
    await call(sandbox, 'POST', cms('w2'), { body: configMap('sel', {}, { tier: 'front' }) });
    const rv = await currentRv(cms('w2'));
    const { res, abort } = await openWatch(
      sandbox,
      `${cms('w2')}?watch=1&resourceVersion=${rv}&labelSelector=tier%3Dfront`,
    );
    const pending = readEvents(res, 3);
    const relabel = (tier: string) =>
      call(sandbox, 'PATCH', `${cms('w2')}/sel`, {
        body: { metadata: { labels: { tier } } },
        contentType: 'application/merge-patch+json',
      });
    await relabel('back');
    await relabel('front');
    await call(sandbox, 'PATCH', `${cms('w2')}/sel`, {
      body: { data: { b: '1' } },
      contentType: 'application/merge-patch+json',
    });
    const events = await pending;
    abort.abort();
    expect(events.map((e) => e.type)).toEqual(['DELETED', 'ADDED', 'MODIFIED']);
    expect(events[0]!.object.metadata.labels).toEqual({ tier: 'front' });
    expect(Number(events[0]!.object.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
  });

  test("when a field selector pins a name, then only that object's events arrive", async () => {
    const rv = await currentRv(cms('default'));
    const { res, abort } = await openWatch(
      sandbox,
      `${cms('default')}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dpinned`,
    );
    const pending = readEvents(res, 1);
    await call(sandbox, 'POST', cms('default'), { body: configMap('not-pinned') });
    await call(sandbox, 'POST', cms('default'), { body: configMap('pinned') });
    const events = await pending;
    abort.abort();
    expect(events.map((e) => e.object.metadata.name)).toEqual(['pinned']);
  });

  test('when a watch selector is malformed, then it is a 400 Status, not a stream', async () => {
    const res = await call<Json>(sandbox, 'GET', '/api/v1/pods?watch=1&fieldSelector=spec.bogus%3D1');
    expect(res.status).toBe(400);
    expect(res.body.kind).toBe('Status');
  });

  // A lower bound only (a busy machine ends it later, never earlier): the stream was held until timeoutSeconds.
  test('when timeoutSeconds passes, then the server ends the stream cleanly', async () => {
    const started = Date.now();
    const res = await fetch(
      `${sandbox.url}/api/v1/nodes?watch=1&resourceVersion=${await currentRv('/api/v1/nodes')}&timeoutSeconds=1`,
      {
        headers: { Authorization: `Bearer ${sandbox.adminToken}` },
      },
    );
    expect(await res.text()).toBe('');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  test('when a namespaced watch is open, then events from other namespaces are not delivered', async () => {
    const rv = await currentRv('/api/v1/configmaps');
    const { res, abort } = await openWatch(sandbox, `${cms('demo')}?watch=1&resourceVersion=${rv}`);
    const pending = readEvents(res, 1);
    await call(sandbox, 'POST', cms('default'), { body: configMap('other-ns') });
    await call(sandbox, 'POST', cms('demo'), { body: configMap('this-ns') });
    const events = await pending;
    abort.abort();
    expect(events.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual(['demo/this-ns']);
  });

  test('when 1,000 watches are open, then one change reaches every one of them', async () => {
    const rv = await currentRv(cms('demo'));
    const watches = await Promise.all(
      Array.from({ length: 1000 }, () => openWatch(sandbox, `${cms('demo')}?watch=1&resourceVersion=${rv}`)),
    );
    // no deadline of its own (the longest a timer can wait): the test's timeout is the only limit
    const pending = watches.map((w) => readEvents(w.res, 1, 2 ** 31 - 1));
    await call(sandbox, 'POST', cms('demo'), { body: configMap('fan-out') });
    const results = await Promise.all(pending);
    for (const w of watches) w.abort.abort();
    expect(results.every((events) => events[0]?.object.metadata.name === 'fan-out')).toBe(true);
  }, 60_000);
});
