/**
 * Graceful shutdown (SIGTERM → KapiServer.stop): /readyz fails first while the replica still serves (the drain
 * window), then the listeners stop accepting, open watches end cleanly (a clean end of the stream, so clients watch
 * again elsewhere), in-flight requests finish within the grace, and stop() returns.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { login } from './client.js';
import { RUN_LABEL, startE2E, type E2E } from './harness.js';

const PASSWORD = 'e2e-Shutdown-password-1';
let e2e: E2E;

beforeAll(async () => {
  e2e = await startE2E();
});

afterAll(async () => {
  await e2e?.stop();
});

describe('when a replica is stopped (SIGTERM) while a watch is open through it', () => {
  it('then /readyz fails while it still serves, then it stops listening, the watch ends cleanly, and stop() returns', async () => {
    // The run's own node: the watch's first event, whatever other suites do to theirs.
    await e2e.createNode('watched');
    const user = await e2e.createUser('watcher', PASSWORD);
    await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }]);
    // a drain window the test can see; what follows it is proven by order, not by time
    const replica = await e2e.startReplica({ shutdownDelayMs: 1_500 });
    const base = `http://127.0.0.1:${replica.httpPort}`;
    const { access_token: token } = await login(base, user, PASSWORD);

    const selector = encodeURIComponent(`${RUN_LABEL}=${e2e.runId}`);
    const watch = await fetch(`${base}/api/v1/nodes?watch=1&labelSelector=${selector}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(watch.status).toBe(200);
    const reader = watch.body!.getReader();
    expect((await reader.read()).done).toBe(false); // the run node's ADDED event: the stream is live

    const events: string[] = [];
    const stopping = replica.stop(30_000).then(() => events.push('stopped'));
    const ended = (async () => {
      try {
        for (;;) if ((await reader.read()).done) return events.push('watch ended cleanly');
      } catch {
        return events.push('watch cut');
      }
    })();

    // the drain window: not ready, yet new requests are served (a load balancer may still send some)
    const notReady = await fetch(`${base}/readyz?verbose`);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toContain('[-]shutdown failed: shutting down');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(events).toEqual([]);

    await ended;
    await stopping;
    // the watch ended with the stream's clean end long before the 30 s grace would have cut it
    expect(events).toEqual(['watch ended cleanly', 'stopped']);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
