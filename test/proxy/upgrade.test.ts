import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import {
  ALICE,
  Backend,
  headerValues,
  KAPI_TOKEN,
  rawExchange,
  startBackendAndKapi,
  startKapi,
  stopCheckingLogs,
  until,
  USER_TOKEN,
  type Kapi,
} from './harness.js';
import { generatedCertificate } from '../support/certificates.js';

let backend: Backend;
let kapi: Kapi;

beforeEach(async () => {
  ({ backend, kapi } = await startBackendAndKapi());
});

afterEach(() => stopCheckingLogs(kapi, backend));

const EXEC = '/api/v1/namespaces/ns/pods/p/exec?command=sh&stdin=true&stdout=true';
const bearerProtocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(USER_TOKEN).toString('base64url')}`;

function upgradeRequest(path: string, headers: string[]): string {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: kapi'];
  for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

const spdyUpgrade = (extra: string[] = []) =>
  upgradeRequest(EXEC, [
    'Authorization',
    `Bearer ${USER_TOKEN}`,
    'Connection',
    'Upgrade',
    'Upgrade',
    'SPDY/3.1',
    'X-Stream-Protocol-Version',
    'v4.channel.k8s.io',
    ...extra,
  ]);

/** Every byte the backend read after switching protocols (the upgrade's `head` and later data). */
let backendReceived = '';

/** The backend switches to a byte-echo protocol on every accepted upgrade. */
function echoUpgrades(protocol: string, firstBytes = ''): void {
  backendReceived = '';
  backend.onUpgrade = (req, socket, head) => {
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${protocol}\r\n` +
        `X-Stream-Protocol-Version: ${req.headers['x-stream-protocol-version'] ?? ''}\r\nKeep-Alive: timeout=5\r\n\r\n${firstBytes}`,
    );
    const echo = (chunk: Buffer) => {
      backendReceived += chunk.toString('latin1');
      socket.write(Buffer.concat([Buffer.from('echo:'), chunk]));
    };
    if (head.length > 0) echo(head);
    socket.on('data', echo);
    socket.on('end', () => socket.end());
  };
}

describe('WebSocket upgrades', () => {
  it('when kubectl-style client opens v5.channel.k8s.io with the bearer subprotocol, then frames echo through', async () => {
    const wss = new WebSocketServer({
      noServer: true,
      handleProtocols: (protocols) => (protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false),
    });
    backend.onUpgrade = (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data, binary) => ws.send(data, { binary })));
    const client = new WebSocket(`ws://127.0.0.1:${kapi.port}${EXEC}`, ['v5.channel.k8s.io', bearerProtocol]);
    await new Promise<void>((resolve, reject) => {
      client.once('open', resolve);
      client.once('error', reject);
    });
    expect(client.protocol).toBe('v5.channel.k8s.io');
    const echoed = new Promise<Buffer>((resolve) => client.once('message', (data) => resolve(data as Buffer)));
    client.send(Buffer.from([0, 0x6c, 0x73, 0x0a]));
    expect([...(await echoed)]).toEqual([0, 0x6c, 0x73, 0x0a]);

    const seen = backend.requests[0]!;
    expect(seen.url).toBe(EXEC);
    expect(headerValues(seen.rawHeaders, 'sec-websocket-protocol')).toEqual(['v5.channel.k8s.io']);
    expect(headerValues(seen.rawHeaders, 'authorization')).toEqual([`Bearer ${KAPI_TOKEN}`]);
    expect(headerValues(seen.rawHeaders, 'impersonate-user')).toEqual([ALICE.username]);
    expect(headerValues(seen.rawHeaders, 'impersonate-group')).toEqual(ALICE.groups);
    expect(headerValues(seen.rawHeaders, 'upgrade')).toEqual(['websocket']);

    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.close();
    await closed;
    wss.close();
  });

  it('when the WebSocket carries no valid token, then it is refused with 401 and kube-apiserver never sees it', async () => {
    const client = new WebSocket(`ws://127.0.0.1:${kapi.port}${EXEC}`, ['v5.channel.k8s.io']);
    const status = await new Promise<number>((resolve) => {
      client.once('unexpected-response', (_req, res: IncomingMessage) => resolve(res.statusCode!));
      client.once('error', () => resolve(-1));
    });
    expect(status).toBe(401);
    expect(backend.requests).toHaveLength(0);
  });
});

describe('over kapi’s HTTPS listener', () => {
  it('when kubectl-style client opens a WebSocket over TLS, then it is relayed and kube-apiserver learns the client used https', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kapi-upgrade-tls-'));
    const certificate = await generatedCertificate(dir);
    const secure = await startKapi(backend.url, { tls: { key: certificate.key, cert: certificate.cert } });
    const wss = new WebSocketServer({ noServer: true, handleProtocols: () => 'v5.channel.k8s.io' });
    backend.onUpgrade = (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data) => ws.send(data)));
    try {
      const client = new WebSocket(`wss://127.0.0.1:${secure.port}${EXEC}`, ['v5.channel.k8s.io', bearerProtocol], {
        ca: certificate.ca,
      });
      await new Promise<void>((resolve, reject) => {
        client.once('open', resolve);
        client.once('error', reject);
      });
      const echoed = new Promise<string>((resolve) => client.once('message', (data) => resolve(String(data))));
      client.send('over tls');
      expect(await echoed).toBe('over tls');
      expect(headerValues(backend.requests[0]!.rawHeaders, 'x-forwarded-proto')).toEqual(['https']);
      client.terminate();
    } finally {
      wss.close();
      await secure.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SPDY/3.1 upgrades (raw sockets)', () => {
  it('when kube-apiserver switches protocols, then the 101 and bytes both ways pass, including early bytes', async () => {
    echoUpgrades('SPDY/3.1', 'hello-from-backend;');
    const socket = net.connect(kapi.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    // Bytes sent right behind the request head reach the backend after its 101 (Node hands them over as `head`).
    socket.write(spdyUpgrade() + 'early;');
    await until(() => received.includes('echo:early;'));
    const [head] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 101 /);
    expect(head).toMatch(/\r\nUpgrade: SPDY\/3\.1/i);
    expect(head).toMatch(/\r\nConnection: Upgrade/i);
    expect(head).toMatch(/\r\nX-Stream-Protocol-Version: v4\.channel\.k8s\.io/i);
    expect(head).not.toMatch(/keep-alive:/i);
    expect(received).toContain('hello-from-backend;');

    socket.write('later');
    await until(() => received.includes('echo:later'));
    expect(headerValues(backend.requests[0]!.rawHeaders, 'impersonate-user')).toEqual(['alice']);
    // Nothing but the client's bytes follows the request into the switched protocol (no empty chunked body).
    expect(backendReceived).toBe('early;later');
    expect(headerValues(backend.requests[0]!.rawHeaders, 'transfer-encoding')).toEqual([]);

    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.end();
    await closed;
    await until(() => backend.sockets.size === 0);
  });

  it('when the upgrade carries a client X-Request-Id and Audit-ID, then kube-apiserver sees only kapi’s id, which the audit line logs', async () => {
    echoUpgrades('SPDY/3.1');
    const socket = net.connect(kapi.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.write(spdyUpgrade(['X-Request-Id', 'client-chosen-id', 'Audit-ID', 'client-chosen-audit']));
    await until(() => received.includes(' 101 '));
    socket.destroy();
    const seen = backend.requests[0]!.rawHeaders;
    const [auditId] = headerValues(seen, 'audit-id');
    expect(auditId).toMatch(/^[0-9a-f-]{36}$/);
    expect(headerValues(seen, 'x-request-id')).toEqual([]);
    expect(seen.join('\n')).not.toContain('client-chosen');
    const line = kapi.logs.lines.map((text) => JSON.parse(text) as Record<string, unknown>).find((l) => l.audit);
    expect(line).toMatchObject({ requestId: auditId, clientRequestId: 'client-chosen-id', status: 101 });
  });

  it('when the client disconnects abruptly, then the backend connection is closed too', async () => {
    echoUpgrades('SPDY/3.1');
    const socket = net.connect(kapi.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.write(spdyUpgrade());
    await until(() => received.includes(' 101 '));
    socket.destroy();
    await until(() => backend.sockets.size === 0);
  });

  it('when the backend ends the stream, then the client sees the end', async () => {
    backend.onUpgrade = (_req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\nbye');
      socket.end();
    };
    const { data, closedByServer } = await rawExchange(kapi.port, spdyUpgrade());
    expect(closedByServer).toBe(true);
    expect(data.toString('latin1')).toMatch(/^HTTP\/1\.1 101 [\s\S]*\r\n\r\nbye$/);
  });
});

describe('refused and failed upgrades', () => {
  it('when kube-apiserver answers 403 to the upgrade, then that answer is relayed and the connection closed; a pipelined request is never forwarded', async () => {
    backend.acceptUpgrade = () => false;
    backend.onRequest = (_req, res) => {
      res.writeHead(403, { 'Content-Type': 'application/json' });
      res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}');
    };
    const smuggled = `GET /api/v1/namespaces/kube-system/secrets HTTP/1.1\r\nHost: kapi\r\nAuthorization: Bearer ${USER_TOKEN}\r\n\r\n`;
    const { data, closedByServer } = await rawExchange(kapi.port, spdyUpgrade() + smuggled);
    const text = data.toString('latin1');
    expect(closedByServer).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 403 /);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(text).toContain('"reason":"Forbidden"');
    expect(text.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(backend.requests).toHaveLength(1);
    expect(backend.requests[0]!.url).toBe(EXEC);
  });

  it('when a request is pipelined after the refusal arrived, then it is not forwarded either', async () => {
    backend.acceptUpgrade = () => false;
    backend.onRequest = (_req, res) => res.writeHead(400, { 'Content-Type': 'text/plain' }).end('no');
    const socket = net.connect(kapi.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.endsWith('no'))
        socket.write(`GET /api/v1/secrets HTTP/1.1\r\nHost: kapi\r\nAuthorization: Bearer ${USER_TOKEN}\r\n\r\n`);
    });
    socket.on('error', () => undefined);
    const closed = new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 3_000).unref();
    });
    socket.write(spdyUpgrade());
    expect(await closed).toBe(true);
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 400 /);
    expect(backend.requests).toHaveLength(1);
  });

  it('when kube-apiserver redirects the upgrade, then the client gets a 502 Status without Location and the connection closes', async () => {
    backend.acceptUpgrade = () => false;
    backend.onRequest = (_req, res) => res.writeHead(302, { Location: 'http://elsewhere.example/' }).end();
    const { data, closedByServer } = await rawExchange(kapi.port, spdyUpgrade());
    const text = data.toString('latin1');
    expect(closedByServer).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 502 /);
    expect(text).not.toMatch(/location:/i);
    expect(text).toContain('kapi does not follow or relay redirects');
  });

  it.each([
    ['Impersonate-User', ['Impersonate-User', 'admin']],
    ['Connection naming Impersonate-Group', ['Connection', 'Upgrade, Impersonate-Group']],
  ])('when the upgrade carries %s, then it is a 403 Status and kube-apiserver never sees it', async (_case, extra) => {
    echoUpgrades('SPDY/3.1');
    const { data, closedByServer } = await rawExchange(kapi.port, spdyUpgrade(extra));
    const text = data.toString('latin1');
    expect(closedByServer).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 403 /);
    expect(JSON.parse(text.split('\r\n\r\n')[1]!)).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    expect(backend.requests).toHaveLength(0);
  });

  it('when the upgrade has no token, then it is a 401 Status and kube-apiserver never sees it', async () => {
    const request = upgradeRequest(EXEC, ['Connection', 'Upgrade', 'Upgrade', 'SPDY/3.1']);
    const { data } = await rawExchange(kapi.port, request);
    expect(data.toString('latin1')).toMatch(/^HTTP\/1\.1 401 /);
    expect(backend.requests).toHaveLength(0);
  });

  it('when the upgrade is for a path kapi does not relay, then it is a 400 Status', async () => {
    const request = upgradeRequest('/kapis/resources.kapi.io/v1alpha3/nodes', [
      'Authorization',
      `Bearer ${USER_TOKEN}`,
      'Connection',
      'Upgrade',
      'Upgrade',
      'websocket',
    ]);
    const { data } = await rawExchange(kapi.port, request);
    expect(data.toString('latin1')).toMatch(/^HTTP\/1\.1 400 /);
    expect(backend.requests).toHaveLength(0);
  });

  it('when kube-apiserver is down, then the upgrade gets a 503 Status at once, not after a timeout', async () => {
    // Backend timeouts and the client's wait outlast the test: only the refused connection can produce the answer.
    const port = new URL(backend.url).port;
    await backend.close();
    const down = await startKapi(`http://127.0.0.1:${port}`, {
      backend: { connectTimeoutMs: 3_600_000, responseTimeoutMs: 3_600_000 },
    });
    try {
      const { data, closedByServer } = await rawExchange(down.port, spdyUpgrade(), 2 ** 31 - 1);
      expect(data.toString('latin1')).toMatch(/^HTTP\/1\.1 503 /);
      expect(closedByServer).toBe(true);
    } finally {
      await down.stop();
    }
    backend = await Backend.start();
  });

  it('when shouldUpgrade is asked, then only WebSocket/SPDY upgrades under /api and /apis are claimed', () => {
    const req = (url: string, upgrade?: string) => ({ url, headers: upgrade ? { upgrade } : {} }) as IncomingMessage;
    expect(kapi.forwarder.shouldUpgrade(req(EXEC, 'websocket'))).toBe(true);
    expect(kapi.forwarder.shouldUpgrade(req(EXEC, 'SPDY/3.1'))).toBe(true);
    expect(kapi.forwarder.shouldUpgrade(req('/api/v1/nodes', 'h2c'))).toBe(false);
    expect(kapi.forwarder.shouldUpgrade(req('/oauth/token', 'websocket'))).toBe(false);
  });
});
