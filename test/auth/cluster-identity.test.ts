/**
 * Identity against the sandbox Kubernetes API: real Users, LoginSessions, status writes, watches and
 * SubjectAccessReviews, with TWO identity instances on one cluster behaving as two replicas behind one Service.
 */
import bcrypt from 'bcrypt';
import express from 'express';
import request from 'supertest';
import type { AuthSettings } from '../../src/config/cluster-configuration.js';
import { createIdentity, type Identity } from '../../src/auth/index.js';
import type { LoginSession } from '../../src/auth/sessions/session-record.js';
import { ClusterSessionStore } from '../../src/auth/sessions/sessions.js';
import { ClusterUserStore, type LoginMissReads } from '../../src/auth/users/users.js';
import { statusAfterFailure } from '../../src/auth/users/login-limits.js';
import { KubeClient, type KubeRequest } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { errorHandler, notFound } from '../../src/server/error-handler.js';
import { requestId } from '../../src/server/request-id.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { FakeClock, noPasswordHashes } from './fakes.js';

const logger = createLogger('error', { silent: true });
const ADMIN_PASSWORD = 'sandbox-admin-password-for-tests';
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const JWT_SECRET = { namespace: 'kapi-system', name: 'kapi-apiserver-jwt' };
const client = { client_id: 'kapi', client_secret: 'kapi' };

interface Replica {
  identity: Identity;
  app: express.Express;
  connection: KubeConnection;
}

let sandbox: Sandbox;
let admin: KubeClient;
let adminConnection: KubeConnection;
const replicas: Replica[] = [];
const clock = new FakeClock(Date.now());
const settings: { current: AuthSettings } = {
  current: {
    accessTokenMaxAgeSeconds: 7200,
    refreshTokenMaxAgeSeconds: 14400,
    multipleLogin: true,
    maxSessionsPerUser: 20,
    loginLimit: { maxFailures: 3, windowSeconds: 600 },
    clients: [
      { name: 'kapi', secret: 'kapi', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
    ],
    identityProviders: [],
    passwordPolicy: { minLength: 8 },
    loginRecords: { enabled: true, maxAgeSeconds: 604800, maxPerUser: 100 },
  },
};

async function kapiClient(): Promise<{ client: KubeClient; connection: KubeConnection }> {
  const connection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
  return { client: new KubeClient(connection), connection };
}

async function startReplica(secret = JWT_SECRET, loginMissReads?: LoginMissReads): Promise<Replica> {
  const { client: kube, connection } = await kapiClient();
  const identity = createIdentity({
    client: kube,
    logger,
    settings: () => settings.current,
    signingKeySecret: secret,
    allowGeneratedKey: false,
    clock: clock.read,
    ...(loginMissReads && { loginMissReads }),
  });
  await identity.start();
  const app = express();
  app.set('trust proxy', true);
  app.use(requestId);
  app.use(identity.oauthRouter);
  app.use(identity.authenticate);
  app.get('/whoami', (req, res) => {
    res.json(req.user);
  });
  app.get(
    '/kapis/resources.kapi.io/v1alpha3/nodes',
    identity.guard({ verb: 'list', resource: 'nodes' }),
    (_req, res) => {
      res.json({ items: [], totalItems: 0 });
    },
  );
  app.use(notFound);
  app.use(errorHandler(logger));
  return { identity, app, connection };
}

let userCount = 0;
async function createUser(password: string, options: { groups?: string[] } = {}): Promise<string> {
  const name = `user-${++userCount}-${Date.now().toString(36)}`;
  await admin.request({
    method: 'POST',
    path: USERS,
    body: {
      apiVersion: 'iam.kapi.io/v1beta1',
      kind: 'User',
      metadata: { name },
      spec: { email: `${name}@example.com`, password: bcrypt.hashSync(password, 4), groups: options.groups ?? [] },
    },
  });
  return name;
}

function tokenRequest(app: express.Express, form: Record<string, string>, ip = '192.0.2.10') {
  return request(app)
    .post('/oauth/token')
    .set('X-Forwarded-For', ip)
    .type('form')
    .send(new URLSearchParams(form).toString());
}

async function login(app: express.Express, username: string, password: string) {
  const res = await tokenRequest(app, { grant_type: 'password', username, password, ...client });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { access_token: string; refresh_token: string };
}

const whoami = (app: express.Express, token: string) =>
  request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
const refresh = (app: express.Express, token: string) =>
  tokenRequest(app, { grant_type: 'refresh_token', refresh_token: token, ...client });

const SESSIONS = '/apis/iam.kapi.io/v1beta1/loginsessions';

/** The login session a token belongs to (its `sid` claim). */
function sessionOf(token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sid: string }).sid;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

/** Polls until `check` passes. No deadline of its own: the test's timeout is the only limit (a busy machine is slow). */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
}

beforeAll(async () => {
  sandbox = await startSandbox({ nodes: 1, adminPassword: ADMIN_PASSWORD, logger });
  adminConnection = connectionFor(tokenAccess(sandbox.url, sandbox.adminToken), 'sandbox');
  admin = new KubeClient(adminConnection);
  replicas.push(await startReplica(), await startReplica());
  for (const replica of replicas) {
    await eventually(async () => replica.identity.readiness.every((check) => check.notReadyReason() === undefined));
  }
});

afterAll(async () => {
  for (const replica of replicas) {
    await replica.identity.stop();
    replica.connection.close();
  }
  adminConnection?.close();
  await sandbox?.stop();
});

const [one, two] = [() => replicas[0]!.app, () => replicas[1]!.app];

const KAPI = 'system:serviceaccount:kapi-system:kapi-apiserver';
const auditIds = () => new Set(sandbox.audit.map((entry) => entry.auditId));
/** The lists of the users collection kapi made (not its watches) since `seen` was taken. */
const collectionReads = (seen: Set<string>) =>
  sandbox.audit.filter(
    (entry) => !seen.has(entry.auditId) && entry.user === KAPI && entry.verb === 'list' && entry.path === USERS,
  ).length;
/** The reads of users by name kapi made since `seen` was taken, of names starting with `prefix`. */
const namedReads = (seen: Set<string>, prefix: string) =>
  sandbox.audit.filter(
    (entry) =>
      !seen.has(entry.auditId) &&
      entry.user === KAPI &&
      entry.verb === 'get' &&
      entry.path.startsWith(`${USERS}/${prefix}`),
  ).length;
/** A clock for the read budget that moves only when told to. */
const budgetClock = () => {
  const clock = { ms: 0, now: () => clock.ms };
  return clock;
};

describe('two replicas on one cluster', () => {
  test('when the seeded admin logs in on one replica, then the token works on the other', async () => {
    const tokens = await login(one(), 'admin', ADMIN_PASSWORD);
    const res = await whoami(two(), tokens.access_token).expect(200);
    expect(res.body).toMatchObject({ username: 'admin', groups: expect.arrayContaining(['system:authenticated']) });
  });

  test('when a user is created and logs in at once, then both replicas accept it', async () => {
    const name = await createUser('pw-1', { groups: ['dev'] });
    const tokens = await login(two(), name, 'pw-1');
    await whoami(one(), tokens.access_token).expect(200);
    const byEmail = await login(one(), `${name}@example.com`, 'pw-1');
    await whoami(two(), byEmail.access_token).expect(200);
  });

  test('when a user logs out on one replica, then the other refuses the token too', async () => {
    const name = await createUser('pw-2');
    const tokens = await login(one(), name, 'pw-2');
    await whoami(two(), tokens.access_token).expect(200);
    await request(one()).post('/oauth/logout').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    await eventually(async () => (await whoami(two(), tokens.access_token)).status === 401);
    await refresh(two(), tokens.refresh_token).expect(400);
  });

  test('when a user is locked out on one replica, then the other answers 429 too, and the lock is in the User status', async () => {
    const name = await createUser('pw-3');
    for (const ip of ['10.9.0.1', '10.9.0.2', '10.9.0.3']) {
      await tokenRequest(one(), { grant_type: 'password', username: name, password: 'wrong', ...client }, ip).expect(
        400,
      );
    }
    await eventually(async () => {
      const res = await tokenRequest(
        two(),
        { grant_type: 'password', username: name, password: 'pw-3', ...client },
        '10.9.0.4',
      );
      return res.status === 429 && Number(res.headers['retry-after']) > 0;
    });
    const user = await admin.request<{ status: Record<string, unknown> }>({ path: `${USERS}/${name}` });
    expect(user.status).toMatchObject({ state: 'AuthLimitExceeded', lockedUntil: expect.any(String) });
    expect(user.status.failedLogins).toHaveLength(3);
  });

  test('when a locked-out address tries made-up names, then kube-apiserver is never asked for them', async () => {
    const prefix = `ghost-${Date.now().toString(36)}`;
    const attempt = (name: string) =>
      tokenRequest(one(), { grant_type: 'password', username: name, password: 'x', ...client }, '10.8.0.1');
    for (let i = 0; i < 3; i++) await attempt(`${prefix}-${i}`).expect(400);
    const seen = auditIds();
    for (let i = 3; i < 23; i++) await attempt(`${prefix}-${i}`).expect(429);
    // every request kapi made is in the sandbox's audit trail: none since the lock-out named a tried user
    expect(sandbox.audit.filter((entry) => !seen.has(entry.auditId) && entry.path.includes(prefix))).toEqual([]);
    expect(collectionReads(seen)).toBe(0);
  });

  test('when a User is created while the watch of kapi lags behind, then it logs in on the first try', async () => {
    const lagging = await startReplica(JWT_SECRET);
    replicas.push(lagging);
    const release = sandbox.holdWatches('iam.kapi.io', 'users');
    try {
      const seen = auditIds();
      const name = await createUser('pw-lag');
      const res = await tokenRequest(
        lagging.app,
        { grant_type: 'password', username: name, password: 'pw-lag', ...client },
        '10.7.0.1',
      );
      expect(res.status).toBe(200);
      expect(res.body.access_token).toEqual(expect.any(String));
      // the watch has delivered nothing yet: the login read the User by name, and never listed the collection
      expect(namedReads(seen, name)).toBeGreaterThanOrEqual(1);
      expect(collectionReads(seen)).toBe(0);
    } finally {
      release();
    }
  });

  test('when one admitted address tries 50 made-up names, then at most the budget of reads by name is made, none once the address is locked out', async () => {
    const clock = budgetClock();
    const budget = { perSecond: 5, burst: 10, now: clock.now };
    const replica = await startReplica(JWT_SECRET, budget);
    replicas.push(replica);
    const prefix = `nobody-${Date.now().toString(36)}`;
    const attempt = (name: string) =>
      tokenRequest(replica.app, { grant_type: 'password', username: name, password: 'x', ...client }, '10.8.1.1');
    const saved = settings.current;
    settings.current = { ...saved, loginLimit: { maxFailures: 100, windowSeconds: 600 } };
    try {
      const seen = auditIds();
      for (let i = 0; i < 50; i++) {
        clock.ms += 100; // the budget's own clock: 5 s over the 50 attempts, whatever the machine's speed
        await attempt(`${prefix}-${i}`).expect(400);
      }
      const reads = namedReads(seen, prefix);
      // the burst is spent first, then the refill: 10 + 5/s × 5 s, well short of one read per name
      expect(reads).toBeGreaterThanOrEqual(budget.burst);
      expect(reads).toBeLessThanOrEqual(budget.burst + budget.perSecond * (clock.ms / 1000));
      expect(reads).toBeLessThan(50);
      expect(collectionReads(seen)).toBe(0);

      settings.current = saved; // 50 failures against a limit of 3: the address is locked out
      const seenLocked = auditIds();
      clock.ms += 60_000; // a full budget: what refuses the reads now is the lock-out alone
      for (let i = 50; i < 70; i++) await attempt(`${prefix}-${i}`).expect(429);
      expect(namedReads(seenLocked, prefix)).toBe(0);
      expect(collectionReads(seenLocked)).toBe(0);
    } finally {
      settings.current = saved;
    }
  }, 120_000); // 50 bcrypt comparisons: seconds on a busy machine

  test('when the read budget is spent, then logins are answered from the cache (invalid_grant), never 500', async () => {
    const replica = await startReplica(JWT_SECRET, { perSecond: 5, burst: 2, now: () => 0 });
    replicas.push(replica);
    const release = sandbox.holdWatches('iam.kapi.io', 'users');
    try {
      const prefix = `spent-${Date.now().toString(36)}`;
      const seen = auditIds();
      const answers = [];
      for (let i = 0; i < 4; i++) {
        answers.push(
          await tokenRequest(
            replica.app,
            { grant_type: 'password', username: `${prefix}-${i}`, password: 'x', ...client },
            `10.8.2.${i + 1}`,
          ),
        );
      }
      expect(answers.map((res) => [res.status, res.body.error])).toEqual(Array(4).fill([400, 'invalid_grant']));
      expect(namedReads(seen, prefix)).toBe(2);
      // a User the lagging watch has not delivered, with the budget spent: unknown, as the cache stands
      const name = await createUser('pw-spent');
      const res = await tokenRequest(
        replica.app,
        { grant_type: 'password', username: name, password: 'pw-spent', ...client },
        '10.8.2.9',
      );
      expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
      expect(namedReads(seen, name)).toBe(0);
    } finally {
      release();
    }
  });

  test('when a rotated refresh token is reused on the other replica after the grace, then the session ends everywhere', async () => {
    const name = await createUser('pw-4');
    const first = await login(one(), name, 'pw-4');
    const second = (await refresh(one(), first.refresh_token).expect(200)).body as { access_token: string };
    clock.advance(6);
    await refresh(two(), first.refresh_token).expect(400);
    await eventually(async () => (await whoami(one(), second.access_token)).status === 401);
  });

  test('when both replicas refresh the same token at once, then both succeed with the same refresh token', async () => {
    const name = await createUser('pw-5');
    const tokens = await login(one(), name, 'pw-5');
    await whoami(two(), tokens.access_token).expect(200);
    const [a, b] = await Promise.all([refresh(one(), tokens.refresh_token), refresh(two(), tokens.refresh_token)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.refresh_token).toBe(b.body.refresh_token);
    await refresh(two(), a.body.refresh_token).expect(200);
  });

  test('when a user is disabled through its status, then both replicas refuse its token', async () => {
    const name = await createUser('pw-6');
    const tokens = await login(one(), name, 'pw-6');
    await admin.request({
      method: 'PATCH',
      path: `${USERS}/${name}/status`,
      contentType: 'application/merge-patch+json',
      body: { status: { state: 'Disabled' } },
    });
    for (const app of [one(), two()]) {
      await eventually(async () => (await whoami(app, tokens.access_token)).status === 401);
    }
    await tokenRequest(two(), { grant_type: 'password', username: name, password: 'pw-6', ...client }).expect(400);
  });

  test('when a user is deleted, then its token is refused on both replicas', async () => {
    const name = await createUser('pw-7');
    const tokens = await login(two(), name, 'pw-7');
    await admin.request({ method: 'DELETE', path: `${USERS}/${name}` });
    for (const app of [one(), two()]) {
      await eventually(async () => (await whoami(app, tokens.access_token)).status === 401);
    }
  });

  test('when multipleLogin is false, then a login on one replica ends the session opened on the other', async () => {
    const name = await createUser('pw-8');
    settings.current = { ...settings.current, multipleLogin: false };
    try {
      const first = await login(one(), name, 'pw-8');
      const second = await login(two(), name, 'pw-8');
      await eventually(async () => (await whoami(one(), first.access_token)).status === 401);
      await whoami(one(), second.access_token).expect(200);
    } finally {
      settings.current = { ...settings.current, multipleLogin: true };
    }
  });

  test('when a user logs in 3 more times than the cap on alternating replicas, then the cluster keeps the newest sessions', async () => {
    const name = await createUser('pw-cap');
    settings.current = { ...settings.current, maxSessionsPerUser: 2 };
    try {
      const logins = [];
      for (let i = 0; i < 5; i++) {
        logins.push(await login(i % 2 ? two() : one(), name, 'pw-cap'));
        clock.advance(0.001);
      }
      const held = async () =>
        (
          await admin.request<{ items: Array<{ metadata: { name: string } }> }>({
            path: SESSIONS,
            query: { labelSelector: `iam.kapi.io/username=${name}` },
          })
        ).items.map((item) => item.metadata.name);
      const newest = logins.slice(-2).map((tokens) => sessionOf(tokens.access_token));
      await eventually(async () => sameSet(await held(), newest));
      for (const app of [one(), two()]) {
        const answers = await Promise.all(logins.map((tokens) => whoami(app, tokens.access_token)));
        expect(answers.map((res) => res.status)).toEqual([401, 401, 401, 200, 200]);
      }
    } finally {
      settings.current = { ...settings.current, maxSessionsPerUser: 20 };
    }
  });
});

describe('authorization by SubjectAccessReview', () => {
  test('when a user without RBAC rights lists nodes, then 403 in kube-apiserver words; the admin may', async () => {
    const name = await createUser('pw-9');
    const tokens = await login(one(), name, 'pw-9');
    const denied = await request(one())
      .get('/kapis/resources.kapi.io/v1alpha3/nodes')
      .set('Authorization', `Bearer ${tokens.access_token}`);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message: `nodes is forbidden: User "${name}" cannot list resource "nodes" in API group "" at the cluster scope`,
    });
    const adminTokens = await login(two(), 'admin', ADMIN_PASSWORD);
    await request(two())
      .get('/kapis/resources.kapi.io/v1alpha3/nodes')
      .set('Authorization', `Bearer ${adminTokens.access_token}`)
      .expect(200);
  });
});

describe('the cluster stores', () => {
  test('when two status writes race on one User, then both land (conflict → read again → write again)', async () => {
    const name = await createUser('pw-10');
    const { client: kube, connection } = await kapiClient();
    const store = new ClusterUserStore(kube, logger, noPasswordHashes);
    try {
      const limit = { maxFailures: 10, windowSeconds: 600 };
      await Promise.all(
        ['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((ip) =>
          store.updateStatus(name, (user) => statusAfterFailure(user, ip, Date.now(), limit)),
        ),
      );
      const user = await admin.request<{ status: { failedLogins: Array<{ sourceIP: string }> } }>({
        path: `${USERS}/${name}`,
      });
      expect(user.status.failedLogins.map((f) => f.sourceIP).sort()).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    } finally {
      connection.close();
    }
  });

  test('when sessions are past their end, then the sweep deletes them and leaves live ones', async () => {
    const { client: kube, connection } = await kapiClient();
    const sweepClock = new FakeClock(Date.now());
    const store = new ClusterSessionStore(kube, logger, sweepClock.read);
    store.start();
    try {
      await store.waitForSync(60_000);
      const now = Math.floor(sweepClock.now / 1000);
      const ended = await store.create({
        username: 'sweep-me',
        clientId: 'kapi',
        expiresAt: now - 1,
        refreshTokenId: 'a',
      });
      const live = await store.create({
        username: 'sweep-me',
        clientId: 'kapi',
        expiresAt: now + 3600,
        refreshTokenId: 'b',
      });
      await eventually(
        async () => (await store.find(live.id)) !== undefined && (await store.listForUser('sweep-me')).length === 2,
      );
      await eventually(async () => (await store.sweep()) >= 0 && (await store.read(ended.id)) === undefined);
      expect(await store.read(live.id)).toBeDefined();
      await store.delete(live.id);
      expect(await store.find(live.id)).toBeUndefined();
    } finally {
      await store.stop();
      connection.close();
    }
  });

  test('when a user holds more sessions than the cap (logins on replicas that missed each other), then the sweep ends the oldest', async () => {
    const { client: kube, connection } = await kapiClient();
    const store = new ClusterSessionStore(kube, logger, clock.read, () => 2);
    store.start();
    try {
      await store.waitForSync(60_000);
      const expiresAt = Math.floor(clock.now / 1000) + 3600;
      const created: LoginSession[] = [];
      for (let i = 0; i < 4; i++) {
        created.push(
          await store.create({
            username: 'over-cap',
            clientId: 'kapi',
            expiresAt,
            refreshTokenId: `r${i}`,
            loginTime: clock.now + i,
          }),
        );
      }
      const ids = async () => (await store.listForUser('over-cap')).map((session) => session.id);
      await eventually(async () => (await ids()).length === 4 && (await store.find(created[3]!.id)) !== undefined);
      await eventually(
        async () => (await store.sweep()) >= 0 && sameSet(await ids(), [created[2]!.id, created[3]!.id]),
      );
    } finally {
      await Promise.all((await store.listForUser('over-cap')).map((session) => store.delete(session.id)));
      await store.stop();
      connection.close();
    }
  });
});

describe('logins whose name the cache does not know', () => {
  /** kapi's client, counting its reads of users by name; they fail while `failing.namedReads` is set. */
  async function usersStore(missReads: LoginMissReads, failing = { namedReads: false }) {
    const { client: kube, connection } = await kapiClient();
    const request = kube.request.bind(kube);
    const reads: string[] = [];
    kube.request = <T>(req: KubeRequest): Promise<T> => {
      const named = (req.method ?? 'GET') === 'GET' && req.path.startsWith(`${USERS}/`);
      if (named) reads.push(req.path.slice(USERS.length + 1));
      return named && failing.namedReads ? Promise.reject(new Error('connect ECONNREFUSED')) : request<T>(req);
    };
    const store = new ClusterUserStore(kube, logger, noPasswordHashes, missReads);
    store.start();
    await store.waitForSync(10_000);
    return {
      store,
      reads,
      close: async () => {
        await store.stop();
        connection.close();
      },
    };
  }

  test('when many logins miss the cache for one name at once, then one read serves them all', async () => {
    const { store, reads, close } = await usersStore({ perSecond: 5, burst: 10, now: () => 0 });
    const release = sandbox.holdWatches('iam.kapi.io', 'users');
    try {
      const unknown = `made-up-${Date.now().toString(36)}`;
      expect(await Promise.all(Array.from({ length: 20 }, () => store.find(unknown)))).toEqual(
        Array(20).fill(undefined),
      );
      expect(reads.filter((name) => name === unknown)).toHaveLength(1);
      const name = await createUser('pw-shared');
      const found = await Promise.all(Array.from({ length: 20 }, () => store.find(name)));
      expect(found.map((user) => user?.name)).toEqual(Array(20).fill(name));
      expect(reads.filter((read) => read === name)).toHaveLength(1);
    } finally {
      release();
      await close();
    }
  });

  test('when the clock stands still, then no more names are read than the burst, and the rest are unknown', async () => {
    const { store, reads, close } = await usersStore({ perSecond: 5, burst: 3, now: () => 0 });
    try {
      const names = Array.from({ length: 10 }, (_, i) => `frozen-${i}-${Date.now().toString(36)}`);
      for (const name of names) expect(await store.find(name)).toBeUndefined();
      expect(reads).toEqual(names.slice(0, 3));
    } finally {
      await close();
    }
  });

  test('when a login is an e-mail address or cannot be a name, then nothing is read', async () => {
    const { store, reads, close } = await usersStore({ perSecond: 5, burst: 10, now: () => 0 });
    try {
      expect(await store.find(`nobody-${Date.now().toString(36)}@example.com`)).toBeUndefined();
      expect(await store.find('Not_A..Name')).toBeUndefined();
      expect(await store.find('someone', { cacheOnly: true })).toBeUndefined();
      expect(reads).toEqual([]);
    } finally {
      await close();
    }
  });

  test('when the read fails, then the login is answered from the cache as it stands, and a known user still is', async () => {
    const failing = { namedReads: false };
    const { store, reads, close } = await usersStore({ perSecond: 5, burst: 10, now: () => 0 }, failing);
    const release = sandbox.holdWatches('iam.kapi.io', 'users');
    let released = false;
    try {
      failing.namedReads = true;
      const name = await createUser('pw-fail');
      // the watch has not delivered it and it cannot be read: unknown, as the cache stands
      expect(await store.find(name)).toBeUndefined();
      expect(reads).toEqual([name]);
      expect(await store.find('admin')).toMatchObject({ name: 'admin' });
      failing.namedReads = false;
      expect(await store.find(name)).toMatchObject({ name });
      release();
      released = true;
      await eventually(async () => (await store.find(name, { cacheOnly: true })) !== undefined);
    } finally {
      if (!released) release();
      await close();
    }
  });

  test('when the users cache has not synced, then a login lookup still fails (503) without reading', async () => {
    const { client: kube, connection } = await kapiClient();
    const store = new ClusterUserStore(kube, logger, noPasswordHashes, { perSecond: 5, burst: 10 });
    try {
      const seen = auditIds();
      await expect(store.find('anyone')).rejects.toThrow('not synced');
      expect(collectionReads(seen)).toBe(0);
      expect(namedReads(seen, 'anyone')).toBe(0);
    } finally {
      connection.close();
    }
  });
});

describe('the signing key', () => {
  test('when the Secret is missing outside the sandbox, then readiness says so and tokens are 503', async () => {
    const replica = await startReplica({ namespace: 'kapi-system', name: 'no-such-secret' });
    try {
      const check = replica.identity.readiness.find((c) => c.name === 'signing-key');
      expect(check?.notReadyReason()).toMatch(/not found/);
      const res = await tokenRequest(replica.app, {
        grant_type: 'password',
        username: 'admin',
        password: ADMIN_PASSWORD,
        ...client,
      });
      expect([res.status, res.body.error]).toEqual([503, 'temporarily_unavailable']);
    } finally {
      await replica.identity.stop();
      replica.connection.close();
    }
  });
});
