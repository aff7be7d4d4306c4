/**
 * Signing-key rotation on two replicas, as an operator does it with kubectl: add a key to the Secret, make it active,
 * later remove the old one. Each step reaches both replicas through their watches, without a restart; tokens issued
 * before the rotation keep working (access and refresh) until their key is removed, and new tokens name the new key.
 * On the sandbox or the cluster KUBECONFIG names.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { login, refreshGrant, type TokenPair } from './client.js';
import { assertTarget } from './forwarding-target.js';
import { startE2E, waitFor, type E2E } from './harness.js';

const PASSWORD = 'e2e-Rotation-password-1';
const NODES = '/kapis/resources.kapi.io/v1alpha3/nodes?limit=0';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const ecPem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

let e2e: E2E;
let replicas: string[];
let user: string;

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  replicas = [e2e.kapiUrl, `http://127.0.0.1:${(await e2e.startReplica()).httpPort}`];
  user = await e2e.createUser('rotation', PASSWORD);
  await e2e.grant(user, [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }]);
});

afterAll(async () => {
  await e2e?.stop();
});

async function status(replica: string, token: string): Promise<number> {
  const res = await fetch(`${replica}${NODES}`, { headers: { Authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

function kidOf(token: string): string | undefined {
  return (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: string }).kid;
}

async function patchSecret(data: Record<string, string | null>): Promise<void> {
  await e2e.admin.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${e2e.runId}/secrets/kapi-jwt`,
    contentType: 'application/merge-patch+json',
    body: { data },
  });
}

/** Logs in on a replica until its token names `kid`: the replica has seen the Secret change. */
async function loginSigned(replica: string, kid: string): Promise<TokenPair> {
  let tokens: TokenPair | undefined;
  await waitFor(async () => {
    tokens = await login(replica, user, PASSWORD);
    return kidOf(tokens.access_token) === kid;
  });
  return tokens!;
}

describe('when the signing key is rotated in the Secret while two replicas run', () => {
  let before: TokenPair[];

  it('then, before the rotation, tokens name the legacy key and work on both replicas', async () => {
    before = await Promise.all(replicas.map((replica) => login(replica, user, PASSWORD)));
    for (const tokens of before) {
      expect(kidOf(tokens.access_token)).toBe('key');
      for (const replica of replicas) expect(await status(replica, tokens.access_token)).toBe(200);
    }
  });

  it('then a key added and made active signs new tokens on both replicas, and old tokens stay valid', async () => {
    await patchSecret({ 'next.pem': b64(ecPem), active: b64('next') });
    const after = await Promise.all(replicas.map((replica) => loginSigned(replica, 'next')));
    for (const tokens of [...before, ...after]) {
      for (const replica of replicas) expect(await status(replica, tokens.access_token)).toBe(200);
    }
    // a refresh token of the old key still refreshes, and the new pair is signed with the new key
    const refreshed = await refreshGrant(replicas[1]!, before[0]!.refresh_token);
    expect(refreshed.status).toBe(200);
    const pair = (await refreshed.json()) as TokenPair;
    expect([kidOf(pair.access_token), kidOf(pair.refresh_token)]).toEqual(['next', 'next']);
    before = [pair, before[1]!];
  });

  it('then removing the old key ends only the tokens it signed, on both replicas', async () => {
    const oldAccess = before[1]!.access_token;
    expect(kidOf(oldAccess)).toBe('key');
    await patchSecret({ key: null });
    for (const replica of replicas) {
      await waitFor(async () => (await status(replica, oldAccess)) === 401);
      expect(await status(replica, before[0]!.access_token)).toBe(200);
    }
  });
});
