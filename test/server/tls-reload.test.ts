/**
 * The serving certificate is replaced without a restart and without dropping open connections: real TLS handshakes
 * before and after a change of the files (swapped as kubelet swaps a mounted Secret) or of the Secret itself.
 */
import { X509Certificate, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { capturingLogger } from '../auth/fakes.js';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { createLogger } from '../../src/observability/logger.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { listen, type Listener } from '../../src/server/listener.js';
import { startKapiServer } from '../../src/server/server.js';
import {
  loadServingCertificate,
  watchServingCertificate,
  type CertificateWatch,
  type ServingCertificate,
} from '../../src/server/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'kapi-tls-reload-'));
let first: ServingCertificate;
let second: ServingCertificate;

/** A CA and a serving certificate for localhost, as kapi generates them; CA names differ by their start second. */
function newCertificate(secondsAgo: number): Promise<ServingCertificate> {
  return loadServingCertificate({
    now: new Date(Date.now() - secondsAgo * 1000),
    certFile: undefined,
    keyFile: undefined,
    secret: undefined,
    caOut: join(dir, `ca-${randomBytes(4).toString('hex')}.crt`),
    hosts: [],
  });
}

beforeAll(async () => {
  [first, second] = await Promise.all([newCertificate(0), newCertificate(10)]);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A TLS connection verified against both CAs; it stays open until the caller ends it. */
function connect(port: number): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: [first.ca!, second.ca!] });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}

async function servedCertificate(port: number): Promise<string> {
  const socket = await connect(port);
  const pem = socket.getPeerX509Certificate()!.toString();
  socket.destroy();
  return pem;
}

/** One HTTP/1.1 request on an open connection (keep-alive); resolves with the status line. */
function requestOn(socket: tls.TLSSocket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\r\n\r\n')) {
        socket.off('data', onData);
        resolve(text.split('\r\n')[0]!);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);
  });
}

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('when the certificate files change', () => {
  let volume: string;
  let listener: Listener;
  let watch: CertificateWatch | undefined;
  let lines: string[];

  /** kubelet's layout for a mounted Secret: files are links through `..data`, swapped in one rename. */
  function mountVersion(certificate: { cert: string; key: string }, version: string): void {
    const versionDir = join(volume, `..${version}`);
    mkdirSync(versionDir);
    writeFileSync(join(versionDir, 'tls.crt'), certificate.cert);
    writeFileSync(join(versionDir, 'tls.key'), certificate.key);
    symlinkSync(`..${version}`, join(volume, '..data_tmp'));
    renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
  }

  beforeAll(async () => {
    volume = join(dir, 'volume');
    mkdirSync(volume);
    mountVersion(first, 'v1');
    symlinkSync('..data/tls.crt', join(volume, 'tls.crt'));
    symlinkSync('..data/tls.key', join(volume, 'tls.key'));
    const options = {
      certFile: join(volume, 'tls.crt'),
      keyFile: join(volume, 'tls.key'),
      secret: undefined,
      caOut: join(dir, 'unused.crt'),
      hosts: [],
    };
    const served = await loadServingCertificate(options);
    listener = await listen((_req, res) => res.end('ok'), {
      port: 0,
      host: '127.0.0.1',
      tls: { key: served.key, cert: served.cert },
    });
    const captured = capturingLogger();
    lines = captured.lines;
    watch = watchServingCertificate({ ...options, logger: captured.logger }, served, (pair) =>
      (listener.server as HttpsServer).setSecureContext({ minVersion: 'TLSv1.2', ...pair }),
    );
  });

  afterAll(async () => {
    await watch?.stop();
    await listener.stop(100);
  });

  test('then new handshakes get the new certificate while an open connection keeps working', async () => {
    expect(watch).toBeDefined();
    expect(await servedCertificate(listener.port)).toBe(toPem(first.cert));
    const open = await connect(listener.port);
    expect(await requestOn(open, '/')).toBe('HTTP/1.1 200 OK');

    mountVersion(second, 'v2');
    await until(async () => (await servedCertificate(listener.port)) === toPem(second.cert));

    expect(await requestOn(open, '/')).toBe('HTTP/1.1 200 OK');
    expect(open.getPeerX509Certificate()!.toString()).toBe(toPem(first.cert));
    open.destroy();
    expect(lines.some((line) => line.includes('serving certificate reloaded'))).toBe(true);
    expect(lines.join('\n')).not.toContain('PRIVATE KEY');
  });

  test('then a key that does not match the certificate is skipped and the served certificate stays', async () => {
    mountVersion({ cert: first.cert, key: second.key }, 'v3');
    await until(async () => lines.some((line) => line.includes('unusable; the current one stays')));
    expect(await servedCertificate(listener.port)).toBe(toPem(second.cert));
    expect(lines.join('\n')).not.toContain('PRIVATE KEY');
  });
});

describe('when the certificate Secret changes', () => {
  test('then kapi serves the new certificate without a restart, and an open connection keeps working', async () => {
    const sandbox = await startSandbox({ nodes: 1, podsPerNode: 1 });
    const admin = new KubeClient(connectionFor(tokenAccess(sandbox.url, sandbox.adminToken), 'sandbox'));
    const secretPath = '/api/v1/namespaces/kapi-system/secrets';
    const secret = (certificate: ServingCertificate) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kapi-tls', namespace: 'kapi-system' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(certificate.cert).toString('base64'),
        'tls.key': Buffer.from(certificate.key).toString('base64'),
      },
    });
    await admin.request({ method: 'POST', path: secretPath, body: secret(first) });
    const kapi = await startKapiServer({
      options: {
        port: 0,
        tlsPort: 0,
        metricsPort: undefined,
        bindAddress: '127.0.0.1',
        configuration: { namespace: 'kapi-system', name: 'kapi' },
        signingKeySecret: { namespace: 'kapi-system', name: 'kapi-apiserver-jwt' },
        tlsCertFile: undefined,
        tlsKeyFile: undefined,
        tlsSecret: { namespace: 'kapi-system', name: 'kapi-tls' },
        tlsCaOut: join(dir, 'kapi-ca.crt'),
        trustedProxies: [],
      },
      connection: connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox'),
      logger: createLogger('error', { silent: true }),
      allowGeneratedSigningKey: false,
    });
    try {
      const port = kapi.httpsPort!;
      expect(await servedCertificate(port)).toBe(toPem(first.cert));
      const open = await connect(port);
      expect(await requestOn(open, '/healthz')).toBe('HTTP/1.1 200 OK');

      await admin.request({ method: 'PUT', path: `${secretPath}/kapi-tls`, body: secret(second) });
      await until(async () => (await servedCertificate(port)) === toPem(second.cert));

      expect(await requestOn(open, '/healthz')).toBe('HTTP/1.1 200 OK');
      expect(open.getPeerX509Certificate()!.toString()).toBe(toPem(first.cert));
      open.destroy();
    } finally {
      await kapi.stop(100);
      await sandbox.stop();
    }
  });
});

/** The leaf as X509Certificate prints it, to compare with what a handshake presents. */
function toPem(cert: string): string {
  return new X509Certificate(cert).toString();
}
