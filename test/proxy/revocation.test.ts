/**
 * SPEC §2 for streams: a request is authenticated once, when it starts, so a watch, a log follow or an exec session
 * would outlive a logout. The forwarder registers every long-running stream; ending its session or its user cuts it
 * on both sides (client and kube-apiserver), promptly. Ordinary requests are never registered.
 */
import http from 'node:http';
import type { ServerResponse } from 'node:http';
import WebSocket, { WebSocketServer } from 'ws';
import type { UserInfo } from '../../src/auth/identity.js';
import { StreamRegistry } from '../../src/proxy/stream-registry.js';
import { Backend, startKapi, until, USER_TOKEN, type Kapi } from './harness.js';

const ALICE_IN_SESSION: UserInfo = { username: 'alice', uid: 'u1', groups: ['dev'], sessionId: 's1' };
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
    res.write('{"type":"ADDED","object":{"kind":"Node","metadata":{"name":"n1"}}}\n');
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
  ended: Promise<number>;
}

/** Opens a streaming GET through kapi; `ended` resolves with the time it was cut or ended. */
function openStream(path: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${kapi.url}${path}`, { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent: false });
    req.on('response', (res) => {
      const firstData = new Promise<void>((dataArrived) => res.once('data', () => dataArrived()));
      const ended = new Promise<number>((done) => res.once('close', () => done(Date.now())));
      res.on('error', () => undefined);
      resolve({ firstData, ended });
    });
    req.on('error', () => undefined);
    setTimeout(() => reject(new Error('no response head within 3 s')), 3_000).unref();
  });
}

describe('when the session of an open stream ends', () => {
  it.each([
    ['a watch', '/api/v1/nodes?watch=1'],
    ['a log follow', '/api/v1/namespaces/ns/pods/p/log?follow=true'],
  ])('then %s is cut within 1 s, on the client and at kube-apiserver', async (_case, path) => {
    const stream = await openStream(path);
    await stream.firstData;
    expect(registry.size).toBe(1);
    const revokedAt = Date.now();
    registry.endSession('s1');
    const endedAt = await stream.ended;
    expect(endedAt - revokedAt).toBeLessThan(1_000);
    await until(() => held[0]!.closed, 1_000, 'the backend stream to close');
    expect(registry.size).toBe(0);
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
    const revokedAt = Date.now();
    registry.endUser('alice', uid);
    expect((await stream.ended) - revokedAt).toBeLessThan(1_000);
    await until(() => held[0]!.closed, 1_000, 'the backend stream to close');
  });
});

describe('when a stream ends by itself', () => {
  it('then it is no longer registered', async () => {
    const stream = await openStream('/api/v1/nodes?watch=1');
    await stream.firstData;
    held[0]!.res.end();
    await stream.ended;
    await until(() => registry.size === 0, 1_000, 'the stream to be unregistered');
  });
});

describe('when an ordinary request is in flight', () => {
  it('then it is not registered and the end of its session does not cut its answer', async () => {
    let answer: (() => void) | undefined;
    backend.onRequest = (_req, res) => {
      answer = () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"NodeList","items":[]}');
    };
    const pending = fetch(`${kapi.url}/api/v1/nodes`, { headers: { Authorization: `Bearer ${USER_TOKEN}` } });
    await until(() => answer !== undefined, 2_000, 'the request to reach the backend');
    expect(registry.size).toBe(0);
    registry.endSession('s1');
    answer!();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kind: 'NodeList', items: [] });
  });
});

describe('when the session of an upgraded exec ends', () => {
  it('then the WebSocket is cut within 1 s, on the client and at kube-apiserver', async () => {
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
      const closed = new Promise<number>((resolve) => client.once('close', () => resolve(Date.now())));
      const revokedAt = Date.now();
      registry.endSession('s1');
      expect((await closed) - revokedAt).toBeLessThan(1_000);
      await until(() => backendClosed, 1_000, 'the backend WebSocket to close');
      expect(registry.size).toBe(0);
    } finally {
      client.terminate();
      wss.close();
    }
  });

  it('then an upgrade still waiting for kube-apiserver’s 101 is abandoned on both sides', async () => {
    let backendSocket: import('node:net').Socket | undefined;
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
      client.once('error', () => resolve('cut'));
    });
    try {
      await until(() => backendSocket !== undefined, 2_000, 'the upgrade to reach the backend');
      expect(registry.size).toBe(1);
      registry.endSession('s1');
      expect(await outcome).toBe('cut');
      await until(() => backendClosed, 1_000, 'the backend socket to close');
      expect(registry.size).toBe(0);
    } finally {
      client.terminate();
    }
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
