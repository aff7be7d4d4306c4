import request from 'supertest';
import jwt from 'jsonwebtoken';
import { BAD_REFRESH_TOKEN } from '../../src/auth/oauth/oauth-error.js';
import {
  client,
  login,
  refresh,
  testIdentity,
  tokenRequest,
  whoami,
  type TestIdentity,
  type Tokens,
} from './identity-app.js';

function withAliceIn(settings = {}): TestIdentity {
  const t = testIdentity({ settings });
  t.users.add('alice', { password: 'alice-pw', groups: ['dev'] });
  return t;
}

const withAlice = withAliceIn;
const sidOf = (token: string) => (jwt.decode(token) as { sid: string }).sid;

describe('refresh token rotation', () => {
  test('when the current refresh token is used, then a new pair comes back and the session is rotated', async () => {
    const t = withAlice();
    const first = await login(t.app, 'alice', 'alice-pw');
    t.clock.advance(60);
    const res = await refresh(t.app, first.refresh_token).expect(200);
    const second = res.body as Tokens;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.expires_in).toBe(7200);
    expect(sidOf(second.access_token)).toBe(sidOf(first.access_token));
    expect(res.headers['cache-control']).toBe('no-store');
    const session = t.sessions.sessions.get(sidOf(first.access_token));
    expect(session?.refreshTokenId).toBe((jwt.decode(second.refresh_token) as { jti: string }).jti);
    expect(session?.previousRefreshTokenId).toBe((jwt.decode(first.refresh_token) as { jti: string }).jti);
    await whoami(t.app, second.access_token).expect(200);
    await refresh(t.app, second.refresh_token).expect(200);
  });

  test('when a replaced refresh token is used after the grace, then invalid_grant and the whole session is revoked', async () => {
    const t = withAlice();
    const first = await login(t.app, 'alice', 'alice-pw');
    const second = (await refresh(t.app, first.refresh_token).expect(200)).body as Tokens;
    t.clock.advance(6);
    const reuse = await refresh(t.app, first.refresh_token).expect(400);
    expect(reuse.body).toEqual({ error: 'invalid_grant', error_description: BAD_REFRESH_TOKEN });
    // the thief's replay ends the login for everyone holding its tokens: the new ones stop working too
    await whoami(t.app, second.access_token).expect(401);
    await refresh(t.app, second.refresh_token).expect(400);
    expect(t.sessions.sessions.size).toBe(0);
    expect(t.lines.some((line) => line.includes('refresh token reused'))).toBe(true);
  });

  test('when the replaced refresh token is used again within the grace, then the same current refresh token comes back', async () => {
    const t = withAlice();
    const first = await login(t.app, 'alice', 'alice-pw');
    const a = (await refresh(t.app, first.refresh_token).expect(200)).body as Tokens;
    t.clock.advance(3);
    const b = (await refresh(t.app, first.refresh_token).expect(200)).body as Tokens;
    expect(b.refresh_token).toBe(a.refresh_token);
    await whoami(t.app, b.access_token).expect(200);
    // and the session still rotates normally afterwards
    await refresh(t.app, a.refresh_token).expect(200);
  });

  test('when two refreshes with one token race (both read the session first), then both succeed with the same refresh token', async () => {
    const t = withAlice();
    const first = await login(t.app, 'alice', 'alice-pw');
    // hold both updates until both requests have read the session: the second write then conflicts
    let arrived = 0;
    let release!: () => void;
    const bothArrived = new Promise<void>((resolve) => (release = resolve));
    t.sessions.beforeReplace = async () => {
      if (++arrived === 2) release();
      await Promise.race([bothArrived, new Promise((resolve) => setTimeout(resolve, 2000))]);
    };
    const [r1, r2] = await Promise.all([refresh(t.app, first.refresh_token), refresh(t.app, first.refresh_token)]);
    expect(arrived).toBe(2);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(r1.body.refresh_token).toBe(r2.body.refresh_token);
    await whoami(t.app, r1.body.access_token).expect(200);
    await whoami(t.app, r2.body.access_token).expect(200);
  });

  test('when the refresh token was issued to another client, then invalid_grant', async () => {
    const t = withAlice();
    t.settings.current = {
      ...t.settings.current,
      clients: [
        ...t.settings.current.clients,
        {
          name: 'other',
          secret: 'other-secret',
          public: false,
          grantTypes: ['password', 'refresh_token'],
          redirectURIs: [],
        },
      ],
    };
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const res = await tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: 'other',
      client_secret: 'other-secret',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('when the user was disabled, then refresh is invalid_grant', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    t.users.setState('alice', 'Disabled');
    await refresh(t.app, tokens.refresh_token).expect(400);
  });

  test('when the access lifetime is longer than what is left of the session, then the access token ends with the session', async () => {
    const t = withAlice({ accessTokenMaxAgeSeconds: 7200, refreshTokenMaxAgeSeconds: 3600 });
    const tokens = await login(t.app, 'alice', 'alice-pw');
    expect(tokens.expires_in).toBe(3600);
  });
});

describe('logout and revocation', () => {
  test('when the user logs out with the access token, then that token is refused on the next request, and so is the refresh token', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const res = await request(t.app)
      .post('/oauth/logout')
      .set('Authorization', `Bearer ${tokens.access_token}`)
      .expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    await whoami(t.app, tokens.access_token).expect(401);
    await refresh(t.app, tokens.refresh_token).expect(400);
  });

  test('when logout comes as GET, then it works too', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    await request(t.app).get('/oauth/logout').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    await whoami(t.app, tokens.access_token).expect(401);
  });

  test('when logout has no valid access token, then 401 invalid_token as RFC 6750 JSON', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    for (const authorization of [undefined, `Bearer ${tokens.refresh_token}`, 'Bearer nonsense']) {
      const req = request(t.app).post('/oauth/logout');
      const res = await (authorization ? req.set('Authorization', authorization) : req);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    await whoami(t.app, tokens.access_token).expect(200);
  });

  test('when a client revokes a refresh token (RFC 7009), then the session ends', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const res = await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send(new URLSearchParams({ token: tokens.refresh_token, ...client }).toString());
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    await whoami(t.app, tokens.access_token).expect(401);
  });

  test('when an unknown or invalid token is revoked, then still 200', async () => {
    const t = withAlice();
    await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send(new URLSearchParams({ token: 'not-a-token', ...client }).toString())
      .expect(200);
  });

  test('when revoke has no client authentication, then 401 invalid_client and nothing is revoked', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const res = await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send(new URLSearchParams({ token: tokens.refresh_token }).toString());
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    await whoami(t.app, tokens.access_token).expect(200);
  });

  test('when a client revokes a token issued to another client, then it is refused and nothing is revoked', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const res = await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send(
        new URLSearchParams({
          token: tokens.refresh_token,
          client_id: 'cli',
          client_secret: 'cli secret+/&=',
        }).toString(),
      );
    expect(res.status).toBe(400);
    await whoami(t.app, tokens.access_token).expect(200);
  });

  test('when revoke has no token parameter, then 400 invalid_request', async () => {
    const t = withAlice();
    const res = await request(t.app).post('/oauth/revoke').type('form').send(new URLSearchParams(client).toString());
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });
});

// Both ways a request's session and user are checked: from memory at once (the watched caches hold them), and
// asked of the stores (a session created a moment ago on another replica).
describe.each([
  ['from memory', false],
  ['asked of the stores', true],
])('sessions and users checked on every request (%s)', (_how, askedOnly) => {
  const withAlice = (settings = {}): TestIdentity => {
    const t = withAliceIn(settings);
    t.sessions.askedOnly = askedOnly;
    return t;
  };

  test("when the user's groups change, then the very next request carries the new ones, and the same ones until then", async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const first = (await whoami(t.app, tokens.access_token).expect(200)).body;
    expect((await whoami(t.app, tokens.access_token).expect(200)).body.groups).toEqual(first.groups);
    expect(first.groups).toEqual(['dev', 'system:authenticated']);
    const user = t.users.users.get('alice')!;
    t.users.users.set('alice', { ...user, groups: ['ops'], resourceVersion: '999' });
    expect((await whoami(t.app, tokens.access_token).expect(200)).body.groups).toEqual(['ops', 'system:authenticated']);
  });

  test("when multipleLogin is false, then a new login ends the user's other session", async () => {
    const t = withAlice({ multipleLogin: false });
    const first = await login(t.app, 'alice', 'alice-pw');
    const second = await login(t.app, 'alice', 'alice-pw');
    await whoami(t.app, first.access_token).expect(401);
    await refresh(t.app, first.refresh_token).expect(400);
    await whoami(t.app, second.access_token).expect(200);
  });

  test('when multipleLogin is true, then both sessions stay', async () => {
    const t = withAlice({ multipleLogin: true });
    const first = await login(t.app, 'alice', 'alice-pw');
    await login(t.app, 'alice', 'alice-pw');
    await whoami(t.app, first.access_token).expect(200);
  });

  test('when the user is disabled, then the very next request is 401', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    await whoami(t.app, tokens.access_token).expect(200);
    t.users.setState('alice', 'Disabled');
    await whoami(t.app, tokens.access_token).expect(401);
  });

  test('when the user is deleted, then the very next request is 401', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    t.users.users.delete('alice');
    await whoami(t.app, tokens.access_token).expect(401);
  });

  test('when the user is deleted and created again under the same name, then the old login does not carry over', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    const user = t.users.users.get('alice')!;
    t.users.users.set('alice', { ...user, uid: 'a-new-uid', resourceVersion: '999' });
    await whoami(t.app, tokens.access_token).expect(401);
    await refresh(t.app, tokens.refresh_token).expect(400);
  });

  test('when the session object is deleted (kubectl delete loginsession), then the token stops working', async () => {
    const t = withAlice();
    const tokens = await login(t.app, 'alice', 'alice-pw');
    t.sessions.sessions.clear();
    await whoami(t.app, tokens.access_token).expect(401);
  });

  test('when two instances share the stores (two replicas), then a token from one works on the other and logout on one holds on both', async () => {
    const one = withAlice();
    const two = testIdentity({ users: one.users, sessions: one.sessions, clock: one.clock });
    const tokens = await login(one.app, 'alice', 'alice-pw');
    await whoami(two.app, tokens.access_token).expect(200);
    await request(two.app).post('/oauth/logout').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    await whoami(one.app, tokens.access_token).expect(401);
  });
});
