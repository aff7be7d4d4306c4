import http from 'node:http';
import type { ServerResponse } from 'node:http';
import { Backend, startKapi, until, USER_TOKEN, type Kapi } from './harness.js';

/**
 * Watches through the forwarder: each event must reach the client before kube-apiserver writes the next (no
 * buffering), and many watches must be held at once. Proven by ordering, never by elapsed time: the backend writes
 * event N+1 only once event N has arrived, so a buffering relay stalls until the test's own timeout. The relay's
 * added latency (SPEC §11) is a figure of `npm run bench` ("watch relay added p99"), not of this suite.
 */

let backend: Backend;
let kapi: Kapi;
const open = new Set<ServerResponse>();

beforeEach(async () => {
  backend = await Backend.start();
  kapi = await startKapi(backend.url);
  backend.onRequest = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    open.add(res);
    res.on('close', () => open.delete(res));
  };
});

afterEach(async () => {
  for (const res of open) res.destroy();
  await kapi.stop();
  await backend.close();
});

function event(n: number): string {
  return `${JSON.stringify({ type: 'MODIFIED', object: { kind: 'Node', metadata: { name: `n${n}`, resourceVersion: String(n) } } })}\n`;
}

/** Opens a watch and resolves once its response head arrived (before any event). */
function openWatch(url: string, agent: http.Agent): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent }, resolve).on('error', reject);
  });
}

/**
 * Sends events one at a time, each only after the previous one arrived whole at the client. There is no deadline:
 * an event the relay holds back never arrives, the next is never written, and the test fails at its own timeout.
 */
async function pingPong(res: http.IncomingMessage, server: () => ServerResponse, count: number): Promise<void> {
  let received = '';
  let waiting: (() => void) | undefined;
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    received += chunk;
    waiting?.();
  });
  for (let n = 0; n < count; n++) {
    const line = event(n);
    const arrived = new Promise<void>((resolve) => {
      waiting = () => {
        if (received.endsWith(line)) resolve();
      };
    });
    server().write(line);
    await arrived;
  }
  expect(received).toBe(Array.from({ length: count }, (_, n) => event(n)).join(''));
}

it('when kube-apiserver writes watch events, then each reaches the client before the next is written', async () => {
  const agent = new http.Agent();
  const relayed = await openWatch(`${kapi.url}/api/v1/nodes?watch=true`, agent);
  expect(relayed.statusCode).toBe(200);
  await until(() => open.size === 1);
  const relayedRes = [...open][0]!;
  await pingPong(relayed, () => relayedRes, 200);
  agent.destroy();
});

it('when a watch is opened, then its response head reaches the client before any event', async () => {
  const agent = new http.Agent();
  const res = await openWatch(`${kapi.url}/api/v1/pods?watch=1`, agent);
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/json');
  agent.destroy();
});

it('when 1,000 watches are held through kapi, then all stay open and each gets the next event', async () => {
  const count = 1_000;
  const agent = new http.Agent({ maxSockets: Infinity });
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const responses: http.IncomingMessage[] = [];
  for (let batch = 0; batch < count; batch += 100) {
    const opened = await Promise.all(
      Array.from({ length: 100 }, (_, i) => openWatch(`${kapi.url}/api/v1/pods?watch=true&i=${batch + i}`, agent)),
    );
    responses.push(...opened);
  }
  await until(() => open.size === count);
  const rssHeld = process.memoryUsage().rss;

  const line = event(1);
  const received = await Promise.all([
    ...responses.map(
      (res) =>
        new Promise<string>((resolve) => {
          res.setEncoding('utf8');
          res.once('data', resolve);
        }),
    ),
    (async () => {
      for (const res of open) res.write(line);
      return line;
    })(),
  ]);
  expect(received).toEqual(Array.from({ length: count + 1 }, () => line));
  expect(responses.every((res) => res.statusCode === 200)).toBe(true);
  console.log(
    `${count} watches through kapi: RSS +${((rssHeld - rssBefore) / 1048576).toFixed(1)} MiB ` +
      `for client, kapi and backend sockets together (${((rssHeld - rssBefore) / count / 1024).toFixed(1)} KiB per watch)`,
  );
  for (const res of responses) res.destroy();
  await until(() => open.size === 0);
  agent.destroy();
}, 60_000);
