import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { startChromium, type Chromium } from './chromium.js';
import { startE2E, waitFor, type E2E } from './harness.js';
import { adminClusterMembership } from '../../src/sandbox/platform-objects.js';
import { startMonitoringScenario, type MonitoringScenario } from './monitoring-scenario.js';

const PASSWORD = 'e2e-Explore-Passw0rd';
let e2e: E2E;
let scenario: MonitoringScenario;
let consoleProcess: ChildProcess;
let chromium: Chromium;
let page: Page;
let consoleUrl: string;
const log: string[] = [];
beforeAll(async () => {
  e2e = await startE2E();
  scenario = await startMonitoringScenario(e2e, PASSWORD);
  const m = adminClusterMembership(scenario.root);
  await e2e.admin.request({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', body: m });
  const server = createServer();
  await new Promise<void>((d) => server.listen(0, '127.0.0.1', d));
  const port = (server.address() as { port: number }).port;
  await new Promise((d) => server.close(d));
  consoleUrl = `http://127.0.0.1:${port}`;
  consoleProcess = spawn('bash', ['/work/shared/console/start.sh', '--port', String(port), '--api', e2e.kapiUrl], {
    env: { ...process.env, KAPI_CONSOLE_NODE: process.execPath },
    stdio: 'ignore',
  });
  await waitFor(async () => {
    try {
      return (await fetch(`${consoleUrl}/login`)).status === 200;
    } catch {
      return false;
    }
  });
  chromium = await startChromium();
  page = await chromium.context.newPage();
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/kapis/monitoring')) log.push(`${r.status()} ${u.pathname}${u.search}`);
    else if (r.status() >= 400 && /^\/(api|apis|kapis)\//.test(u.pathname))
      log.push(`FAIL ${r.status()} ${u.pathname}${u.search}`);
  });
  await page.goto(`${consoleUrl}/login`);
  await page.fill('input[name="username"]', scenario.root);
  await page.fill('input[name="password"]', PASSWORD);
  await page.click('button[type="submit"]');
  await page.waitForURL(/\/dashboard$/);
}, 300_000);
afterAll(async () => {
  await chromium?.close();
  consoleProcess?.kill('SIGTERM');
  await scenario?.stop();
  await e2e?.stop();
});
it('explore', async () => {
  const s = scenario;
  const pages = [
    '/dashboard',
    '/clusters/default/overview',
    '/clusters/default/nodes',
    `/clusters/default/nodes/${s.node}/monitors`,
    `/clusters/default/nodes/${s.node}/status`,
    `/workspaces/${s.workspace}/overview`,
    `/workspaces/${s.workspace}/federatedprojects`,
    `/${s.workspace}/clusters/default/projects/${s.projectA}/overview`,
    `/${s.workspace}/clusters/default/projects/${s.projectA}/deployments/web/monitors`,
    `/${s.workspace}/clusters/default/projects/${s.projectA}/pods/web-5d8f7c9b4d-abcde/monitors`,
    `/${s.workspace}/clusters/default/projects/${s.projectA}/pods/web-5d8f7c9b4d-abcde/containers/app/monitors`,
  ];
  let i = 0;
  for (const p of pages) {
    log.push(`=== ${p}`);
    await page.goto(`${consoleUrl}${p}`);
    await page.waitForLoadState('networkidle');
    await new Promise((r) => setTimeout(r, 3000));
    log.push(`URL ${page.url()}`);
    log.push(((await page.textContent('body')) ?? '').replace(/\s+/g, ' ').slice(0, 3000));
    await page.screenshot({ path: `.cache/screenshots/explore-${i++}.png`, fullPage: true });
  }
  writeFileSync('/tmp/explore.log', log.join('\n'));
}, 300_000);
