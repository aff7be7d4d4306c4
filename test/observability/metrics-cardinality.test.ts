/**
 * Hostile load on the metrics: clients choose paths and methods, never label values. Through the whole server (the
 * sandbox behind it), 10,000 requests to unique paths with every method Node accepts, with and without a token, leave
 * the set of series exactly as a first round of the same shapes made it.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { login } from '../e2e/client.js';
import { startE2E, type E2E } from '../e2e/harness.js';

const PASSWORD = 'Cardinality-pw-1';
/** CONNECT is a tunnel, not a request with a path. */
const METHODS = http.METHODS.filter((method) => method !== 'CONNECT');
const SHAPES: ((i: number) => string)[] = [
  (i) => `/oauth/made-up-${i}`,
  (i) => `/kapis/a${i}/b/c`,
  (i) => `/kapis/resources.kapi.io/v1alpha3/nodes/node-${i}`,
  (i) => `/kapis/logging.kapi.io/v1alpha2/x${i}`,
  (i) => `/api/v1/namespaces/ns-${i}/made-up-${i}`,
  (i) => `/api/v1/namespaces/default/pods/pod-${i}/log`,
  (i) => `/apis/made.up.${i}/v1/things/${i}`,
  (i) => `/apis/group-${i}`,
  (i) => `/openapi/v3/x-${i}`,
  (i) => `/api-docs/swagger-ui/file-${i}.js`,
  (i) => `/random-${i}/x?y=${i}`,
];

const RUNTIME_SERIES = /^nodejs_(?:gc_duration_seconds|active_(?:handles|requests|resources))/;

let e2e: E2E;
let token: string;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function send(method: string, path: string, authorized: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port: e2e.kapi.httpPort,
        method,
        path,
        headers: authorized ? { Authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Every request of one round: each shape with each method, with and without the token; `from` makes paths unique. */
function round(from: number): { method: string; path: string; authorized: boolean }[] {
  const requests = [];
  let i = from;
  for (const shape of SHAPES)
    for (const method of METHODS)
      for (const authorized of [false, true]) requests.push({ method, path: shape(i++), authorized });
  return requests;
}

async function sendAll(requests: { method: string; path: string; authorized: boolean }[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const { method, path, authorized } = requests[next++]!;
      await send(method, path, authorized);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/** Every series on /metrics by name and labels (values left out). */
async function seriesSet(): Promise<Set<string>> {
  const text = await (await fetch(`http://127.0.0.1:${e2e.kapi.metricsPort}/metrics`)).text();
  return new Set(
    text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.slice(0, line.lastIndexOf(' '))),
  );
}

beforeAll(async () => {
  e2e = await startE2E({ metrics: true });
  const user = await e2e.createUser('cardinality', PASSWORD);
  await e2e.grant(user, [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]);
  token = (await login(e2e.kapiUrl, user, PASSWORD)).access_token;
}, 120_000);

afterAll(async () => {
  agent.destroy();
  await e2e?.stop();
});

describe('metrics under unique paths and methods', () => {
  it('when 10,000 requests go to unique paths with every method, with and without a token, then no series is added', async () => {
    const first = round(0);
    await sendAll(first);
    const before = await seriesSet();
    const requests: ReturnType<typeof round> = [];
    for (let from = first.length; requests.length < 10_000; from += first.length) requests.push(...round(from));
    await sendAll(requests.slice(0, 10_000));
    const after = await seriesSet();
    // The runtime's own label values (GC kinds, handle types) come from Node's fixed sets and may appear the first
    // time the runtime uses one; every other series, kapi's above all, must already have been there.
    const added = [...after].filter((series) => !before.has(series) && !RUNTIME_SERIES.test(series));
    expect(added).toEqual([]);
    // and none of them names a path a client made up
    expect([...after].filter((series) => /made-up|random-|node-\d|file-\d|group-\d/.test(series))).toEqual([]);
  }, 300_000);
});
