/**
 * kapi's own credentials refused (SPEC §8, issue 23 item 7), on the sandbox and on a real kube-apiserver: a replica
 * runs on a ServiceAccount token read from a file, as in a pod; the token is revoked (the ServiceAccount deleted; on
 * the sandbox, the token dropped). Callers then get a 503 Status that blames kapi, never a 401 that would make
 * kubectl blame their own token; /readyz says not-ready and why; a new token written to the file is read at once and
 * the replica is ready again, with no restart.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFileAccess, kubeconfigFiles } from '../../src/kube/cluster-source.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { tokenFileCredentials } from '../../src/kube/token-file.js';
import type { KapiServer } from '../../src/server/server.js';
import { RUN_LABEL, deleteIgnoringMissing, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';

const PASSWORD = 'e2e-Credentials-Passw0rd';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let e2e: E2E;
let replica: KapiServer;
let connection: KubeConnection;
let tokenDir: string;
let tokenFile: string;
let serviceAccount: string;
let revoke: () => Promise<void>;
let renew: () => Promise<string>;
const caller = new KapiCaller();

/** A ServiceAccount of this run bound to cluster-admin, and a token for it (TokenRequest). */
async function clusterToken(): Promise<string> {
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${e2e.runId}/serviceaccounts`,
    body: { metadata: { name: serviceAccount, labels: { [RUN_LABEL]: e2e.runId } } },
  });
  const answer = await e2e.admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${e2e.runId}/serviceaccounts/${serviceAccount}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return answer.status.token;
}

beforeAll(async () => {
  e2e = await startE2E();
  serviceAccount = e2e.name('kapi');
  tokenDir = mkdtempSync(join(tmpdir(), 'kapi-e2e-token-'));
  tokenFile = join(tokenDir, 'token');
  let server: string;
  let tlsFrom: Omit<Parameters<typeof connectionFor>[0], 'credentials' | 'server'>;
  if (e2e.sandbox) {
    const sandbox = e2e.sandbox;
    let token = sandbox.tokenFor(`system:serviceaccount:${e2e.runId}:${serviceAccount}`, ['system:masters']);
    revoke = async () => sandbox.revokeToken(token);
    renew = async () => {
      token = sandbox.tokenFor(`system:serviceaccount:${e2e.runId}:${serviceAccount}`, ['system:masters']);
      return token;
    };
    writeFileSync(tokenFile, token);
    const { server: url, ...rest } = tokenAccess(sandbox.url, 'unused');
    server = url;
    tlsFrom = { insecureSkipTlsVerify: rest.insecureSkipTlsVerify };
  } else {
    await e2e.admin.request({
      method: 'POST',
      path: `${RBAC}/clusterrolebindings`,
      body: {
        metadata: { name: serviceAccount, labels: { [RUN_LABEL]: e2e.runId } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace: e2e.runId }],
      },
    });
    const saPath = `/api/v1/namespaces/${e2e.runId}/serviceaccounts/${serviceAccount}`;
    revoke = async () => {
      await e2e.admin.request({ method: 'DELETE', path: saPath });
      // a deleted ServiceAccount's tokens are refused once kube-apiserver no longer finds it
      await waitFor(async () =>
        e2e.admin.request({ path: saPath }).then(
          () => false,
          () => true,
        ),
      );
    };
    renew = clusterToken;
    writeFileSync(tokenFile, await clusterToken());
    const access = await kubeconfigFileAccess(kubeconfigFiles(undefined, process.env));
    server = access.server;
    tlsFrom = {
      ca: access.ca,
      insecureSkipTlsVerify: access.insecureSkipTlsVerify,
      tlsServerName: access.tlsServerName,
    };
  }
  connection = connectionFor(
    { server, ...tlsFrom, credentials: await tokenFileCredentials(tokenFile, 'service account token') },
    'in-cluster',
    { probeIntervalMs: 200 },
  );
  replica = await e2e.startReplica({ connection });
  const user = await e2e.createUser('credentials', PASSWORD);
  await e2e.grant(user, [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }]);
}, 120_000);

afterAll(async () => {
  await replica?.stop(0);
  connection?.close();
  if (e2e && !e2e.sandbox) {
    await deleteIgnoringMissing(e2e.admin, `${RBAC}/clusterrolebindings/${serviceAccount}`);
    await deleteIgnoringMissing(e2e.admin, `/api/v1/namespaces/${e2e.runId}/serviceaccounts/${serviceAccount}`);
  }
  if (tokenDir) rmSync(tokenDir, { recursive: true, force: true });
  await e2e?.stop();
}, 120_000);

const base = () => `http://127.0.0.1:${replica.httpPort}`;
const readyz = () => caller.get<string>(`${base()}/readyz?verbose`);

describe('when kube-apiserver refuses kapi’s own credentials', () => {
  it('then callers get a 503 Status that blames kapi, /readyz fails saying why, and a new token heals it without a restart', async () => {
    const tokens = await caller.login(base(), e2e.name('credentials'), PASSWORD);
    const namespace = `${base()}/api/v1/namespaces/${e2e.runId}`;
    expect((await caller.get(namespace, tokens.access_token)).status).toBe(200);
    expect((await readyz()).status).toBe(200);

    await revoke();
    await waitFor(async () => (await caller.get(namespace, tokens.access_token)).status !== 200);
    const refused = await caller.get(namespace, tokens.access_token);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({
      kind: 'Status',
      code: 503,
      reason: 'ServiceUnavailable',
      message: expect.stringContaining('refused kapi-apiserver’s own credentials'),
    });
    expect(refused.headers.get('retry-after')).toBe('5');

    const notReady = await readyz();
    expect(notReady.status).toBe(503);
    expect(notReady.text).toMatch(/\[-\]kube-credentials failed: kube-apiserver has refused kapi's own credentials/);

    writeFileSync(tokenFile, await renew());
    await waitFor(async () => (await readyz()).status === 200);
    expect((await caller.get(namespace, tokens.access_token)).status).toBe(200);
  });
});
