import request from 'supertest';
import jwt from 'jsonwebtoken';
import { BAD_CREDENTIALS, BAD_REFRESH_TOKEN } from '../../../src/auth/oauth/oauth-error.js';
import { hmacKeySet } from '../../../src/auth/tokens/key-set.js';
import { buildClaims, signToken } from '../../../src/auth/tokens/tokens.js';
import { decodeJwt } from 'jose';
import { staticKey } from '../fakes.js';
import { client, login, refresh, testIdentity, tokenRequest, whoami, type TestIdentity } from '../identity-app.js';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

function withAlice(): TestIdentity {
  const t = testIdentity();
  t.users.add('alice', { password: 'alice-pw', email: 'Alice@Example.com', groups: ['dev'] });
  return t;
}

/** Every /oauth answer, success or error, must forbid caching. */
function expectNoStore(res: request.Response): void {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}

function expectOAuthError(res: request.Response, status: number, error: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error, error_description: expect.any(String) });
  expect(res.body.kind).toBeUndefined();
  expectNoStore(res);
}

describe('POST /oauth/token, password grant', () => {
  test('when name, password and client are right, then 200 with a Bearer pair, expires_in 7200 and no-store', async () => {
    const { app } = withAlice();
    const res = await tokenRequest(app, { grant_type: 'password', username: 'alice', password: 'alice-pw', ...client });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      refresh_token: expect.any(String),
      expires_in: 7200,
    });
    expectNoStore(res);
    const claims = jwt.decode(res.body.access_token) as Record<string, unknown>;
    expect(claims).toMatchObject({
      iss: 'kapi',
      aud: 'kapi',
      sub: 'alice',
      username: 'alice',
      client_id: 'kapi',
      token_type: 'access_token',
    });
    expect(claims.exp).toBe((claims.iat as number) + 7200);
    expect(claims.sid).toMatch(/^[0-9a-f]{32}$/);
    expect((jwt.decode(res.body.refresh_token) as Record<string, unknown>).token_type).toBe('refresh_token');
  });

  test('when the username is the e-mail address in another case, then it logs in as the user', async () => {
    const { app } = withAlice();
    const tokens = await login(app, 'alice@example.COM', 'alice-pw');
    await whoami(app, tokens.access_token)
      .expect(200)
      .expect((res) => expect(res.body.username).toBe('alice'));
  });

  test('when the client authenticates with HTTP Basic, then it works the same', async () => {
    const { app } = withAlice();
    const res = await request(app)
      .post('/oauth/token')
      .set('Authorization', basic('kapi', 'kapi-secret'))
      .type('form')
      .send('grant_type=password&username=alice&password=alice-pw');
    expect(res.status).toBe(200);
  });

  test('when the Basic secret needs form-encoding, then the encoded form is accepted', async () => {
    const { app } = withAlice();
    const res = await request(app)
      .post('/oauth/token')
      .set('Authorization', basic('cli', encodeURIComponent('cli secret+/&=')))
      .type('form')
      .send('grant_type=password&username=alice&password=alice-pw');
    expect(res.status).toBe(200);
  });

  test('when the settings change, then the next token follows them (expires_in)', async () => {
    const t = withAlice();
    t.settings.current = { ...t.settings.current, accessTokenMaxAgeSeconds: 900 };
    expect((await login(t.app, 'alice', 'alice-pw')).expires_in).toBe(900);
  });

  test('when the access token is presented, then the request is authenticated with groups and system:authenticated', async () => {
    const { app } = withAlice();
    const tokens = await login(app, 'alice', 'alice-pw');
    const res = await whoami(app, tokens.access_token).expect(200);
    expect(res.body).toEqual({
      username: 'alice',
      uid: 'uid-alice',
      groups: ['dev', 'system:authenticated'],
      sessionId: expect.any(String),
      checkedAt: expect.any(Number),
    });
  });
});

describe('POST /oauth/token, the error table (RFC 6749 §5.2)', () => {
  const pw = { grant_type: 'password', username: 'alice', password: 'alice-pw' };
  const rows: Array<{
    name: string;
    send: (t: TestIdentity) => request.Test;
    status: number;
    error: string;
    headers?: Record<string, string | undefined>;
  }> = [
    {
      name: 'when grant_type is missing, then 400 invalid_request',
      send: (t) => tokenRequest(t.app, { username: 'alice', password: 'alice-pw', ...client }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'when the password is missing, then 400 invalid_request',
      send: (t) => tokenRequest(t.app, { grant_type: 'password', username: 'alice', ...client }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'when the username is missing, then 400 invalid_request',
      send: (t) => tokenRequest(t.app, { grant_type: 'password', password: 'x', ...client }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'when refresh_token is missing from a refresh grant, then 400 invalid_request',
      send: (t) => tokenRequest(t.app, { grant_type: 'refresh_token', ...client }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'when a parameter is repeated, then 400 invalid_request',
      send: (t) =>
        request(t.app)
          .post('/oauth/token')
          .type('form')
          .send('grant_type=password&username=alice&username=bob&password=x&client_id=kapi&client_secret=kapi-secret'),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'when the body is not valid form encoding, then 400 invalid_request',
      send: (t) => request(t.app).post('/oauth/token').type('form').send('grant_type=password&password=%zz'),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'when the client is unknown (body), then 401 invalid_client without a challenge',
      send: (t) => tokenRequest(t.app, { ...pw, client_id: 'ghost', client_secret: 'kapi-secret' }),
      status: 401,
      error: 'invalid_client',
      headers: { 'www-authenticate': undefined },
    },
    {
      name: 'when the client secret is wrong (body), then 401 invalid_client',
      send: (t) => tokenRequest(t.app, { ...pw, client_id: 'kapi', client_secret: 'nope' }),
      status: 401,
      error: 'invalid_client',
      headers: { 'www-authenticate': undefined },
    },
    {
      name: 'when the client secret is wrong (Basic), then 401 invalid_client with WWW-Authenticate: Basic',
      send: (t) =>
        request(t.app)
          .post('/oauth/token')
          .set('Authorization', basic('kapi', 'nope'))
          .type('form')
          .send(new URLSearchParams(pw).toString()),
      status: 401,
      error: 'invalid_client',
      headers: { 'www-authenticate': 'Basic realm="kapi"' },
    },
    {
      name: 'when the client is unknown (Basic), then 401 invalid_client with WWW-Authenticate: Basic',
      send: (t) =>
        request(t.app)
          .post('/oauth/token')
          .set('Authorization', basic('ghost', 'x'))
          .type('form')
          .send(new URLSearchParams(pw).toString()),
      status: 401,
      error: 'invalid_client',
      headers: { 'www-authenticate': 'Basic realm="kapi"' },
    },
    {
      name: 'when no client authentication is sent, then 401 invalid_client',
      send: (t) => tokenRequest(t.app, pw),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'when both Basic and body credentials are sent, then 400 invalid_request',
      send: (t) =>
        request(t.app)
          .post('/oauth/token')
          .set('Authorization', basic('kapi', 'kapi-secret'))
          .type('form')
          .send(new URLSearchParams({ ...pw, ...client }).toString()),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'when the client may not use the grant, then 400 unauthorized_client',
      send: (t) =>
        tokenRequest(t.app, {
          grant_type: 'refresh_token',
          refresh_token: 'x',
          client_id: 'cli',
          client_secret: 'cli secret+/&=',
        }),
      status: 400,
      error: 'unauthorized_client',
    },
    {
      name: 'when the grant type is unknown, then 400 unsupported_grant_type',
      send: (t) => tokenRequest(t.app, { grant_type: 'client_credentials', ...client }),
      status: 400,
      error: 'unsupported_grant_type',
    },
    {
      name: 'when the password is wrong, then 400 invalid_grant',
      send: (t) => tokenRequest(t.app, { ...pw, password: 'wrong', ...client }),
      status: 400,
      error: 'invalid_grant',
    },
    {
      name: 'when the user is unknown, then 400 invalid_grant',
      send: (t) => tokenRequest(t.app, { ...pw, username: 'mallory', ...client }),
      status: 400,
      error: 'invalid_grant',
    },
    {
      name: 'when the user is disabled (right password), then 400 invalid_grant',
      send: (t) => {
        t.users.setState('alice', 'Disabled');
        return tokenRequest(t.app, { ...pw, ...client });
      },
      status: 400,
      error: 'invalid_grant',
    },
    {
      name: 'when the refresh token is garbage, then 400 invalid_grant',
      send: (t) => refresh(t.app, 'garbage'),
      status: 400,
      error: 'invalid_grant',
    },
    {
      name: 'when an access token is sent as the refresh token, then 400 invalid_grant',
      send: (t) => {
        const access = signToken(
          buildClaims(
            'access_token',
            { username: 'alice', clientId: 'kapi', sessionId: 'f'.repeat(32) },
            { id: 'j', issuedAt: t.clock.now / 1000, expiresAt: t.clock.now / 1000 + 60 },
          ),
          hmacKeySet(Buffer.alloc(32, 7)).active,
        );
        return refresh(t.app, access);
      },
      status: 400,
      error: 'invalid_grant',
    },
  ];

  test.each(rows)('$name', async ({ send, status, error, headers }) => {
    const t = withAlice();
    const res = await send(t);
    expectOAuthError(res, status, error);
    for (const [name, value] of Object.entries(headers ?? {})) expect(res.headers[name]).toBe(value);
  });

  test('when the password is wrong, the user unknown or disabled, then the answers are identical', async () => {
    const t = withAlice();
    t.users.add('dora', { password: 'dora-pw', state: 'Disabled' });
    const bodies = await Promise.all([
      tokenRequest(t.app, { ...pw, password: 'wrong', ...client }, '198.51.100.1'),
      tokenRequest(t.app, { ...pw, username: 'nobody', ...client }, '198.51.100.2'),
      tokenRequest(t.app, { ...pw, username: 'dora', password: 'dora-pw', ...client }, '198.51.100.3'),
    ]);
    for (const res of bodies) expect(res.body).toEqual({ error: 'invalid_grant', error_description: BAD_CREDENTIALS });
  });

  test('when a refresh token expired, then 400 invalid_grant with the refresh description', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    t.clock.advance(14_400 + 11);
    const res = await refresh(t.app, tokens.refresh_token);
    expectOAuthError(res, 400, 'invalid_grant');
    expect(res.body.error_description).toBe(BAD_REFRESH_TOKEN);
  });
});

describe('POST /oauth/token, the request itself', () => {
  test('when the body is JSON, then 415 as RFC 6749 JSON with no-store', async () => {
    const { app } = withAlice();
    const res = await request(app)
      .post('/oauth/token')
      .send({ grant_type: 'password', username: 'alice', password: 'alice-pw', ...client });
    expectOAuthError(res, 415, 'invalid_request');
  });

  test('when there is no Content-Type, then 415', async () => {
    const { app } = withAlice();
    const res = await request(app).post('/oauth/token');
    expectOAuthError(res, 415, 'invalid_request');
  });

  test('when the body is larger than 16 KiB, then 413 as RFC 6749 JSON', async () => {
    const { app } = withAlice();
    const res = await request(app)
      .post('/oauth/token')
      .type('form')
      .send(`grant_type=password&padding=${'a'.repeat(16 * 1024)}`);
    expectOAuthError(res, 413, 'invalid_request');
  });

  test('when a body of just under 16 KiB is sent, then it is read', async () => {
    const { app } = withAlice();
    const form = new URLSearchParams({
      grant_type: 'password',
      username: 'alice',
      password: 'alice-pw',
      ...client,
    }).toString();
    const res = await request(app)
      .post('/oauth/token')
      .type('form')
      .send(`${form}&padding=${'a'.repeat(16 * 1024 - form.length - 20)}`);
    expect(res.status).toBe(200);
  });

  test('when the parameters come in the query string, then they are ignored', async () => {
    const { app } = withAlice();
    const query = new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'alice-pw' }).toString();
    const res = await request(app)
      .post(`/oauth/token?${query}`)
      .type('form')
      .send(new URLSearchParams(client).toString());
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toBe('missing parameter "grant_type"');
    // client credentials in the query are not read either
    const noClient = await request(app)
      .post(`/oauth/token?${query}&client_id=kapi&client_secret=kapi-secret`)
      .type('form')
      .send('');
    expectOAuthError(noClient, 401, 'invalid_client');
  });

  test('when the query string repeats a body parameter, then the body alone counts (no repeat error)', async () => {
    const { app } = withAlice();
    const body = new URLSearchParams({
      grant_type: 'password',
      username: 'alice',
      password: 'alice-pw',
      ...client,
    }).toString();
    const res = await request(app).post('/oauth/token?username=mallory&password=x').type('form').send(body);
    expect(res.status).toBe(200);
  });

  test('when GET is used, then 405 with Allow and no-store, as RFC 6749 JSON', async () => {
    const { app } = withAlice();
    const res = await request(app).get('/oauth/token?grant_type=password');
    expectOAuthError(res, 405, 'invalid_request');
    expect(res.headers.allow).toBe('POST');
  });

  test('when an unknown /oauth path is asked, then 404 as RFC 6749 JSON, not a Kubernetes Status', async () => {
    const { app } = withAlice();
    expectOAuthError(await request(app).post('/oauth/authorization'), 404, 'invalid_request');
  });

  test('when the signing key is not loaded yet, then 503 temporarily_unavailable', async () => {
    const t = testIdentity({ keys: { keys: () => undefined } });
    t.users.add('alice', { password: 'alice-pw' });
    const res = await tokenRequest(t.app, {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-pw',
      ...client,
    });
    expectOAuthError(res, 503, 'temporarily_unavailable');
  });

  test('when the cluster cannot be reached, then 503 temporarily_unavailable, logged, never a 500', async () => {
    const t = testIdentity({
      wrapUsers: (users) => ({
        ...users,
        find: () => Promise.reject(new Error('connect ECONNREFUSED')),
        get: users.get,
        updateStatus: users.updateStatus,
      }),
    });
    const res = await tokenRequest(t.app, { grant_type: 'password', username: 'alice', password: 'x', ...client });
    expectOAuthError(res, 503, 'temporarily_unavailable');
    expect(t.lines.some((line) => line.includes('ECONNREFUSED'))).toBe(true);
  });
});

describe('when the cluster writes hang (an etcd outage)', () => {
  test('then a good login does not wait for its status bookkeeping before the session is written: the two run side by side', async () => {
    const order: string[] = [];
    let releaseStatus!: () => void;
    const statusHeld = new Promise<void>((resolve) => (releaseStatus = resolve));
    const t = testIdentity({
      wrapUsers: (users) =>
        Object.assign(Object.create(users), {
          updateStatus: async (...args: Parameters<typeof users.updateStatus>) => {
            order.push('status write started');
            await statusHeld;
            await users.updateStatus(...args);
            order.push('status written');
          },
        }),
      wrapSessions: (sessions) =>
        Object.assign(Object.create(sessions), {
          create: async (...args: Parameters<typeof sessions.create>) => {
            order.push('session create started');
            return sessions.create(...args);
          },
        }),
    });
    t.users.add('alice', { password: 'alice-pw' });
    const tokens = await login(t.app, 'alice', 'alice-pw');
    expect(tokens.access_token).toBeDefined();
    expect(order).toEqual(['status write started', 'session create started']);
    releaseStatus();
    await until(() => order.includes('status written'));
  });
});

describe('bearer authentication', () => {
  test('when no token is sent, then 401 Status', async () => {
    const { app } = withAlice();
    const res = await request(app).get('/whoami').expect(401);
    expect(res.body).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
  });

  test('when the refresh token is used as a bearer token, then 401 Status (a known fault of the reference)', async () => {
    const { app } = withAlice();
    const tokens = await login(app, 'alice', 'alice-pw');
    const res = await whoami(app, tokens.refresh_token).expect(401);
    expect(res.body).toMatchObject({ kind: 'Status', code: 401 });
  });

  test('when the access token expired (beyond 10 s), then 401', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    t.clock.advance(7200 + 5);
    await whoami(t.app, tokens.access_token).expect(200);
    t.clock.advance(10);
    await whoami(t.app, tokens.access_token).expect(401);
  });

  test('when a token is signed with another key, then 401', async () => {
    const t = withAlice();
    const forged = signToken(
      buildClaims(
        'access_token',
        { username: 'alice', clientId: 'kapi', sessionId: 'a'.repeat(32) },
        { id: 'x', issuedAt: t.clock.now / 1000, expiresAt: t.clock.now / 1000 + 60 },
      ),
      hmacKeySet(Buffer.alloc(32, 1)).active,
    );
    await whoami(t.app, forged).expect(401);
  });

  test.each([
    ['issued in the future', (now: number) => ({ issuedAt: now + 3600, expiresAt: now + 3700 })],
    [
      'valid for far longer than access tokens are configured to be',
      (now: number) => ({ issuedAt: now, expiresAt: now + 30 * 86400 }),
    ],
  ])('when an access token signed with kapi’s key is %s, then 401', async (_case, times) => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const { sid, jti } = decodeJwt(tokens.access_token) as { sid: string; jti: string };
    const now = t.clock.now / 1000;
    const claims = buildClaims(
      'access_token',
      { username: 'alice', clientId: 'kapi', sessionId: sid },
      { id: jti, ...times(now) },
    );
    await whoami(t.app, signToken(claims, staticKey().keys()!.active)).expect(401);
    // the same claims with kapi's own times are accepted: the times alone are refused
    const fair = buildClaims(
      'access_token',
      { username: 'alice', clientId: 'kapi', sessionId: sid },
      { id: jti, issuedAt: now, expiresAt: now + 60 },
    );
    await whoami(t.app, signToken(fair, staticKey().keys()!.active)).expect(200);
  });

  test('when a refresh token signed with kapi’s key is valid for far longer than refresh tokens may be, then invalid_grant', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const { sid, jti } = decodeJwt(tokens.refresh_token) as { sid: string; jti: string };
    const now = t.clock.now / 1000;
    const claims = buildClaims(
      'refresh_token',
      { username: 'alice', clientId: 'kapi', sessionId: sid },
      { id: jti, issuedAt: now, expiresAt: now + 365 * 86400 },
    );
    const res = await refresh(t.app, signToken(claims, staticKey().keys()!.active));
    expectOAuthError(res, 400, 'invalid_grant');
    expect(t.lines.some((line) => line.includes('valid for longer than its kind may be'))).toBe(true);
  });

  test('when the session store cannot be reached, then 503 Status, not 401 and not a pass', async () => {
    const t = testIdentity({
      wrapSessions: (sessions) =>
        // nothing in memory, and asking fails
        Object.assign(Object.create(sessions), {
          find: () => Promise.reject(new Error('timeout')),
          known: () => undefined,
        }),
    });
    t.users.add('alice', { password: 'alice-pw' });
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const res = await whoami(t.app, tokens.access_token).expect(503);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable' });
  });

  test('when the user may not list nodes, then the node listing is 403 in kube-apiserver words', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const res = await request(t.app)
      .get('/kapis/resources.kapi.io/v1alpha3/nodes')
      .set('Authorization', `Bearer ${tokens.access_token}`)
      .expect(403);
    expect(res.body.message).toBe(
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    );
  });

  test('when the user is in a group allowed to list nodes, then the listing runs', async () => {
    const t = testIdentity();
    t.users.add('nora', { password: 'nora-pw', groups: ['node-readers'] });
    const tokens = await login(t.app, 'nora', 'nora-pw');
    await request(t.app)
      .get('/kapis/resources.kapi.io/v1alpha3/nodes')
      .set('Authorization', `Bearer ${tokens.access_token}`)
      .expect(200);
  });
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
