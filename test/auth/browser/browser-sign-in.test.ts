/**
 * Sign-in from a browser over in-memory stores (the whole HTTP surface: /oauth/authorize, the login page, the code
 * grant, /oauth/userinfo), each security rule with its own case. Two identities built on the same stores behave as
 * two replicas of one cluster.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { BROWSER_SESSION_CLIENT } from '../../../src/auth/browser/browser-sessions.js';
import { keySetOf, privateKey, publicJwks } from '../../../src/auth/tokens/key-set.js';
import type { OAuthClient } from '../../../src/config/cluster-configuration.js';
import { TEST_SETTINGS, capturingLogger } from '../fakes.js';
import { FakeDirectory, fakeProviders, providerSettings } from '../providers/fake-directory.js';
import { client as kapiClient, login, testIdentity, tokenRequest, whoami, type TestIdentity } from '../identity-app.js';
import {
  CONSOLE,
  KUBECTL,
  TestBrowser,
  authorizeUrl,
  codeFor,
  consoleExchange,
  exchange,
  formFields,
  pkce,
  redirected,
  signIn,
} from './browser-client.js';

const CALLBACK = CONSOLE.redirectURIs[0]!;
const clients: OAuthClient[] = [
  ...TEST_SETTINGS.clients,
  { ...CONSOLE, grantTypes: [...CONSOLE.grantTypes], redirectURIs: [...CONSOLE.redirectURIs] },
  { ...KUBECTL, grantTypes: [...KUBECTL.grantTypes], redirectURIs: [...KUBECTL.redirectURIs] },
];

const ecPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' });
const ecKey = privateKey('es1', Buffer.from(ecPem));
if ('problem' in ecKey) throw new Error(ecKey.problem);
const ES256_KEYS = keySetOf([ecKey]);

function identity(options: Parameters<typeof testIdentity>[0] = {}): TestIdentity {
  const t = testIdentity({ keys: { keys: () => ES256_KEYS }, ...options, settings: { clients, ...options.settings } });
  if (!t.users.users.has('alice')) {
    t.users.add('alice', { password: 'alice-pw', email: 'alice@example.com', groups: ['dev', 'node-readers'] });
  }
  return t;
}

function auditLines(t: TestIdentity, audit: string): Record<string, unknown>[] {
  return t.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.audit === audit);
}

describe('a sign-in on kapi’s login page', () => {
  test('when a user signs in, then the client gets a code with its state and kapi’s iss, and the code gives working tokens and an ID token', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    const { verifier, challenge } = pkce();
    const answer = await signIn(browser, 'alice', 'alice-pw', {
      challenge,
      nonce: 'n-0S6_WzA2Mj',
      state: 'af0ifjsldkj',
    });
    const back = redirected(answer);
    expect(back.base).toBe(CALLBACK);
    expect(back.params.get('state')).toBe('af0ifjsldkj');
    expect(back.params.get('iss')).toBe('kapi');

    const tokens = await consoleExchange(t.app, back.params.get('code')!, verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.headers['cache-control']).toBe('no-store');
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'openid profile email groups' });
    await whoami(t.app, tokens.body.access_token).expect(200);

    const jwks = createLocalJWKSet(publicJwks(ES256_KEYS) as never);
    const { payload, protectedHeader } = await jwtVerify(tokens.body.id_token, jwks, {
      issuer: 'kapi',
      audience: 'console',
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'es1', typ: 'JWT' });
    const access = jwt.decode(tokens.body.access_token) as Record<string, unknown>;
    expect(payload).toMatchObject({
      sub: 'alice',
      azp: 'console',
      nonce: 'n-0S6_WzA2Mj',
      sid: access.sid,
      auth_time: expect.any(Number),
      at_hash: expect.any(String),
      preferred_username: 'alice',
      email: 'alice@example.com',
      groups: ['dev', 'node-readers'],
    });
    expect(access).toMatchObject({ client_id: 'console', scope: 'openid profile email groups' });
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
  });

  test('when a browser without a session asks, then it goes to the login page, a strict page that sets the binding cookie', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    const started = await browser.get(authorizeUrl({ challenge: pkce().challenge, extra: { login_hint: 'al<i>ce' } }));
    expect(started.status).toBe(303);
    expect(started.headers.location).toMatch(/^\/oauth\/login\?request=s1\./);
    const page = await browser.get(started.headers.location as string);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; /);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("form-action 'self' https://console.example.com");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['set-cookie']![0]).toMatch(
      /^kapi_login=[A-Za-z0-9_-]{43}; Path=\/oauth; HttpOnly; SameSite=Lax$/,
    );
    expect(page.text).toContain('to continue to <strong>console</strong>');
    expect(page.text).toContain('value="al&lt;i&gt;ce"');
  });

  test('when the browser signs in again for the client, then the code comes at once, without a password, and the audit says so', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    await codeFor(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    expect(browser.cookies.has('kapi_session')).toBe(true);
    const { verifier, challenge } = pkce();
    const again = redirected(await browser.get(authorizeUrl({ challenge, state: 's2' })));
    expect(again.base).toBe(CALLBACK);
    expect((await consoleExchange(t.app, again.params.get('code')!, verifier)).status).toBe(200);
    expect(auditLines(t, 'authorize').map((line) => line.via)).toEqual(['login_page', 'browser_session']);
    const browserSessions = [...t.sessions.sessions.values()].filter((s) => s.clientId === BROWSER_SESSION_CLIENT);
    expect(browserSessions).toHaveLength(1);
  });

  test('when the browser session is deleted (revoked) or its user disabled, then the next request goes to the login page', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    await codeFor(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    const [browserSession] = [...t.sessions.sessions.values()].filter((s) => s.clientId === BROWSER_SESSION_CLIENT);
    await t.sessions.delete(browserSession!.id);
    const afterDelete = await browser.get(authorizeUrl({ challenge: pkce().challenge }));
    expect(afterDelete.headers.location).toMatch(/^\/oauth\/login\?/);
    expect(browser.cookies.has('kapi_session')).toBe(false);

    await codeFor(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    t.users.setState('alice', 'Disabled');
    const afterDisable = await browser.get(authorizeUrl({ challenge: pkce().challenge }));
    expect(afterDisable.headers.location).toMatch(/^\/oauth\/login\?/);
  });

  test('when a signed-in browser asks with prompt=login, or with a max_age its sign-in exceeds, then the login page is shown', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    await codeFor(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    const forced = await browser.get(authorizeUrl({ challenge: pkce().challenge, extra: { prompt: 'login' } }));
    expect(forced.headers.location).toMatch(/^\/oauth\/login\?/);
    t.clock.advance(5);
    const old = await browser.get(authorizeUrl({ challenge: pkce().challenge, extra: { max_age: '4' } }));
    expect(old.headers.location).toMatch(/^\/oauth\/login\?/);
    const fresh = await browser.get(authorizeUrl({ challenge: pkce().challenge, extra: { max_age: '60' } }));
    expect(redirected(fresh).params.get('code')).toBeTruthy();
  });

  test('when a browser signed in this very second asks with max_age=0, then the login page is shown all the same', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    await codeFor(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    // no time passes: max_age=0 means a sign-in now, whatever the session's age in whole seconds
    const again = await browser.get(authorizeUrl({ challenge: pkce().challenge, extra: { max_age: '0' } }));
    expect(again.headers.location).toMatch(/^\/oauth\/login\?/);
  });

  test('when prompt=none comes from a browser without a session, then the client gets login_required, never a page', async () => {
    const t = identity();
    const back = redirected(
      await new TestBrowser(t.app).get(authorizeUrl({ challenge: pkce().challenge, extra: { prompt: 'none' } })),
    );
    expect(back.base).toBe(CALLBACK);
    expect(Object.fromEntries(back.params)).toMatchObject({ error: 'login_required', state: 'st-123', iss: 'kapi' });
  });

  test('when the password is wrong, then the page says so in place, keeps the user name, and audits it as a password login', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    const answer = await signIn(browser, 'alice', 'wrong-pw', { challenge: pkce().challenge });
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.text).toContain('Wrong user name or password.');
    expect(answer.text).toMatch(/id="username"[^>]*value="alice"/);
    expect(answer.text).not.toContain('wrong-pw');
    const [line] = auditLines(t, 'login');
    expect(line).toMatchObject({
      grant: 'password',
      via: 'login_page',
      user: 'alice',
      client: 'console',
      sourceIp: '192.0.2.50',
      result: 'failure',
      reason: 'wrong password',
    });
    expect(t.lines.join('\n')).not.toContain('wrong-pw');
    expect(t.users.users.get('alice')!.failedLogins).toHaveLength(1);
  });

  test('when failures at the token endpoint and on the login page reach the limit, then both are refused: one limiter', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app, '192.0.2.70');
    for (let i = 0; i < 2; i++) {
      const res = await tokenRequest(
        t.app,
        { grant_type: 'password', username: 'alice', password: 'x', ...kapiClient },
        '192.0.2.71',
      );
      expect(res.status).toBe(400);
    }
    expect((await signIn(browser, 'alice', 'x', { challenge: pkce().challenge })).status).toBe(400);
    const limited = await signIn(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many failed sign-ins.');
    const refused = await tokenRequest(
      t.app,
      { grant_type: 'password', username: 'alice', password: 'alice-pw', ...kapiClient },
      '192.0.2.72',
    );
    expect(refused.status).toBe(429);
    expect(auditLines(t, 'login').at(-2)).toMatchObject({ via: 'login_page', result: 'limited' });
  });

  test('when the user cancels, then the client gets access_denied with its state', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    const page = await browser.get(
      (await browser.get(authorizeUrl({ challenge: pkce().challenge }))).headers.location as string,
    );
    const back = redirected(await browser.post('/oauth/login', { ...formFields(page.text), action: 'cancel' }));
    expect(Object.fromEntries(back.params)).toMatchObject({ error: 'access_denied', state: 'st-123', iss: 'kapi' });
  });

  describe('CSRF protection of the form', () => {
    async function loginForm(t: TestIdentity, browser: TestBrowser) {
      const started = await browser.get(authorizeUrl({ challenge: pkce().challenge }));
      return formFields((await browser.get(started.headers.location as string)).text);
    }

    test.each([
      ['without the form token', (f: { request: string; csrf: string }) => ({ request: f.request })],
      [
        'with a forged form token',
        (f: { request: string }) => ({ request: f.request, csrf: 's1.key.AAAAAAAAAAAAAAAA.AAAA' }),
      ],
    ])('when the form is posted %s, then 403 and nobody signs in', async (_case, alter) => {
      const t = identity();
      const browser = new TestBrowser(t.app);
      const fields = await loginForm(t, browser);
      const res = await browser.post('/oauth/login', { ...alter(fields), username: 'alice', password: 'alice-pw' });
      expect(res.status).toBe(403);
      expect(res.headers.location).toBeUndefined();
      expect(t.sessions.sessions.size).toBe(0);
    });

    test('when another browser posts the form of this one (a login CSRF), then 403', async () => {
      const t = identity();
      const attacker = new TestBrowser(t.app);
      const fields = await loginForm(t, attacker);
      const victim = new TestBrowser(t.app);
      await victim.get(`/oauth/login?request=${encodeURIComponent(fields.request)}`); // the victim has its own binding
      const res = await victim.post('/oauth/login', { ...fields, username: 'alice', password: 'alice-pw' });
      expect(res.status).toBe(403);
    });

    test('when the browser sends no cookie, then 403 says cookies are needed', async () => {
      const t = identity();
      const browser = new TestBrowser(t.app);
      const fields = await loginForm(t, browser);
      browser.cookies.clear();
      const res = await browser.post('/oauth/login', { ...fields, username: 'alice', password: 'alice-pw' });
      expect(res.status).toBe(403);
      expect(res.text).toContain('allow them');
    });

    test('when the browser says the post comes from another site, then 403', async () => {
      const t = identity();
      const browser = new TestBrowser(t.app);
      const fields = await loginForm(t, browser);
      const res = await browser.post(
        '/oauth/login',
        { ...fields, username: 'alice', password: 'alice-pw' },
        { 'Sec-Fetch-Site': 'cross-site' },
      );
      expect(res.status).toBe(403);
    });
  });

  test('when the sign-in request is older than 15 minutes, then the page says it expired', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    const started = await browser.get(authorizeUrl({ challenge: pkce().challenge }));
    t.clock.advance(15 * 60);
    const page = await browser.get(started.headers.location as string);
    expect(page.status).toBe(400);
    expect(page.text).toContain('This sign-in has expired');
  });

  test('when the login page is opened without a request, or with a forged one, then 400 on the page', async () => {
    const t = identity();
    for (const url of ['/oauth/login', '/oauth/login?request=s1.key.AAAA.BBBB']) {
      const res = await new TestBrowser(t.app).get(url);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  });

  test('when the client is removed while the user is on the login page, then the sign-in stops there', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    const started = await browser.get(authorizeUrl({ challenge: pkce().challenge }));
    const fields = formFields((await browser.get(started.headers.location as string)).text);
    t.settings.current = { ...t.settings.current, clients: TEST_SETTINGS.clients };
    const res = await browser.post('/oauth/login', { ...fields, username: 'alice', password: 'alice-pw' });
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});

describe('a directory user on the login page', () => {
  test('when they sign in, then the directory groups reach the code’s session, its tokens, the ID token and the next code of the browser', async () => {
    const corp = new FakeDirectory(providerSettings('corp', 'auto', 'corp:'));
    corp.add('dora', { userId: 'uid=dora,dc=corp', password: 'Dir-passw0rd', groups: ['devs'] });
    const t = identity({ providers: fakeProviders([corp], capturingLogger().logger) });
    const browser = new TestBrowser(t.app);
    const first = pkce();
    const code = await codeFor(browser, 'dora', 'Dir-passw0rd', { challenge: first.challenge });
    const tokens = await consoleExchange(t.app, code, first.verifier);
    expect(tokens.status).toBe(200);
    expect((jwt.decode(tokens.body.access_token) as { groups: string[] }).groups).toEqual(['corp:devs']);
    expect((jwt.decode(tokens.body.id_token) as { groups: string[] }).groups).toEqual(['corp:devs']);
    expect((await whoami(t.app, tokens.body.access_token)).body.groups).toContain('corp:devs');
    const sessions = [...t.sessions.sessions.values()];
    expect(sessions.map((s) => [s.clientId, s.identityProvider, s.groups])).toEqual(
      expect.arrayContaining([
        [BROWSER_SESSION_CLIENT, 'corp', ['corp:devs']],
        ['console', 'corp', ['corp:devs']],
      ]),
    );
    expect(auditLines(t, 'login')[0]).toMatchObject({ grant: 'password', via: 'login_page', provider: 'corp' });

    // single sign-on: the next code of this browser carries the groups too
    const second = pkce();
    const again = redirected(await browser.get(authorizeUrl({ challenge: second.challenge })));
    const more = await consoleExchange(t.app, again.params.get('code')!, second.verifier);
    expect((jwt.decode(more.body.access_token) as { groups: string[] }).groups).toEqual(['corp:devs']);
  });
});

describe('the authorization endpoint’s answers', () => {
  test.each([
    ['an unregistered redirect URI', { redirectUri: 'https://evil.example/callback' }],
    ['a redirect URI with userinfo', { redirectUri: 'https://console.example.com@evil.example/oauth/callback' }],
    ['a redirect URI walking out of its path', { redirectUri: `${CALLBACK}/../../evil` }],
    ['a redirect URI with a fragment', { redirectUri: `${CALLBACK}#frag` }],
    ['an unknown client', { client: 'ghost' }],
    ['a client without the authorization_code grant', { client: 'kapi' }],
  ])('when the request has %s, then a page of kapi’s says so and the browser goes nowhere', async (_case, options) => {
    const t = identity();
    const res = await new TestBrowser(t.app).get(authorizeUrl({ challenge: pkce().challenge, ...options }));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('This sign-in request cannot be used');
    expect(res.text).not.toContain('evil');
  });

  test('when the request asks for the implicit grant, then the client hears unsupported_response_type at its redirect URI', async () => {
    const t = identity();
    const res = await new TestBrowser(t.app).get(
      authorizeUrl({ challenge: pkce().challenge, extra: { response_type: 'token' } }).replace(
        'response_type=code&',
        '',
      ),
    );
    expect(Object.fromEntries(redirected(res).params)).toMatchObject({
      error: 'unsupported_response_type',
      state: 'st-123',
      iss: 'kapi',
    });
  });

  test('when the request comes as a form post, then it is read the same way', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    const query = authorizeUrl({ challenge: pkce().challenge }).split('?')[1]!;
    const res = await browser.post('/oauth/authorize', Object.fromEntries(new URLSearchParams(query)));
    expect(res.headers.location).toMatch(/^\/oauth\/login\?request=/);
  });

  test('when the signing keys are not loaded yet, then 503 on a page', async () => {
    const t = testIdentity({ keys: { keys: () => undefined }, settings: { clients } });
    const res = await new TestBrowser(t.app).get(authorizeUrl({ challenge: pkce().challenge }));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
  });

  test('when a method other than GET or POST is used, then 405 with Allow', async () => {
    const t = identity();
    const res = await request(t.app).put('/oauth/authorize');
    expect([res.status, res.headers.allow]).toEqual([405, 'GET, POST']);
  });
});

describe('the authorization code grant', () => {
  async function codeAndVerifier(t: TestIdentity, options: Partial<Parameters<typeof authorizeUrl>[0]> = {}) {
    const { verifier, challenge } = pkce();
    const code = await codeFor(new TestBrowser(t.app), 'alice', 'alice-pw', { challenge, ...options });
    return { code, verifier };
  }

  test('when a code is used twice, then the second is refused and the session of the first ends; a third stays refused', async () => {
    const t = identity();
    const { code, verifier } = await codeAndVerifier(t);
    const first = await consoleExchange(t.app, code, verifier);
    expect(first.status).toBe(200);
    const second = await consoleExchange(t.app, code, verifier);
    expect([second.status, second.body.error]).toEqual([400, 'invalid_grant']);
    await whoami(t.app, first.body.access_token).expect(401);
    const refreshed = await exchange(t.app, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: 'console',
      client_secret: CONSOLE.secret,
    });
    expect(refreshed.body.error).toBe('invalid_grant');
    const third = await consoleExchange(t.app, code, verifier);
    expect([third.status, third.body.error]).toEqual([400, 'invalid_grant']);
    expect([...t.sessions.sessions.values()].filter((s) => s.clientId === 'console')).toEqual([]);
    expect(t.lines.join('\n')).toContain('authorization code used again');
  });

  test('when two replicas redeem one code, after one another or at once, then one succeeds and the code gives nothing more', async () => {
    const a = identity();
    const b = identity({ users: a.users, sessions: a.sessions, redemptions: a.redemptions, clock: a.clock });
    const { code, verifier } = await codeAndVerifier(a);
    const [one, two] = await Promise.all([
      consoleExchange(a.app, code, verifier),
      consoleExchange(b.app, code, verifier),
    ]);
    expect([one.status, two.status].sort()).toEqual([200, 400]);
    const winner = one.status === 200 ? one : two;
    await whoami(a.app, winner.body.access_token).expect(401);

    const next = await codeAndVerifier(a);
    expect((await consoleExchange(a.app, next.code, next.verifier)).status).toBe(200);
    expect((await consoleExchange(b.app, next.code, next.verifier)).body.error).toBe('invalid_grant');
  });

  test.each([
    ['the code_verifier is missing', { code_verifier: '' }, 'invalid_request'],
    ['the code_verifier is too short', { code_verifier: 'abc' }, 'invalid_request'],
    ['the code_verifier is of another request', { code_verifier: pkce().verifier }, 'invalid_grant'],
    ['the redirect_uri differs', { redirect_uri: 'https://console.example.com/oauth/other' }, 'invalid_grant'],
    ['the redirect_uri is missing', { redirect_uri: '' }, 'invalid_request'],
    ['the code is garbage', { code: 'not-a-code' }, 'invalid_grant'],
    ['the code is forged', { code: 's1.es1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, 'invalid_grant'],
  ])('when %s, then %s and no session starts', async (_case, extra, error) => {
    const t = identity();
    const { code, verifier } = await codeAndVerifier(t);
    const res = await consoleExchange(t.app, code, verifier, extra);
    expect([res.status, res.body.error]).toEqual([400, error]);
    expect([...t.sessions.sessions.values()].filter((s) => s.clientId === 'console')).toEqual([]);
    expect(t.redemptions.records.size).toBe(0);
  });

  test('when the code of one client is presented by another, then invalid_grant', async () => {
    const t = identity();
    const { code, verifier } = await codeAndVerifier(t);
    const res = await exchange(t.app, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: verifier,
      client_id: 'kubectl',
    });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    expect(auditLines(t, 'login').at(-1)).toMatchObject({ result: 'failure', reason: 'code issued to another client' });
  });

  test('when the code is older than 60 seconds, then invalid_grant', async () => {
    const t = identity();
    const { code, verifier } = await codeAndVerifier(t);
    t.clock.advance(60);
    expect((await consoleExchange(t.app, code, verifier)).body.error).toBe('invalid_grant');
  });

  test('when the user is disabled between sign-in and exchange, then invalid_grant', async () => {
    const t = identity();
    const { code, verifier } = await codeAndVerifier(t);
    t.users.setState('alice', 'Disabled');
    expect((await consoleExchange(t.app, code, verifier)).body.error).toBe('invalid_grant');
  });

  test('when the confidential client’s secret is wrong or missing, then invalid_client', async () => {
    const t = identity();
    const { code, verifier } = await codeAndVerifier(t);
    expect((await consoleExchange(t.app, code, verifier, { client_secret: 'wrong' })).status).toBe(401);
    expect((await consoleExchange(t.app, code, verifier, { client_secret: '' })).status).toBe(401);
  });

  test('when an ID token is presented as a bearer token, then 401', async () => {
    // a client named kapi: the ID token's audience is then kapi's own token audience
    const kapiWithCode = { ...clients.find((c) => c.name === 'console')!, name: 'kapi', secret: 'kapi-secret' };
    const t = identity({ settings: { clients: [kapiWithCode, ...clients.filter((c) => c.name !== 'kapi')] } });
    const browser = new TestBrowser(t.app);
    const { verifier, challenge } = pkce();
    const code = await codeFor(browser, 'alice', 'alice-pw', { challenge, client: 'kapi' });
    const tokens = await exchange(t.app, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: verifier,
      client_id: 'kapi',
      client_secret: 'kapi-secret',
    });
    expect(tokens.status).toBe(200);
    expect((jwt.decode(tokens.body.id_token) as { aud: string }).aud).toBe('kapi');
    await whoami(t.app, tokens.body.id_token).expect(401);
  });

  test('when the scope has no openid, then no ID token', async () => {
    const t = identity();
    const { code, verifier } = await codeAndVerifier(t, { scope: '' });
    const res = await consoleExchange(t.app, code, verifier);
    expect(res.body.id_token).toBeUndefined();
    expect(res.body.scope).toBe('');
  });

  test('when multipleLogin is false, then the code’s login ends the user’s other sessions but keeps its browser session', async () => {
    const t = identity({ settings: { multipleLogin: false } });
    await login(t.app, 'alice', 'alice-pw');
    const { code, verifier } = await codeAndVerifier(t);
    expect((await consoleExchange(t.app, code, verifier)).status).toBe(200);
    expect([...t.sessions.sessions.values()].map((s) => s.clientId).sort()).toEqual([
      BROWSER_SESSION_CLIENT,
      'console',
    ]);
  });
});

describe('a public client on a loopback redirect (kubectl)', () => {
  test('when it signs in on any port of 127.0.0.1, then it redeems and refreshes with its client_id alone', async () => {
    const t = identity();
    const redirectUri = 'http://127.0.0.1:53123/callback';
    const { verifier, challenge } = pkce();
    const answer = await signIn(new TestBrowser(t.app), 'alice', 'alice-pw', {
      client: 'kubectl',
      redirectUri,
      challenge,
      scope: 'openid',
    });
    const back = redirected(answer);
    expect(back.base).toBe(redirectUri);
    const base = { client_id: 'kubectl' };
    const tokens = await exchange(t.app, {
      grant_type: 'authorization_code',
      code: back.params.get('code')!,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...base,
    });
    expect(tokens.status).toBe(200);
    const refreshed = await exchange(t.app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      ...base,
    });
    expect(refreshed.status).toBe(200);
    expect((jwt.decode(refreshed.body.access_token) as { scope: string }).scope).toBe('openid');
  });

  test('when a browser already signed in at kapi is sent for a public client, then no code goes out before the user clicks “Continue as” on kapi’s page (RFC 8252 §8.6)', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    await codeFor(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    const redirectUri = 'http://127.0.0.1:41234/callback';
    const options = { client: 'kubectl', redirectUri, challenge: pkce().challenge, scope: 'openid' };
    const started = await browser.get(authorizeUrl(options));
    // not the client's port: kapi's page
    expect(started.headers.location).toMatch(/^\/oauth\/login\?/);
    const page = await browser.get(started.headers.location as string);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Continue as alice to kubectl');
    const back = redirected(await browser.post('/oauth/login', { ...formFields(page.text), action: 'continue' }));
    expect(back.base).toBe(redirectUri);
    expect(back.params.get('code')).toBeTruthy();

    // prompt=none cannot skip the click: consent_required
    const silent = redirected(await browser.get(authorizeUrl({ ...options, extra: { prompt: 'none' } })));
    expect(silent.params.get('error')).toBe('consent_required');
    // a confidential client still gets its code at once from the signed-in browser
    const confidential = await browser.get(authorizeUrl({ challenge: pkce().challenge }));
    expect(redirected(confidential).params.get('code')).toBeTruthy();
  });

  test('when “Continue as” is posted from a browser whose sign-in has ended, then the page asks for a password', async () => {
    const t = identity();
    const browser = new TestBrowser(t.app);
    await codeFor(browser, 'alice', 'alice-pw', { challenge: pkce().challenge });
    const started = await browser.get(
      authorizeUrl({ client: 'kubectl', redirectUri: 'http://127.0.0.1:41235/callback', challenge: pkce().challenge }),
    );
    const page = await browser.get(started.headers.location as string);
    browser.cookies.clear();
    const again = await browser.get(started.headers.location as string);
    const answer = await browser.post('/oauth/login', { ...formFields(again.text), action: 'continue' });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('Your sign-in has ended.');
    expect(answer.headers.location).toBeUndefined();
    expect(page.text).toContain('Continue as alice');
  });

  test('when a public client sends a secret, or asks for the password grant, then it is refused', async () => {
    const t = identity();
    const withSecret = await exchange(t.app, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: 'kubectl',
      client_secret: 'guess',
    });
    expect(withSecret.status).toBe(401);
    const password = await exchange(t.app, {
      grant_type: 'password',
      username: 'alice',
      password: 'alice-pw',
      client_id: 'kubectl',
    });
    expect([password.status, password.body.error]).toEqual([400, 'unauthorized_client']);
  });
});

describe('GET and POST /oauth/userinfo', () => {
  async function tokensWith(t: TestIdentity, scope: string) {
    const { verifier, challenge } = pkce();
    const code = await codeFor(new TestBrowser(t.app), 'alice', 'alice-pw', { challenge, scope });
    return (await consoleExchange(t.app, code, verifier)).body as { access_token: string };
  }

  test('when the token has openid and profile, then the answer holds those claims only', async () => {
    const t = identity();
    const { access_token } = await tokensWith(t, 'openid profile');
    const res = await request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${access_token}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ sub: 'alice', preferred_username: 'alice', name: 'alice' });
    const posted = await request(t.app).post('/oauth/userinfo').set('Authorization', `Bearer ${access_token}`);
    expect(posted.body).toEqual(res.body);
  });

  test('when the token comes from a password login, then every claim is given', async () => {
    const t = identity();
    const { access_token } = await login(t.app, 'alice', 'alice-pw');
    const res = await request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${access_token}`);
    expect(res.body).toEqual({
      sub: 'alice',
      preferred_username: 'alice',
      name: 'alice',
      email: 'alice@example.com',
      groups: ['dev', 'node-readers'],
    });
  });

  test('when the token was not granted openid, then 403 insufficient_scope', async () => {
    const t = identity();
    const { access_token } = await tokensWith(t, 'email');
    const res = await request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${access_token}`);
    expect([res.status, res.body.error]).toEqual([403, 'insufficient_scope']);
    expect(res.headers['www-authenticate']).toContain('insufficient_scope');
  });

  test('when there is no token, or its session ended, then 401 invalid_token with a Bearer challenge', async () => {
    const t = identity();
    const none = await request(t.app).get('/oauth/userinfo');
    expect([none.status, none.body.error]).toEqual([401, 'invalid_token']);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
    const { access_token } = await login(t.app, 'alice', 'alice-pw');
    await request(t.app).post('/oauth/logout').set('Authorization', `Bearer ${access_token}`).expect(200);
    expect((await request(t.app).get('/oauth/userinfo').set('Authorization', `Bearer ${access_token}`)).status).toBe(
      401,
    );
  });
});
