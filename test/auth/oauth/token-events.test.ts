import request from 'supertest';
import { client, login, refresh, testIdentity } from '../identity-app.js';

describe('token events (the refresh and revocation metrics)', () => {
  test('when tokens are refreshed, replayed, reused, logged out and revoked, then each is reported once', async () => {
    const refreshed: string[] = [];
    const revoked: string[] = [];
    const t = testIdentity({
      tokenEvents: { refreshed: (result) => refreshed.push(result), revoked: (via) => revoked.push(via) },
    });
    t.users.add('alice', { password: 'alice-pw' });

    const first = await login(t.app, 'alice', 'alice-pw');
    await refresh(t.app, first.refresh_token).expect(200);
    t.clock.advance(2);
    await refresh(t.app, first.refresh_token).expect(200); // within the grace: the same pair again
    t.clock.advance(10);
    await refresh(t.app, first.refresh_token).expect(400); // after it: a replayed token ends the session
    expect(refreshed).toEqual(['rotated', 'replayed', 'reused']);

    const second = await login(t.app, 'alice', 'alice-pw');
    await request(t.app).post('/oauth/logout').set('Authorization', `Bearer ${second.access_token}`).expect(200);
    const third = await login(t.app, 'alice', 'alice-pw');
    await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send(new URLSearchParams({ token: third.refresh_token, ...client }).toString())
      .expect(200);
    expect(revoked).toEqual(['refresh_reuse', 'logout', 'revoke']);
  });

  test('when logins end other sessions (single login, the session cap), then each ended session is reported', async () => {
    const revoked: string[] = [];
    const t = testIdentity({
      settings: { multipleLogin: true, maxSessionsPerUser: 2 },
      tokenEvents: { revoked: (via) => revoked.push(via) },
    });
    t.users.add('alice', { password: 'alice-pw' });
    for (let i = 0; i < 3; i++) await login(t.app, 'alice', 'alice-pw');
    expect(revoked).toEqual(['session_cap']);
    t.settings.current = { ...t.settings.current, multipleLogin: false };
    await login(t.app, 'alice', 'alice-pw');
    expect(revoked).toEqual(['session_cap', 'single_login', 'single_login']);
  });
});
