/**
 * kapi's login page in a real headless Chromium: it renders with its own stylesheet (allowed by its CSP hash), asks
 * no other host for anything, is used with the keyboard alone, shows a wrong password in place, and a right one
 * sends the browser to the application with a code that gives tokens working on /kapis and /api. Screenshots of the
 * page (wide, narrow, with the error) are written to .cache/screenshots/ for people to look at.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { pkce } from '../auth/browser/browser-client.js';
import { startCallbackServer, startChromium, type CallbackServer, type Chromium } from './chromium.js';
import { assertTarget } from './forwarding-target.js';
import { E2E_CONSOLE, startE2E, type E2E } from './harness.js';

const PASSWORD = 'e2e-Page-passw0rd';
const SCREENSHOTS = join(process.cwd(), '.cache', 'screenshots');

let e2e: E2E;
let user: string;
let chromium: Chromium;
let app: CallbackServer;
const elsewhere: string[] = [];

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  user = await e2e.createUser('page', PASSWORD);
  await e2e.grant(user, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
  ]);
  app = await startCallbackServer();
  chromium = await startChromium();
  const allowed = [new URL(e2e.kapiUrl).origin, `http://127.0.0.1:${app.port}`];
  await chromium.context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (allowed.includes(url.origin)) return route.continue();
    elsewhere.push(url.href);
    return route.abort();
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  await e2e?.stop();
});

/** An expression evaluated in the page (a string: this suite is typed without the DOM library). */
function inPage<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

const redirectUri = () => `http://127.0.0.1:${app.port}/console/callback`;

function authorizeUrl(challenge: string): string {
  return `${e2e.kapiUrl}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: E2E_CONSOLE.id,
    redirect_uri: redirectUri(),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'openid profile email',
    state: 'page-state',
    nonce: 'page-nonce',
  }).toString()}`;
}

async function openLoginPage(page: Page, challenge: string): Promise<void> {
  const response = await page.goto(authorizeUrl(challenge));
  expect(response?.status()).toBe(200);
  expect(new URL(page.url()).pathname).toBe('/oauth/login');
}

describe('kapi’s login page in Chromium', () => {
  let page: Page;
  const { verifier, challenge } = pkce();

  beforeAll(async () => {
    page = await chromium.context.newPage();
  });

  it('when it opens, then it renders its own styles, labels its fields, focuses the user name and asks no other host', async () => {
    await openLoginPage(page, challenge);
    await expect(page.title()).resolves.toBe('Sign in · kapi');
    await page.getByLabel('User name or e-mail').waitFor();
    await page.getByLabel('Password').waitFor();
    expect(await inPage<string>(page, 'document.activeElement.id')).toBe('username');
    // the stylesheet applied: the CSP allows it by its hash (a blocked one leaves the browser's default look)
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const background = "getComputedStyle(document.querySelector('button.primary')).backgroundColor";
    expect(await inPage<string>(page, background)).toBe('rgb(31, 95, 214)');
    expect(await inPage<string>(page, "getComputedStyle(document.querySelector('.card')).borderRadius")).toBe('14px');
    await page.screenshot({ path: join(SCREENSHOTS, 'login-page.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 780 });
    await page.screenshot({ path: join(SCREENSHOTS, 'login-page-narrow.png'), fullPage: true });
    expect(await inPage<number>(page, 'document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1100, height: 760 });
    expect(elsewhere).toEqual([]);
    expect(chromium.console.filter((line) => /Refused|Content Security Policy/i.test(line))).toEqual([]);
  }, 60_000);

  it('when a wrong password is typed with the keyboard, then the error shows in place, the name stays, the password has the focus', async () => {
    await page.keyboard.type(user);
    await page.keyboard.press('Tab');
    expect(await inPage<string>(page, 'document.activeElement.id')).toBe('password');
    await page.keyboard.type('not-the-password');
    const [answer] = await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(answer?.status()).toBe(400);
    const alert = page.getByRole('alert');
    await expect(alert.textContent()).resolves.toContain('Wrong user name or password.');
    expect(await page.getByLabel('User name or e-mail').inputValue()).toBe(user);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    expect(await inPage<string>(page, 'document.activeElement.id')).toBe('password');
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    await page.screenshot({ path: join(SCREENSHOTS, 'login-page-error.png'), fullPage: true });
    expect(await page.content()).not.toContain('not-the-password');
  }, 60_000);

  it('when the right password is typed, then the application gets a code whose tokens read /kapis and /api', async () => {
    await page.keyboard.type(PASSWORD);
    await Promise.all([page.waitForURL(`${redirectUri()}?**`), page.keyboard.press('Enter')]);
    const back = app.received.at(-1)!;
    expect(back.path).toBe('/console/callback');
    expect(back.params.get('state')).toBe('page-state');
    expect(back.params.get('iss')).toBe('kapi');
    const res = await fetch(`${e2e.kapiUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.params.get('code')!,
        redirect_uri: redirectUri(),
        code_verifier: verifier,
        client_id: E2E_CONSOLE.id,
        client_secret: E2E_CONSOLE.secret,
      }),
    });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as { access_token: string; id_token: string };
    expect(JSON.parse(Buffer.from(tokens.id_token.split('.')[1]!, 'base64url').toString())).toMatchObject({
      aud: E2E_CONSOLE.id,
      nonce: 'page-nonce',
      sub: user,
    });
    for (const path of ['/kapis/resources.kapi.io/v1alpha3/nodes?limit=1', '/api/v1/namespaces']) {
      const read = await fetch(`${e2e.kapiUrl}${path}`, {
        headers: { Authorization: `Bearer ${tokens.access_token}` },
      });
      expect(read.status).toBe(200);
      await read.arrayBuffer();
    }
  }, 60_000);

  it('when the application asks again, then the signed-in browser goes straight back with a new code', async () => {
    const before = app.received.length;
    await page.goto(authorizeUrl(pkce().challenge));
    expect(page.url()).toMatch(new RegExp(`^${redirectUri()}\\?code=`));
    expect(app.received.length).toBe(before + 1);
  }, 60_000);

  it('when the page is framed by another site, then Chromium refuses to show it', async () => {
    const framing = await chromium.context.newPage();
    await framing.route(`http://127.0.0.1:${app.port}/framer`, (route) =>
      route.fulfill({ contentType: 'text/html', body: `<iframe src="${e2e.kapiUrl}/oauth/login?request=x"></iframe>` }),
    );
    await framing.goto(`http://127.0.0.1:${app.port}/framer`);
    await framing.waitForLoadState('load');
    const frame = framing.frames().find((f) => f !== framing.mainFrame());
    // the frame never gets kapi's page (its card): Chromium shows its own error instead
    const shown = frame ? await frame.evaluate("document.querySelector('.card') !== null").catch(() => false) : false;
    expect(shown).toBe(false);
    // the same page opened on its own does show the card, so the check above can fail
    const direct = await chromium.context.newPage();
    await direct.goto(`${e2e.kapiUrl}/oauth/login?request=x`);
    expect(await inPage<boolean>(direct, "document.querySelector('.card') !== null")).toBe(true);
    await direct.close();
    await framing.close();
  }, 60_000);
});
