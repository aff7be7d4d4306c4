import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from '@jest/globals';
import { waitFor } from './harness.js';

/**
 * The platform's real console (../shared/console) for the e2e suites: found, started against a kapi, and a signed-in
 * page that records what kapi answered with an error and every error notice the console raised.
 */

/** `KAPI_CONSOLE_DIR`, else ../shared/console beside the repository, else /work/shared/console. */
export function findConsole(): string | undefined {
  const candidates = [process.env.KAPI_CONSOLE_DIR, resolve('../shared/console'), '/work/shared/console'];
  return candidates.find((dir): dir is string => !!dir && existsSync(join(dir, 'start.sh')));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

export interface RunningConsole {
  url: string;
  process: ChildProcess;
  stop(): void;
}

/** Starts the console's server against `kapiUrl` and waits for its login page. */
export async function startConsole(consoleDir: string, kapiUrl: string): Promise<RunningConsole> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn('bash', [join(consoleDir, 'start.sh'), '--port', String(port), '--api', kapiUrl], {
    env: { ...process.env, KAPI_CONSOLE_NODE: process.execPath },
    stdio: 'ignore',
  });
  await waitFor(async () => {
    try {
      return (await fetch(`${url}/login`)).status === 200;
    } catch {
      return false;
    }
  });
  return { url, process: child, stop: () => child.kill('SIGTERM') };
}

/** Every error notice the console raises, kept in the page (notices fade away before a check could see them). */
export async function keepNotices(context: BrowserContext): Promise<void> {
  await context.addInitScript({
    content: `window.__notices = [];
      new MutationObserver(() => {
        for (const notice of document.querySelectorAll('.notice-error:not([data-seen])')) {
          notice.setAttribute('data-seen', '1');
          window.__notices.push(notice.textContent || '');
        }
      }).observe(document, { childList: true, subtree: true });`,
  });
}

/** The notices the page now open has raised. */
export async function noticesOf(page: Page): Promise<string[]> {
  return (await page.evaluate('window.__notices || []')) as string[];
}

/** Records kapi's answers with a 4xx or 5xx (through the console's proxy) and script errors of the page. */
export function recordFailures(page: Page, into: string[]): void {
  page.on('pageerror', (error) => {
    if (/^(TypeError|ReferenceError|RangeError|SyntaxError)$/.test(error.name))
      into.push(`page error: ${error.name}: ${error.message}`);
  });
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (response.status() >= 400 && /^\/(api|apis|kapis)\//.test(url.pathname))
      into.push(`${response.status()} ${response.request().method()} ${url.pathname}${url.search}`);
  });
}

/** Signs in on the console's form, as a user does (its server's password grant at kapi, its session cookies). */
export async function signIn(page: Page, consoleUrl: string, username: string, password: string): Promise<void> {
  await page.goto(`${consoleUrl}/login`);
  await page.fill('input[name="username"]', username);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
  await page.waitForURL(/\/dashboard$/);
}

/** The page's text once every one of `texts` is in it; after `timeoutMs`, a failure saying what it shows instead. */
export async function textWith(page: Page, ...texts: (string | RegExp)[]): Promise<string> {
  const deadline = Date.now() + 45_000;
  let body = '';
  for (;;) {
    body = ((await page.textContent('body').catch(() => '')) ?? '').replace(/\s+/g, ' ');
    if (texts.every((text) => (typeof text === 'string' ? body.includes(text) : text.test(body)))) return body;
    if (Date.now() > deadline)
      throw new Error(`${page.url()} never showed ${texts.join(', ')}; it shows: ${body.slice(0, 1500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What `page` looked like at the end of the case now ending, for whoever reads a failure (.cache/screenshots). */
export async function screenshotCase(page: Page | undefined, prefix: string, fullPage = false): Promise<void> {
  const name =
    expect
      .getState()
      .currentTestName?.replace(/[^a-z0-9]+/gi, '-')
      .slice(-80) ?? 'case';
  await page
    ?.screenshot({ path: join('.cache', 'screenshots', `${prefix}-${name}.png`), fullPage })
    .catch(() => undefined);
}
