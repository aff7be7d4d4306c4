import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import type { ServingCertificate } from '../../src/server/tls.js';
import { generatedCertificate } from '../support/certificates.js';
import { auth, headerValues, KAPI_TOKEN, send, startKapi } from './harness.js';

/** kube-apiserver over TLS: kapi verifies it against the cluster CA from the kubeconfig, and nothing else. */

const dir = mkdtempSync(join(tmpdir(), 'kapi-backend-tls-'));
let clusterCa: ServingCertificate;
let otherCa: ServingCertificate;
let server: https.Server;
let url: string;
const seen: string[][] = [];

beforeAll(async () => {
  [clusterCa, otherCa] = await Promise.all([
    generatedCertificate(dir, 'cluster-ca.crt'),
    generatedCertificate(dir, 'other-ca.crt'),
  ]);
  server = https.createServer({ key: clusterCa.key, cert: clusterCa.cert }, (req, res) => {
    seen.push(req.rawHeaders);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"Node"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function kapiTrusting(ca: string) {
  const access = { ...tokenAccess(url, KAPI_TOKEN), ca: Buffer.from(ca) };
  return startKapi(url, { connection: connectionFor(access, 'kubeconfig') });
}

it('when kube-apiserver’s certificate is signed by the cluster CA, then requests and watches are forwarded over TLS', async () => {
  const kapi = await kapiTrusting(clusterCa.ca!);
  try {
    const answer = await send(kapi.url, { path: '/api/v1/nodes/n1', headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('{"kind":"Node"}');
    const watch = await send(kapi.url, { path: '/api/v1/nodes?watch=true', headers: auth });
    expect(watch.status).toBe(200);
    expect(headerValues(seen.at(-1)!, 'authorization')).toEqual([`Bearer ${KAPI_TOKEN}`]);
  } finally {
    await kapi.stop();
  }
});

it('when kube-apiserver’s certificate is not signed by the cluster CA, then nothing is sent and the client gets a 503', async () => {
  const before = seen.length;
  const kapi = await kapiTrusting(otherCa.ca!);
  try {
    const answer = await send(kapi.url, { path: '/api/v1/nodes/n1', headers: auth });
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable' });
    expect(seen.length).toBe(before);
    expect(kapi.logs.lines.join('\n')).toMatch(/kube-apiserver unreachable/);
  } finally {
    await kapi.stop();
  }
});
