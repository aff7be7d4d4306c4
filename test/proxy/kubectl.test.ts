/**
 * The real kubectl (client-go) through the forwarder to the sandbox kube-apiserver, over kapi's HTTPS listener with a
 * generated certificate: discovery and get, a watch, exec over WebSocket (v5.channel.k8s.io), and the refusals. The
 * sandbox honours impersonation only from kapi's service account and records the effective user, so its audit shows
 * whether kube-apiserver saw the caller. Authentication is the harness's fake (one token is alice): the full server
 * pipeline has its own e2e test.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KAPI_SERVICE_ACCOUNT } from '../../src/sandbox/policy.js';
import { generatedCertificate } from '../support/certificates.js';
import { ALICE, startKapi, until, USER_TOKEN, type Kapi } from './harness.js';

const KUBECTL = join(process.cwd(), '.cache/tools/kubectl/kubectl');
const haveKubectl = existsSync(KUBECTL);
if (!haveKubectl) console.warn(`skipping: no kubectl at ${KUBECTL} (make tools)`);

let sandbox: Sandbox;
let kapi: Kapi;
let dir: string;
let caFile: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The connection flags; no kubeconfig or cache from the machine is used. */
function connectionFlags(token = USER_TOKEN): string[] {
  return [
    `--server=${kapi.url}`,
    `--certificate-authority=${caFile}`,
    `--token=${token}`,
    `--cache-dir=${join(dir, 'cache')}`,
  ];
}

function spawnKubectl(args: string[], token?: string) {
  return spawn(KUBECTL, [...connectionFlags(token), ...args], {
    env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: join(dir, 'empty-kubeconfig') },
  });
}

/** Runs kubectl to completion (killed after `timeoutMs`). */
function kubectl(args: string[], options: { token?: string; stdin?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawnKubectl(['--request-timeout=10s', ...args], options.token);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

(haveKubectl ? describe : describe.skip)('real kubectl through the forwarder', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-kubectl-'));
    writeFileSync(join(dir, 'empty-kubeconfig'), '');
    sandbox = await startSandbox({ nodes: 3, podsPerNode: 2, logger: createLogger('error', { silent: true }) });
    sandbox.policy.allow({
      users: [ALICE.username],
      verbs: ['get', 'list', 'watch'],
      apiGroups: [''],
      resources: ['nodes', 'pods'],
    });
    sandbox.policy.allow({
      users: [ALICE.username],
      verbs: ['get', 'create'],
      apiGroups: [''],
      resources: ['pods/exec'],
    });
    const certificate = await generatedCertificate(dir);
    caFile = certificate.caFile!;
    const connection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
    kapi = await startKapi(sandbox.url, { connection, tls: { key: certificate.key, cert: certificate.cert } });
  }, 30_000);

  afterAll(async () => {
    await kapi?.stop();
    await sandbox?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('when alice runs kubectl get nodes over HTTPS, then she sees the nodes and kube-apiserver saw alice, via kapi', async () => {
    const run = await kubectl(['get', 'nodes', '-o', 'name']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(3);
    expect(run.stdout).toMatch(/^node\//);
    const seen = sandbox.audit.filter((entry) => entry.path === '/api/v1/nodes' && entry.verb === 'list');
    expect(seen.at(-1)).toMatchObject({ user: 'alice', impersonatedBy: KAPI_SERVICE_ACCOUNT, code: 200 });
    expect(seen.at(-1)!.groups).toEqual(expect.arrayContaining(['dev', 'system:authenticated']));
  });

  it('when alice watches nodes with kubectl get -w, then a change made afterwards is printed', async () => {
    const nodes = (await kubectl(['get', 'nodes', '-o', 'name'])).stdout.trim().split('\n');
    const child = spawnKubectl(['get', 'nodes', '--watch-only', '-o', 'name']);
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    try {
      await until(() => sandbox.audit.some((entry) => entry.path === '/api/v1/nodes' && entry.verb === 'watch'));
      const name = nodes[0]!.replace('node/', '');
      const res = await fetch(`${sandbox.url}/api/v1/nodes/${name}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${sandbox.adminToken}`, 'Content-Type': 'application/merge-patch+json' },
        body: JSON.stringify({ metadata: { labels: { 'kapi.io/touched': 'yes' } } }),
      });
      expect(res.status).toBe(200);
      await until(() => stdout.includes(`node/${name}`));
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('when alice runs kubectl exec over WebSocket, then stdin comes back through the sandbox echo', async () => {
    const pods = (
      await kubectl([
        'get',
        'pods',
        '-A',
        '-o',
        'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}',
      ])
    ).stdout
      .trim()
      .split(' ');
    const [namespace, pod] = pods[0]!.split('/');
    const run = await kubectl(['exec', '-i', '-q', '-n', namespace!, pod!, '--', 'cat'], {
      stdin: 'hello through kapi\n',
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('hello through kapi\n');
    expect(run.code).toBe(0);
    const exec = sandbox.audit.filter((entry) => entry.path.endsWith(`/pods/${pod}/exec`));
    expect(exec.at(-1)).toMatchObject({ user: 'alice', impersonatedBy: KAPI_SERVICE_ACCOUNT });
  }, 30_000);

  it('when alice asks kubectl to impersonate (--as), then kapi refuses with 403 and kube-apiserver never sees it', async () => {
    const before = sandbox.audit.length;
    const run = await kubectl(['--as=admin', 'get', 'nodes']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/impersonation through kapi is not allowed/);
    expect(sandbox.audit.slice(before).filter((entry) => entry.user === 'admin')).toEqual([]);
  });

  it('when kubectl sends an unknown token, then it is told to log in and kube-apiserver never sees the request', async () => {
    const before = sandbox.audit.length;
    const run = await kubectl(['get', 'nodes'], { token: 'not-a-token' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/Unauthorized|must be logged in/);
    expect(sandbox.audit.length).toBe(before);
  });
});
