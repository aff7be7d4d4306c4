/**
 * `kubectl kapi login --browser` with the real kubectl running the plugin, and a scripted browser: $BROWSER is a
 * script that hands the address to the test, which opens it in real headless Chromium and signs in on kapi's page.
 * The plugin receives the code on 127.0.0.1 at a port of its own, redeems it with PKCE as the public client
 * `kubectl`, caches the tokens like the password login, and plain kubectl then works as the user.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { buildPlugin } from '../cli/kubectl-kapi/plugin-binary.js';
import { startChromium, type Chromium } from './chromium.js';
import { kubectlBinary } from './forwarding-kubectl.js';
import { assertTarget } from './forwarding-target.js';
import { startE2E, waitFor, type E2E } from './harness.js';

const PASSWORD = 'e2e-Browser-cli-passw0rd';

let e2e: E2E;
let user: string;
let pluginDir: string;
let home: string;
let opened: string;
let chromium: Chromium;
const children: ChildProcess[] = [];

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  user = await e2e.createUser('cli-browser', PASSWORD);
  await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }]);
  pluginDir = await buildPlugin();
  home = mkdtempSync(join(tmpdir(), 'kapi-e2e-browser-cli-'));
  opened = join(home, 'opened-urls');
  const script = join(home, 'browser.sh');
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
  chmodSync(script, 0o755);
  chromium = await startChromium({ acceptCertificates: true });
}, 120_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await chromium?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  await e2e?.stop();
});

interface Run {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function kubectl(args: string[]): Run {
  const child = spawn(kubectlBinary(), args, {
    env: {
      PATH: `${pluginDir}${delimiter}${process.env.PATH ?? ''}`,
      HOME: home,
      KUBECONFIG: join(home, '.kube', 'config'),
      BROWSER: join(home, 'browser.sh'),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin!.end();
  children.push(child);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, done };
}

/** The n-th address the plugin asked the browser to open. */
async function openedUrl(index: number): Promise<string> {
  // whole lines only: the script's `>>` creates the file an instant before it writes the address
  const lines = () => (existsSync(opened) ? readFileSync(opened, 'utf8').split('\n').slice(0, -1) : []);
  await waitFor(() => lines().length > index);
  return lines()[index]!;
}

function login(): Run {
  return kubectl(['kapi', 'login', '--browser', '--server', e2e.kapiHttpsUrl, '--certificate-authority', e2e.caFile!]);
}

describe('when a user runs kubectl kapi login --browser', () => {
  it('then the browser signs in on kapi’s page, the plugin gets the code on loopback and kubectl works as the user', async () => {
    const run = login();
    const url = new URL(await openedUrl(0));
    expect(url.pathname).toBe('/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'kubectl',
      code_challenge_method: 'S256',
      scope: 'openid profile',
    });
    const redirect = new URL(url.searchParams.get('redirect_uri')!);
    expect(redirect.hostname).toBe('127.0.0.1');
    expect(Number(redirect.port)).toBeGreaterThan(0);

    // something else on this machine calling the listener with another state is turned away, and the login waits on
    const forged = await fetch(`${redirect.origin}/callback?code=stolen&state=guess`);
    expect(forged.status).toBe(400);
    await forged.arrayBuffer();

    const page = await chromium.context.newPage();
    await page.goto(url.href);
    await page.getByLabel('User name or e-mail').fill(user);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([
      page.waitForURL(`${redirect.origin}/callback?**`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await expect(page.textContent('h1')).resolves.toBe('Signed in to kapi');
    await page.close();

    const result = await run.done;
    expect(result.stderr).toContain('Sign in to kapi in your browser');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`as ${user}`);

    const config = parse(readFileSync(join(home, '.kube', 'config'), 'utf8'));
    const context = config.contexts.find((entry: { name: string }) => entry.name === config['current-context']);
    const exec = config.users.find((entry: { name: string }) => entry.name === context.context.user).user.exec;
    expect(exec.args).toEqual([
      'token',
      '--server',
      e2e.kapiHttpsUrl,
      '--username',
      user,
      '--client-id',
      'kubectl',
      '--browser',
    ]);
    expect(exec.env).toBeNull();
    const cacheDir = join(home, '.kube', 'cache', 'kapi');
    const [file] = readdirSync(cacheDir);
    expect(statSync(join(cacheDir, file!)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(cacheDir, file!), 'utf8'))).toMatchObject({
      clientId: 'kubectl',
      username: user,
    });

    const nodes = await kubectl(['get', 'nodes', '-o', 'name']).done;
    expect(nodes.stderr).toBe('');
    expect(nodes.code).toBe(0);
  }, 120_000);

  it('then kubectl kapi logout revokes the public client’s session without any secret', async () => {
    const cacheDir = join(home, '.kube', 'cache', 'kapi');
    const { accessToken } = JSON.parse(readFileSync(join(cacheDir, readdirSync(cacheDir)[0]!), 'utf8')) as {
      accessToken: string;
    };
    const run = await kubectl(['kapi', 'logout']).done;
    expect(run.code).toBe(0);
    const res = await fetch(`${e2e.kapiUrl}/kapis/resources.kapi.io/v1alpha3/nodes?limit=0`, {
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    expect(res.status).toBe(401);
    await res.arrayBuffer();
  }, 60_000);

  it('then cancelling on kapi’s page ends the login with access_denied and writes nothing new', async () => {
    const before = readFileSync(join(home, '.kube', 'config'), 'utf8');
    const run = login();
    const url = await openedUrl(1);
    const page = await chromium.context.newPage();
    // a browser not signed in at kapi (the first case's browser session would answer at once)
    await chromium.context.clearCookies();
    await page.goto(url);
    await page.getByRole('button', { name: /^Cancel and return to kubectl$/ }).click();
    await page.waitForURL(/\/callback\?/);
    await page.close();
    const result = await run.done;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('access_denied');
    expect(readFileSync(join(home, '.kube', 'config'), 'utf8')).toBe(before);
  }, 120_000);
});
