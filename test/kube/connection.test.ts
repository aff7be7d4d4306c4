import { afterEach, describe, expect, it, jest } from '@jest/globals';
import http from 'node:http';
import https from 'node:https';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeApiError, KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type ClusterAccess, type KubeConnection } from '../../src/kube/connection.js';
import { tokenFileCredentials } from '../../src/kube/token-file.js';

const opened: KubeConnection[] = [];
const open = (access: ClusterAccess, source: 'sandbox' | 'kubeconfig' = 'kubeconfig') => {
  const connection = connectionFor(access, source);
  opened.push(connection);
  return connection;
};

afterEach(() => {
  jest.useRealTimers();
  for (const connection of opened.splice(0)) connection.close();
});

describe('tokenAccess', () => {
  it('when the server is plain http (the sandbox), then the connection allows it and sends the bearer token', async () => {
    const connection = open(tokenAccess('http://127.0.0.1:8080', 'sandbox-token'), 'sandbox');
    expect(connection.agent).not.toBeInstanceOf(https.Agent);
    expect(connection.agent).toBeInstanceOf(http.Agent);
    expect(connection.describe()).toBe('http://127.0.0.1:8080 (sandbox)');
    expect(await connection.authHeaders()).toEqual({ Authorization: 'Bearer sandbox-token' });
  });

  it('when the server is https, then its certificate is verified against the system roots', () => {
    const connection = open(tokenAccess('https://kube.example:6443', 't'));
    expect(connection.agent).toBeInstanceOf(https.Agent);
    expect((connection.agent as https.Agent).options).toMatchObject({ rejectUnauthorized: true, ca: undefined });
  });
});

describe('connectionFor', () => {
  const base: ClusterAccess = { server: 'https://10.0.0.1:443', credentials: () => Promise.resolve({}) };

  it('when the access carries TLS settings, then the keep-alive agent uses every one of them', () => {
    const [ca, cert, key] = [Buffer.from('ca'), Buffer.from('cert'), Buffer.from('key')];
    const connection = open({ ...base, ca, cert, key, tlsServerName: 'kubernetes.default.svc' });
    expect((connection.agent as https.Agent).options).toMatchObject({
      keepAlive: true,
      ca,
      cert,
      key,
      servername: 'kubernetes.default.svc',
      rejectUnauthorized: true,
    });
  });

  it('when insecure-skip-tls-verify is set, then the agent does not verify the server', () => {
    const connection = open({ ...base, insecureSkipTlsVerify: true });
    expect((connection.agent as https.Agent).options.rejectUnauthorized).toBe(false);
  });

  it.each([
    ['plain http without leave to send credentials over it', 'http://kube.example:8080', /is plain http/],
    ['neither https nor http', 'ftp://kube.example', /is neither https nor http/],
  ])('when the server is %s, then no connection is made', (_case, server, error) => {
    expect(() => connectionFor({ ...base, server }, 'kubeconfig')).toThrow(error);
  });

  it('when the access returns other headers, then only Authorization is kept', async () => {
    const connection = open({
      ...base,
      credentials: () => Promise.resolve({ authorization: 'Bearer x', 'Impersonate-User': 'someone' }),
    });
    expect(await connection.authHeaders()).toEqual({ Authorization: 'Bearer x' });
  });

  it('when credentials are asked for often, then they are fetched once per 10 s and concurrent askers share it', async () => {
    jest.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), doNotFake: ['nextTick', 'setImmediate'] });
    let calls = 0;
    const connection = open({
      ...base,
      credentials: () => Promise.resolve({ Authorization: `Bearer token-${++calls}` }),
    });
    const first = await Promise.all([connection.authHeaders(), connection.authHeaders(), connection.authHeaders()]);
    expect(first.map((h) => h.Authorization)).toEqual(['Bearer token-1', 'Bearer token-1', 'Bearer token-1']);
    jest.advanceTimersByTime(9_000);
    expect(await connection.authHeaders()).toEqual({ Authorization: 'Bearer token-1' });
    jest.advanceTimersByTime(1_001);
    expect(await connection.authHeaders()).toEqual({ Authorization: 'Bearer token-2' });
    expect(calls).toBe(2);
  });

  it('when fetching credentials fails, then the caller sees the error and the next call tries again', async () => {
    let fail = true;
    const connection = open({
      ...base,
      credentials: () =>
        fail ? Promise.reject(new Error('plugin failed')) : Promise.resolve({ Authorization: 'Bearer ok' }),
    });
    await expect(connection.authHeaders()).rejects.toThrow('plugin failed');
    fail = false;
    expect(await connection.authHeaders()).toEqual({ Authorization: 'Bearer ok' });
  });
});

describe('when kube-apiserver refuses kapi’s own credentials', () => {
  /** A kube-apiserver that takes only the token `good`, on loopback. */
  async function strictServer() {
    const server = http.createServer((req, res) => {
      const ok = req.headers.authorization === 'Bearer good';
      res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
      res.end(
        ok ? '{}' : JSON.stringify({ kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { server, url: `http://127.0.0.1:${port}` };
  }

  it('then readiness fails with the reason, the token file is read again at once, and a new token makes it ready again', async () => {
    const { server, url } = await strictServer();
    try {
      const file = join(mkdtempSync(join(tmpdir(), 'kapi-token-')), 'token');
      writeFileSync(file, 'revoked\n');
      const credentials = await tokenFileCredentials(file, 'token');
      const connection = connectionFor({ server: url, insecureSkipTlsVerify: true, credentials }, 'in-cluster', {
        probeIntervalMs: 20,
      });
      opened.push(connection);
      expect(connection.health.notReadyReason()).toBeUndefined();

      const refused = await new KubeClient(connection).request({ path: '/api' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(KubeApiError);
      expect(connection.health.credentialsRefused).toBe(true);
      expect(connection.health.notReadyReason()).toMatch(/refused kapi's own credentials \(HTTP 401\)/);

      // the connection caches credentials for 10 s; a refusal drops them, so the rewritten file counts at the next probe
      writeFileSync(file, 'good\n');
      await waitUntil(() => !connection.health.credentialsRefused);
      expect(connection.health.notReadyReason()).toBeUndefined();
      expect(await new KubeClient(connection).request({ path: '/api' })).toEqual({});
    } finally {
      server.close();
    }
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
