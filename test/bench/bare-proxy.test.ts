/** The bench's yardsticks for kapi's forwarding: both bare proxies send what kapi sends and relay what comes back. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareProxy } from '../../bench/bare-proxy-server.js';
import { generatedCertificate } from '../support/certificates.js';

const dir = mkdtempSync(join(tmpdir(), 'kapi-bare-proxy-'));
let backend: https.Server;
let backendUrl: string;
let ca: string;
const seen: string[][] = [];

beforeAll(async () => {
  const certificate = await generatedCertificate(dir);
  ca = certificate.ca!;
  backend = https.createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    seen.push(req.rawHeaders);
    if (req.url === '/api/v1/nodes/sized') {
      const body = JSON.stringify({ kind: 'Node', sized: true });
      return void res.writeHead(200, { 'Content-Length': String(body.length) }).end(body);
    }
    res.writeHead(req.url === '/api/v1/nodes/missing' ? 404 : 200, {
      'Content-Type': 'application/json',
      'Audit-Id': 'a-1',
      Connection: 'keep-alive',
    });
    res.end(JSON.stringify({ kind: 'Node', path: req.url }));
  });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendUrl = `https://127.0.0.1:${(backend.address() as AddressInfo).port}`;
});

afterAll(async () => {
  backend.closeAllConnections();
  await new Promise<void>((resolve) => backend.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function header(raw: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) values.push(raw[i + 1]!);
  return values;
}

describe.each(['undici', 'https'] as const)('the bare proxy with the %s client', (client) => {
  let server: http.Server;
  let close: () => void;
  let url: string;

  beforeAll(async () => {
    const proxy = bareProxy({
      backendUrl,
      ca,
      headers: { Authorization: 'Bearer kapi-token', 'Impersonate-User': 'alice', 'Impersonate-Group': ['a', 'b'] },
      client,
    });
    close = proxy.close;
    server = http.createServer(proxy.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('when a GET comes through, then kube-apiserver gets kapi’s identity headers and not the caller’s token', async () => {
    const before = seen.length;
    const answer = await fetch(`${url}/api/v1/nodes/n1?x=1`, { headers: { Authorization: 'Bearer caller-token' } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ kind: 'Node', path: '/api/v1/nodes/n1?x=1' });
    expect(answer.headers.get('audit-id')).toBe('a-1');
    expect(seen).toHaveLength(before + 1);
    const sent = seen.at(-1)!;
    expect(header(sent, 'host')).toEqual([new URL(backendUrl).host]);
    expect(header(sent, 'authorization')).toEqual(['Bearer kapi-token']);
    expect(header(sent, 'impersonate-user')).toEqual(['alice']);
    expect(header(sent, 'impersonate-group')).toEqual(['a', 'b']);
  });

  it('when kube-apiserver states its answer’s length, then the caller gets that length once', async () => {
    const answer = await fetch(`${url}/api/v1/nodes/sized`);
    const body = JSON.stringify({ kind: 'Node', sized: true });
    expect(answer.headers.get('content-length')).toBe(String(body.length));
    expect(answer.headers.get('transfer-encoding')).toBeNull();
    expect(await answer.text()).toBe(body);
  });

  it('when kube-apiserver answers with an error status, then the caller gets that status and body', async () => {
    const answer = await fetch(`${url}/api/v1/nodes/missing`);
    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({ kind: 'Node', path: '/api/v1/nodes/missing' });
  });
});

describe('the core-https proxy in front of a plain-http backend (the sandbox with BENCH_SANDBOX_TLS=0)', () => {
  it('when a GET comes through, then it is sent over plain http and answered', async () => {
    const plain = http.createServer((req, res) => res.end(JSON.stringify({ path: req.url, host: req.headers.host })));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
    const proxy = bareProxy({ backendUrl: plainUrl, headers: { 'Impersonate-User': 'alice' }, client: 'https' });
    const server = http.createServer(proxy.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/nodes/n2`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ path: '/api/v1/nodes/n2', host: new URL(plainUrl).host });
    } finally {
      proxy.close();
      for (const one of [server, plain]) {
        one.closeAllConnections();
        await new Promise<void>((resolve) => one.close(() => resolve()));
      }
    }
  });
});
