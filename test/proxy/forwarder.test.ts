import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  ALICE,
  auth,
  Backend,
  headerValues,
  KAPI_TOKEN,
  send,
  startBackendAndKapi,
  startKapi,
  stopCheckingLogs,
  until,
  USER_TOKEN,
  type Kapi,
} from './harness.js';
import { HELD_ANSWER_BYTES } from '../../src/proxy/forwarder.js';

let backend: Backend;
let kapi: Kapi;

/** kapi's audit line for a path, once written. */
function auditLineFor(path: string): Record<string, unknown> | undefined {
  return kapi.logs.lines
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => entry.audit === true && entry.path === path);
}

beforeEach(async () => {
  ({ backend, kapi } = await startBackendAndKapi());
});

afterEach(() => stopCheckingLogs(kapi, backend));

describe('authentication before forwarding', () => {
  it.each([
    ['no Authorization', []],
    ['a wrong token', ['Authorization', 'Bearer wrong']],
    ['Basic credentials', ['Authorization', 'Basic YWxpY2U6cHc=']],
  ])('when a request has %s, then it is a 401 Status and kube-apiserver never sees it', async (_case, headers) => {
    const answer = await send(kapi.url, { path: '/api/v1/nodes', headers });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', code: 401 });
    expect(backend.requests).toHaveLength(0);
  });

  it('when the forwarder is reached without an authenticated user, then it refuses rather than forwarding', async () => {
    const res = { destroyed: false, once: () => undefined } as never;
    const errors: unknown[] = [];
    kapi.forwarder.forward({ url: '/api/v1/nodes', rawHeaders: [] } as never, res, (e?: unknown) => errors.push(e));
    expect(errors).toEqual([expect.objectContaining({ code: 401 })]);
    expect(backend.requests).toHaveLength(0);
  });
});

describe('headers arriving at kube-apiserver', () => {
  it('when alice asks, then kube-apiserver sees kapi’s token and alice’s identity, and none of her credentials', async () => {
    await send(kapi.url, {
      path: '/api/v1/nodes?limit=5',
      headers: [...auth, 'Cookie', 'session=s3cret', 'Proxy-Authorization', 'Basic eDp5', 'Accept', 'application/json'],
    });
    expect(backend.requests).toHaveLength(1);
    const seen = backend.requests[0]!;
    expect(seen.url).toBe('/api/v1/nodes?limit=5');
    expect(headerValues(seen.rawHeaders, 'authorization')).toEqual([`Bearer ${KAPI_TOKEN}`]);
    expect(headerValues(seen.rawHeaders, 'impersonate-user')).toEqual(['alice']);
    expect(headerValues(seen.rawHeaders, 'impersonate-group')).toEqual(ALICE.groups);
    expect(headerValues(seen.rawHeaders, 'cookie')).toEqual([]);
    expect(headerValues(seen.rawHeaders, 'proxy-authorization')).toEqual([]);
    expect(headerValues(seen.rawHeaders, 'accept')).toEqual(['application/json']);
    expect(headerValues(seen.rawHeaders, 'host')).toEqual([backend.host]);
    expect(headerValues(seen.rawHeaders, 'x-forwarded-for')).toEqual(['127.0.0.1']);
    expect(headerValues(seen.rawHeaders, 'audit-id')).toHaveLength(1);
  });

  it.each([
    ['a GET', 'GET', '/api/v1/nodes', undefined],
    ['a POST with a body', 'POST', '/api/v1/namespaces/ns/configmaps', '{"kind":"ConfigMap"}'],
    ['a watch', 'GET', '/api/v1/nodes?watch=1', undefined],
  ])(
    'when %s carries a client X-Request-Id and Audit-ID, then kube-apiserver sees only kapi’s own id as Audit-ID',
    async (_case, method, path, body) => {
      backend.onRequest = (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      const answer = await send(kapi.url, {
        method,
        path,
        headers: [...auth, 'X-Request-Id', 'client-chosen-id', 'Audit-ID', 'client-chosen-audit'],
        body,
      });
      expect(answer.status).toBe(200);
      const seen = backend.requests[0]!;
      const kapiId = answer.headers['x-request-id'];
      expect(kapiId).toMatch(/^[0-9a-f-]{36}$/);
      expect(headerValues(seen.rawHeaders, 'audit-id')).toEqual([kapiId]);
      expect(headerValues(seen.rawHeaders, 'x-request-id')).toEqual([]);
      expect(seen.rawHeaders.join('\n')).not.toContain('client-chosen');
    },
  );

  it.each([
    ['relayed', 'GET', '/api/v1/nodes', auth, 200],
    ['relayed as a watch', 'GET', '/api/v1/nodes?watch=1', auth, 200],
    ['refused: no token', 'GET', '/api/v1/nodes', [], 401],
    ['refused: a redirect', 'GET', '/api/v1/redirect', auth, 502],
  ])(
    'when an answer is %s, then it carries kapi’s X-Request-Id once, the id of its audit line',
    async (_case, method, path, headers, status) => {
      backend.onRequest = (req, res) =>
        req.url === '/api/v1/redirect'
          ? res.writeHead(302, { Location: 'https://elsewhere.example/' }).end()
          : res.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': 'backend-id' }).end('{}');
      const answer = await send(kapi.url, { method, path, headers: [...headers, 'X-Request-Id', 'client-id'] });
      expect(answer.status).toBe(status);
      const ids = headerValues(answer.rawHeaders, 'x-request-id').filter((id) => id !== 'backend-id');
      expect(ids).toHaveLength(1);
      expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
      const auditLine = () =>
        kapi.logs.lines.map((text) => JSON.parse(text)).find((entry) => entry.audit && entry.requestId === ids[0]);
      await until(() => auditLine() !== undefined);
      expect(auditLine()).toMatchObject({ status, clientRequestId: 'client-id' });
    },
  );

  it('when the client names headers in Connection, then neither they nor hop-by-hop headers arrive', async () => {
    await send(kapi.url, {
      path: '/api/v1/pods',
      headers: [
        ...auth,
        'Connection',
        'keep-alive, X-Private',
        'X-Private',
        'p',
        'Keep-Alive',
        'timeout=9',
        'TE',
        'trailers',
      ],
    });
    const seen = backend.requests[0]!.rawHeaders;
    expect(headerValues(seen, 'x-private')).toEqual([]);
    expect(headerValues(seen, 'keep-alive')).toEqual([]);
    expect(headerValues(seen, 'te')).toEqual([]);
    expect(headerValues(seen, 'connection')).not.toContain('keep-alive, X-Private');
  });

  it.each([
    ['Impersonate-User', ['Impersonate-User', 'admin']],
    ['mixed-case iMpErSoNaTe-GrOuP, twice', ['iMpErSoNaTe-GrOuP', 'system:masters', 'impersonate-group', 'x']],
    ['Impersonate-Extra-scopes', ['Impersonate-Extra-scopes', 'all']],
    ['Connection: Impersonate-User', ['Connection', 'Impersonate-User']],
  ])(
    'when the client sends %s, then it is a 403 Status about impersonation and kube-apiserver never sees it',
    async (_case, extra) => {
      const answer = await send(kapi.url, { path: '/api/v1/secrets', headers: [...auth, ...extra] });
      expect(answer.status).toBe(403);
      const status = JSON.parse(answer.body);
      expect(status).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
      expect(status.message).toMatch(/impersonation through kapi is not allowed/);
      expect(backend.requests).toHaveLength(0);
    },
  );

  it('when the client streams a chunked body, then kube-apiserver receives it whole', async () => {
    backend.onRequest = (_req, res, body) => res.writeHead(201, { 'Content-Type': 'application/json' }).end(body);
    const answer = await send(kapi.url, {
      method: 'POST',
      path: '/api/v1/namespaces/ns/configmaps',
      headers: [...auth, 'Content-Type', 'application/json', 'Transfer-Encoding', 'chunked'],
      body: [Buffer.from('{"kind":'), Buffer.from('"ConfigMap"}')],
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toBe('{"kind":"ConfigMap"}');
    expect(backend.requests[0]!.body).toBe('{"kind":"ConfigMap"}');
  });
});

describe('answers passed back', () => {
  it('when kube-apiserver answers a Status error, then status, body and end-to-end headers come back unchanged', async () => {
    const status =
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"nodes \\"x\\" not found","reason":"NotFound","details":{"name":"x","kind":"nodes"},"code":404}\n';
    backend.onRequest = (_req, res) => {
      res.writeHead(404, 'Not Found', [
        'Content-Type',
        'application/json',
        'Audit-Id',
        'audit-123',
        'Warning',
        '299 - "first"',
        'Warning',
        '299 - "second"',
        'Connection',
        'X-Hop',
        'X-Hop',
        'secret-hop',
        'Keep-Alive',
        'timeout=5',
        'Cache-Control',
        'no-cache, private',
      ]);
      res.end(status);
    };
    const answer = await send(kapi.url, { path: '/api/v1/nodes/x', headers: auth });
    expect(answer.status).toBe(404);
    expect(answer.body).toBe(status);
    expect(headerValues(answer.rawHeaders, 'warning')).toEqual(['299 - "first"', '299 - "second"']);
    expect(answer.headers['audit-id']).toBe('audit-123');
    expect(answer.headers['cache-control']).toBe('no-cache, private');
    expect(answer.headers['x-hop']).toBeUndefined();
    expect(answer.headers['keep-alive']).toBeUndefined();
  });

  it('when kube-apiserver answers a large chunked body, then every byte arrives', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    backend.onRequest = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(big.slice(0, 1000));
      res.end(big.slice(1000));
    };
    const answer = await send(kapi.url, { path: '/api/v1/pods', headers: auth });
    expect(answer.body.length).toBe(big.length);
  });

  it('when kube-apiserver frames a short answer in chunks, then the client gets it whole, with its length, unchunked', async () => {
    // kube-apiserver (Go) frames every body over 2 KiB as chunks and writes them as separate TLS records
    const parts = ['{"kind":"Node",', '"metadata":{"name":"n1"},', `"status":{"pad":"${'p'.repeat(6000)}"}}`];
    backend.onRequest = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      for (const part of parts.slice(0, -1)) res.write(part);
      setTimeout(() => res.end(parts.at(-1)), 5);
    };
    const answer = await send(kapi.url, { path: '/api/v1/nodes/n1', headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(parts.join(''));
    expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(parts.join(''))));
    expect(answer.headers['transfer-encoding']).toBeUndefined();
  });

  it('when an answer is longer than kapi holds, then it streams: its first part arrives before kube-apiserver ends it', async () => {
    let clientHasData!: () => void;
    const clientGotData = new Promise<void>((resolve) => (clientHasData = resolve));
    backend.onRequest = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('x'.repeat(HELD_ANSWER_BYTES + 1));
      // the end comes only once the client has bytes: an answer held whole would never end
      void clientGotData.then(() => res.end('y'));
    };
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.get(
        `${kapi.url}/api/v1/pods`,
        { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            clientHasData();
          });
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
    });
    expect(body).toBe(`${'x'.repeat(HELD_ANSWER_BYTES + 1)}y`);
  });

  it.each([301, 302, 303, 307, 308])(
    'when kube-apiserver answers a %i redirect, then the client gets a 502 Status and no Location',
    async (code) => {
      backend.onRequest = (_req, res) =>
        res.writeHead(code, { Location: 'http://elsewhere.example/steal' }).end('moved');
      const answer = await send(kapi.url, { path: '/api/v1/nodes', headers: auth });
      expect(answer.status).toBe(502);
      expect(answer.headers.location).toBeUndefined();
      expect(JSON.parse(answer.body)).toMatchObject({
        kind: 'Status',
        code: 502,
        message: 'kube-apiserver answered with a redirect; kapi does not follow or relay redirects',
      });
      expect(backend.requests).toHaveLength(1);
    },
  );

  it.each([
    ['a GET', 'GET', '/api/v1/nodes/n1', undefined],
    ['a POST with a body', 'POST', '/api/v1/namespaces', '{"metadata":{"name":"x"}}'],
    ['a watch', 'GET', '/api/v1/nodes?watch=1', undefined],
  ])(
    'when kube-apiserver answers %s with 401, then the caller gets a 503 Status blaming kapi’s own credentials, never a 401',
    async (_case, method, path, body) => {
      backend.onRequest = (_req, res) =>
        res
          .writeHead(401, { 'Content-Type': 'application/json' })
          .end('{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","code":401}');
      const answer = await send(kapi.url, {
        method,
        path,
        headers: [...auth, ...(body ? ['Content-Type', 'application/json'] : [])],
        body,
      });
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({
        kind: 'Status',
        code: 503,
        reason: 'ServiceUnavailable',
        message: expect.stringContaining('refused kapi-apiserver’s own credentials'),
      });
      expect(answer.headers['retry-after']).toBe('5');
      expect(kapi.connection.health.credentialsRefused).toBe(true);
    },
  );

  it('when the client asks with HEAD, then the head comes back with its length and no body', async () => {
    backend.onRequest = (_req, res) =>
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '42' }).end();
    const answer = await send(kapi.url, { method: 'HEAD', path: '/api/v1/nodes/n1', headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe('42');
    expect(answer.body).toBe('');
    expect(backend.requests.map((r) => r.method)).toEqual(['HEAD']);
  });

  it('when kube-apiserver answers 304 Not Modified, then it passes through (a cache answer, not a redirect)', async () => {
    backend.onRequest = (_req, res) => res.writeHead(304, { ETag: '"abc"' }).end();
    const answer = await send(kapi.url, { path: '/api/v1', headers: [...auth, 'If-None-Match', '"abc"'] });
    expect(answer.status).toBe(304);
    expect(answer.headers.etag).toBe('"abc"');
  });
});

/** Backend timeouts longer than any test runs: a test that ends proves something other than a timeout ended it. */
const NEVER_TIMES_OUT = { connectTimeoutMs: 3_600_000, responseTimeoutMs: 3_600_000 };

describe('kube-apiserver unavailable', () => {
  it('when nothing listens at kube-apiserver’s address, then the refusal is answered with a 503 Status at once', async () => {
    // Both timeouts outlast the test: the answer can only come from the refused connection, never from waiting.
    const { address, release } = await refusingAddress();
    const down = await startKapi(`http://${address}`, { backend: NEVER_TIMES_OUT });
    try {
      const answer = await send(down.url, { path: '/api/v1/nodes', headers: auth });
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', code: 503, reason: 'ServiceUnavailable' });
      expect(JSON.parse(answer.body).message).toMatch(/^kube-apiserver is unavailable/);
    } finally {
      await down.stop();
      await release();
    }
  });

  it('when kube-apiserver accepts TCP but never answers the TLS handshake, then the connect timeout gives a 503', async () => {
    // Its connections are never read, so they would not notice kapi hanging up: they are destroyed at the end.
    const connections = new Set<net.Socket>();
    const silent = net.createServer((socket) => connections.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const { connectionFor, tokenAccess } = await import('../../src/kube/connection.js');
    // The silent server never completes a handshake and the response timeout outlasts the test, so the connect
    // timeout is the only way this request can end.
    const stuck = await startKapi('unused', {
      connection: connectionFor(tokenAccess(`https://127.0.0.1:${port}`, KAPI_TOKEN), 'kubeconfig'),
      backend: { ...NEVER_TIMES_OUT, connectTimeoutMs: 300 },
    });
    try {
      const started = Date.now();
      const answer = await send(stuck.url, { path: '/api/v1/nodes', headers: auth });
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', code: 503 });
      // a lower bound only (a busy machine makes it later, never earlier): it waited for the handshake
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(connections.size).toBeGreaterThanOrEqual(1);
    } finally {
      await stuck.stop();
      for (const socket of connections) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('when kube-apiserver takes longer than the response timeout, then the client gets a 504 Status', async () => {
    const slow = await startKapi(backend.url, { backend: { responseTimeoutMs: 200 } });
    backend.onRequest = () => undefined;
    try {
      const answer = await send(slow.url, { path: '/api/v1/nodes', headers: auth });
      expect(answer.status).toBe(504);
      expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', code: 504, reason: 'Timeout' });
    } finally {
      await slow.stop();
    }
  });

  it('when kube-apiserver drops an idle pooled connection as kapi reuses it, then a GET is retried once and succeeds', async () => {
    // The second request on any backend connection is dropped unanswered, as a server closing an idle socket does.
    const served = new WeakMap<net.Socket, number>();
    backend.onRequest = (req, res) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count > 1) req.socket.destroy();
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    };
    expect((await send(kapi.url, { path: '/api/v1/nodes', headers: auth })).status).toBe(200);
    const second = await send(kapi.url, { path: '/api/v1/nodes', headers: auth });
    expect(second.status).toBe(200);
    expect(backend.requests).toHaveLength(3);
  });

  it('when that happens to a request with a body, then it is not sent twice: a 502, not an outage', async () => {
    const served = new WeakMap<net.Socket, number>();
    backend.onRequest = (req, res) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count > 1) req.socket.destroy();
      else res.writeHead(200).end('{}');
    };
    // Requests with a body share one pool: the first leaves the idle connection the second is sent on.
    const create = { method: 'POST', headers: [...auth, 'Content-Type', 'application/json'], body: '{}' };
    expect((await send(kapi.url, { ...create, path: '/api/v1/namespaces/ns/configmaps' })).status).toBe(200);
    const post = await send(kapi.url, { ...create, path: '/api/v1/namespaces/ns/configmaps' });
    expect(post.status).toBe(502);
    expect(JSON.parse(post.body)).toMatchObject({
      kind: 'Status',
      code: 502,
      message: expect.stringContaining('kube-apiserver closed the connection before answering') as unknown,
    });
    expect(backend.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
    expect(kapi.logs.lines.join('\n')).not.toContain('unreachable');
  });
});

describe('aborts', () => {
  it('when the client goes away while a GET waits for kube-apiserver, then its request there is abandoned', async () => {
    let backendClosed = false;
    let arrived = false;
    backend.onRequest = (_req, res) => {
      arrived = true;
      res.on('close', () => (backendClosed = true));
    };
    const req = http.get(`${kapi.url}/api/v1/nodes/slow`, {
      headers: { Authorization: `Bearer ${USER_TOKEN}` },
      agent: false,
    });
    req.on('error', () => undefined);
    await until(() => arrived);
    req.destroy();
    await until(() => backendClosed);
    // audited all the same: nothing was sent, so nginx's 499
    await until(() => auditLineFor('/api/v1/nodes/slow') !== undefined);
    expect(auditLineFor('/api/v1/nodes/slow')).toMatchObject({ user: 'alice', status: 499, aborted: true });
  });

  it('when kube-apiserver cuts an answer short, then the client’s answer is cut too (not a clean end)', async () => {
    backend.onRequest = (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1000' });
      res.write('{"kind":"Node",');
      setTimeout(() => req.socket.destroy(), 20);
    };
    const outcome = await new Promise<string>((resolve) => {
      const req = http.get(
        `${kapi.url}/api/v1/nodes/cut`,
        { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent: false },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => resolve('clean end'));
          res.on('error', () => resolve('cut'));
          res.on('aborted', () => resolve('cut'));
        },
      );
      req.on('error', () => resolve('cut'));
    });
    expect(outcome).toBe('cut');
  });

  it('when the client goes away during a watch, then kube-apiserver sees its connection closed', async () => {
    let backendClosed = false;
    backend.onRequest = (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{}}\n');
      res.on('close', () => (backendClosed = true));
    };
    await new Promise<void>((resolve, reject) => {
      const req = http.get(
        `${kapi.url}/api/v1/pods?watch=true`,
        { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent: false },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => undefined);
      setTimeout(() => reject(new Error('no first event')), 3_000).unref();
    });
    await until(() => backendClosed);
    // a watch the client ends is audited when it ends, with the status it was answered
    await until(() => auditLineFor('/api/v1/pods') !== undefined);
    expect(auditLineFor('/api/v1/pods')).toMatchObject({ verb: 'GET', status: 200, aborted: true });
  });

  it('when kube-apiserver cuts a watch, then the client’s stream is cut too (not a clean end)', async () => {
    backend.onRequest = (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{}}\n');
      setTimeout(() => req.socket.destroy(), 20);
    };
    const outcome = await new Promise<string>((resolve) => {
      const req = http.get(
        `${kapi.url}/api/v1/pods?watch=true`,
        { headers: { Authorization: `Bearer ${USER_TOKEN}` }, agent: false },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => resolve('clean end'));
          res.on('error', () => resolve('cut'));
          res.on('aborted', () => resolve('cut'));
        },
      );
      req.on('error', () => resolve('cut'));
    });
    expect(outcome).toBe('cut');
  });
});

/**
 * An address where nothing can be listening, for as long as the test holds it: a port kept bound on 127.0.0.1 by this
 * test, reached through 127.0.0.2 (loopback as well). No other process can take the port meanwhile (a wildcard bind
 * is refused while a specific one holds it), so a connection there is always refused, unlike a port freed for the test.
 */
async function refusingAddress(): Promise<{ address: string; release: () => Promise<void> }> {
  const holder = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as AddressInfo;
  return {
    address: `127.0.0.2:${port}`,
    release: () => new Promise<void>((resolve) => holder.close(() => resolve())),
  };
}
