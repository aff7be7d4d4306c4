/**
 * `kubectl kapi login`, then plain kubectl, with the real kubectl binary running the plugin from the PATH as an exec
 * credential plugin, through kapi's HTTPS listener: the first command uses the cached token, a command after the
 * access token expired gets a refreshed one without any prompt, and `kubectl kapi logout` ends the session on the
 * server. On the sandbox or the cluster KUBECONFIG names (only kubectl's own environment is private). kubectl lists
 * only this run's node, so what it prints never depends on other suites.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { buildPlugin } from '../cli/kubectl-kapi/plugin-binary.js';
import { login, refreshGrant } from './client.js';
import { kubectlBinary, type KubectlRun } from './forwarding-kubectl.js';
import { RUN_LABEL, startE2E, waitFor, type E2E } from './harness.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Plugin-password-1';
/** Short enough to outlive within a test; the server accepts a token up to 10 s past its expiry. */
const ACCESS_TOKEN_SECONDS = 3;

let e2e: E2E;
let home: string;
let pluginDir: string;
let user: string;
/** `kubectl get nodes` of this run's node, by name. */
let getNodes: string[];
let nodeLine: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  pluginDir = await buildPlugin();
  home = mkdtempSync(join(tmpdir(), 'kapi-e2e-plugin-'));
  const node = await e2e.createNode('plugin');
  nodeLine = `node/${node}\n`;
  getNodes = ['get', 'nodes', '-l', `${RUN_LABEL}=${e2e.runId}`, '-o', 'name'];
  user = await e2e.createUser('plugin', PASSWORD);
  await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }]);
  await e2e.admin.request({
    method: 'PATCH',
    path: `/apis/installer.kapi.io/v1alpha1/namespaces/${e2e.configuration.namespace}/clusterconfigurations/${e2e.configuration.name}`,
    contentType: 'application/merge-patch+json',
    body: { spec: { authentication: { accessTokenMaxAge: `${ACCESS_TOKEN_SECONDS}s` } } },
  });
  // applied once a login answers with the new lifetime
  await waitFor(async () => (await login(e2e.kapiUrl, user, PASSWORD)).expires_in === ACCESS_TOKEN_SECONDS);
}, 120_000);

afterAll(async () => {
  if (home) rmSync(home, { recursive: true, force: true });
  await e2e?.stop();
});

/** kubectl with a private HOME and kubeconfig, the plugin first on the PATH, stdin not a terminal. */
function kubectl(args: string[], extraEnv: Record<string, string> = {}, stdin = ''): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBinary(), args, {
      env: {
        PATH: `${pluginDir}${delimiter}${process.env.PATH ?? ''}`,
        HOME: home,
        KUBECONFIG: join(home, '.kube', 'config'),
        ...extraEnv,
      },
    });
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
    child.stdin.end(stdin);
  });
}

interface CacheFile {
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
}

function cacheFiles(): string[] {
  const dir = join(home, '.kube', 'cache', 'kapi');
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

function readCache(): CacheFile {
  const files = cacheFiles();
  expect(files).toHaveLength(1);
  return JSON.parse(readFileSync(files[0]!, 'utf8')) as CacheFile;
}

async function nodesStatus(token: string): Promise<number> {
  const res = await fetch(`${e2e.kapiUrl}/kapis/resources.kapi.io/v1alpha3/nodes?limit=0`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  await res.arrayBuffer();
  return res.status;
}

describe('when a user logs in with kubectl kapi login and then uses plain kubectl', () => {
  it('then login writes a context whose user is the exec plugin, current, and caches the tokens 0600', async () => {
    const run = await kubectl(['kapi', 'login', '--server', e2e.kapiHttpsUrl, '--certificate-authority', e2e.caFile!], {
      KAPI_USERNAME: user,
      KAPI_PASSWORD: PASSWORD,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`as ${user}`);

    const kubeconfigPath = join(home, '.kube', 'config');
    expect(statSync(kubeconfigPath).mode & 0o777).toBe(0o600);
    const config = parse(readFileSync(kubeconfigPath, 'utf8'));
    const context = config.contexts.find((entry: { name: string }) => entry.name === config['current-context']);
    const exec = config.users.find((entry: { name: string }) => entry.name === context.context.user).user.exec;
    expect(exec).toMatchObject({
      apiVersion: 'client.authentication.k8s.io/v1',
      command: 'kubectl-kapi',
      args: ['token', '--server', e2e.kapiHttpsUrl, '--username', user],
      interactiveMode: 'IfAvailable',
      provideClusterInfo: true,
    });
    expect(JSON.stringify(config)).not.toContain(PASSWORD);

    const [file] = cacheFiles();
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    expect(statSync(join(file!, '..')).mode & 0o777).toBe(0o700);
    expect(readFileSync(file!, 'utf8')).not.toContain(PASSWORD);
  });

  it('then kubectl get nodes works with the cached token, and again after it expired, refreshed without a prompt', async () => {
    const first = await kubectl(getNodes);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(nodeLine);
    const before = readCache();

    // the server refuses the cached access token from now on (expiry plus its clock tolerance)
    await waitFor(async () => (await nodesStatus(before.accessToken)) === 401);

    // no password anywhere, stdin not a terminal: only the refresh grant can make this work
    const second = await kubectl(getNodes);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const after = readCache();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(await nodesStatus(after.accessToken)).toBe(200);
  }, 60_000);

  it('then kubectl kapi logout revokes the session and deletes the cache; kubectl then asks to log in again', async () => {
    const { refreshToken, accessToken } = readCache();
    const run = await kubectl(['kapi', 'logout']);
    expect(run.code).toBe(0);
    expect(cacheFiles()).toEqual([]);
    expect(await nodesStatus(accessToken)).toBe(401);
    const refreshed = await refreshGrant(e2e.kapiUrl, refreshToken);
    expect([refreshed.status, ((await refreshed.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);

    const denied = await kubectl(['get', 'nodes']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('kubectl kapi login --server');
  });

  it('then on a terminal the plugin asks for the password, without echoing it, and the command goes on', async () => {
    // util-linux script(1) gives kubectl a pseudo-terminal, so kubectl allows the prompt (interactiveMode IfAvailable)
    const child = spawn('script', ['-qfec', [kubectlBinary(), ...getNodes].join(' '), '/dev/null'], {
      env: {
        PATH: `${pluginDir}${delimiter}${process.env.PATH ?? ''}`,
        HOME: home,
        KUBECONFIG: join(home, '.kube', 'config'),
        TERM: 'dumb',
      },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitFor(() => output.includes(`Password for ${user} at ${e2e.kapiHttpsUrl}: `));
      child.stdin.write(`${PASSWORD}\r`);
      expect(await closed).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    expect(output.replaceAll('\r\n', '\n')).toContain(nodeLine);
    expect(output).not.toContain(PASSWORD);
    expect(cacheFiles()).toHaveLength(1);
  }, 60_000);

  it('then a script can log in again with --password-stdin', async () => {
    const run = await kubectl(
      [
        'kapi',
        'login',
        '--server',
        e2e.kapiHttpsUrl,
        '--certificate-authority',
        e2e.caFile!,
        '--username',
        user,
        '--password-stdin',
      ],
      {},
      `${PASSWORD}\n`,
    );
    expect(run.code).toBe(0);
    const nodes = await kubectl(getNodes);
    expect(nodes).toMatchObject({ code: 0, stdout: nodeLine });
  });

  it('then a wrong password is refused with the server’s reason and nothing is written', async () => {
    const other = mkdtempSync(join(tmpdir(), 'kapi-e2e-plugin-other-'));
    try {
      const run = await kubectl(
        ['kapi', 'login', '--server', e2e.kapiHttpsUrl, '--certificate-authority', e2e.caFile!],
        {
          KAPI_USERNAME: user,
          KAPI_PASSWORD: 'not-the-password',
          HOME: other,
          KUBECONFIG: join(other, 'config'),
        },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/invalid_grant/);
      expect(run.stderr).not.toContain('not-the-password');
      expect(readdirSync(other)).toEqual([]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('when a user downloads the console’s kubeconfig (resources.kapi.io users/{user}/kubeconfig)', () => {
  const kubeconfigOf = async (name: string, token: string) => {
    const res = await fetch(`${e2e.kapiUrl}/kapis/resources.kapi.io/v1alpha2/users/${name}/kubeconfig`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };

  it('then it names kapi’s HTTPS address and CA, holds no credential, and plain kubectl works with it as the user', async () => {
    const token = (await login(e2e.kapiUrl, user, PASSWORD)).access_token;
    const answer = await kubeconfigOf(user, token);
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^text\/plain/);
    expect(answer.text).not.toContain(token);
    expect(answer.text).not.toContain(PASSWORD);
    const config = parse(answer.text);
    expect(config.clusters[0].cluster).toEqual({
      server: e2e.kapiHttpsUrl,
      'certificate-authority-data': Buffer.from(readFileSync(e2e.caFile!, 'utf8')).toString('base64'),
    });
    expect(config.users[0].user.exec).toMatchObject({
      command: 'kubectl-kapi',
      args: ['token', '--server', e2e.kapiHttpsUrl, '--username', user],
    });
    // a fresh HOME: no cached token; the plugin signs the user in (a script's password) when kubectl first asks
    const fresh = mkdtempSync(join(tmpdir(), 'kapi-e2e-kubeconfig-'));
    try {
      const file = join(fresh, 'kubeconfig.yaml');
      writeFileSync(file, answer.text);
      const run = await kubectl(getNodes, { HOME: fresh, KUBECONFIG: file, KAPI_PASSWORD: PASSWORD });
      expect(run).toMatchObject({ code: 0, stdout: nodeLine });
      // as the user, not as anyone more: the user may not list namespaces
      const refused = await kubectl(['get', 'namespaces'], { HOME: fresh, KUBECONFIG: file });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(`User "${user}" cannot list resource "namespaces"`);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 60_000);

  it('then another user’s is refused without the right, an unknown user’s is 404, and no token is 401, each a Status', async () => {
    const other = await e2e.createUser('plugin-other', PASSWORD);
    const token = (await login(e2e.kapiUrl, user, PASSWORD)).access_token;
    const theirs = await kubeconfigOf(other, token);
    expect([theirs.status, JSON.parse(theirs.text).kind]).toEqual([403, 'Status']);
    // one who may read users' kubeconfigs (a support desk): there is no credential in them to give away
    const desk = await e2e.createUser('plugin-desk', PASSWORD);
    await e2e.grant(desk, [{ apiGroups: ['resources.kapi.io'], resources: ['users/kubeconfig'], verbs: ['get'] }]);
    const deskToken = (await login(e2e.kapiUrl, desk, PASSWORD)).access_token;
    await waitFor(async () => (await kubeconfigOf(other, deskToken)).status === 200);
    expect(parse((await kubeconfigOf(other, deskToken)).text).users[0].user.exec.args).toContain(other);
    const ghost = await kubeconfigOf(e2e.name('ghost'), deskToken);
    expect([ghost.status, JSON.parse(ghost.text).kind]).toEqual([404, 'Status']);
    expect((await kubeconfigOf(user, '')).status).toBe(401);
  }, 60_000);
});
