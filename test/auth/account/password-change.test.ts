/**
 * PUT /kapis/iam.kapi.io/v1beta1/users/{name}/password over the identity pipeline (in-memory stores): one's own
 * password with the current one, anyone's for an administrator, the policy, the other sessions ending, and every
 * refusal as a Kubernetes Status that never repeats a password.
 */
import request from 'supertest';
import { RecordingAuthorizer } from '../fakes.js';
import { login, testIdentity, tokenRequest, whoami } from '../identity-app.js';

const OLD = 'Old-Passw0rd-1';
const NEW = 'New-Passw0rd-2';
const ADMIN_PASSWORD = 'Admin-Passw0rd-3';
const path = (name: string) => `/kapis/iam.kapi.io/v1beta1/users/${name}/password`;

function setup() {
  const authorizer = new RecordingAuthorizer(
    (user, attributes) =>
      user.username === 'root' && attributes.resource === 'users' && attributes.subresource === 'password',
  );
  const t = testIdentity({ authorizer });
  t.users.add('alice', { password: OLD });
  t.users.add('root', { password: ADMIN_PASSWORD });
  t.users.add('dana', { link: { provider: 'corp', userId: 'uid=dana,dc=corp' } });
  return { ...t, authorizer };
}

function change(t: ReturnType<typeof setup>, token: string, name: string, body: unknown, ip = '192.0.2.7') {
  return request(t.app)
    .put(path(name))
    .set('Authorization', `Bearer ${token}`)
    .set('X-Forwarded-For', ip)
    .type('application/json')
    .send(typeof body === 'string' ? body : JSON.stringify(body));
}

function expectStatus(res: request.Response, code: number, reason: string): void {
  expect(res.status).toBe(code);
  expect(res.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
  for (const secret of [OLD, NEW, ADMIN_PASSWORD, 'short']) expect(res.text).not.toContain(secret);
}

describe('PUT users/{name}/password', () => {
  it('when users change their own password, then the other sessions end, theirs stays, and only the new password logs in', async () => {
    const t = setup();
    const mine = await login(t.app, 'alice', OLD);
    const other1 = await login(t.app, 'alice', OLD);
    const other2 = await login(t.app, 'alice', OLD);
    const res = await change(t, mine.access_token, 'alice', { currentPassword: OLD, password: NEW });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ endedSessions: 2 });
    expect((await whoami(t.app, mine.access_token)).status).toBe(200);
    for (const ended of [other1, other2]) expect((await whoami(t.app, ended.access_token)).status).toBe(401);
    await login(t.app, 'alice', NEW);
    const old = await tokenRequest(t.app, {
      grant_type: 'password',
      username: 'alice',
      password: OLD,
      client_id: 'kapi',
      client_secret: 'kapi-secret',
    });
    expect(old.status).toBe(400);
    expect(t.lines.join('\n')).not.toContain(NEW);
    expect(t.lines.join('\n')).toContain('"audit":"password"');
  });

  it('when the current password is missing or wrong, then 400 names currentPassword; repeated, 429 with Retry-After', async () => {
    const t = setup();
    const { access_token } = await login(t.app, 'alice', OLD);
    const missing = await change(t, access_token, 'alice', { password: NEW });
    expectStatus(missing, 400, 'BadRequest');
    expect(missing.body.message).toContain('currentPassword');
    for (let i = 1; i <= 3; i++) {
      const wrong = await change(
        t,
        access_token,
        'alice',
        { currentPassword: `Wrong-${i}-pw`, password: NEW },
        `10.1.0.${i}`,
      );
      expectStatus(wrong, 400, 'BadRequest');
      expect(wrong.body.details.causes[0].field).toBe('currentPassword');
    }
    const limited = await change(t, access_token, 'alice', { currentPassword: OLD, password: NEW }, '10.1.0.9');
    expectStatus(limited, 429, 'TooManyRequests');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it.each([
    ['too short', 'short', 'must be at least 8 characters (passwordPolicy.minLength)'],
    ['over 72 bytes', 'x'.repeat(73), 'must be at most 72 bytes'],
    ['the user name', 'ALICE', 'must be at least 8'],
    ['a control character', 'Tab\there-pw1', 'must not contain control characters'],
  ])('when the new password is %s, then 400 names the rule', async (_case, password, rule) => {
    const t = setup();
    const { access_token } = await login(t.app, 'alice', OLD);
    const res = await change(t, access_token, 'alice', { currentPassword: OLD, password });
    expectStatus(res, 400, 'BadRequest');
    expect(res.body.message).toContain(rule);
    expect(res.body.details.causes[0].field).toBe('password');
  });

  it('when the new password is the user name under a policy that allows its length, then 400 says so', async () => {
    const t = setup();
    t.settings.current = { ...t.settings.current, passwordPolicy: { minLength: 4 } };
    const { access_token } = await login(t.app, 'alice', OLD);
    const res = await change(t, access_token, 'alice', { currentPassword: OLD, password: 'Alice' });
    expectStatus(res, 400, 'BadRequest');
    expect(res.body.message).toContain('must not be the user name');
  });

  it('when an administrator sets another user’s password, then no current password is needed and all their sessions end', async () => {
    const t = setup();
    const alices = await login(t.app, 'alice', OLD);
    const admin = await login(t.app, 'root', ADMIN_PASSWORD);
    const res = await change(t, admin.access_token, 'alice', { password: NEW });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ endedSessions: 1 });
    expect((await whoami(t.app, alices.access_token)).status).toBe(401);
    expect(t.authorizer.asked.at(-1)?.attributes).toEqual({
      verb: 'update',
      group: 'iam.kapi.io',
      resource: 'users',
      subresource: 'password',
      name: 'alice',
    });
    await login(t.app, 'alice', NEW);
  });

  it('when a user who is no administrator asks for another user’s password, then 403, whether that user exists or not', async () => {
    const t = setup();
    const { access_token } = await login(t.app, 'alice', OLD);
    expectStatus(await change(t, access_token, 'root', { password: NEW }), 403, 'Forbidden');
    expectStatus(await change(t, access_token, 'nobody', { password: NEW }), 403, 'Forbidden');
    await login(t.app, 'root', ADMIN_PASSWORD);
  });

  it('when an administrator names a user who does not exist, then 404', async () => {
    const t = setup();
    const admin = await login(t.app, 'root', ADMIN_PASSWORD);
    expectStatus(await change(t, admin.access_token, 'nobody', { password: NEW }), 404, 'NotFound');
  });

  it('when the user’s password is kept by an identity provider, then 400 says where', async () => {
    const t = setup();
    const admin = await login(t.app, 'root', ADMIN_PASSWORD);
    const res = await change(t, admin.access_token, 'dana', { password: NEW });
    expectStatus(res, 400, 'BadRequest');
    expect(res.body.message).toContain('kept by identity provider "corp"');
  });

  it.each([
    ['not JSON', 'text/plain', 'password=x', 415, 'UnsupportedMediaType'],
    ['broken JSON', 'application/json', `{"password": "${NEW}"`, 400, 'BadRequest'],
    ['a list', 'application/json', '[]', 400, 'BadRequest'],
    ['a password that is no string', 'application/json', '{"password": 12345678}', 400, 'BadRequest'],
    ['over 16 KiB', 'application/json', JSON.stringify({ password: 'x'.repeat(17_000) }), 413, 'RequestEntityTooLarge'],
  ])('when the body is %s, then a %i Status that quotes nothing of it', async (_case, type, body, code, reason) => {
    const t = setup();
    const { access_token } = await login(t.app, 'alice', OLD);
    const res = await request(t.app)
      .put(path('alice'))
      .set('Authorization', `Bearer ${access_token}`)
      .type(type)
      .send(body);
    expectStatus(res, code, reason);
  });

  it('when there is no token, then 401; another method, 405', async () => {
    const t = setup();
    expectStatus(await request(t.app).put(path('alice')).type('application/json').send('{}'), 401, 'Unauthorized');
    const { access_token } = await login(t.app, 'alice', OLD);
    const post = await request(t.app).post(path('alice')).set('Authorization', `Bearer ${access_token}`);
    expectStatus(post, 405, 'MethodNotAllowed');
    expect(post.headers.allow).toBe('PUT');
  });
});
