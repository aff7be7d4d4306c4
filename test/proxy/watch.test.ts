import http from 'node:http';
import type { ServerResponse } from 'node:http';
import { Backend, percentile, startKapi, until, USER_TOKEN, type Kapi } from './harness.js';

/**
 * Watches through the forwarder: each event must reach the client before kube-apiserver writes the next (no
 * buffering), and many watches must be held at once. Latencies are measured with timestamps and printed.
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
    const timer = setTimeout(() => reject(new Error('the watch response head did not arrive')), 3_000);
    const req = http.get(url, { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent }, (res) => {
      clearTimeout(timer);
      resolve(res);
    });
    req.on('error', reject);
  });
}

/** Sends events one at a time, each only after the previous one arrived; returns the per-event latency in ms. */
async function pingPong(res: http.IncomingMessage, server: () => ServerResponse, count: number): Promise<number[]> {
  const latencies: number[] = [];
  let received = '';
  let waiting: (() => void) | undefined;
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    received += chunk;
    waiting?.();
  });
  for (let n = 0; n < count; n++) {
    const line = event(n);
    const arrived = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`event ${n} was not relayed before the next one was written`)),
        2_000,
      );
      waiting = () => {
        if (received.endsWith(line)) {
          clearTimeout(timer);
          resolve();
        }
      };
    });
    const sent = process.hrtime.bigint();
    server().write(line);
    await arrived;
    latencies.push(Number(process.hrtime.bigint() - sent) / 1e6);
  }
  return latencies;
}

it('when kube-apiserver writes watch events, then each reaches the client before the next is written', async () => {
  const agent = new http.Agent();
  const direct = await openWatch(`${backend.url}/api/v1/nodes?watch=true`, agent);
  await until(() => open.size === 1);
  const directRes = [...open][0]!;
  const directLatency = (await pingPong(direct, () => directRes, 200)).sort((a, b) => a - b);

  const relayed = await openWatch(`${kapi.url}/api/v1/nodes?watch=true`, agent);
  expect(relayed.statusCode).toBe(200);
  await until(() => open.size === 2);
  const relayedRes = [...open][1]!;
  const relayedLatency = (await pingPong(relayed, () => relayedRes, 200)).sort((a, b) => a - b);

  const report = (l: number[]) => `p50 ${percentile(l, 50).toFixed(3)} ms, p99 ${percentile(l, 99).toFixed(3)} ms`;
  console.log(
    `watch relay, 200 events one at a time: direct ${report(directLatency)}; through kapi ${report(relayedLatency)}`,
  );
  // The bar here is "event by event": a buffering relay would stall on the first event. The SPEC figure (added
  // p99 ≤ 1 ms) is measured by `npm run bench` on a quiet machine, not asserted in a shared test run.
  expect(percentile(relayedLatency, 50)).toBeLessThan(50);
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
  const started = Date.now();
  const responses: http.IncomingMessage[] = [];
  for (let batch = 0; batch < count; batch += 100) {
    const opened = await Promise.all(
      Array.from({ length: 100 }, (_, i) => openWatch(`${kapi.url}/api/v1/pods?watch=true&i=${batch + i}`, agent)),
    );
    responses.push(...opened);
  }
  await until(() => open.size === count, 5_000, `${count} watches at the backend`);
  const openedMs = Date.now() - started;
  const rssHeld = process.memoryUsage().rss;

  const arrivals: number[] = [];
  const line = event(1);
  const sent = process.hrtime.bigint();
  await Promise.all([
    ...responses.map(
      (res) =>
        new Promise<void>((resolve) => {
          res.once('data', () => {
            arrivals.push(Number(process.hrtime.bigint() - sent) / 1e6);
            resolve();
          });
        }),
    ),
    (async () => {
      for (const res of open) res.write(line);
    })(),
  ]);
  arrivals.sort((a, b) => a - b);
  expect(arrivals).toHaveLength(count);
  expect(responses.every((res) => res.statusCode === 200)).toBe(true);
  console.log(
    `${count} watches through kapi: opened in ${openedMs} ms; RSS +${((rssHeld - rssBefore) / 1048576).toFixed(1)} MiB ` +
      `for client, kapi and backend sockets together (${((rssHeld - rssBefore) / count / 1024).toFixed(1)} KiB per watch); ` +
      `one event to all: p50 ${percentile(arrivals, 50).toFixed(1)} ms, last ${arrivals.at(-1)!.toFixed(1)} ms after the first write`,
  );
  for (const res of responses) res.destroy();
  await until(() => open.size === 0, 5_000, 'the backend to see every watch closed');
  agent.destroy();
}, 20_000);
