/**
 * The documents page in a real headless Chromium (Debian's package, driven by playwright-core): Swagger UI renders
 * both documents' operations, and the browser asks nothing of any other host.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { chromium, type BrowserContext } from 'playwright-core';
import { apiDocsRoutes, API_DOCS_PATHS } from '../../src/apidocs/routes.js';
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

let server: Server;
let base: string;
let profile: string;
let context: BrowserContext;
const elsewhere: string[] = [];

beforeAll(async () => {
  const app = express();
  app.use(apiDocsRoutes());
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  profile = mkdtempSync(join(tmpdir(), 'kapi-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: systemBinary('chromium'),
    headless: true,
    chromiumSandbox: false,
    args: FLAGS,
  });
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === base || url.protocol === 'data:') return route.continue();
    elsewhere.push(url.href);
    return route.abort();
  });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => server?.close(resolve));
  if (profile) rmSync(profile, { recursive: true, force: true });
});

async function operationsShown(page: import('playwright-core').Page): Promise<string[]> {
  await page.locator('.opblock-summary-path').first().waitFor({ timeout: 30_000 });
  return page.locator('.opblock').evaluateAll((blocks) =>
    blocks.map((block) => {
      const method = block.querySelector('.opblock-summary-method')?.textContent ?? '';
      const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
      return `${method.trim()} ${path.replace(/\u200b/g, '')}`;
    }),
  );
}

test('when the page is opened, then it shows the platform operations, and after switching, the CRD operations', async () => {
  const page = await context.newPage();
  // Swagger UI renders the operations of a large document as they come into view: a window tall enough for all
  await page.setViewportSize({ width: 1280, height: 40_000 });
  await page.goto(`${base}${API_DOCS_PATHS.page}`);
  await page.locator('[data-path="/.well-known/jwks.json"]').first().waitFor({ timeout: 30_000 });
  const platform = await operationsShown(page);
  expect(platform).toEqual(
    expect.arrayContaining([
      'POST /oauth/token',
      'POST /oauth/revoke',
      'GET /oauth/logout',
      'POST /oauth/logout',
      'GET /kapis/resources.kapi.io/v1alpha3/nodes',
      'GET /kapis/resources.kapi.io/v1alpha3/nodes/{name}',
      'GET /kapis/logging.kapi.io/v1alpha2/logs',
      'GET /.well-known/jwks.json',
    ]),
  );

  await page.locator('.topbar select').selectOption({ label: 'kapi custom resources (/apis)' });
  await page.locator('[data-path="/apis/iam.kapi.io/v1beta1/users"]').first().waitFor({ timeout: 30_000 });
  const crds = await operationsShown(page);
  expect(crds).toEqual(
    expect.arrayContaining([
      'GET /apis/iam.kapi.io/v1beta1/users',
      'POST /apis/iam.kapi.io/v1beta1/users',
      'PATCH /apis/iam.kapi.io/v1beta1/users/{name}/status',
      'GET /apis/installer.kapi.io/v1alpha1/namespaces/{namespace}/clusterconfigurations/{name}',
      'GET /apis/iam.kapi.io/v1beta1/watch/loginsessions',
    ]),
  );
  expect(elsewhere).toEqual([]);
}, 90_000);
