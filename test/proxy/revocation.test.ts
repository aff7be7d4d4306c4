/**
 * SPEC §2 for streams: a request is authenticated once, when it starts, so a watch, a log follow or an exec session
 * would outlive a logout. The forwarder registers every long-running stream; ending its session or its user cuts it
 * on both sides (client and kube-apiserver), and the client sees a proper end: the last chunk of the response between
 * two watch events, a WebSocket close frame between two frames. Ordinary requests are never registered. (The
 * backend here holds every stream open forever: a stream that ends was cut.)
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import WebSocket, { WebSocketServer } from 'ws';
import type { UserInfo } from '../../src/auth/identity.js';
import { StreamRegistry } from '../../src/proxy/stream-registry.js';
import { Backend, rawExchange, startKapi, until, USER_TOKEN, type Kapi } from './harness.js';

/** Checked when the module loaded: every end a test makes comes after it. */
const ALICE_IN_SESSION: UserInfo = {
  username: 'alice',
  uid: 'u1',
  groups: ['dev'],
  sessionId: 's1',
  checkedAt: performance.now(),
};
const EVENT = '{"type":"ADDED","object":{"kind":"Node","metadata":{"name":"n1"}}}\n';
const EXEC = '/api/v1/namespaces/ns/pods/p/exec?command=sh&stdin=true&stdout=true';
const bearerProtocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(USER_TOKEN).toString('base64url')}`;

let backend: Backend;
let kapi: Kapi;
let registry: StreamRegistry;
/** Responses the backend holds open (watches, log follows), and whether each was closed. */
let held: { res: ServerResponse; closed: boolean }[];

beforeEach(async () => {
  backend = await Backend.start();
  registry = new StreamRegistry();
  kapi = await startKapi(backend.url, { streamRegistry: registry, user: ALICE_IN_SESSION });
  held = [];
  backend.onRequest = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.write(EVENT);
    const entry = { res, closed: false };
    held.push(entry);
    res.on('close', () => (entry.closed = true));
  };
});

afterEach(async () => {
  for (const { res } of held) res.destroy();
  await kapi.stop();
  await backend.close();
});

interface OpenStream {
  firstData: Promise<void>;
  /** Resolves when the stream ended: `clean` when the response was complete (not aborted), with all it received. */
  ended: Promise<{ clean: boolean; body: string }>;
  /** What arrived so far. */
  received(): string;
}

/** Opens a streaming GET through kapi. */
function openStream(path: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${kapi.url}${path}`, { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent: false });
    req.on('response', (res) => {
      let body = '';
      const firstData = new Promise<void>((dataArrived) => res.once('data', () => dataArrived()));
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      const ended = new Promise<{ clean: boolean; body: string }>((done) =>
        res.once('close', () => done({ clean: res.complete, body })),
      );
      res.on('error', () => undefined);
      resolve({ firstData, ended, received: () => body });
    });
    req.on('error', reject); // no deadline of its own: the test's timeout is the only limit
  });
}

describe('when the session of an open stream ends', () => {
  it.each([
    ['a watch', '/api/v1/nodes?watch=1'],
    ['a log follow', '/api/v1/namespaces/ns/pods/p/log?follow=true'],
  ])('then %s ends, cleanly for the client, and is closed at kube-apiserver', async (_case, path) => {
    const stream = await openStream(path);
    await stream.firstData;
    expect(registry.size).toBe(1);
    registry.endSession('s1');
    expect(await stream.ended).toEqual({ clean: true, body: EVENT });
    await until(() => held[0]!.closed);
    expect(registry.size).toBe(0);
  });

  it('then a watch event half relayed is finished first: the client never gets half an event', async () => {
    const stream = await openStream('/api/v1/nodes?watch=1');
    await stream.firstData;
    held[0]!.res.write(EVENT.slice(0, 20));
    await until(() => stream.received().length > EVENT.length);
    registry.endSession('s1');
    held[0]!.res.write(EVENT.slice(20) + EVENT);
    expect(await stream.ended).toEqual({ clean: true, body: EVENT + EVENT });
    await until(() => held[0]!.closed);
  });

  it('then another session’s end leaves the stream open', async () => {
    const stream = await openStream('/api/v1/nodes?watch=1');
    await stream.firstData;
    registry.endSession('another-session');
    registry.endUser('alice', 'another-incarnation');
    const outcome = await Promise.race([stream.ended.then(() => 'ended'), sleep(200).then(() => 'open')]);
    expect(outcome).toBe('open');
    expect(held[0]!.closed).toBe(false);
  });
});

describe('when the user of an open stream is disabled or deleted', () => {
  it.each([
    ['disabled (all of the name)', undefined],
    ['deleted (this incarnation)', 'u1'],
  ])('then the watch is cut when the user is %s', async (_case, uid) => {
    const stream = await openStream('/api/v1/nodes?watch=true');
    await stream.firstData;
    registry.endUser('alice', uid);
    expect(await stream.ended).toEqual({ clean: true, body: EVENT });
    await until(() => held[0]!.closed);
  });

  it('then a watch whose response head was still on its way is cut as it arrives', async () => {
    const waiting: ServerResponse[] = [];
    backend.onRequest = (_req, res) => void waiting.push(res);
    const opened = openStream('/api/v1/nodes?watch=1');
    await until(() => waiting.length === 1);
    registry.endUser('alice');
    const res = waiting[0]!;
    const entry = { res, closed: false };
    held.push(entry);
    res.on('close', () => (entry.closed = true));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const stream = await opened;
    expect((await stream.ended).clean).toBe(true);
    await until(() => entry.closed);
    expect(registry.size).toBe(0);
  });
});

describe('when a stream ends by itself', () => {
  it('then it is no longer registered', async () => {
    const stream = await openStream('/api/v1/nodes?watch=1');
    await stream.firstData;
    held[0]!.res.end();
    await stream.ended;
    await until(() => registry.size === 0);
  });
});

describe('when an ordinary request is in flight', () => {
  it('then it is not registered and the end of its session does not cut its answer', async () => {
    let answer: (() => void) | undefined;
    backend.onRequest = (_req, res) => {
      answer = () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"NodeList","items":[]}');
    };
    const pending = fetch(`${kapi.url}/api/v1/nodes`, { headers: { Authorization: `Bearer ${USER_TOKEN}` } });
    await until(() => answer !== undefined);
    expect(registry.size).toBe(0);
    registry.endSession('s1');
    answer!();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kind: 'NodeList', items: [] });
  });
});

describe('when the session of an upgraded exec ends', () => {
  it('then the WebSocket gets a close frame (1008, the login session ended) and is closed at kube-apiserver', async () => {
    const wss = new WebSocketServer({ noServer: true, handleProtocols: () => 'v5.channel.k8s.io' });
    let backendClosed = false;
    backend.onUpgrade = (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('message', (data) => ws.send(data));
        ws.on('close', () => (backendClosed = true));
      });
    const client = new WebSocket(`ws://127.0.0.1:${kapi.port}${EXEC}`, ['v5.channel.k8s.io', bearerProtocol]);
    client.on('error', () => undefined);
    try {
      await new Promise<void>((resolve, reject) => {
        client.once('open', resolve);
        client.once('unexpected-response', () => reject(new Error('upgrade refused')));
      });
      const echoed = new Promise<void>((resolve) => client.once('message', () => resolve()));
      client.send(Buffer.from([0, 0x6c]));
      await echoed;
      expect(registry.size).toBe(1);
      const closed = new Promise<[number, string]>((resolve) =>
        client.once('close', (code, reason) => resolve([code, reason.toString()])),
      );
      registry.endSession('s1');
      expect(await closed).toEqual([1008, 'the login session ended']);
      await until(() => backendClosed);
      expect(registry.size).toBe(0);
    } finally {
      client.terminate();
      wss.close();
    }
  });

  it('then a frame half relayed is finished first, then the close frame follows', async () => {
    // a binary frame of 300 bytes (16-bit length): its header and part of its payload come with the 101
    const payload = Buffer.alloc(300, 0x61);
    const frame = Buffer.concat([Buffer.from([0x82, 126, 0x01, 0x2c]), payload]);
    let backendSocket: Socket | undefined;
    backend.onUpgrade = (req, socket) => {
      backendSocket = socket;
      const accept = createHash('sha1')
        .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
        .digest('base64');
      const head =
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`;
      socket.write(Buffer.concat([Buffer.from(head, 'latin1'), frame.subarray(0, 100)]));
    };
    const client = new WebSocket(`ws://127.0.0.1:${kapi.port}${EXEC}`, ['v5.channel.k8s.io', bearerProtocol]);
    client.on('error', () => undefined);
    const messages: string[] = [];
    client.on('message', (data: Buffer) => messages.push(data.toString('utf8')));
    const closed = new Promise<[number, string]>((resolve) =>
      client.once('close', (code, reason) => resolve([code, reason.toString()])),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        client.once('open', resolve);
        client.once('unexpected-response', () => reject(new Error('upgrade refused')));
      });
      registry.endSession('s1');
      backendSocket!.write(Buffer.concat([frame.subarray(100), Buffer.from([0x82, 0x01, 0x62])]));
      expect(await closed).toEqual([1008, 'the login session ended']);
      expect(messages).toEqual([payload.toString('utf8')]);
    } finally {
      client.terminate();
    }
  });

  it('then an upgrade still waiting for kube-apiserver’s 101 is abandoned on both sides', async () => {
    let backendSocket: Socket | undefined;
    let backendClosed = false;
    backend.onUpgrade = (_req, socket) => {
      backendSocket = socket;
      // the fake never answers: kapi ending the connection (FIN) is what shows it gave up
      socket.on('end', () => (backendClosed = true));
      socket.on('close', () => (backendClosed = true));
    };
    const client = new WebSocket(`ws://127.0.0.1:${kapi.port}${EXEC}`, ['v5.channel.k8s.io', bearerProtocol]);
    const outcome = new Promise<string>((resolve) => {
      client.once('open', () => resolve('open'));
      client.once('unexpected-response', (_req, res) => resolve(`answered ${res.statusCode}`));
      client.once('error', () => resolve('cut'));
    });
    try {
      await until(() => backendSocket !== undefined);
      expect(registry.size).toBe(1);
      registry.endSession('s1');
      expect(await outcome).toBe('answered 401');
      await until(() => backendClosed);
      expect(registry.size).toBe(0);
    } finally {
      client.terminate();
    }
  });

  it('then the upgrade still waiting gets exactly one answer, the 401, with no false outage logged', async () => {
    let backendSocket: Socket | undefined;
    backend.onUpgrade = (_req, socket) => {
      backendSocket = socket;
      socket.on('error', () => undefined);
    };
    const exchange = rawExchange(
      kapi.port,
      `GET ${EXEC} HTTP/1.1\r\nHost: kapi\r\nAuthorization: Bearer ${USER_TOKEN}\r\nConnection: Upgrade\r\n` +
        'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    await until(() => backendSocket !== undefined);
    registry.endSession('s1');
    const { data, closedByServer } = await exchange;
    const answer = data.toString('latin1');
    expect(closedByServer).toBe(true);
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 401']);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { kind: string; code: number };
    expect(body).toMatchObject({ kind: 'Status', code: 401 });
    const logged = kapi.logs.lines.map((line) => JSON.parse(line) as { audit?: boolean; status?: number });
    expect(logged.filter((line) => line.audit).map((line) => line.status)).toEqual([401]);
    expect(kapi.logs.lines.join('\n')).not.toMatch(/unreachable/);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
