/**
 * The cluster-backed stores' request logic, with a scripted KubeClient and the watch not started (so every lookup
 * misses the cache): fallbacks, tombstones, preconditions and conflict retries. The same stores run against the
 * sandbox in cluster-identity.test.ts.
 */
import { ClusterSessionStore } from '../../src/auth/sessions/sessions.js';
import { ClusterUserStore } from '../../src/auth/users/users.js';
import { loginSessionObject } from '../../src/auth/sessions/session-record.js';
import { statusAfterFailure } from '../../src/auth/users/login-limits.js';
import type { KubeRequest } from '../../src/kube/client.js';
import { capturingLogger, noPasswordHashes } from './fakes.js';
import { kubeError, stubClient } from './stub-client.js';

const logger = capturingLogger().logger;
const SID = '0123456789abcdef0123456789abcdef';
const sessionJson = (id: string, username = 'alice', resourceVersion = '1') => ({
  ...loginSessionObject(id, { username, clientId: 'kapi', expiresAt: 2_000_000_000, refreshTokenId: 'r' }),
  metadata: { name: id, resourceVersion, labels: { 'iam.kapi.io/username': username } },
});

describe('ClusterSessionStore', () => {
  test('when a session is not in the cache, then one direct read decides, and a 404 is remembered', async () => {
    const client = stubClient(() => Promise.reject(kubeError(404)));
    const store = new ClusterSessionStore(client, logger);
    expect(await store.find(SID)).toBeUndefined();
    expect(await store.find(SID)).toBeUndefined();
    expect(client.requests).toHaveLength(1);
    expect(client.requests[0]?.path).toBe(`/apis/iam.kapi.io/v1beta1/loginsessions/${SID}`);
  });

  test('when a session created on another replica is asked for many times at once, then one read answers all', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const client = stubClient(async () => {
      await gate;
      return sessionJson(SID);
    });
    const store = new ClusterSessionStore(client, logger);
    const lookups = Array.from({ length: 5 }, () => store.find(SID));
    release();
    const found = await Promise.all(lookups);
    expect(found.every((s) => s?.id === SID)).toBe(true);
    expect(client.requests).toHaveLength(1);
  });

  test('when the id is not a session id, then nothing is asked (no path games)', async () => {
    const client = stubClient(() => sessionJson(SID));
    const store = new ClusterSessionStore(client, logger);
    expect(await store.find('../users/admin')).toBeUndefined();
    expect(client.requests).toHaveLength(0);
  });

  test('when the cluster cannot be reached, then the lookup fails (the caller answers 503), nothing is remembered', async () => {
    let fail = true;
    const client = stubClient(() => (fail ? Promise.reject(new Error('ECONNREFUSED')) : sessionJson(SID)));
    const store = new ClusterSessionStore(client, logger);
    await expect(store.find(SID)).rejects.toThrow('ECONNREFUSED');
    fail = false;
    expect((await store.find(SID))?.id).toBe(SID);
  });

  test('when a session is deleted here, then it is refused at once and a 404 from the cluster is no error', async () => {
    const client = stubClient((req) => (req.method === 'DELETE' ? Promise.reject(kubeError(404)) : sessionJson(SID)));
    const store = new ClusterSessionStore(client, logger);
    await store.delete(SID);
    expect(await store.find(SID)).toBeUndefined();
    expect(client.requests.map((r) => r.method)).toEqual(['DELETE']);
  });

  test('when a rotation finds the session changed, then it is a conflict; when gone, gone', async () => {
    const answers = [kubeError(409), kubeError(404)];
    const client = stubClient(() => Promise.reject(answers.shift()));
    const store = new ClusterSessionStore(client, logger);
    const session = {
      id: SID,
      resourceVersion: '7',
      username: 'alice',
      clientId: 'kapi',
      expiresAt: 1,
      refreshTokenId: 'r',
    };
    expect(await store.replace(session, { ...session, refreshTokenId: 's' })).toBe('conflict');
    expect(await store.replace(session, { ...session, refreshTokenId: 's' })).toBe('gone');
    expect(client.requests[0]).toMatchObject({ method: 'PUT', body: { metadata: { resourceVersion: '7' } } });
  });

  test("when a user's sessions are listed, then the label selects them and the spec must name the user", async () => {
    const client = stubClient(() => ({
      items: [sessionJson(SID), sessionJson('f'.repeat(32), 'alice-impostor'), { bad: true }],
    }));
    const store = new ClusterSessionStore(client, logger);
    const sessions = await store.listForUser('alice');
    expect(sessions.map((s) => s.id)).toEqual([SID]);
    expect((client.requests[0] as KubeRequest).query).toEqual({ labelSelector: 'iam.kapi.io/username=alice' });
  });
});

describe('ClusterSessionStore session cap', () => {
  test('when sessions created here are not in the watch yet, then the cap still counts them and ends the first', async () => {
    const client = stubClient((req) => (req.method === 'POST' ? req.body : {}));
    const store = new ClusterSessionStore(client, logger);
    const spec = { username: 'alice', clientId: 'kapi', expiresAt: 2_000_000_000, refreshTokenId: 'r' };
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await store.create({ ...spec, loginTime: 1_000 + i }));
    await store.create({ ...spec, username: 'bob', loginTime: 1 });
    const ended = await store.endBeyondCap('alice', 2, created[2]!.id);
    expect(ended).toEqual([created[0]!.id]);
    expect(client.requests.filter((req) => req.method === 'DELETE').map((req) => req.path)).toEqual([
      `/apis/iam.kapi.io/v1beta1/loginsessions/${created[0]!.id}`,
    ]);
    // ended here: refused at once, and no longer counted
    expect(await store.find(created[0]!.id)).toBeUndefined();
    expect(await store.endBeyondCap('alice', 2, created[2]!.id)).toEqual([]);
  });
});

describe('ClusterUserStore', () => {
  const userJson = (failures: number, resourceVersion: string) => ({
    metadata: { name: 'alice', uid: 'u', resourceVersion },
    spec: { email: 'alice@example.com', password: '$2b$04$x' },
    status: {
      failedLogins: Array.from({ length: failures }, () => ({ time: new Date().toISOString(), sourceIP: 'x' })),
    },
  });

  test('when a name misses the cache, then one read decides and a missing user is remembered', async () => {
    const client = stubClient(() => Promise.reject(kubeError(404)));
    const store = new ClusterUserStore(client, logger, noPasswordHashes);
    expect(await store.get('ghost')).toBeUndefined();
    expect(await store.get('ghost')).toBeUndefined();
    expect(client.requests).toHaveLength(1);
  });

  test('when a login looks a name up before the cache synced, then it fails and nothing is asked', async () => {
    const client = stubClient(() => userJson(0, '1'));
    const store = new ClusterUserStore(client, logger, noPasswordHashes);
    await expect(store.find('alice')).rejects.toThrow('not synced');
    await expect(store.find('alice@example.com')).rejects.toThrow('not synced');
    expect(client.requests).toHaveLength(0);
  });

  test('when the login is not a possible object name, then nothing is asked', async () => {
    const client = stubClient(() => userJson(0, '1'));
    const store = new ClusterUserStore(client, logger, noPasswordHashes);
    expect(await store.get('Bad/Name')).toBeUndefined();
    expect(client.requests).toHaveLength(0);
  });

  test('when a status write conflicts, then the user is read again and the change computed on the fresh copy', async () => {
    const script: Array<(req: KubeRequest) => unknown> = [
      () => userJson(0, '1'), // fallback read
      () => Promise.reject(kubeError(409)), // someone else wrote first
      () => userJson(2, '2'), // fresh read
      (req) => req.body, // accepted
    ];
    const client = stubClient((req) => script.shift()!(req));
    const store = new ClusterUserStore(client, logger, noPasswordHashes);
    const limit = { maxFailures: 3, windowSeconds: 600 };
    await store.updateStatus('alice', (user) => statusAfterFailure(user, '10.0.0.9', Date.now(), limit));
    const writes = client.requests.filter((r) => r.method === 'PATCH');
    expect(writes).toHaveLength(2);
    expect(writes[0]).toMatchObject({
      path: '/apis/iam.kapi.io/v1beta1/users/alice/status',
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: '1' } },
    });
    // computed on the fresh copy: two earlier failures plus this one reach the limit
    expect(writes[1]).toMatchObject({
      body: { metadata: { resourceVersion: '2' }, status: { state: 'AuthLimitExceeded' } },
    });
  });

  test('when a status write keeps conflicting, then it gives up with the error after a few attempts', async () => {
    const client = stubClient((req) => (req.method === 'PATCH' ? Promise.reject(kubeError(409)) : userJson(0, '1')));
    const store = new ClusterUserStore(client, logger, noPasswordHashes);
    await expect(store.updateStatus('alice', () => ({ lastLoginTime: 'now' }))).rejects.toMatchObject({ code: 409 });
    expect(client.requests.filter((r) => r.method === 'PATCH')).toHaveLength(5);
  });
});
