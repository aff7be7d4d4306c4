/**
 * How main.ts turns the command line into the server's options, and what that means across a restart of the sandbox:
 * the same CA and serving certificate, so a kubeconfig written against kapi (kubectl kapi login) keeps working.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parseOptions, type Options } from '../../src/config/options.js';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { serverOptionsFor, startKapiServer } from '../../src/server/server.js';
import { silentLogger } from '../e2e/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'kapi-server-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function options(env: Record<string, string> = {}): Options {
  const parsed = parseOptions([], { TLS_CA_OUT: join(dir, 'cache', 'kapi-ca.crt'), ...env });
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

describe('serverOptionsFor', () => {
  it('when kapi runs the sandbox, then a generated certificate is kept beside the CA file; otherwise not', () => {
    expect(serverOptionsFor(options(), 'sandbox', '127.0.0.1').tlsKeepGeneratedIn).toBe(join(dir, 'cache'));
    expect(serverOptionsFor(options(), 'kubeconfig', '0.0.0.0').tlsKeepGeneratedIn).toBeUndefined();
    expect(serverOptionsFor(options(), 'in-cluster', '0.0.0.0').tlsKeepGeneratedIn).toBeUndefined();
  });

  it('when a port is 0, then its listener is off', () => {
    const server = serverOptionsFor(options({ TLS_PORT: '0', METRICS_PORT: '0' }), 'sandbox', '127.0.0.1');
    expect([server.tlsPort, server.metricsPort]).toEqual([undefined, undefined]);
  });
});

/** The fingerprint of the certificate served at `port`, trusting only `caFile`. */
function served(port: number, caFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: readFileSync(caFile), servername: 'localhost' }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('the sandbox restarted', () => {
  it('when kapi starts again on the sandbox, then it serves the same certificate under the same CA', async () => {
    const fingerprints: string[] = [];
    const cas: string[] = [];
    for (let start = 0; start < 2; start++) {
      const sandbox = await startSandbox({ nodes: 1, logger: silentLogger });
      const connection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
      // as main.ts builds them, with the listeners on ports of their own
      const server = await startKapiServer({
        options: {
          ...serverOptionsFor(options(), 'sandbox', '127.0.0.1'),
          port: 0,
          tlsPort: 0,
          metricsPort: undefined,
        },
        connection,
        logger: silentLogger,
        allowGeneratedSigningKey: true,
      });
      try {
        fingerprints.push(await served(server.httpsPort!, server.caFile!));
        cas.push(readFileSync(server.caFile!, 'utf8'));
      } finally {
        await server.stop(1_000);
        connection.close();
        await sandbox.stop();
      }
    }
    expect(fingerprints[1]).toBe(fingerprints[0]);
    expect(cas[1]).toBe(cas[0]);
  }, 120_000);
});
