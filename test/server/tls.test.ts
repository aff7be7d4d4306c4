import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { KubeClient } from '../../src/kube/client.js';
import { listen } from '../../src/server/listener.js';
import { loadServingCertificate, type ServingCertificate } from '../../src/server/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'kapi-tls-'));
let generated: ServingCertificate;

beforeAll(async () => {
  generated = await loadServingCertificate({
    certFile: undefined,
    keyFile: undefined,
    secret: undefined,
    caOut: join(dir, 'nested', 'ca.crt'),
    hosts: ['kapi.example.com', '10.20.30.40'],
  });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const noFiles = {
  certFile: undefined,
  keyFile: undefined,
  secret: undefined,
  caOut: join(dir, 'unused.crt'),
  hosts: [],
};

describe('a generated certificate', () => {
  it('when nothing is configured, then a CA-signed serving certificate is generated and the CA written (not its key)', () => {
    expect(generated.source).toBe('self-signed');
    expect(generated.caFile).toBe(join(dir, 'nested', 'ca.crt'));
    const written = readFileSync(generated.caFile!, 'utf8');
    expect(written).toBe(generated.ca);
    expect(written).not.toMatch(/PRIVATE KEY/);
    expect(statSync(generated.caFile!).mode & 0o777).toBe(0o644);
    const ca = new X509Certificate(generated.ca!);
    const leaf = new X509Certificate(generated.cert);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
  });

  it.each([
    ['localhost', 'DNS:localhost'],
    ['127.0.0.1', 'IP Address:127.0.0.1'],
    ['::1', 'IP Address:0:0:0:0:0:0:0:1'],
    ['the Service name', 'DNS:kapi-apiserver'],
    ['the Service in its namespace', 'DNS:kapi-apiserver.kapi-system'],
    ['the Service DNS name', 'DNS:kapi-apiserver.kapi-system.svc'],
    ['the Service FQDN', 'DNS:kapi-apiserver.kapi-system.svc.cluster.local'],
    ['a given host name', 'DNS:kapi.example.com'],
    ['a given IP', 'IP Address:10.20.30.40'],
  ])('when generated, then it is valid for %s', (_case, san) => {
    expect(new X509Certificate(generated.cert).subjectAltName!.split(', ')).toContain(san);
  });

  it('when served by the HTTPS listener, then a client trusting only the CA connects over TLS 1.2 and 1.3, to 127.0.0.1 and localhost', async () => {
    const listener = await listen((_req, res) => res.end('ok'), {
      port: 0,
      host: '127.0.0.1',
      tls: { key: generated.key, cert: generated.cert },
    });
    try {
      for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
        for (const servername of ['localhost', undefined]) {
          const protocol = await handshake(listener.port, {
            ca: generated.ca,
            minVersion: version,
            maxVersion: version,
            servername,
          });
          expect(protocol).toBe(version);
        }
      }
      const body = await new Promise<string>((resolve, reject) => {
        https
          .get(`https://127.0.0.1:${listener.port}/`, { ca: generated.ca }, (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk));
            res.on('end', () => resolve(text));
          })
          .on('error', reject);
      });
      expect(body).toBe('ok');
    } finally {
      await listener.stop(0);
    }
  });

  it('when a TLS 1.1 client connects, then the listener refuses it (while a TLS 1.0+ server would have accepted it)', async () => {
    const legacy = {
      ca: generated.ca,
      minVersion: 'TLSv1.1',
      maxVersion: 'TLSv1.1',
      ciphers: 'DEFAULT@SECLEVEL=0',
    } as const;
    const listener = await listen((_req, res) => res.end('ok'), {
      port: 0,
      host: '127.0.0.1',
      tls: { key: generated.key, cert: generated.cert, ciphers: 'DEFAULT@SECLEVEL=0' },
    });
    // The control: the same client does speak TLS 1.1 to a server that allows it.
    const permissive = tls.createServer({
      key: generated.key,
      cert: generated.cert,
      minVersion: 'TLSv1',
      ciphers: 'DEFAULT@SECLEVEL=0',
    });
    await new Promise<void>((resolve) => permissive.listen(0, '127.0.0.1', resolve));
    permissive.on('secureConnection', (socket) => socket.end());
    try {
      await expect(handshake((permissive.address() as AddressInfo).port, legacy)).resolves.toBe('TLSv1.1');
      await expect(handshake(listener.port, legacy)).rejects.toThrow(/protocol|version/i);
    } finally {
      await listener.stop(0);
      permissive.close();
    }
  });
});

describe('a configured certificate', () => {
  it('when both files are given, then they are used', async () => {
    const cert = join(dir, 'tls.crt');
    const key = join(dir, 'tls.key');
    writeFileSync(cert, generated.cert);
    writeFileSync(key, generated.key);
    const loaded = await loadServingCertificate({ ...noFiles, certFile: cert, keyFile: key });
    expect(loaded).toEqual({ key: generated.key, cert: generated.cert, source: 'files' });
  });

  it('when only the certificate file is given, then start-up fails saying the key is missing', async () => {
    await expect(loadServingCertificate({ ...noFiles, certFile: join(dir, 'tls.crt') })).rejects.toThrow(/key file/);
  });

  it('when the key does not match the certificate, then start-up fails saying so', async () => {
    const other = await loadServingCertificate({ ...noFiles, caOut: join(dir, 'other-ca.crt') });
    const cert = join(dir, 'mismatch.crt');
    const key = join(dir, 'mismatch.key');
    writeFileSync(cert, generated.cert);
    writeFileSync(key, other.key);
    await expect(loadServingCertificate({ ...noFiles, certFile: cert, keyFile: key })).rejects.toThrow(
      /key does not match the certificate/,
    );
  });

  it('when a kubernetes.io/tls Secret is named, then tls.crt and tls.key are read from it', async () => {
    const paths: string[] = [];
    const client = {
      request: async ({ path }: { path: string }) => {
        paths.push(path);
        return {
          type: 'kubernetes.io/tls',
          data: {
            'tls.crt': Buffer.from(generated.cert).toString('base64'),
            'tls.key': Buffer.from(generated.key).toString('base64'),
          },
        };
      },
    } as unknown as KubeClient;
    const loaded = await loadServingCertificate({
      ...noFiles,
      secret: { namespace: 'kapi-system', name: 'kapi-tls' },
      client,
    });
    expect(loaded).toEqual({ key: generated.key, cert: generated.cert, source: 'secret' });
    expect(paths).toEqual(['/api/v1/namespaces/kapi-system/secrets/kapi-tls']);
  });

  it('when the Secret carries its issuer’s ca.crt (cert-manager’s), then it is kept for the kubeconfigs kapi hands out', async () => {
    const client = {
      request: async () => ({
        data: {
          'tls.crt': Buffer.from(generated.cert).toString('base64'),
          'tls.key': Buffer.from(generated.key).toString('base64'),
          'ca.crt': Buffer.from(generated.ca ?? '').toString('base64'),
        },
      }),
    } as unknown as KubeClient;
    const loaded = await loadServingCertificate({
      ...noFiles,
      secret: { namespace: 'kapi-system', name: 'kapi-tls' },
      client,
    });
    expect(loaded).toEqual({ key: generated.key, cert: generated.cert, ca: generated.ca, source: 'secret' });
    expect(generated.ca).toContain('BEGIN CERTIFICATE');
  });

  it('when the Secret lacks tls.key, then start-up fails naming the Secret', async () => {
    const client = { request: async () => ({ data: { 'tls.crt': 'eA==' } }) } as unknown as KubeClient;
    await expect(
      loadServingCertificate({ ...noFiles, secret: { namespace: 'kapi-system', name: 'kapi-tls' }, client }),
    ).rejects.toThrow(/Secret kapi-system\/kapi-tls has no tls.crt and tls.key/);
  });
});

function handshake(port: number, options: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ port, host: '127.0.0.1', ...options }, () => {
      const protocol = socket.getProtocol() ?? '';
      socket.end();
      resolve(protocol);
    });
    socket.on('error', reject);
  });
}

describe('a generated certificate kept across restarts (the sandbox)', () => {
  const kept = (name: string, extra: Partial<Parameters<typeof loadServingCertificate>[0]> = {}) => {
    const keepIn = join(dir, name);
    return { ...noFiles, caOut: join(keepIn, 'kapi-ca.crt'), keepIn, hosts: ['kapi.example.com'], ...extra };
  };

  it('when kapi starts again, then it serves the same certificate under the same CA, its key 0600', async () => {
    const first = await loadServingCertificate(kept('again'));
    const second = await loadServingCertificate(kept('again'));
    expect(second.cert).toBe(first.cert);
    expect(second.key).toBe(first.key);
    expect(readFileSync(join(dir, 'again', 'kapi-ca.crt'), 'utf8')).toBe(first.ca);
    expect(statSync(join(dir, 'again', 'kapi-serving.key')).mode & 0o777).toBe(0o600);
  });

  it('when the kept certificate is within a week of its end, then a new one under a new CA is made', async () => {
    const first = await loadServingCertificate(kept('ending'));
    const validTo = Date.parse(new X509Certificate(first.cert).validTo);
    const renewed = await loadServingCertificate(kept('ending', { now: new Date(validTo - 6 * 86_400_000) }));
    expect(renewed.cert).not.toBe(first.cert);
    expect(renewed.ca).not.toBe(first.ca);
  });

  it('when the files are deleted (asking for new ones), then new ones are made', async () => {
    const first = await loadServingCertificate(kept('asked'));
    rmSync(join(dir, 'asked', 'kapi-serving.key'));
    const again = await loadServingCertificate(kept('asked'));
    expect(again.cert).not.toBe(first.cert);
  });

  it('when another host is asked for, or the CA file was replaced, then the kept one is not used', async () => {
    const first = await loadServingCertificate(kept('hosts'));
    const otherHost = await loadServingCertificate(kept('hosts', { hosts: ['elsewhere.example.com'] }));
    expect(otherHost.cert).not.toBe(first.cert);
    const other = await loadServingCertificate({ ...noFiles, caOut: join(dir, 'hosts-other-ca.crt') });
    writeFileSync(join(dir, 'hosts', 'kapi-ca.crt'), other.ca!);
    const afterSwap = await loadServingCertificate(kept('hosts', { hosts: ['elsewhere.example.com'] }));
    expect(afterSwap.cert).not.toBe(otherHost.cert);
    expect(new X509Certificate(afterSwap.cert).checkIssued(new X509Certificate(afterSwap.ca!))).toBe(true);
  });
});
