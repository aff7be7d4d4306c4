/**
 * SPEC §2 for streams, end to end: a watch or an exec session through kapi is authenticated once, when it opens; a
 * logout or a disabled user must still end it promptly (within 1 s), on every replica — not when the stream closes
 * by itself. On the sandbox or the cluster KUBECONFIG names; the exec case needs the sandbox's echoing containers.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1PodList } from '@kubernetes/client-node';
import { WebSocket } from 'ws';
import { login } from './client.js';
import { assertTarget, E2E_TARGET } from './forwarding-target.js';
import { startE2E, type E2E } from './harness.js';

const PASSWORD = 'e2e-Revocation-password-1';
const WATCH_NODES = '/api/v1/nodes?watch=1';
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const CUT_WITHIN_MS = 1_000;

let e2e: E2E;
let replicaUrl: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  replicaUrl = `http://127.0.0.1:${(await e2e.startReplica()).httpPort}`;
});

afterAll(async () => {
  await e2e?.stop();
});

async function watcher(suffix: string): Promise<string> {
  const name = await e2e.createUser(suffix, PASSWORD);
  await e2e.grant(name, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    // kube 1.35 authorizes a WebSocket exec as get and create.
    { apiGroups: [''], resources: ['pods/exec'], verbs: ['get', 'create'] },
  ]);
  return name;
}

interface LiveWatch {
  /** Resolves with the time the stream ended (cut or closed), never rejects. */
  ended: Promise<number>;
  isOpen(): boolean;
  close(): void;
}

/** Opens a watch and resolves once it is streaming (its first event arrived). */
function openWatch(baseUrl: string, token: string): Promise<LiveWatch> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the watch sent no event within 5 s')), 5_000);
    const req = http.get(`${baseUrl}${WATCH_NODES}`, { headers: { Authorization: `Bearer ${token}` }, agent: false });
    req.on('error', () => undefined);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        clearTimeout(timer);
        reject(new Error(`the watch was answered ${res.statusCode}`));
        return;
      }
      let open = true;
      const ended = new Promise<number>((done) =>
        res.once('close', () => {
          open = false;
          done(Date.now());
        }),
      );
      res.on('error', () => undefined);
      res.once('data', () => {
        clearTimeout(timer);
        resolve({ ended, isOpen: () => open, close: () => req.destroy() });
      });
    });
  });
}

/** How long after `revoke` started the stream ended; fails if it outlives the bound (plus slack for the report). */
async function cutAfter(revoke: () => Promise<void>, ended: Promise<number>): Promise<number> {
  const started = Date.now();
  await revoke();
  const endedAt = await Promise.race([ended, sleep(CUT_WITHIN_MS + 2_000).then(() => Number.POSITIVE_INFINITY)]);
  return endedAt - started;
}

describe('when a user with open watches logs out', () => {
  it('then the watches end within 1 s, on the replica that served the logout and on another', async () => {
    const name = await watcher('rev-logout');
    const { access_token: token } = await login(e2e.kapiUrl, name, PASSWORD);
    const here = await openWatch(e2e.kapiUrl, token);
    const elsewhere = await openWatch(replicaUrl, token);
    try {
      expect([here.isOpen(), elsewhere.isOpen()]).toEqual([true, true]);
      const logout = async () => {
        const res = await fetch(`${e2e.kapiUrl}/oauth/logout`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
      };
      const ended = Promise.all([here.ended, elsewhere.ended]).then((times) => Math.max(...times));
      expect(await cutAfter(logout, ended)).toBeLessThan(CUT_WITHIN_MS);
      const again = await fetch(`${e2e.kapiUrl}${WATCH_NODES}`, { headers: { Authorization: `Bearer ${token}` } });
      expect(again.status).toBe(401);
    } finally {
      here.close();
      elsewhere.close();
    }
  });
});

describe('when an admin disables a user with an open watch', () => {
  it('then the watch ends within 1 s', async () => {
    const name = await watcher('rev-disabled');
    const { access_token: token } = await login(e2e.kapiUrl, name, PASSWORD);
    const watch = await openWatch(e2e.kapiUrl, token);
    try {
      expect(watch.isOpen()).toBe(true);
      const disable = async () => {
        await e2e.admin.request({
          method: 'PATCH',
          path: `${USERS}/${name}/status`,
          contentType: 'application/merge-patch+json',
          body: { status: { state: 'Disabled' } },
        });
      };
      expect(await cutAfter(disable, watch.ended)).toBeLessThan(CUT_WITHIN_MS);
    } finally {
      watch.close();
    }
  });
});

if (E2E_TARGET === 'sandbox') {
  describe('when a user with an exec session logs out (sandbox only: a real cluster needs a running container)', () => {
    it('then the WebSocket session ends within 1 s', async () => {
      const name = await watcher('rev-exec');
      const { access_token: token } = await login(e2e.kapiUrl, name, PASSWORD);
      const pods = await e2e.admin.request<V1PodList>({
        path: '/api/v1/pods',
        query: { fieldSelector: 'status.phase=Running', limit: 1 },
      });
      const pod = pods.items[0]!;
      const url =
        `${e2e.kapiUrl.replace('http', 'ws')}/api/v1/namespaces/${pod.metadata!.namespace}/pods/${pod.metadata!.name}` +
        `/exec?container=${pod.spec!.containers[0]!.name}&command=cat&stdin=true&stdout=true`;
      const tokenProtocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;
      const ws = new WebSocket(url, ['v5.channel.k8s.io', tokenProtocol]);
      ws.on('error', () => undefined);
      try {
        // the session works: stdin comes back on stdout
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no echo within 5 s')), 5_000);
          ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
          ws.on('open', () => ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('before logout')])));
          ws.on('message', (data: Buffer) => {
            if (data[0] !== 1) return;
            clearTimeout(timer);
            resolve();
          });
        });
        const closed = new Promise<number>((resolve) => ws.once('close', () => resolve(Date.now())));
        const logout = async () => {
          const res = await fetch(`${e2e.kapiUrl}/oauth/logout`, { headers: { Authorization: `Bearer ${token}` } });
          expect(res.status).toBe(200);
        };
        expect(await cutAfter(logout, closed)).toBeLessThan(CUT_WITHIN_MS);
      } finally {
        ws.terminate();
      }
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
