/**
 * Graceful shutdown (SIGTERM → KapiServer.stop): listeners stop accepting at once, in-flight streams are cut after
 * the grace period, watches on kube-apiserver are closed, and stop() returns.
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

describe('when a replica is stopped while a watch is open through it', () => {
  it('then new connections are refused at once, the watch is cut after the grace period, and stop() returns', async () => {
    // The run's own node: the watch's first event, whatever other suites do to theirs.
    await e2e.createNode('watched');
    const user = await e2e.createUser('watcher', PASSWORD);
    await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }]);
    const replica = await e2e.startReplica();
    const base = `http://127.0.0.1:${replica.httpPort}`;
    const { access_token: token } = await login(base, user, PASSWORD);

    const selector = encodeURIComponent(`${RUN_LABEL}=${e2e.runId}`);
    const watch = await fetch(`${base}/api/v1/nodes?watch=1&labelSelector=${selector}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(watch.status).toBe(200);
    const reader = watch.body!.getReader();
    expect((await reader.read()).done).toBe(false); // the run node's ADDED event: the stream is live

    const started = Date.now();
    const stopping = replica.stop(300);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();

    const cut = (async () => {
      try {
        for (;;) if ((await reader.read()).done) return 'ended';
      } catch {
        return 'cut';
      }
    })();
    await expect(cut).resolves.toMatch(/ended|cut/);
    await stopping;
    // Held for the grace period first: a lower bound only, as a busy machine makes it later, never earlier. That the
    // cut and stop() come at all is the proof they do not wait for the watch to end by itself (tens of minutes): the
    // test's own timeout is the only limit.
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });
});
