/**
 * Every way access ends before token expiry is reported by identity on EVERY replica (two identity instances on one
 * sandbox cluster): logout, RFC 7009 revocation, a reused refresh token, a login with multipleLogin off, an admin
 * deleting the LoginSession, a session reaching its end, the expiry sweep, a user disabled, a user deleted. The forwarder cuts open streams on
 * these events (test/proxy/revocation.test.ts); here they must fire, on both replicas, for each path.
 */
import bcrypt from 'bcrypt';
import express from 'express';
import request from 'supertest';
import type { AuthSettings } from '../../src/config/cluster-configuration.js';
import { createIdentity, type Identity, type Revocation } from '../../src/auth/index.js';
import { ClusterSessionStore } from '../../src/auth/sessions/sessions.js';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { errorHandler, notFound } from '../../src/server/error-handler.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { FakeClock } from './fakes.js';

const logger = createLogger('error', { silent: true });
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const SESSIONS = '/apis/iam.kapi.io/v1beta1/loginsessions';
const client = { client_id: 'kapi', client_secret: 'kapi' };
const PASSWORD = 'revocation-events-password';

interface Replica {
  identity: Identity;
  app: express.Express;
  connection: KubeConnection;
  heard: Revocation[];
}

let sandbox: Sandbox;
let admin: KubeClient;
let adminConnection: KubeConnection;
const replicas: Replica[] = [];
const clock = new FakeClock(Date.now());
const defaults: AuthSettings = {
  accessTokenMaxAgeSeconds: 7200,
  refreshTokenMaxAgeSeconds: 14400,
  multipleLogin: true,
  maxSessionsPerUser: 20,
  loginLimit: { maxFailures: 10, windowSeconds: 600 },
  clients: [
    { name: 'kapi', secret: 'kapi', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
  ],
  identityProviders: [],
  passwordPolicy: { minLength: 8 },
  loginRecords: { enabled: true, maxAgeSeconds: 604800, maxPerUser: 100 },
};
const settings = { current: defaults };

function kapiConnection(): KubeConnection {
  return connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
}

async function startReplica(): Promise<Replica> {
  const connection = kapiConnection();
  const identity = createIdentity({
    client: new KubeClient(connection),
    logger,
    settings: () => settings.current,
    signingKeySecret: { namespace: 'kapi-system', name: 'kapi-apiserver-jwt' },
    allowGeneratedKey: false,
    clock: clock.read,
  });
  const heard: Revocation[] = [];
  identity.onRevoked((revocation) => heard.push(revocation));
  await identity.start();
  const app = express();
  app.set('trust proxy', true);
  app.use(identity.oauthRouter);
  app.use(identity.authenticate);
  app.get('/whoami', (req, res) => {
    res.json(req.user);
  });
  app.use(notFound);
  app.use(errorHandler(logger));
  return { identity, app, connection, heard };
}

let userCount = 0;
async function createUser(): Promise<string> {
  const name = `revoked-${++userCount}-${Date.now().toString(36)}`;
  await admin.request({
    method: 'POST',
    path: USERS,
    body: {
      apiVersion: 'iam.kapi.io/v1beta1',
      kind: 'User',
      metadata: { name },
      spec: { email: `${name}@example.com`, password: bcrypt.hashSync(PASSWORD, 4), groups: [] },
    },
  });
  return name;
}

const tokenRequest = (app: express.Express, form: Record<string, string>) =>
  request(app).post('/oauth/token').type('form').send(new URLSearchParams(form).toString());

/** Logs in and answers the tokens with the session id, as the authenticator puts it on `req.user`. */
async function login(app: express.Express, username: string) {
  const res = await tokenRequest(app, { grant_type: 'password', username, password: PASSWORD, ...client });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  const tokens = res.body as { access_token: string; refresh_token: string };
  const me = await request(app).get('/whoami').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
  return { ...tokens, sessionId: (me.body as { sessionId: string }).sessionId };
}

/** Polls until `check` passes. No deadline of its own: the test's timeout is the only limit (a busy machine is slow). */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 25));
}

/** Waits until each replica heard `expected` (watches deliver in milliseconds; the test timeout is the limit). */
async function expectHeardOnBoth(expected: Revocation): Promise<void> {
  await eventually(() => replicas.every((replica) => replica.heard.some((heard) => matches(heard, expected))));
}

function matches(heard: Revocation, expected: Revocation): boolean {
  return JSON.stringify(heard) === JSON.stringify(expected);
}

const session = (sessionId: string): Revocation => ({ kind: 'session', sessionId });
const [one, two] = [() => replicas[0]!.app, () => replicas[1]!.app];

beforeAll(async () => {
  sandbox = await startSandbox({ nodes: 1, adminPassword: 'unused-admin-password', logger });
  adminConnection = connectionFor(tokenAccess(sandbox.url, sandbox.adminToken), 'sandbox');
  admin = new KubeClient(adminConnection);
  replicas.push(await startReplica(), await startReplica());
  for (const replica of replicas) {
    await eventually(() => replica.identity.readiness.every((check) => check.notReadyReason() === undefined));
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

afterEach(() => {
  settings.current = defaults;
});

describe('when a login session ends', () => {
  test('when the user logs out on one replica, then both report the session', async () => {
    const tokens = await login(one(), await createUser());
    await request(one()).post('/oauth/logout').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    await expectHeardOnBoth(session(tokens.sessionId));
  });

  test('when the client revokes the refresh token (RFC 7009), then both report the session', async () => {
    const tokens = await login(two(), await createUser());
    await request(two())
      .post('/oauth/revoke')
      .type('form')
      .send(new URLSearchParams({ token: tokens.refresh_token, ...client }).toString())
      .expect(200);
    await expectHeardOnBoth(session(tokens.sessionId));
  });

  test('when a rotated refresh token is reused after the grace, then both report the session', async () => {
    const tokens = await login(one(), await createUser());
    const refresh = (app: express.Express, token: string) =>
      tokenRequest(app, { grant_type: 'refresh_token', refresh_token: token, ...client });
    await refresh(one(), tokens.refresh_token).expect(200);
    clock.advance(6);
    await refresh(two(), tokens.refresh_token).expect(400);
    await expectHeardOnBoth(session(tokens.sessionId));
  });

  test('when the user logs in again with multipleLogin off, then both report the older session only', async () => {
    const name = await createUser();
    const first = await login(one(), name);
    settings.current = { ...defaults, multipleLogin: false };
    const second = await login(two(), name);
    await expectHeardOnBoth(session(first.sessionId));
    expect(replicas.some((r) => r.heard.some((heard) => matches(heard, session(second.sessionId))))).toBe(false);
  });

  test('when an admin deletes the LoginSession object, then both report the session', async () => {
    const tokens = await login(two(), await createUser());
    await admin.request({ method: 'DELETE', path: `${SESSIONS}/${tokens.sessionId}` });
    await expectHeardOnBoth(session(tokens.sessionId));
  });

  test('when a session reaches its expiresAt, then both report it at that moment, before the sweep deleted it', async () => {
    settings.current = { ...defaults, accessTokenMaxAgeSeconds: 1, refreshTokenMaxAgeSeconds: 1 };
    const tokens = await login(one(), await createUser());
    clock.advance(2);
    await expectHeardOnBoth(session(tokens.sessionId));
    // told by the timer of its end, not by a sweep's delete: the object is still there
    const object = await admin.request<{ metadata: { name: string } }>({ path: `${SESSIONS}/${tokens.sessionId}` });
    expect(object.metadata.name).toBe(tokens.sessionId);
  });

  test('when the expiry sweep deletes an ended session, then both report it', async () => {
    settings.current = { ...defaults, refreshTokenMaxAgeSeconds: 60 };
    const tokens = await login(one(), await createUser());
    const connection = kapiConnection();
    const sweeper = new ClusterSessionStore(new KubeClient(connection), logger, () => clock.now + 120_000);
    sweeper.start();
    try {
      // the login came before the sweeper's list, so its cache holds the session
      await sweeper.waitForSync(60_000);
      expect(await sweeper.sweep()).toBeGreaterThanOrEqual(1);
      await expectHeardOnBoth(session(tokens.sessionId));
    } finally {
      await sweeper.stop();
      connection.close();
    }
  });
});

describe('when a user loses access', () => {
  test('when the user is disabled through its status, then both report the user (every session of the name)', async () => {
    const name = await createUser();
    await login(one(), name);
    await admin.request({
      method: 'PATCH',
      path: `${USERS}/${name}/status`,
      contentType: 'application/merge-patch+json',
      body: { status: { state: 'Disabled' } },
    });
    await expectHeardOnBoth({ kind: 'user', username: name });
  });

  test('when the user is deleted, then both report that incarnation of the user', async () => {
    const name = await createUser();
    const { metadata } = await admin.request<{ metadata: { uid: string } }>({ path: `${USERS}/${name}` });
    await login(two(), name);
    await admin.request({ method: 'DELETE', path: `${USERS}/${name}` });
    await expectHeardOnBoth({ kind: 'user', username: name, uid: metadata.uid });
  });

  test('when only the user’s login bookkeeping changes (a failed login), then no user revocation is reported', async () => {
    const name = await createUser();
    await login(one(), name);
    await tokenRequest(one(), { grant_type: 'password', username: name, password: 'wrong', ...client }).expect(400);
    const user = await admin.request<{ status?: { failedLogins?: unknown[] } }>({ path: `${USERS}/${name}` });
    expect(user.status?.failedLogins).toHaveLength(1);
    // Disabling after the status write: a replica that reports it has seen the write too (one watch, in order).
    await admin.request({
      method: 'PATCH',
      path: `${USERS}/${name}/status`,
      contentType: 'application/merge-patch+json',
      body: { status: { state: 'Disabled' } },
    });
    await expectHeardOnBoth({ kind: 'user', username: name });
    for (const replica of replicas) {
      expect(replica.heard.filter((heard) => heard.kind === 'user' && heard.username === name)).toEqual([
        { kind: 'user', username: name },
      ]);
    }
  });
});
