/**
 * SPEC §2 for streams, end to end: a watch or an exec session through kapi is authenticated once, when it opens; a
 * logout or a disabled user must still end it promptly, on every replica — not when the stream closes by itself.
 * Proven by order, never by elapsed time: the stream is open when the revocation is made, it ends after it (the
 * test's own timeout is the only limit; by itself a watch lasts tens of minutes), and another user's watch opened
 * alongside is still open then. On the sandbox or the cluster KUBECONFIG names; the exec case needs the sandbox's
 * echoing containers. The watches select this run's own node, so their first event never depends on other suites.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1PodList } from '@kubernetes/client-node';
import { WebSocket } from 'ws';
import { login } from './client.js';
import { RUN_LABEL, startE2E, type E2E } from './harness.js';
import { assertTarget, describeOnSandbox } from './target.js';

const PASSWORD = 'e2e-Revocation-password-1';
const USERS = '/apis/iam.kapi.io/v1beta1/users';

let e2e: E2E;
let replicaUrl: string;
/** A watch of this run's node: its first event is that node's ADDED. */
let watchNodes: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  replicaUrl = `http://127.0.0.1:${(await e2e.startReplica()).httpPort}`;
  await e2e.createNode('watched');
  watchNodes = `/api/v1/nodes?watch=1&labelSelector=${encodeURIComponent(`${RUN_LABEL}=${e2e.runId}`)}`;
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
  /** Resolves when the stream ended (cut or closed), never rejects. */
  ended: Promise<void>;
  isOpen(): boolean;
  close(): void;
}

/** Opens a watch and resolves once it is streaming (its first event arrived). */
function openWatch(baseUrl: string, token: string): Promise<LiveWatch> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}${watchNodes}`, { headers: { Authorization: `Bearer ${token}` }, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`the watch was answered ${res.statusCode}`));
        return;
      }
      let open = true;
      const ended = new Promise<void>((done) =>
        res.once('close', () => {
          open = false;
          done();
        }),
      );
      res.on('error', () => undefined);
      res.once('data', () => {
        req.removeListener('error', reject);
        req.on('error', () => undefined);
        resolve({ ended, isOpen: () => open, close: () => req.destroy() });
      });
    });
  });
}

/** A watch by a user nobody revokes: still open after the cut, so the cut was the revocation, not the stream. */
async function bystanderWatch(suffix: string): Promise<LiveWatch> {
  const name = await watcher(suffix);
  const { access_token: token } = await login(e2e.kapiUrl, name, PASSWORD);
  return openWatch(e2e.kapiUrl, token);
}

/**
 * Makes the revocation while the stream is open and waits for the stream to end: no deadline of its own, the
 * test's timeout is the only limit (a stream that is not cut outlives it by far).
 */
async function endsAfter(revoke: () => Promise<void>, isOpen: () => boolean, ended: Promise<unknown>): Promise<void> {
  expect(isOpen()).toBe(true);
  await revoke();
  await ended;
}

describe('when a user with open watches logs out', () => {
  it('then the watches end, on the replica that served the logout and on another', async () => {
    const name = await watcher('rev-logout');
    const { access_token: token } = await login(e2e.kapiUrl, name, PASSWORD);
    const here = await openWatch(e2e.kapiUrl, token);
    const elsewhere = await openWatch(replicaUrl, token);
    const bystander = await bystanderWatch('rev-logout-other');
    try {
      expect([here.isOpen(), elsewhere.isOpen()]).toEqual([true, true]);
      const logout = async () => {
        const res = await fetch(`${e2e.kapiUrl}/oauth/logout`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
      };
      const bothOpen = () => here.isOpen() && elsewhere.isOpen();
      await endsAfter(logout, bothOpen, Promise.all([here.ended, elsewhere.ended]));
      expect(bystander.isOpen()).toBe(true);
      const again = await fetch(`${e2e.kapiUrl}${watchNodes}`, { headers: { Authorization: `Bearer ${token}` } });
      expect(again.status).toBe(401);
    } finally {
      here.close();
      elsewhere.close();
      bystander.close();
    }
  });
});

describe('when an admin disables a user with an open watch', () => {
  it('then the watch ends', async () => {
    const name = await watcher('rev-disabled');
    const { access_token: token } = await login(e2e.kapiUrl, name, PASSWORD);
    const watch = await openWatch(e2e.kapiUrl, token);
    const bystander = await bystanderWatch('rev-disabled-other');
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
      await endsAfter(disable, watch.isOpen, watch.ended);
      expect(bystander.isOpen()).toBe(true);
    } finally {
      watch.close();
      bystander.close();
    }
  });
});

describeOnSandbox('a running container to exec into (a kubelet with a container runtime)')(
  'when a user with an exec session logs out',
  () => {
    it('then the WebSocket session ends', async () => {
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
          ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
          ws.on('open', () => ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('before logout')])));
          ws.on('message', (data: Buffer) => {
            if (data[0] === 1) resolve();
          });
        });
        const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
        const logout = async () => {
          const res = await fetch(`${e2e.kapiUrl}/oauth/logout`, { headers: { Authorization: `Bearer ${token}` } });
          expect(res.status).toBe(200);
        };
        await endsAfter(logout, () => ws.readyState === WebSocket.OPEN, closed);
      } finally {
        ws.terminate();
      }
    });
  },
);
