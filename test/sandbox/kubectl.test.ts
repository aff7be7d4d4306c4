import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/sandbox/index.js';
import https from 'node:https';
import { testSandbox, type Json } from './helpers.js';

/** The real kubectl (make tools) straight against the sandbox over HTTPS, as a developer would point it. */
const KUBECTL = join(process.cwd(), '.cache/tools/kubectl/kubectl');
const haveKubectl = existsSync(KUBECTL);

let sandbox: Sandbox;
let dir: string;

function kubectl(
  args: string[],
  options: { stdin?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = [
    '--kubeconfig',
    join(dir, 'empty'),
    '--server',
    sandbox.url,
    '--certificate-authority',
    join(dir, 'ca.crt'),
    '--token',
    sandbox.adminToken,
  ];
  return new Promise((resolve) => {
    const child = spawn(KUBECTL, [...base, ...args], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs ?? 15_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** JSON over HTTPS trusting the sandbox CA (fetch has no per-request CA option). */
function request(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      sandbox.url + path,
      {
        method,
        ca: sandbox.caPem,
        headers: { Authorization: `Bearer ${sandbox.adminToken}`, 'Content-Type': 'application/merge-patch+json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

(haveKubectl ? describe : describe.skip)('real kubectl against the sandbox (tls)', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-kubectl-'));
    sandbox = await testSandbox({ tls: true, nodes: 3, podsPerNode: 2 });
    writeFileSync(join(dir, 'ca.crt'), sandbox.caPem!);
    writeFileSync(join(dir, 'empty'), '');
  });
  afterAll(async () => {
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('when kubectl gets nodes, then it lists the seeded nodes', async () => {
    const run = await kubectl(['get', 'nodes', '-o', 'name']);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(['node/node-1', 'node/node-2', 'node/node-3']);
  });

  test('when kubectl applies, re-applies and deletes a ConfigMap, then each step lands', async () => {
    const manifest = (value: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: default\ndata:\n  a: "${value}"\n`;
    expect((await kubectl(['apply', '-f', '-'], { stdin: manifest('1') })).stdout).toMatch(
      /configmap\/applied created/,
    );
    expect((await kubectl(['apply', '-f', '-'], { stdin: manifest('2') })).stdout).toMatch(
      /configmap\/applied configured/,
    );
    const stored = await request('GET', '/api/v1/namespaces/default/configmaps/applied');
    expect(stored.body.data).toEqual({ a: '2' });
    expect((await kubectl(['delete', 'configmap', 'applied', '-n', 'default'])).stdout).toMatch(/deleted/);
    expect((await request('GET', '/api/v1/namespaces/default/configmaps/applied')).status).toBe(404);
  });

  test('when kubectl asks who it is, then it is the sandbox admin', async () => {
    const run = await kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('sandbox-admin');
  });

  test('when kubectl creates RBAC objects, then auth can-i answers from them', async () => {
    const canI = (args: string[]) => kubectl(['auth', 'can-i', ...args]);
    expect((await canI(['list', 'nodes', '--as=rita'])).stdout.trim()).toBe('no');
    const steps = [
      ['create', 'clusterrole', 'node-reader', '--verb=get,list,watch', '--resource=nodes'],
      ['create', 'clusterrolebinding', 'node-reader-rita', '--clusterrole=node-reader', '--user=rita'],
      ['create', 'role', 'cm-editor', '-n', 'default', '--verb=get,update', '--resource=configmaps'],
      ['create', 'rolebinding', 'cm-editor', '-n', 'default', '--role=cm-editor', '--serviceaccount=default:builder'],
    ];
    for (const step of steps) {
      const run = await kubectl(step);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    expect((await canI(['list', 'nodes', '--as=rita'])).stdout.trim()).toBe('yes');
    expect((await canI(['delete', 'nodes', '--as=rita'])).stdout.trim()).toBe('no');
    const builder = '--as=system:serviceaccount:default:builder';
    expect((await canI(['update', 'configmaps', '-n', 'default', builder])).stdout.trim()).toBe('yes');
    expect((await canI(['update', 'configmaps', '-n', 'kube-system', builder])).stdout.trim()).toBe('no');
    expect((await kubectl(['delete', 'clusterrolebinding', 'node-reader-rita'])).code).toBe(0);
    expect((await canI(['list', 'nodes', '--as=rita'])).stdout.trim()).toBe('no');
  });

  test('when kubectl watches nodes and one changes, then the change is printed', async () => {
    const watching = kubectl(['get', 'nodes', '-w', '-o', 'name', '--request-timeout=3s'], { timeoutMs: 4000 });
    await new Promise((r) => setTimeout(r, 700));
    await request('PATCH', '/api/v1/nodes/node-2', { metadata: { labels: { touched: 'yes' } } });
    const run = await watching;
    expect(run.stdout.split('\n').filter((l) => l === 'node/node-2').length).toBeGreaterThanOrEqual(2);
  });
});
