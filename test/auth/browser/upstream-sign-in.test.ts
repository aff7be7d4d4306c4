/**
 * Sign-in through an upstream provider, over in-memory stores and a provider in memory (FakeUpstream): the login
 * page's buttons, the start (a sealed state cookie, a 303 to the provider), and the callback's rules — an answer
 * counts only in the browser that started the sign-in, with its state, once; the identity is mapped like every
 * provider's; the original request goes on with a code whose session carries the provider's groups.
 */
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { OAuthClient } from '../../../src/config/cluster-configuration.js';
import { BROWSER_SESSION_CLIENT } from '../../../src/auth/browser/browser-sessions.js';
import { TEST_SETTINGS, capturingLogger } from '../fakes.js';
import { testIdentity, whoami, type TestIdentity } from '../identity-app.js';
import { IdentityProviders } from '../../../src/auth/providers/registry.js';
import { FakeUpstream, upstreamSettings } from '../providers/fake-upstream.js';
import { CONSOLE, TestBrowser, authorizeUrl, consoleExchange, pkce, redirected } from './browser-client.js';

const clients: OAuthClient[] = [
  ...TEST_SETTINGS.clients,
  { ...CONSOLE, grantTypes: [...CONSOLE.grantTypes], redirectURIs: [...CONSOLE.redirectURIs] },
];

function setup(mappingMethod: 'auto' | 'lookup' = 'auto') {
  const sso = new FakeUpstream(upstreamSettings('sso', mappingMethod));
  const providers = new IdentityProviders(() => [sso.settings], { OIDC: () => sso }, capturingLogger().logger);
  const t = testIdentity({ providers, settings: { clients } });
  return { ...t, sso };
}

/** Authorize, the login page, and its button: the answer of the button's link (303 to the provider). */
async function startAtProvider(t: TestIdentity, browser: TestBrowser, challenge: string) {
  const started = await browser.get(authorizeUrl({ challenge }));
  const page = await browser.get(started.headers.location as string);
  expect(page.status).toBe(200);
  const href = /<a class="button secondary" href="([^"]+)">Continue with sso SSO<\/a>/.exec(page.text)?.[1];
  expect(href).toBeDefined();
  return browser.get(href!.replace(/&amp;/g, '&'));
}

function callback(browser: TestBrowser, params: Record<string, string>) {
  return browser.get(`/oauth/callback/sso?${new URLSearchParams(params).toString()}`);
}

function auditLines(t: TestIdentity): Record<string, unknown>[] {
  return t.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.audit === 'login');
}

const ursula = { provider: 'sso', userId: 'sub-ursula', username: 'ursula', email: 'u@corp.test', groups: ['sre'] };

describe('sign-in through an upstream provider', () => {
  test('when the user signs in upstream, then kapi maps the identity, signs the browser in and the client gets a code carrying the provider’s groups', async () => {
    const t = setup();
    const browser = new TestBrowser(t.app);
    const { verifier, challenge } = pkce();
    const toProvider = await startAtProvider(t, browser, challenge);
    expect(toProvider.status).toBe(303);
    expect(toProvider.headers.location).toMatch(/^https:\/\/sso\.invalid\/authorize\?state=/);
    const cookie = (toProvider.headers['set-cookie'] as unknown as string[])[0]!;
    expect(cookie).toMatch(/^kapi_upstream=s1\.[^;]+; Path=\/oauth; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const [state, started] = [...t.sso.started][0]!;
    expect(started.callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/callback\/sso$/);
    expect(started.codeChallenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    t.sso.codes.set('up-code', ursula);
    const back = redirected(await callback(browser, { code: 'up-code', state }));
    expect(back.base).toBe(CONSOLE.redirectURIs[0]);
    expect(browser.cookies.has('kapi_upstream')).toBe(false);
    const tokens = await consoleExchange(t.app, back.params.get('code')!, verifier);
    expect(tokens.status).toBe(200);
    expect((jwt.decode(tokens.body.access_token) as { groups: string[] }).groups).toEqual(['sso:sre']);
    expect((await whoami(t.app, tokens.body.access_token)).body).toMatchObject({ username: 'ursula' });
    expect(t.users.users.get('ursula')?.link).toMatchObject({ provider: 'sso', userId: 'sub-ursula' });
    const browserSession = [...t.sessions.sessions.values()].find((s) => s.clientId === BROWSER_SESSION_CLIENT);
    expect(browserSession).toMatchObject({ identityProvider: 'sso', groups: ['sso:sre'] });
    expect(auditLines(t).at(-2)).toMatchObject({
      grant: 'upstream',
      provider: 'sso',
      user: 'ursula',
      client: 'console',
      result: 'success',
    });
  });

  test('when the answer carries another state (forged), then kapi’s page refuses it and nothing is sent on', async () => {
    const t = setup();
    const browser = new TestBrowser(t.app);
    await startAtProvider(t, browser, pkce().challenge);
    t.sso.codes.set('up-code', ursula);
    const res = await callback(browser, { code: 'up-code', state: 'forged-state' });
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(t.users.users.has('ursula')).toBe(false);
    expect(auditLines(t).at(-1)).toMatchObject({ grant: 'upstream', result: 'failure' });
  });

  test('when another browser brings this browser’s answer (no sign-in of its own), then it is refused', async () => {
    const t = setup();
    await startAtProvider(t, new TestBrowser(t.app), pkce().challenge);
    const [state] = [...t.sso.started.keys()];
    t.sso.codes.set('up-code', ursula);
    const res = await callback(new TestBrowser(t.app), { code: 'up-code', state: state! });
    expect(res.status).toBe(400);
  });

  test('when the same answer comes twice, even with the sign-in cookie put back, then the second is refused', async () => {
    const t = setup();
    const browser = new TestBrowser(t.app);
    await startAtProvider(t, browser, pkce().challenge);
    const [state] = [...t.sso.started.keys()];
    t.sso.codes.set('up-code', ursula);
    const kept = browser.cookies.get('kapi_upstream')!;
    expect((await callback(browser, { code: 'up-code', state: state! })).status).toBe(303);
    browser.cookies.set('kapi_upstream', kept); // a replay with the old cookie: the provider refuses the used code
    expect((await callback(browser, { code: 'up-code', state: state! })).status).toBe(400);
  });

  test('when the provider answers with an error, then the client gets access_denied with its state', async () => {
    const t = setup();
    const browser = new TestBrowser(t.app);
    await startAtProvider(t, browser, pkce().challenge);
    const [state] = [...t.sso.started.keys()];
    const back = redirected(await callback(browser, { error: 'access_denied', state: state! }));
    expect(Object.fromEntries(back.params)).toMatchObject({ error: 'access_denied', state: 'st-123', iss: 'kapi' });
  });

  test('when the provider’s ID token is refused, then kapi’s page says so (400)', async () => {
    const t = setup();
    const browser = new TestBrowser(t.app);
    await startAtProvider(t, browser, pkce().challenge);
    const [state] = [...t.sso.started.keys()];
    t.sso.codes.set('bad', 'refused');
    const res = await callback(browser, { code: 'bad', state: state! });
    expect(res.status).toBe(400);
    expect(res.text).toContain('answer was not accepted');
    expect(auditLines(t).at(-1)).toMatchObject({ result: 'failure', reason: 'ID token refused' });
  });

  test('when the provider cannot be reached, then 503 pages at the start and at the callback', async () => {
    const t = setup();
    const browser = new TestBrowser(t.app);
    t.sso.down = true;
    const start = await startAtProvider(t, browser, pkce().challenge);
    expect([start.status, start.headers['retry-after']]).toEqual([503, '5']);
    t.sso.down = false;
    await startAtProvider(t, browser, pkce().challenge);
    const [state] = [...t.sso.started.keys()];
    t.sso.down = true;
    expect((await callback(browser, { code: 'x', state: state! })).status).toBe(503);
  });

  test('when the provider maps by lookup and no User is linked, then 403 and no User is created', async () => {
    const t = setup('lookup');
    const browser = new TestBrowser(t.app);
    await startAtProvider(t, browser, pkce().challenge);
    const [state] = [...t.sso.started.keys()];
    t.sso.codes.set('up-code', ursula);
    const res = await callback(browser, { code: 'up-code', state: state! });
    expect(res.status).toBe(403);
    expect(t.users.users.has('ursula')).toBe(false);
  });

  test('when the provider is not a redirect provider or not configured, then 404 at the start', async () => {
    const t = setup();
    const browser = new TestBrowser(t.app);
    const started = await browser.get(authorizeUrl({ challenge: pkce().challenge }));
    const sealed = new URL(started.headers.location as string, 'http://x').searchParams.get('request')!;
    const res = await browser.get(`/oauth/login/other?request=${encodeURIComponent(sealed)}`);
    expect(res.status).toBe(404);
    expect((await request(t.app).get('/oauth/login/sso')).status).toBe(400);
  });
});
