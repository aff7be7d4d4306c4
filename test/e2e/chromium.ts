/**
 * A real headless Chromium (Debian's package, driven by playwright-core) with a fresh profile, for the browser
 * sign-in suites; and a loopback listener playing an application's redirect URI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { systemBinary } from '../support/system-binaries.js';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  context: BrowserContext;
  /** Console messages of every page (CSP violations show here). */
  console: string[];
  close(): Promise<void>;
}

/**
 * `acceptCertificates`: accept any server certificate (kapi's HTTPS listener in the e2e runs has a self-signed one
 * that no system store trusts; a user would install its CA or give kapi a real certificate).
 */
export async function startChromium(options: { acceptCertificates?: boolean } = {}): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'kapi-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: systemBinary('chromium'),
    headless: true,
    chromiumSandbox: false,
    args: FLAGS,
    viewport: { width: 1100, height: 760 },
    ignoreHTTPSErrors: options.acceptCertificates ?? false,
  });
  const console: string[] = [];
  context.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
  return {
    context,
    console,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What an application's redirect URI received. */
export interface Callback {
  path: string;
  params: URLSearchParams;
}

/** A loopback HTTP listener on port 0 answering every request with a small page, and remembering it. */
export interface CallbackServer {
  port: number;
  received: Callback[];
  close(): Promise<void>;
}

export async function startCallbackServer(): Promise<CallbackServer> {
  const received: Callback[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    received.push({ path: url.pathname, params: url.searchParams });
    res
      .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
      .end('<!doctype html><title>app</title><p>back in the app</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
