/**
 * Watches over WebSocket through kapi (SPEC §16: the console's live tables), on the sandbox and on a real
 * kube-apiserver alike: with the token in the Authorization header or in the bearer subprotocol, each event arrives
 * as its own message, in order; a WebSocket watch without an Origin header is refused with kube-apiserver's bare 403.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { startE2E, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-WebSocket-Passw0rd';
let e2e: E2E;
let token: string;
const caller = new KapiCaller();
const open: WebSocket[] = [];

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  const user = await e2e.createUser('websocket', PASSWORD);
  await e2e.grant(user, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }]);
  token = (await caller.login(e2e.kapiUrl, user, PASSWORD)).access_token;
});

afterAll(async () => {
  for (const ws of open) ws.terminate();
  await e2e?.stop();
});

interface WatchEvent {
  type: string;
  object: { metadata: { name: string } };
}

/** Opens a WebSocket watch through kapi; resolves with its events as they come, or with the refusal's status. */
function watch(path: string, options: { headers?: Record<string, string>; protocols?: string[] }) {
  const url = `${e2e.kapiUrl.replace(/^http/, 'ws')}${path}`;
  const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers });
  open.push(ws);
  const events: WatchEvent[] = [];
  ws.on('message', (data) => events.push(JSON.parse(String(data)) as WatchEvent));
  const opened = new Promise<number>((resolve, reject) => {
    ws.once('open', () => resolve(101));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', reject);
  });
  return { ws, events, opened };
}

async function configMap(name: string): Promise<void> {
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${e2e.runId}/configmaps`,
    body: { metadata: { name }, data: { live: 'yes' } },
  });
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('a watch over WebSocket through kapi', () => {
  it.each([
    ['the Authorization header', () => ({ headers: { Authorization: `Bearer ${token}`, Origin: e2e.kapiUrl } })],
    [
      'the bearer subprotocol',
      () => ({
        headers: { Origin: e2e.kapiUrl },
        // kube-apiserver's rule: another subprotocol beside the token's, the one the server then agrees on
        protocols: [
          'watch.kapi.io',
          `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`,
        ],
      }),
    ],
  ])(
    'when the token comes in %s, then it switches (101) and each change arrives as a message, in order',
    async (how, options) => {
      const first = e2e.name(`ws-${how.length}-a`);
      const second = e2e.name(`ws-${how.length}-b`);
      const stream = watch(`/api/v1/namespaces/${e2e.runId}/configmaps?watch=true`, options());
      expect(await stream.opened).toBe(101);
      if ('protocols' in options()) expect(stream.ws.protocol).toBe('watch.kapi.io');
      await configMap(first);
      await configMap(second);
      const names = () => stream.events.map((event) => event.object.metadata.name);
      await until(() => names().includes(second));
      expect(names().indexOf(first)).toBeLessThan(names().indexOf(second));
      expect(stream.events.every((event) => typeof event.type === 'string')).toBe(true);
      stream.ws.close();
    },
  );

  it('when the WebSocket watch has no Origin header, then kube-apiserver’s bare 403, as on a real cluster', async () => {
    const stream = watch(`/api/v1/namespaces/${e2e.runId}/configmaps?watch=true`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(await stream.opened).toBe(403);
  });

  it('when no token comes, then kapi answers 401 and kube-apiserver never sees it', async () => {
    const stream = watch(`/api/v1/namespaces/${e2e.runId}/configmaps?watch=true`, {
      headers: { Origin: e2e.kapiUrl },
    });
    expect(await stream.opened).toBe(401);
  });
});
