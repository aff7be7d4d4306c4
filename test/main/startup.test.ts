/**
 * kapi-apiserver as `make run` starts it (the built dist/src/main.js, a process of its own) on a newcomer's machine:
 * a ~/.kube/config written by `kubectl kapi login` is a kapi, not a cluster, so the sandbox starts (and says why);
 * the start-up prints the admin password ready to paste; `--version` answers. (The sandbox's certificate kept across
 * restarts: test/server/server-options.test.ts, as a port of 0 turns this process's HTTPS listener off.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from '../e2e/harness.js';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { stringify } from 'yaml';
import { startDirectory } from '../../src/sandbox/directory/directory.js';

const MAIN = resolve('dist/src/main.js');
let dir: string;
let home: string;
const running: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  output: () => string;
  /** The start-up line ('kapi-apiserver listening'). */
  listening: Record<string, string>;
}

/** Starts kapi; it counts as started once the output shows `ready` (the admin password's last line by default). */
function start(
  args: string[] = [],
  cwd = dir,
  ready = '(A new one at every start',
  extraEnv: Record<string, string> = {},
): Promise<Started> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      PORT: '0',
      TLS_PORT: '0',
      METRICS_PORT: '0',
      KAPI_SANDBOX_NODES: '3',
      ...extraEnv,
    },
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolvePromise, reject) => {
    const look = () => {
      const line = output.split('\n').find((text) => text.includes('"kapi-apiserver listening"'));
      // the password lines come right after the start-up line
      if (line && output.includes(ready)) {
        resolvePromise({ child, output: () => output, listening: JSON.parse(line) as Record<string, string> });
      }
    };
    child.stdout!.on('data', look);
    child.on('exit', (code) => reject(new Error(`kapi-apiserver exited (${code}) before listening:\n${output}`)));
  });
}

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: home },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolvePromise) => child.on('close', (code) => resolvePromise({ code, output })));
}

/** The slapd processes whose parent is a kapi of this test (read from /proc). */
const slapdPids = () => childPids('slapd');

/** The processes named `name` whose parent is a kapi of this test (read from /proc). */
async function childPids(name: string): Promise<number[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const parents = new Set(running.map((child) => child.pid));
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const match = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
    if (match?.[1] === name && parents.has(Number(match[2]))) pids.push(Number(entry));
  }
  return pids;
}

async function stop(started: Started): Promise<void> {
  const exited = new Promise((resolvePromise) => started.child.once('exit', resolvePromise));
  started.child.kill('SIGTERM');
  await exited;
}

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build (make test does)`);
  dir = mkdtempSync(join(tmpdir(), 'kapi-startup-'));
  home = join(dir, 'home');
  // what `kubectl kapi login --server https://127.0.0.1:9443 …` writes into ~/.kube/config
  mkdirSync(join(home, '.kube'), { recursive: true });
  writeFileSync(
    join(home, '.kube', 'config'),
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kapi-127.0.0.1:9443', cluster: { server: 'https://127.0.0.1:9443' } }],
      users: [
        {
          name: 'admin@kapi-127.0.0.1:9443',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: 'kubectl-kapi',
              args: ['token', '--server', 'https://127.0.0.1:9443', '--username', 'admin'],
              interactiveMode: 'IfAvailable',
              provideClusterInfo: true,
            },
          },
        },
      ],
      contexts: [
        {
          name: 'admin@kapi-127.0.0.1:9443',
          context: { cluster: 'kapi-127.0.0.1:9443', user: 'admin@kapi-127.0.0.1:9443' },
        },
      ],
      'current-context': 'admin@kapi-127.0.0.1:9443',
    }),
  );
});

afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('kapi-apiserver started as make run starts it', () => {
  it('when ~/.kube/config is the one kubectl kapi login wrote, then the sandbox starts on loopback, saying why', async () => {
    const started = await start();
    expect(started.listening.cluster).toMatch(/\(sandbox\)$/);
    expect(started.listening.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(started.output()).toContain(
      `the kubeconfig context \\"admin@kapi-127.0.0.1:9443\\" logs in with kapi's own plugin (kubectl-kapi`,
    );
    expect(started.output()).toContain('starting the built-in sandbox instead');
    await stop(started);
  }, 120_000);

  it('when it has started, then the admin password is printed ready to paste, and it logs in', async () => {
    const started = await start();
    const match = /^ {2}export PASSWORD='([^']+)'$/m.exec(started.output());
    expect(match).not.toBeNull();
    const res = await fetch(`${started.listening.http}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'admin',
        password: match![1]!,
        client_id: 'kapi',
        client_secret: 'kapi',
      }),
    });
    expect(res.status).toBe(200);
    await stop(started);
  }, 120_000);

  it('when started with --sandbox-directory=demo, then the start-up says how to log in as the directory user, whose directory group may read the demo namespace only', async () => {
    const started = await start(['--sandbox-directory=demo'], dir, 'client_secret=kapi\n');
    const output = started.output();
    expect(output).toMatch(
      /Directory user \(LDAP provider "directory", a local slapd at ldaps:\/\/127\.0\.0\.1:\d+\): demo, in the directory group demo-team, which may view the namespace demo/,
    );
    const password = /^ {2}export DEMO_PASSWORD='([^']+)'$/m.exec(output)?.[1];
    expect(password).toBeDefined();
    // the printed command, with this process's port
    expect(output).toContain(`curl -s -X POST localhost:${new URL(started.listening.http!).port}/oauth/token`);
    const login = async (username: string, secret: string) =>
      fetch(`${started.listening.http}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'password',
          username,
          password: secret,
          client_id: 'kapi',
          client_secret: 'kapi',
        }),
      });
    expect((await login('demo', `${password!}x`)).status).toBe(400);
    const answer = await login('demo', password!);
    expect(answer.status).toBe(200);
    const { access_token: token } = (await answer.json()) as { access_token: string };
    const read = (path: string) =>
      fetch(`${started.listening.http}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    const pods = await read('/api/v1/namespaces/demo/pods?limit=1');
    expect(pods.status).toBe(200);
    expect(((await pods.json()) as { items: unknown[] }).items).toHaveLength(1);
    expect((await read('/api/v1/namespaces/kube-system/pods?limit=1')).status).toBe(403);
    // the User the login created, linked to the directory entry (read as admin)
    const adminPassword = /^ {2}export PASSWORD='([^']+)'$/m.exec(output)![1]!;
    const admin = (await (await login('admin', adminPassword)).json()) as { access_token: string };
    const user = (await (
      await fetch(`${started.listening.http}/apis/iam.kapi.io/v1beta1/users/demo`, {
        headers: { Authorization: `Bearer ${admin.access_token}` },
      })
    ).json()) as { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
    expect(user.metadata.labels['iam.kapi.io/identity-provider']).toBe('directory');
    expect(user.metadata.annotations['iam.kapi.io/upstream-user-id']).toBe('uid=demo,ou=people,dc=kapi,dc=test');
    // stopping kapi stops its slapd
    const [slapdPid] = await slapdPids();
    expect(slapdPid).toBeDefined();
    await stop(started);
    expect(existsSync(`/proc/${slapdPid!}`)).toBe(false);
  }, 120_000);

  it('when --sandbox-directory names a directory URL, then its users log in with their directory password and their memberOf groups', async () => {
    const directory = await startDirectory();
    try {
      const userDN = await directory.addUser({ uid: 'ursula', password: 'Ursula-Dir3ctory' });
      await directory.addGroup('operators', [userDN]);
      writeFileSync(join(dir, 'directory-ca.pem'), directory.slapd.caPem);
      // ldap:// with StartTLS (the certificate verified against the CA file), the search account from the environment
      const url = `${directory.slapd.ldapUrl}/${encodeURIComponent(directory.peopleDN)}`;
      const started = await start([`--sandbox-directory=${url}`], dir, 'through kapi as admin', {
        KAPI_SANDBOX_DIRECTORY_BIND_DN: directory.serviceDN,
        KAPI_SANDBOX_DIRECTORY_BIND_PASSWORD: directory.servicePassword,
        KAPI_SANDBOX_DIRECTORY_CA_FILE: join(dir, 'directory-ca.pem'),
      });
      expect(started.output()).toContain(
        `Directory logins (LDAP provider "directory" at ${directory.slapd.ldapUrl}): the users under ${directory.peopleDN} log in`,
      );
      expect(started.output()).not.toContain(directory.servicePassword);
      const answer = await fetch(`${started.listening.http}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'password',
          username: 'ursula',
          password: 'Ursula-Dir3ctory',
          client_id: 'kapi',
          client_secret: 'kapi',
        }),
      });
      expect(answer.status).toBe(200);
      const { access_token: token } = (await answer.json()) as { access_token: string };
      // the access token's groups claim: the directory group, from memberOf
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as {
        groups?: string[];
      };
      expect(claims.groups).toContain('operators');
      await stop(started);
    } finally {
      await directory.stop({ remove: true });
    }
  }, 120_000);

  it('when started with --sandbox-monitoring, then a local Prometheus feeds the charts, each node’s pod count as the sandbox has them, and goes with kapi', async () => {
    const started = await start(['--sandbox-monitoring'], dir, "the console's charts read them through kapi");
    const prometheus = /a local Prometheus at (http:\/\/127\.0\.0\.1:\d+) /.exec(started.output())?.[1];
    expect(prometheus).toBeDefined();
    const password = /^ {2}export PASSWORD='([^']+)'$/m.exec(started.output())![1]!;
    const login = await fetch(`${started.listening.http}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'admin',
        password,
        client_id: 'kapi',
        client_secret: 'kapi',
      }),
    });
    const { access_token: token } = (await login.json()) as { access_token: string };
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const read = async (path: string): Promise<any> =>
      (await fetch(`${started.listening.http}${path}`, { headers: { Authorization: `Bearer ${token}` } })).json();
    expect((await read('/kapis/config.kapi.io/v1alpha2/configs/configz')).monitoring).toBe(true);
    // once Prometheus has scraped twice and evaluated its rules, every node has its running pods counted
    let counts: Map<string, number> = new Map();
    await waitFor(async () => {
      const answer = await read('/kapis/monitoring.kapi.io/v1alpha3/nodes?metrics_filter=node_pod_running_count$');
      const series: { metric: { node: string }; value: [number, string] }[] = answer.results[0]?.data?.result ?? [];
      counts = new Map(series.map((s) => [s.metric.node, Number(s.value[1])]));
      return counts.size === 3;
    });
    const pods = await read('/api/v1/pods');
    for (const [node, count] of counts) {
      const running = pods.items.filter(
        (pod: { spec: { nodeName?: string }; status: { phase?: string } }) =>
          pod.spec.nodeName === node && pod.status.phase === 'Running',
      );
      expect({ node, count }).toEqual({ node, count: running.length });
    }
    const [prometheusPid] = await childPids('prometheus');
    expect(prometheusPid).toBeDefined();
    await stop(started);
    expect(existsSync(`/proc/${prometheusPid!}`)).toBe(false);
  }, 180_000);

  it('when --sandbox-directory is not demo nor an LDAP URL with a base DN, then it refuses to start and says why', async () => {
    const plain = await run(['--sandbox-directory=https://ldap.example.com/dc=x']);
    expect(plain.code).toBe(2);
    expect(plain.output).toContain('--sandbox-directory must be demo or an ldaps:// or ldap:// URL');
    const noDn = await run(['--sandbox-directory=ldaps://ldap.example.com']);
    expect(noDn.code).toBe(2);
    expect(noDn.output).toContain("--sandbox-directory: the URL's path must be the users' base DN");
  }, 60_000);

  it('when --cluster=kubeconfig names that kubeconfig, then it refuses to start and says why', async () => {
    const { code, output } = await run(['--cluster=kubeconfig']);
    expect(code).toBe(2);
    expect(output).toMatch(/--cluster=kubeconfig, but the kubeconfig context "admin@kapi-127\.0\.0\.1:9443" logs in/);
  }, 60_000);

  it('when --version is given, then it prints the version and exits', async () => {
    const { code, output } = await run(['--version']);
    expect(code).toBe(0);
    expect(output).toMatch(/^kapi-apiserver \d+\.\d+\.\d+ \(Node\.js v\d+/);
  }, 60_000);
});
