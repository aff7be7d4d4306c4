/**
 * Logging answers under clients that stop reading, over a real socket: at most so many exports and queries at once
 * (per user and per replica), an export whose client reads nothing stops reading container logs (it holds one window
 * of lines, no more), and after the write timeout its answer is ended, logged, and its place given back.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { LogRequestLimits } from '../../../../src/apis/logging/v1alpha2/request-limits.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { EXPORT_WINDOWS } from '../../../../src/apis/logging/v1alpha2/pod-log/ordered-scan.js';
import { grantClusterAdmin, startLoggingSandbox, USER_HEADER } from './sandbox-app.js';

const LOGS = '/kapis/logging.kapi.io/v1alpha2/logs';
const USERS = ['alice', 'bob', 'carol'];
const WRITE_TIMEOUT_MS = 400;
const LONG = 600_000;
/** The sandbox's 3 nodes × 4 pods, one container each, and the lines each holds in the first suite. */
const CONTAINERS = 12;
const LINES = 100_000;

let port: number;
const warnings: Record<string, unknown>[] = [];
const limits = new LogRequestLimits({ exports: { perProcess: 3, perUser: 2 }, queries: { perProcess: 8, perUser: 4 } });

/** An export whose client sends the request and then never reads: its socket's receive buffer fills and stays full. */
interface StalledClient {
  socket: net.Socket;
  /** The bytes received once reading resumes, up to the end of the connection. */
  readAll(): Promise<string>;
}

function stalledExport(user: string): Promise<StalledClient> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${LOGS}?operation=export HTTP/1.1\r\nHost: kapi\r\n${USER_HEADER}: ${user}\r\n\r\n`);
      socket.pause();
      resolve({
        socket,
        readAll: () =>
          new Promise((done) => {
            const chunks: Buffer[] = [];
            socket.on('data', (chunk: Buffer) => chunks.push(chunk));
            socket.on('close', () => done(Buffer.concat(chunks).toString('latin1')));
            socket.on('error', () => undefined);
            socket.resume();
          }),
      });
    });
    socket.on('error', reject);
  });
}

function get(path: string, user: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ port, host: '127.0.0.1', path, headers: { [USER_HEADER]: user } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

/** Polls until `check` holds; the test's own timeout is the only limit. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** A logging app over a sandbox whose 12 containers hold `lines` lines each, served on a port of its own. */
async function serve(lines: number, writeTimeoutMs: number) {
  const env = await startLoggingSandbox({
    sandbox: { nodes: 3, podsPerNode: 4, logHistory: { lines, spanMs: 6 * 3600_000 } },
    routes: { limits, writeTimeoutMs },
    logger: createLogger('warn', {
      sink: (line) => {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.level === 'warn') warnings.push(parsed);
      },
    }),
  });
  for (const user of [...USERS, 'dave']) await grantClusterAdmin(env.sandbox, user);
  const server = http.createServer(env.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    env,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await env.stop();
    },
  };
}

describe('exports whose clients read nothing, within the write timeout', () => {
  let served: Awaited<ReturnType<typeof serve>>;
  const clients: StalledClient[] = [];
  beforeAll(async () => {
    // 12 containers × 100,000 lines: far more than the socket buffers of a client that reads nothing take
    served = await serve(LINES, LONG);
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.socket.destroy();
    await served?.stop();
  });

  it('when a user has two exports in flight, then a third is a 429 Status with Retry-After; queries still answer', async () => {
    clients.push(await stalledExport('alice'), await stalledExport('alice'));
    await until(() => limits.inFlight('export') === 2);
    const third = await get(`${LOGS}?operation=export`, 'alice');
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('1');
    expect(JSON.parse(third.body)).toMatchObject({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
      message: expect.stringMatching(/too many log exports of this user at once \(at most 2\)/),
    });
    const query = await get(`${LOGS}?size=5`, 'alice');
    expect(query.status).toBe(200);
    expect(JSON.parse(query.body).query.records).toHaveLength(5);
  });

  it('when the replica has as many exports in flight as allowed, then another user’s export is a 429 too', async () => {
    clients.push(await stalledExport('bob'));
    await until(() => limits.inFlight('export') === 3);
    const refused = await get(`${LOGS}?operation=export`, 'carol');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).message).toMatch(/on this server \(at most 3\)/);
  });

  it('when their sockets are full, then they stop reading container logs, holding at most one window each', async () => {
    // Reading stops once each export waits for its client: the count of reads settles while all three are in flight.
    let reads = served.env.logReads();
    await until(async () => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const settled = served.env.logReads() === reads;
      reads = served.env.logReads();
      return settled;
    });
    expect(limits.inFlight('export')).toBe(3);
    // A whole export reads every container once per window of about targetLines lines; the three stalled exports
    // together read less than half of one (what the clients' socket buffers took, and one window each).
    const wholeExport = ((CONTAINERS * LINES) / EXPORT_WINDOWS.targetLines) * CONTAINERS;
    expect(reads).toBeLessThan(wholeExport / 2);
  }, 60_000);
});

describe('exports whose clients read nothing for the write timeout', () => {
  let served: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    served = await serve(20_000, WRITE_TIMEOUT_MS);
  }, 60_000);
  afterAll(async () => {
    await served?.stop();
  });

  it('when they read nothing for the write timeout, then the answers are ended, logged, and their places freed', async () => {
    warnings.length = 0;
    const clients = [await stalledExport('alice'), await stalledExport('bob'), await stalledExport('carol')];
    await until(() => warnings.length === 3);
    await until(() => limits.inFlight('export') === 0);
    for (const warning of warnings) {
      expect(warning).toMatchObject({
        message: 'logging answer ended: its client took none of it for too long',
        operation: 'export',
        writeTimeoutSeconds: WRITE_TIMEOUT_MS / 1000,
        requestId: expect.any(String),
      });
    }
    expect(warnings.map((w) => w.user).sort()).toEqual(['alice', 'bob', 'carol']);
    // Each client, reading at last, finds its answer cut: a chunked body without its last (empty) chunk.
    for (const client of clients) {
      const text = await client.readAll();
      expect(text.startsWith('HTTP/1.1 200')).toBe(true);
      expect(text.endsWith('\r\n0\r\n\r\n')).toBe(false);
    }
    const again = await get(`${LOGS}?operation=export&pods=does-not-exist`, 'alice');
    expect(again.status).toBe(200);
  }, 60_000);

  it('when a client pauses for less than the write timeout each time, then its export is never ended', async () => {
    warnings.length = 0;
    const text = await new Promise<string>((resolve, reject) => {
      http
        .get(
          {
            port,
            host: '127.0.0.1',
            path: `${LOGS}?operation=export&workloads=kube-proxy`,
            headers: { [USER_HEADER]: 'dave' },
          },
          (res) => {
            let body = '';
            let pauses = 0;
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              body += chunk;
              // stop and go for a while: each pause leaves output waiting, shorter than the timeout
              if (pauses++ < 8) {
                res.pause();
                setTimeout(() => res.resume(), WRITE_TIMEOUT_MS / 2);
              }
            });
            res.on('end', () => resolve(body));
            res.on('error', reject);
          },
        )
        .on('error', reject);
    });
    expect(text.split('\n').filter(Boolean).length).toBeGreaterThan(1000);
    expect(warnings).toEqual([]);
  }, 60_000);
});
