/**
 * The plugin as kubectl runs it (`kubectl-kapi token`), against a token endpoint that is hostile or broken: an answer
 * without end, a lifetime of 1e300, and against a cache that was damaged or opened to other users. It never reads an
 * answer whole, never crashes with a stack trace, and never uses tokens others may have read.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'selfsigned';
import { buildPlugin } from './plugin-binary.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

type Answer = (form: URLSearchParams, res: import('node:http').ServerResponse) => void;

let pluginDir: string;
let dir: string;
let caFile: string;
let server: https.Server;
let serverUrl: string;
let answer: Answer;
const grants: string[] = [];
/** Bytes the server managed to write into the last answer before the client went away. */
let sentBytes = 0;

beforeAll(async () => {
  pluginDir = await buildPlugin();
  dir = mkdtempSync(join(tmpdir(), 'kapi-plugin-hostile-'));
  const pems = await generate([{ name: 'commonName', value: 'hostile-kapi' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, pems.cert);
  server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      grants.push(form.get('grant_type') ?? '');
      answer(form, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

let home: string;
afterEach(() => {
  grants.length = 0;
});

function freshHome(): string {
  home = mkdtempSync(join(dir, 'home-'));
  return home;
}

const cacheDir = () => join(home, '.kube', 'cache', 'kapi');

function token(extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      join(pluginDir, 'kubectl-kapi'),
      ['token', '--server', serverUrl, '--username', 'alice', '--certificate-authority', caFile],
      { env: { PATH: process.env.PATH ?? '', HOME: home, KAPI_PASSWORD: 'pw', ...extraEnv }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

const tokens = (expiresIn: unknown) =>
  JSON.stringify({ access_token: 'access-1', refresh_token: 'refresh-1', token_type: 'Bearer', expires_in: expiresIn });

const goodAnswer: Answer = (_form, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(tokens(7200));

function cacheFiles(): string[] {
  try {
    return readdirSync(cacheDir()).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
}

describe('kubectl-kapi token against a hostile or broken server', () => {
  it('when the token answer never ends, then the plugin refuses it after 1 MiB, without reading it whole', async () => {
    freshHome();
    sentBytes = 0;
    answer = (_form, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"access_token":"');
      const chunk = 'a'.repeat(64 * 1024);
      // as fast as the client takes it, for ever (a 1 GiB answer, or more): only the client can end it
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) sentBytes += chunk.length;
      };
      res.on('drain', pump);
      pump();
    };
    const run = await token();
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/answered more than 1048576 bytes; refused/);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(run.stdout).toBe('');
    expect(cacheFiles()).toEqual([]);
    // it stopped reading soon after the limit: what the server got out is the limit plus the socket buffers
    expect(sentBytes).toBeLessThan(64 * 2 ** 20);
  }, 60_000);

  it('when the token answer declares more than 1 MiB, then it is refused before its body is read', async () => {
    freshHome();
    answer = (_form, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(2 ** 30) });
      res.write('{');
    };
    const run = await token();
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/more than 1048576 bytes; refused/);
  }, 60_000);

  it('when expires_in is 1e300, then the token is used once as expired, and the next call refreshes it', async () => {
    freshHome();
    answer = (_form, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(tokens(1e300));
    const first = await token();
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const credential = JSON.parse(first.stdout) as { status: { token: string; expirationTimestamp: string } };
    expect(credential.status.token).toBe('access-1');
    expect(Date.parse(credential.status.expirationTimestamp)).toBeLessThanOrEqual(Date.now());
    const [file] = cacheFiles();
    const cached = JSON.parse(readFileSync(join(cacheDir(), file!), 'utf8')) as {
      obtainedAt: number;
      expiresAt: number;
    };
    expect(cached.expiresAt).toBe(cached.obtainedAt);
    answer = goodAnswer;
    const second = await token();
    expect(second.code).toBe(0);
    expect(grants).toEqual(['password', 'refresh_token']);
  }, 60_000);

  it('when the cache says expiresAt 1e20, then it is taken as expired and refreshed, never "Invalid time value"', async () => {
    freshHome();
    answer = goodAnswer;
    expect((await token()).code).toBe(0);
    const [file] = cacheFiles();
    const path = join(cacheDir(), file!);
    const cached = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...cached, expiresAt: 1e20 }), { mode: 0o600 });
    const run = await token();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'ExecCredential', status: { token: 'access-1' } });
    expect(grants).toEqual(['password', 'refresh_token']);
  }, 60_000);

  it('when the cache file was made readable by others, then its tokens are not used, it is deleted and replaced 0600', async () => {
    freshHome();
    answer = goodAnswer;
    expect((await token()).code).toBe(0);
    const [file] = cacheFiles();
    const path = join(cacheDir(), file!);
    chmodSync(path, 0o644);
    const run = await token();
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/was open to other users \(mode 0644\); its tokens are not used and it was deleted/);
    // a new login (KAPI_PASSWORD here), not the exposed tokens
    expect(grants).toEqual(['password', 'password']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  }, 60_000);

  it('when the cache directory was opened to others, then it is closed to 0700 and the cache still serves', async () => {
    freshHome();
    answer = goodAnswer;
    expect((await token()).code).toBe(0);
    chmodSync(cacheDir(), 0o755);
    const run = await token();
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/was open to other users \(mode 0755\); it is 0700 now/);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    expect(grants).toEqual(['password']);
  }, 60_000);

  it('when a cache directory did not exist, then it is made 0700 and the file 0600 whatever the umask', async () => {
    freshHome();
    mkdirSync(join(home, '.kube'), { mode: 0o777 });
    answer = goodAnswer;
    expect((await token()).code).toBe(0);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir(), cacheFiles()[0]!)).mode & 0o777).toBe(0o600);
  }, 60_000);
});
