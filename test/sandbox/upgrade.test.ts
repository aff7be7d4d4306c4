import net from 'node:net';
import { WebSocket } from 'ws';
import type { Sandbox } from '../../src/sandbox/index.js';
import { chooseProtocol } from '../../src/sandbox/upgrade.js';
import { call, testSandbox, type Json } from './helpers.js';

let sandbox: Sandbox;
let podPath: string;
beforeAll(async () => {
  sandbox = await testSandbox();
  const pods = await call<Json>(
    sandbox,
    'GET',
    '/api/v1/namespaces/kube-system/pods?labelSelector=app%3Dkube-proxy&limit=1',
  );
  podPath = `/api/v1/namespaces/kube-system/pods/${pods.body.items[0].metadata.name}`;
});
afterAll(() => sandbox.stop());

function wsUrl(path: string): string {
  return sandbox.url.replace(/^http/, 'ws') + path;
}

interface Channel {
  ws: WebSocket;
  /** Resolves with the next frame, in arrival order; frames that came early are kept, not lost. */
  next(): Promise<Buffer | string>;
  closed: Promise<number>;
}

function open(
  path: string,
  protocols: string[],
  headers: Record<string, string> = { Authorization: `Bearer ${sandbox.adminToken}` },
): Promise<Channel> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(path), protocols, { headers });
    const frames: (Buffer | string)[] = [];
    const waiting: ((frame: Buffer | string) => void)[] = [];
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const frame = isBinary ? data : data.toString();
      const waiter = waiting.shift();
      if (waiter) waiter(frame);
      else frames.push(frame);
    });
    const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
    const next = (): Promise<Buffer | string> =>
      frames.length
        ? Promise.resolve(frames.shift()!)
        : new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error('no frame within 2 s')), 2000);
            waiting.push((frame) => {
              clearTimeout(timer);
              done(frame);
            });
          });
    ws.once('open', () => resolve({ ws, next, closed }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('exec over WebSocket', () => {
  test('when stdin data arrives on channel 0, then it comes back on stdout (channel 1), and closing stdin ends with Success', async () => {
    const { ws, next, closed } = await open(`${podPath}/exec?command=sh&stdin=true&stdout=true`, [
      'v5.channel.k8s.io',
      'v4.channel.k8s.io',
    ]);
    expect(ws.protocol).toBe('v5.channel.k8s.io');
    ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('hello')]));
    expect(await next()).toEqual(Buffer.concat([Buffer.from([1]), Buffer.from('hello')]));
    ws.send(Buffer.from([255, 0]));
    const statusFrame = (await next()) as Buffer;
    expect(statusFrame[0]).toBe(3);
    expect(JSON.parse(statusFrame.subarray(1).toString())).toEqual({ metadata: {}, status: 'Success' });
    expect(await closed).toBe(1000);
  });

  test('when the base64 protocol and the token subprotocol are used, then frames are text and auth works without a header', async () => {
    const token = `base64url.bearer.authorization.k8s.io.${Buffer.from(sandbox.adminToken).toString('base64url').replace(/=+$/, '')}`;
    const { ws, next } = await open(`${podPath}/attach?stdin=true&stdout=true`, ['base64.channel.k8s.io', token], {});
    expect(ws.protocol).toBe('base64.channel.k8s.io');
    ws.send(`0${Buffer.from('ping').toString('base64')}`);
    expect(await next()).toBe(`1${Buffer.from('ping').toString('base64')}`);
    ws.close();
  });

  test('when exec has no stdin, then the command line is printed and the stream ends with Success', async () => {
    const { next, closed } = await open(`${podPath}/exec?command=echo&command=hi&stdout=true`, ['v4.channel.k8s.io']);
    expect(await next()).toEqual(Buffer.concat([Buffer.from([1]), Buffer.from('echo hi\n')]));
    expect(((await next()) as Buffer)[0]).toBe(3);
    expect(await closed).toBe(1000);
  });

  test('when port-forwarding, then each channel announces the port and data echoes on the data channel', async () => {
    const { ws, next } = await open(`${podPath}/portforward?ports=8080`, ['v4.channel.k8s.io']);
    expect([await next(), await next()]).toEqual([Buffer.from([0, 0x90, 0x1f]), Buffer.from([1, 0x90, 0x1f])]);
    ws.send(Buffer.from([0, 7, 8, 9]));
    expect(await next()).toEqual(Buffer.from([0, 7, 8, 9]));
    ws.close();
  });

  test('when the subprotocol offer is ordered, then the first one the server speaks wins', () => {
    expect(chooseProtocol(new Set(['x', 'v4.channel.k8s.io', 'v5.channel.k8s.io']))).toBe('v4.channel.k8s.io');
    expect(chooseProtocol(new Set(['SPDY/3.1+portforward.k8s.io']))).toBe(false);
  });
});

function rawRequest(request: string): Promise<{ head: string; socket: net.Socket; rest: Buffer }> {
  const { hostname, port } = new URL(sandbox.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.off('data', onData);
        resolve({ head: buffer.subarray(0, end).toString(), socket, rest: buffer.subarray(end + 4) });
      }
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

describe('exec over SPDY and errors', () => {
  test('when Upgrade: SPDY/3.1 is asked, then the answer is 101 with the same Upgrade and bytes echo back raw', async () => {
    const { head, socket } = await rawRequest(
      `POST ${podPath}/exec?command=sh&stdin=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sandbox.adminToken}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1.1 101 Switching Protocols/);
    expect(head).toMatch(/\r\nUpgrade: SPDY\/3.1/);
    expect(head).toMatch(/\r\nX-Stream-Protocol-Version: v4.channel.k8s.io/);
    const echoed = new Promise<Buffer>((resolve) => socket.once('data', resolve));
    socket.write(Buffer.from([0x80, 0x03, 0x00, 0x01, 1, 2, 3]));
    expect(await echoed).toEqual(Buffer.from([0x80, 0x03, 0x00, 0x01, 1, 2, 3]));
    socket.destroy();
  });

  test('when an upgrade has no token, then the anonymous caller gets a 403 Status on the raw socket; a bad token a 401', async () => {
    const anonymous = await rawRequest(
      `GET ${podPath}/exec HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    expect(anonymous.head).toMatch(/^HTTP\/1.1 403/);
    expect(JSON.parse(anonymous.rest.toString())).toMatchObject({ kind: 'Status', code: 403 });
    anonymous.socket.destroy();
    const badToken = await rawRequest(
      `GET ${podPath}/exec HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    expect(badToken.head).toMatch(/^HTTP\/1.1 401/);
    expect(JSON.parse(badToken.rest.toString())).toMatchObject({ kind: 'Status', code: 401 });
    badToken.socket.destroy();
  });

  test('when exec is requested without an upgrade, then it is 400 "Upgrade request required"', async () => {
    const res = await call<Json>(sandbox, 'POST', `${podPath}/exec?command=sh`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'Upgrade request required' });
  });

  test('when the pod is missing or not running, then the upgrade is refused with 404 or 400', async () => {
    const missing = await rawRequest(
      `GET /api/v1/namespaces/demo/pods/ghost/exec HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sandbox.adminToken}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`,
    );
    expect(missing.head).toMatch(/^HTTP\/1.1 404/);
    missing.socket.destroy();
    const done = await call<Json>(sandbox, 'GET', '/api/v1/pods?fieldSelector=status.phase%3DSucceeded&limit=1');
    const { namespace, name } = done.body.items[0].metadata;
    const completed = await rawRequest(
      `GET /api/v1/namespaces/${namespace}/pods/${name}/exec HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sandbox.adminToken}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`,
    );
    expect(completed.head).toMatch(/^HTTP\/1.1 400/);
    expect(JSON.parse(completed.rest.toString()).message).toMatch(/completed pod; current phase is Succeeded/);
    completed.socket.destroy();
  });

  test('when a user may not create pods/exec, then the upgrade is 403', async () => {
    const { head, socket } = await rawRequest(
      `GET ${podPath}/exec HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sandbox.tokenFor('nobody')}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1.1 403/);
    socket.destroy();
  });
});
