/**
 * What the login records hold and who may read them (GET /kapis/iam.kapi.io/v1beta1/users/{name}/loginrecords), over
 * the identity pipeline with records kept in memory (the cluster store is tested in test/auth/login-records/).
 */
import request from 'supertest';
import { RecordingAuthorizer } from '../fakes.js';
import { FakeDirectory, fakeProviders, providerSettings } from '../providers/fake-directory.js';
import { capturingLogger } from '../fakes.js';
import { login, refresh, testIdentity, tokenRequest } from '../identity-app.js';

const PASSWORD = 'Alice-Passw0rd-1';
const records = (name: string) => `/kapis/iam.kapi.io/v1beta1/users/${name}/loginrecords`;

function setup(options: Parameters<typeof testIdentity>[0] = {}) {
  const authorizer = new RecordingAuthorizer(
    (user, attributes) => user.username === 'auditor' && attributes.subresource === 'loginrecords',
  );
  const t = testIdentity({ authorizer, ...options });
  t.users.add('alice', { password: PASSWORD });
  t.users.add('bob', { password: PASSWORD });
  t.users.add('auditor', { password: PASSWORD });
  return t;
}

function read(t: ReturnType<typeof setup>, token: string, name: string, query = '') {
  return request(t.app)
    .get(`${records(name)}${query}`)
    .set('Authorization', `Bearer ${token}`);
}

function passwordLogin(t: ReturnType<typeof setup>, username: string, password: string, agent = 'kapi-test/1.0') {
  return tokenRequest(
    t.app,
    { grant_type: 'password', username, password, client_id: 'kapi', client_secret: 'kapi-secret' },
    '198.51.100.7',
  ).set('User-Agent', agent);
}

describe('login records', () => {
  it('when a user fails, logs in and refreshes, then each attempt is a record, newest first, with its details', async () => {
    const t = setup();
    expect((await passwordLogin(t, 'alice', 'wrong-password')).status).toBe(400);
    t.clock.advance(1);
    const tokens = (await passwordLogin(t, 'alice', PASSWORD)).body as { access_token: string; refresh_token: string };
    t.clock.advance(1);
    expect((await refresh(t.app, tokens.refresh_token)).status).toBe(200);
    const res = await read(t, tokens.access_token, 'alice');
    expect(res.status).toBe(200);
    expect(res.body.totalItems).toBe(3);
    expect(res.body.items.map((r: { grant: string; result: string }) => `${r.grant}:${r.result}`)).toEqual([
      'refresh_token:success',
      'password:success',
      'password:failure',
    ]);
    expect(res.body.items[2]).toEqual({
      time: new Date(t.clock.now - 2000).toISOString(),
      grant: 'password',
      provider: 'local',
      client: 'kapi',
      sourceIP: '198.51.100.7',
      userAgent: 'kapi-test/1.0',
      result: 'failure',
      reason: 'wrong password',
    });
    expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(res.body)).not.toContain('wrong-password');
  });

  it('when a limit refuses a login, then it is recorded as limited', async () => {
    const t = setup({ settings: { loginLimit: { maxFailures: 1, windowSeconds: 600 } } });
    await passwordLogin(t, 'alice', 'wrong-password');
    expect((await passwordLogin(t, 'alice', PASSWORD)).status).toBe(429);
    const recorded = await t.records.read('alice');
    expect(recorded.map((r) => r.result)).toEqual(['limited', 'failure']);
  });

  it('when a name matches nobody, then nothing is recorded for it (no object for made-up names)', async () => {
    const t = setup();
    await passwordLogin(t, 'nobody-at-all', PASSWORD);
    expect([...t.records.byUser.keys()]).toEqual([]);
  });

  it('when a directory user logs in, then the record names the provider', async () => {
    const corp = new FakeDirectory(providerSettings('corp'));
    corp.add('dana', { userId: 'uid=dana', password: PASSWORD });
    const t = setup({ providers: fakeProviders([corp], capturingLogger().logger) });
    const tokens = await login(t.app, 'dana', PASSWORD);
    const res = await read(t, tokens.access_token, 'dana');
    expect(res.body.items[0]).toMatchObject({ provider: 'corp', result: 'success' });
  });

  it('when limit is given, then only the newest are returned, and totalItems counts all', async () => {
    const t = setup();
    for (let i = 0; i < 4; i++) {
      await passwordLogin(t, 'alice', PASSWORD);
      t.clock.advance(1);
    }
    const { access_token } = await login(t.app, 'alice', PASSWORD);
    const res = await read(t, access_token, 'alice', '?limit=2');
    expect(res.body.items).toHaveLength(2);
    expect(res.body.totalItems).toBe(5);
    const bad = await read(t, access_token, 'alice', '?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('limit');
  });

  it('when the count or age limit applies, then older records are not shown', async () => {
    const t = setup();
    t.settings.current = { ...t.settings.current, loginRecords: { enabled: true, maxAgeSeconds: 60, maxPerUser: 2 } };
    await passwordLogin(t, 'alice', PASSWORD);
    t.clock.advance(120);
    await passwordLogin(t, 'alice', 'wrong-password');
    const { access_token } = await login(t.app, 'alice', PASSWORD);
    const res = await read(t, access_token, 'alice');
    expect(res.body.items.map((r: { result: string }) => r.result)).toEqual(['success', 'failure']);
  });

  it('when someone else’s records are asked, then 403 unless RBAC allows get users/loginrecords; 404 for nobody', async () => {
    const t = setup();
    await passwordLogin(t, 'bob', PASSWORD);
    const alice = await login(t.app, 'alice', PASSWORD);
    const forbidden = await read(t, alice.access_token, 'bob');
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ kind: 'Status', reason: 'Forbidden' });
    expect((await read(t, alice.access_token, 'nobody')).status).toBe(403);
    const auditor = await login(t.app, 'auditor', PASSWORD);
    const allowed = await read(t, auditor.access_token, 'bob');
    expect(allowed.status).toBe(200);
    expect(allowed.body.totalItems).toBe(1);
    expect((await read(t, auditor.access_token, 'nobody')).status).toBe(404);
    expect((await request(t.app).get(records('bob'))).status).toBe(401);
  });
});
