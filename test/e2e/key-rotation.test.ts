/**
 * Signing-key rotation on two replicas, following the README's "Rotating the token signing key" literally: its shell
 * block is read from README.md and run step by step with bash, openssl and the real kubectl (through kapi's HTTPS
 * listener, as a user allowed to patch Secrets). Only the namespace and the Secret's name are this run's. Between the
 * steps the test checks what the README promises: after step 1 the new key is published in the JWKS of both replicas
 * while the old key still signs; after step 2 new tokens name the new key and old ones keep working (access and
 * refresh); after step 3 only the old key's tokens stop. On the sandbox or the cluster KUBECONFIG names.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stringify } from 'yaml';
import { login, refreshGrant, type TokenPair } from './client.js';
import { kubectlBinary } from './forwarding-kubectl.js';
import { assertTarget } from './forwarding-target.js';
import { startE2E, waitFor, type E2E } from './harness.js';

const PASSWORD = 'e2e-Rotation-password-1';
const NODES = '/kapis/resources.kapi.io/v1alpha3/nodes?limit=0';

let e2e: E2E;
let replicas: string[];
let user: string;
let dir: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  replicas = [e2e.kapiUrl, `http://127.0.0.1:${(await e2e.startReplica()).httpPort}`];
  user = await e2e.createUser('rotation', PASSWORD);
  await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }]);
  dir = mkdtempSync(join(tmpdir(), 'kapi-e2e-rotation-'));
});

afterAll(async () => {
  script?.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
  await e2e?.stop();
});

async function status(replica: string, token: string): Promise<number> {
  const res = await fetch(`${replica}${NODES}`, { headers: { Authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

function kidOf(token: string): string | undefined {
  return (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: string }).kid;
}

async function jwksKids(replica: string): Promise<string[]> {
  const res = await fetch(`${replica}/.well-known/jwks.json`);
  return ((await res.json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
}

/** Logs in on a replica until its token names `kid`: the replica has seen the Secret change. */
async function loginSigned(replica: string, kid: string): Promise<TokenPair> {
  let tokens: TokenPair | undefined;
  await waitFor(async () => {
    tokens = await login(replica, user, PASSWORD);
    return kidOf(tokens.access_token) === kid;
  });
  return tokens!;
}

/** The README's rotation block: the line that sets NS and KID, then the commands of steps 1, 2 and 3. */
function readmeRotation(): { prelude: string; steps: string[] } {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Rotating the token signing key'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no shell block under "Rotating the token signing key"');
  const [prelude, ...rest] = block.trimEnd().split('\n');
  const steps: string[] = [];
  for (const line of rest) {
    if (/^# \d\. /.test(line)) steps.push('');
    steps[steps.length - 1] += `${line}\n`;
  }
  if (!prelude?.startsWith('NS=') || steps.length !== 3) throw new Error(`unexpected rotation block:\n${block}`);
  return { prelude, steps };
}

let script: ChildProcessWithoutNullStreams | undefined;
let output = '';

/** Runs the README's block in one bash (one KID for all steps), pausing after each step until `next()` is called. */
async function startReadmeScript(): Promise<{ kid: string; stepDone(step: number): Promise<void>; next(): void }> {
  const { prelude, steps } = readmeRotation();
  // This run's namespace and Secret in place of the chart's kapi-system/kapi-apiserver-jwt; nothing else changes.
  const ours = (text: string) =>
    text.replace(/^NS=kapi-system /, `NS=${e2e.runId} `).replaceAll('kapi-apiserver-jwt', 'kapi-jwt');
  const lines = ['set -euo pipefail', ours(prelude), 'echo "kid=$KID"'];
  steps.forEach((step, i) => {
    lines.push(ours(step), `echo "step ${i + 1} done"`);
    if (i < steps.length - 1) lines.push('read -r _');
  });
  // kubectl talks to kapi's HTTPS listener as a user allowed to read and patch Secrets in this run's namespace.
  const operator = await e2e.createUser('rotation-operator', PASSWORD);
  await e2e.grant(operator, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'patch'] }]);
  const token = (await login(e2e.kapiUrl, operator, PASSWORD)).access_token;
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kapi', cluster: { server: e2e.kapiHttpsUrl, 'certificate-authority': e2e.caFile } }],
      users: [{ name: 'operator', user: { token } }],
      contexts: [{ name: 'kapi', context: { cluster: 'kapi', user: 'operator' } }],
      'current-context': 'kapi',
    }),
    { mode: 0o600 },
  );
  script = spawn('bash', ['-c', lines.join('\n')], {
    cwd: dir,
    env: {
      PATH: `${dirname(kubectlBinary())}${delimiter}${process.env.PATH ?? ''}`,
      HOME: dir,
      KUBECONFIG: kubeconfig,
    },
  });
  script.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  script.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => script!.on('close', resolve));
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  const said = async (text: string) => {
    await waitFor(() => {
      if (code !== undefined && !output.includes(text)) throw new Error(`the README's steps failed:\n${output}`);
      return output.includes(text);
    });
  };
  await said('kid=');
  const kid = /kid=(\S+)/.exec(output)![1]!;
  return {
    kid,
    stepDone: (step) => said(`step ${step} done`),
    next: () => script!.stdin.write('\n'),
  };
}

describe('when the signing key is rotated as the README says while two replicas run', () => {
  let before: TokenPair[];
  let readme: Awaited<ReturnType<typeof startReadmeScript>>;

  it('then, before the rotation, tokens name the legacy key and work on both replicas', async () => {
    before = await Promise.all(replicas.map((replica) => login(replica, user, PASSWORD)));
    for (const tokens of before) {
      expect(kidOf(tokens.access_token)).toBe('key');
      for (const replica of replicas) expect(await status(replica, tokens.access_token)).toBe(200);
    }
  });

  it('then after step 1 both replicas publish the new public key, and the old key still signs', async () => {
    readme = await startReadmeScript();
    await readme.stepDone(1);
    for (const replica of replicas) {
      await waitFor(async () => (await jwksKids(replica)).includes(readme.kid));
      const tokens = await login(replica, user, PASSWORD);
      expect(kidOf(tokens.access_token)).toBe('key');
      for (const other of replicas) expect(await status(other, tokens.access_token)).toBe(200);
    }
    for (const tokens of before)
      for (const replica of replicas) expect(await status(replica, tokens.access_token)).toBe(200);
  });

  it('then after step 2 new tokens name the new key on both replicas, and old tokens stay valid', async () => {
    readme.next();
    await readme.stepDone(2);
    const after = await Promise.all(replicas.map((replica) => loginSigned(replica, readme.kid)));
    for (const tokens of [...before, ...after]) {
      for (const replica of replicas) expect(await status(replica, tokens.access_token)).toBe(200);
    }
    // a refresh token of the old key still refreshes, and the new pair is signed with the new key
    const refreshed = await refreshGrant(replicas[1]!, before[0]!.refresh_token);
    expect(refreshed.status).toBe(200);
    const pair = (await refreshed.json()) as TokenPair;
    expect([kidOf(pair.access_token), kidOf(pair.refresh_token)]).toEqual([readme.kid, readme.kid]);
    before = [pair, before[1]!];
  });

  it('then after step 3 only the tokens the old key signed end, on both replicas', async () => {
    const oldAccess = before[1]!.access_token;
    expect(kidOf(oldAccess)).toBe('key');
    readme.next();
    await readme.stepDone(3);
    for (const replica of replicas) {
      await waitFor(async () => (await status(replica, oldAccess)) === 401);
      expect(await status(replica, before[0]!.access_token)).toBe(200);
      expect(await jwksKids(replica)).toEqual([readme.kid]);
    }
  });
});
