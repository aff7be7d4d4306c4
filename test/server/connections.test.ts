/**
 * The whole server's connections, over raw sockets: stalled requests are closed within the (short, test-set) read
 * timeouts while an authenticated watch stays open; and every answer Node's HTTP layer would write by itself comes
 * in the API's format — RFC 6749 JSON, never cached, under /oauth; a Kubernetes Status elsewhere.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { WebSocket } from 'ws';
import { createLogger } from '../../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { startKapiServer, type KapiServer } from '../../src/server/server.js';

const ADMIN_PASSWORD = 'connections-Test-password-1';
const READ_HEADER_TIMEOUT_MS = 300;
const READ_TIMEOUT_MS = 600;
const IDLE_TIMEOUT_MS = 400;

let sandbox: Sandbox;
let kapi: KapiServer;
let stopConnection: () => void;
let caDir: string;

beforeAll(async () => {
  const logger = createLogger('error', { silent: true });
  sandbox = await startSandbox({
    nodes: 2,
    podsPerNode: 1,
    adminPassword: ADMIN_PASSWORD,
    logger,
    logLineIntervalMs: 50,
  });
  const connection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
  stopConnection = () => connection.close();
  caDir = mkdtempSync(join(tmpdir(), 'kapi-connections-'));
  kapi = await startKapiServer({
    options: {
      port: 0,
      tlsPort: 0,
      metricsPort: 0,
      bindAddress: '127.0.0.1',
      configuration: { namespace: 'kapi-system', name: 'kapi' },
      signingKeySecret: { namespace: 'kapi-system', name: 'kapi-apiserver-jwt' },
      tlsCertFile: undefined,
      tlsKeyFile: undefined,
      tlsSecret: undefined,
      tlsCaOut: join(caDir, 'ca.crt'),
      trustedProxies: [],
      readHeaderTimeoutMs: READ_HEADER_TIMEOUT_MS,
      readTimeoutMs: READ_TIMEOUT_MS,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
    },
    connection,
    logger,
    allowGeneratedSigningKey: true,
  });
  await kapi.ready(30_000);
});

afterAll(async () => {
  await kapi.stop(0);
  await sandbox.stop();
  stopConnection();
  rmSync(caDir, { recursive: true, force: true });
});

interface RawAnswer {
  /** Everything the server sent. */
  text: string;
  status: number | undefined;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (before the test's own patience ran out). */
  closedByServer: boolean;
  /** Over TLS: whether the handshake completed (the request was sent at all). */
  handshaken: boolean;
}

/**
 * Writes `parts` on a fresh connection (`pauseMs` between them) and collects what comes back until the server closes
 * the connection or `patienceMs` passes. The patience is generous: only a server that never closes runs into it.
 */
function raw(
  parts: readonly (string | Buffer)[],
  options: { port?: number; tls?: boolean; pauseMs?: number; patienceMs?: number } = {},
) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const socket = options.tls
      ? tls.connect({ port: kapi.httpsPort!, host: '127.0.0.1', rejectUnauthorized: false })
      : net.connect(options.port ?? kapi.httpPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    let handshaken = false;
    socket.once('secureConnect', () => (handshaken = true));
    const finish = (closedByServer: boolean) => {
      clearTimeout(patience);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const status = /^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1];
      resolve({
        text,
        status: status ? Number(status) : undefined,
        headers,
        body: rest.join('\r\n\r\n'),
        closedByServer,
        handshaken,
      });
    };
    const patience = setTimeout(() => finish(false), options.patienceMs ?? 10_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? finish(true) : reject(error)));
    void (async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, options.pauseMs ?? 50));
        if (!socket.destroyed) socket.write(part);
      }
    })();
  });
}

async function token(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${kapi.httpPort}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      username: 'admin',
      password: ADMIN_PASSWORD,
      client_id: 'kapi',
      client_secret: 'kapi',
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const json = (answer: RawAnswer) => JSON.parse(answer.body) as Record<string, unknown>;

function expectOAuthError(answer: RawAnswer, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers.pragma).toBe('no-cache');
  expect(json(answer)).toEqual({ error: 'invalid_request', error_description: expect.any(String) as unknown });
}

function expectStatus(answer: RawAnswer, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(json(answer)).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: status });
  expect(json(answer)).not.toHaveProperty('error');
}

const STALLED_TOKEN_REQUEST =
  'POST /oauth/token HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
  'Content-Length: 100\r\n\r\ngrant_type=pass';

describe('connection bounds (issue 9 item 1)', () => {
  test('when a client stalls its body while others hold a watch, a log follow and an exec, then only the stalled one is closed', async () => {
    const bearer = await token();
    const base = `http://127.0.0.1:${kapi.httpPort}`;
    const headers = { Authorization: `Bearer ${bearer}` };
    const pods = await fetch(`${base}/api/v1/namespaces/kube-system/pods?labelSelector=app%3Dkube-proxy&limit=1`, {
      headers,
    });
    const pod = ((await pods.json()) as { items: { metadata: { name: string } }[] }).items[0]!.metadata.name;
    const podPath = `/api/v1/namespaces/kube-system/pods/${pod}`;

    const follow = await fetch(`${base}${podPath}/log?follow=true`, { headers });
    expect(follow.status).toBe(200);
    const lines = { count: 0, ended: false };
    void (async () => {
      const logReader = follow.body!.getReader();
      try {
        for (;;) {
          const { value, done } = await logReader.read();
          if (done) break;
          lines.count += Buffer.from(value).toString('utf8').split('\n').length - 1;
        }
      } catch {
        // cut: counted as ended below
      }
      lines.ended = true;
    })();

    const exec = new WebSocket(
      `ws://127.0.0.1:${kapi.httpPort}${podPath}/exec?command=sh&stdin=true&stdout=true`,
      ['v5.channel.k8s.io'],
      { headers },
    );
    const echoed: Buffer[] = [];
    exec.on('message', (data: Buffer) => echoed.push(data));
    await new Promise((resolve, reject) => exec.once('open', resolve).once('error', reject));

    const watch = await fetch(`http://127.0.0.1:${kapi.httpPort}/api/v1/nodes?watch=1`, {
      headers: { Authorization: `Bearer ${bearer}` },
    });
    expect(watch.status).toBe(200);
    const reader = watch.body!.getReader();
    const decoder = new TextDecoder();
    let events = '';
    const readUntil = async (text: string) => {
      while (!events.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the watch ended before "${text}" arrived`);
        events += decoder.decode(value, { stream: true });
      }
    };
    await readUntil('"ADDED"');

    const stalled = await raw([STALLED_TOKEN_REQUEST]);
    expect(stalled.closedByServer).toBe(true);
    expectOAuthError(stalled, 408);

    // Several read and idle timeouts later the watch still delivers: a change made now arrives on it.
    await new Promise((resolve) => setTimeout(resolve, 3 * READ_TIMEOUT_MS));
    const patch = await fetch(`${sandbox.url}/api/v1/nodes/node-1`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${sandbox.adminToken}`, 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { 'outlived-the-timeouts': 'yes' } } }),
    });
    expect(patch.status).toBe(200);
    await readUntil('outlived-the-timeouts');
    await reader.cancel();

    // The log follow still delivers new lines, and the exec session still echoes stdin.
    const seen = lines.count;
    while (lines.count < seen + 2 && !lines.ended) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines.ended).toBe(false);
    exec.send(Buffer.concat([Buffer.from([0]), Buffer.from('still here')]));
    while (!echoed.some((frame) => frame.toString('latin1').includes('still here'))) {
      expect(exec.readyState).toBe(WebSocket.OPEN);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    exec.close();
  });

  test('when a client sends part of its headers and stalls, then the connection is closed with a 408', async () => {
    const answer = await raw(['GET /kapis/resources.kapi.io/v1alpha3/nodes HTTP/1.1\r\nHost: kapi\r\nAccept: a']);
    expect(answer.closedByServer).toBe(true);
    expect(answer.status).toBe(408);
  });

  test('when a client opens a connection and sends nothing, then it is closed', async () => {
    const answer = await raw([]);
    expect(answer.closedByServer).toBe(true);
  });

  test('when a kept-alive connection idles after its answer, then it is closed', async () => {
    const answer = await raw(['GET /healthz HTTP/1.1\r\nHost: kapi\r\n\r\n']);
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('keep-alive');
    expect(answer.closedByServer).toBe(true);
  });

  test('when a client stalls its body on the HTTPS listener, then it is closed with a 408 there too', async () => {
    // the handshake counts against the header timeout (300 ms here, as Go's server counts it): on a busy machine it can
    // run out before the request is sent, which is not the case under test, so that attempt is made again
    let answer = await raw([STALLED_TOKEN_REQUEST], { tls: true });
    for (let attempt = 1; !answer.handshaken && attempt < 10; attempt++) {
      answer = await raw([STALLED_TOKEN_REQUEST], { tls: true });
    }
    expect(answer.handshaken).toBe(true);
    expect(answer.closedByServer).toBe(true);
    expectOAuthError(answer, 408);
  });

  test('when a client opens a TCP connection to the HTTPS listener and never starts TLS, then it is closed', async () => {
    expect((await raw([], { port: kapi.httpsPort })).closedByServer).toBe(true);
  });

  test('when the metrics listener gets a stalled request, then it is bounded too', async () => {
    const answer = await raw(['GET /metrics HTTP/1.1\r\nHost: kapi\r\n'], { port: kapi.metricsPort });
    expect(answer.closedByServer).toBe(true);
    expectStatus(answer, 408);
  });
});

describe('answers Node would write by itself (issue 9 item 3)', () => {
  const hugeHeader = `X-Padding: ${'a'.repeat(20_000)}\r\n`;

  test.each([
    ['/oauth/token', 'oauth'],
    ['/api/v1/nodes', 'status'],
  ])('when a chunked body to %s is malformed, then the 400 is %s', async (path, format) => {
    // authenticated where it takes a token: else its 401 goes out at once, before the body is read
    const authorization = format === 'status' ? `Authorization: Bearer ${await token()}\r\n` : '';
    const answer = await raw([
      `POST ${path} HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/x-www-form-urlencoded\r\n${authorization}` +
        'Transfer-Encoding: chunked\r\n\r\nzz\r\nbroken\r\n',
    ]);
    if (format === 'oauth') expectOAuthError(answer, 400);
    else expectStatus(answer, 400);
    expect(answer.closedByServer).toBe(true);
  });

  test.each([
    ['/oauth/token', 'oauth'],
    ['/kapis/resources.kapi.io/v1alpha3/nodes', 'status'],
  ])('when the headers to %s are too large, then the 431 is %s', async (path, format) => {
    const answer = await raw([`GET ${path} HTTP/1.1\r\nHost: kapi\r\n${hugeHeader}\r\n`]);
    if (format === 'oauth') expectOAuthError(answer, 431);
    else expectStatus(answer, 431);
  });

  test('when too large headers arrive after their request line was read, then the 431 reads as both formats', async () => {
    // the request line must reach kapi in a read of its own: on a busy machine 50 ms between writes let the parts
    // arrive in one read (kapi then knows the path and answers its one format); one huge header is over the limit
    // already, and 200 ms stays inside the 300 ms header timeout
    const answer = await raw(['POST /oauth/token HTTP/1.1\r\nHost: kapi\r\n', hugeHeader], { pauseMs: 200 });
    expect(answer.status).toBe(431);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers.pragma).toBe('no-cache');
    expect(json(answer)).toMatchObject({ error: 'invalid_request', kind: 'Status', code: 431 });
  });

  test.each([
    ['/oauth/token', 'oauth'],
    ['/api/v1/nodes', 'status'],
  ])('when a request to %s expects something odd, then the 417 is %s', async (path, format) => {
    const answer = await raw([
      `POST ${path} HTTP/1.1\r\nHost: kapi\r\nExpect: the-unexpected\r\nContent-Length: 0\r\n\r\n`,
    ]);
    if (format === 'oauth') expectOAuthError(answer, 417);
    else expectStatus(answer, 417);
  });

  test('when a request expects 100-continue, then it is served as usual', async () => {
    const answer = await raw(['GET /healthz HTTP/1.1\r\nHost: kapi\r\nExpect: 100-continue\r\n\r\n']);
    expect(answer.text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK/);
  });

  test.each([
    ['/oauth/token', 'oauth'],
    ['/healthz', 'status'],
  ])('when an HTTP/1.1 request to %s has no Host, then the 400 is %s', async (path, format) => {
    const answer = await raw([`GET ${path} HTTP/1.1\r\nAccept: */*\r\n\r\n`]);
    if (format === 'oauth') expectOAuthError(answer, 400);
    else expectStatus(answer, 400);
  });

  test('when a client asks to CONNECT, then it is a 405 Status', async () => {
    const answer = await raw(['CONNECT kube-apiserver:443 HTTP/1.1\r\nHost: kube-apiserver:443\r\n\r\n']);
    expectStatus(answer, 405);
    expect(answer.closedByServer).toBe(true);
  });

  test('when the stalled body was for /oauth, then even the 408 is RFC 6749 JSON', async () => {
    expectOAuthError(await raw([STALLED_TOKEN_REQUEST]), 408);
  });
});

describe('Strict-Transport-Security (issue 23 item 4)', () => {
  const get = (path: string) => [`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`];

  it('when kapi’s own pages are served over its TLS listener, then they carry HSTS; over plain HTTP they never do', async () => {
    for (const path of ['/healthz', '/oauth/login?request=x', '/api-docs/']) {
      const overTls = await raw(get(path), { tls: true });
      expect(overTls.headers['strict-transport-security']).toBe('max-age=31536000');
      const plain = await raw(get(path));
      expect(plain.status).toBe(overTls.status);
      expect(plain.headers['strict-transport-security']).toBeUndefined();
    }
  });
});
