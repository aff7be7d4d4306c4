/**
 * `kubectl kapi passwd` with the real kubectl running the plugin from the PATH, through kapi's HTTPS listener, on the
 * sandbox or the cluster KUBECONFIG names: a user changes their password from a script and from a terminal (never
 * echoed), the other sessions end and their own goes on, the policy and a wrong current password are refused with
 * the server's reason, and an administrator sets another user's password.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildPlugin } from '../cli/kubectl-kapi/plugin-binary.js';
import { login } from './client.js';
import { kubectlBinary, type KubectlRun } from './forwarding-kubectl.js';
import { startE2E, waitFor, type E2E } from './harness.js';
import { assertTarget } from './target.js';

const FIRST = 'e2e-Passwd-first-1';
const SECOND = 'e2e-Passwd-second-2';
const THIRD = 'e2e-Passwd-third-3';
const ADMIN_PASSWORD = 'e2e-Passwd-admin-1';

let e2e: E2E;
let pluginDir: string;
let user: string;
let admin: string;
const homes: string[] = [];

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  pluginDir = await buildPlugin();
  user = await e2e.createUser('passwd', FIRST);
  admin = await e2e.createUser('passwd-admin', ADMIN_PASSWORD);
  await e2e.grant(admin, [{ apiGroups: ['iam.kapi.io'], resources: ['users/password'], verbs: ['update'] }]);
}, 120_000);

afterAll(async () => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
  await e2e?.stop();
});

/** A private HOME whose kubeconfig holds a plugin login of `username`. */
async function loggedIn(username: string, password: string): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'kapi-e2e-passwd-'));
  homes.push(home);
  const run = await kubectl(
    home,
    ['kapi', 'login', '--server', e2e.kapiHttpsUrl, '--certificate-authority', e2e.caFile!],
    {
      KAPI_USERNAME: username,
      KAPI_PASSWORD: password,
    },
  );
  expect(run.code).toBe(0);
  return home;
}

function environment(home: string): Record<string, string> {
  return {
    PATH: `${pluginDir}${delimiter}${process.env.PATH ?? ''}`,
    HOME: home,
    KUBECONFIG: join(home, '.kube', 'config'),
  };
}

function kubectl(home: string, args: string[], extraEnv: Record<string, string> = {}): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBinary(), args, { env: { ...environment(home), ...extraEnv } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end();
  });
}

async function sessionAlive(accessToken: string): Promise<boolean> {
  const res = await fetch(`${e2e.kapiUrl}/oauth/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } });
  await res.arrayBuffer();
  return res.status === 200;
}

async function loginStatus(username: string, password: string): Promise<number> {
  return login(e2e.kapiUrl, username, password).then(
    () => 200,
    (error: Error) => Number(/login failed: (\d+)/.exec(error.message)?.[1]),
  );
}

describe('kubectl kapi passwd', () => {
  it('when a script changes the password, then the other sessions end, the plugin’s own goes on, and only the new password logs in', async () => {
    const home = await loggedIn(user, FIRST);
    const other = await login(e2e.kapiUrl, user, FIRST);
    const run = await kubectl(home, ['kapi', 'passwd'], { KAPI_PASSWORD: FIRST, KAPI_NEW_PASSWORD: SECOND });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`Password of ${user} changed`);
    expect(run.stdout).toContain('1 other login session ended');
    expect(await sessionAlive(other.access_token)).toBe(false);
    expect(await loginStatus(user, FIRST)).toBe(400);
    expect(await loginStatus(user, SECOND)).toBe(200);
    // the plugin's own session still works
    const stillIn = await kubectl(home, ['kapi', 'passwd'], {
      KAPI_PASSWORD: 'wrong-current',
      KAPI_NEW_PASSWORD: THIRD,
    });
    expect(stillIn.code).toBe(1);
    expect(stillIn.stderr).toContain('currentPassword');
    expect(stillIn.stderr).not.toContain('wrong-current');
  });

  it('when the new password breaks the policy, then the server’s rule is shown and nothing changes', async () => {
    const home = await loggedIn(user, SECOND);
    const run = await kubectl(home, ['kapi', 'passwd'], { KAPI_PASSWORD: SECOND, KAPI_NEW_PASSWORD: 'short' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('passwordPolicy.minLength');
    expect(await loginStatus(user, SECOND)).toBe(200);
  });

  it('when a user changes the password on a terminal, then it is asked twice and never echoed', async () => {
    const home = await loggedIn(user, SECOND);
    // util-linux script(1) gives the plugin a pseudo-terminal
    const child = spawn('script', ['-qfec', `${kubectlBinary()} kapi passwd`, '/dev/null'], {
      env: { ...environment(home), TERM: 'dumb' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitFor(() => output.includes(`Current password for ${user}: `));
      child.stdin.write(`${SECOND}\r`);
      await waitFor(() => output.includes(`New password for ${user}: `));
      child.stdin.write(`${THIRD}\r`);
      await waitFor(() => output.includes('Retype the new password: '));
      child.stdin.write(`${THIRD}\r`);
      expect(await closed).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    expect(output).toContain(`Password of ${user} changed`);
    for (const secret of [SECOND, THIRD]) expect(output).not.toContain(secret);
    expect(await loginStatus(user, THIRD)).toBe(200);
  }, 60_000);

  it('when an administrator sets another user’s password, then no current password is asked and that user’s sessions end', async () => {
    const users = await login(e2e.kapiUrl, user, THIRD);
    const home = await loggedIn(admin, ADMIN_PASSWORD);
    const run = await kubectl(home, ['kapi', 'passwd', '--user', user], { KAPI_NEW_PASSWORD: FIRST });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(await sessionAlive(users.access_token)).toBe(false);
    expect(await loginStatus(user, FIRST)).toBe(200);
  });

  it('when a user who is no administrator names another user, then the server’s refusal is shown', async () => {
    const home = await loggedIn(user, FIRST);
    const run = await kubectl(home, ['kapi', 'passwd', '--user', admin], { KAPI_NEW_PASSWORD: SECOND });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('forbidden');
    expect(await loginStatus(admin, ADMIN_PASSWORD)).toBe(200);
  });
});
