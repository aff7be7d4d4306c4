/**
 * Request bodies through the forwarder: a body over kube-apiserver's limit gets its 413 Status whether it declares its
 * length or comes chunked, and a kube-apiserver that closes the connection mid-request is not an outage (no 503, no
 * "unreachable" in the log).
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { auth, Backend, KAPI_TOKEN, send, startKapi, stopCheckingLogs, type Kapi } from './harness.js';

const MiB = 1024 * 1024;
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const ADMIN = { username: 'admin', groups: [] };

/** A ConfigMap whose JSON is `size` bytes or a little more, as one buffer or as 64 KiB chunks. */
function configMapBody(name: string, size: number): Buffer {
  return Buffer.from(
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'x'.repeat(size) } }),
  );
}

function chunks(body: Buffer, size = 64 * 1024): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) out.push(body.subarray(at, at + size));
  return out;
}

const json = ['Content-Type', 'application/json'];

describe('bodies over kube-apiserver’s limit (the sandbox as kube-apiserver)', () => {
  let sandbox: Sandbox;
  let kapi: Kapi;

  beforeAll(async () => {
    // kapi reads kube's early 413 while still sending; on a busy machine that can take longer than Go's 500 ms before
    // the reset that would discard it (a 502 then, as from kube-apiserver): what is tested is the relay, not the race
    sandbox = await startSandbox({ nodes: 1, podsPerNode: 0, crdDir: '/nonexistent', rstAvoidanceDelayMs: 30_000 });
  });
  afterAll(() => sandbox.stop());
  afterEach(async () => {
    await kapi.stop();
    expect(kapi.logs.lines.join('\n')).not.toContain(sandbox.serviceAccountToken);
  });

  const kapiFor = (options: { maxRequestBodyBytes?: number } = {}) =>
    startKapi(sandbox.url, {
      connection: connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox'),
      user: ADMIN,
      ...options,
    });

  it.each([
    ['with a Content-Length', (body: Buffer) => body],
    ['chunked', (body: Buffer) => chunks(body)],
  ])('when a 4 MiB body comes %s, then it is kube’s 413 Status and nothing is created', async (_case, frame) => {
    kapi = await kapiFor();
    const answer = await send(kapi.url, {
      method: 'POST',
      path: CONFIGMAPS,
      headers: [...auth, ...json],
      body: frame(configMapBody('too-large', 4 * MiB)) as string | Buffer[],
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'RequestEntityTooLarge',
      message: `Request entity too large: limit is ${3 * MiB}`,
      code: 413,
    });
    expect(answer.headers.connection).toBe('close');
    expect(kapi.logs.lines.join('\n')).not.toMatch(/unreachable|unavailable/);
    const created = await fetch(`${sandbox.url}${CONFIGMAPS}/too-large`, {
      headers: { Authorization: `Bearer ${sandbox.adminToken}` },
    });
    expect(created.status).toBe(404);
  });

  it('when a chunked body is under the limit, then it is created', async () => {
    kapi = await kapiFor();
    const answer = await send(kapi.url, {
      method: 'POST',
      path: CONFIGMAPS,
      headers: [...auth, ...json],
      body: chunks(configMapBody('fits', 200 * 1024)),
    });
    expect(answer.status).toBe(201);
  });

  it('when kube-apiserver refuses a chunked body itself and closes mid-body, then its 413 reaches the client whole', async () => {
    // kapi's own limit above kube-apiserver's: kube answers while kapi is still sending, then closes.
    kapi = await kapiFor({ maxRequestBodyBytes: 64 * MiB });
    const answer = await send(kapi.url, {
      method: 'POST',
      path: CONFIGMAPS,
      headers: [...auth, ...json],
      body: chunks(configMapBody('refused-by-kube', 8 * MiB)),
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    expect(kapi.logs.lines.join('\n')).not.toMatch(/unreachable|unavailable/);
  });
});

describe('a body refused before kube-apiserver sees it whole (a fake kube-apiserver)', () => {
  let backend: Backend;
  let kapi: Kapi;
  const completed: string[] = [];

  beforeEach(async () => {
    backend = await Backend.start();
    completed.length = 0;
    backend.onRequest = (req, res, body) => {
      completed.push(`${req.method} ${req.url} ${body.length}`);
      res.writeHead(201, { 'Content-Type': 'application/json' }).end('{}');
    };
    kapi = await startKapi(backend.url, { maxRequestBodyBytes: 1024 });
  });
  afterEach(() => stopCheckingLogs(kapi, backend));

  it('when a chunked body passes the configured limit, then it is a 413 and kube-apiserver never gets a complete request', async () => {
    const answer = await send(kapi.url, {
      method: 'POST',
      path: CONFIGMAPS,
      headers: [...auth, ...json],
      body: chunks(Buffer.alloc(4096, 'x'), 512),
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ message: 'Request entity too large: limit is 1024' });
    expect(completed).toEqual([]);
  });

  it('when a write with ?watch=true sends a chunked body past the limit, then it is still a 413 and kube-apiserver never gets it', async () => {
    const answer = await send(kapi.url, {
      method: 'POST',
      path: `${CONFIGMAPS}?watch=true`,
      headers: [...auth, ...json],
      body: chunks(Buffer.alloc(4096, 'x'), 512),
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    expect(completed).toEqual([]);
  });

  it('when a declared length is over the limit, then kube-apiserver is not even asked', async () => {
    const answer = await send(kapi.url, {
      method: 'PUT',
      path: `${CONFIGMAPS}/x`,
      headers: [...auth, ...json],
      body: Buffer.alloc(1025, 'x').toString(),
    });
    expect(answer.status).toBe(413);
    expect(backend.requests).toEqual([]);
  });

  it('when a body is exactly at the limit, then it is forwarded whole', async () => {
    const answer = await send(kapi.url, {
      method: 'POST',
      path: CONFIGMAPS,
      headers: [...auth, ...json],
      body: chunks(Buffer.alloc(1024, 'x'), 100),
    });
    expect(answer.status).toBe(201);
    expect(completed).toEqual([`POST ${CONFIGMAPS} 1024`]);
  });

  it('when a long-running request (a proxy subresource) streams a larger body, then it is not limited', async () => {
    const answer = await send(kapi.url, {
      method: 'POST',
      path: '/api/v1/namespaces/default/services/web:80/proxy/upload',
      headers: [...auth, 'Content-Type', 'application/octet-stream'],
      body: chunks(Buffer.alloc(8192, 'x'), 1024),
    });
    expect(answer.status).toBe(201);
    expect(completed).toEqual(['POST /api/v1/namespaces/default/services/web:80/proxy/upload 8192']);
  });
});

describe('a kube-apiserver that closes the connection mid-request', () => {
  it.each(['GET', 'DELETE'])(
    'when it hangs up on a bodiless %s without an answer (again on a retry), then the client gets a 502, not an outage',
    async (method) => {
      const backend = await Backend.start();
      backend.onRequest = (req) => req.socket.destroy();
      const kapi = await startKapi(backend.url);
      try {
        const answer = await send(kapi.url, { method, path: `${CONFIGMAPS}/x`, headers: auth });
        expect(answer.status).toBe(502);
        expect(JSON.parse(answer.body)).toMatchObject({
          kind: 'Status',
          code: 502,
          message: expect.stringMatching(/^kube-apiserver closed the connection before answering/) as unknown,
        });
        expect(kapi.logs.lines.join('\n')).not.toContain('unreachable');
      } finally {
        await stopCheckingLogs(kapi, backend);
      }
    },
  );

  it('when it takes part of the body and hangs up without an answer, then the client gets a 502, not an outage', async () => {
    // Reads the head and a first piece of the body, then closes: a crash or a proxy in between giving up.
    const abrupt = net.createServer((socket) => {
      let seen = 0;
      socket.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > 2048) socket.destroy();
      });
    });
    await new Promise<void>((resolve) => abrupt.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(abrupt.address() as AddressInfo).port}`;
    const kapi = await startKapi(url);
    try {
      const answer = await send(kapi.url, {
        method: 'POST',
        path: CONFIGMAPS,
        headers: [...auth, ...json],
        body: chunks(Buffer.alloc(256 * 1024, 'x'), 1024),
      });
      expect(answer.status).toBe(502);
      expect(JSON.parse(answer.body)).toMatchObject({
        kind: 'Status',
        code: 502,
        message: expect.stringMatching(/^kube-apiserver closed the connection before answering/) as unknown,
      });
      const logged = kapi.logs.lines.join('\n');
      expect(logged).toContain('kube-apiserver closed the connection before answering');
      expect(logged).not.toContain('unreachable');
      expect(logged).not.toContain(KAPI_TOKEN);
    } finally {
      await kapi.stop();
      await new Promise<void>((resolve) => abrupt.close(() => resolve()));
    }
  });
});
