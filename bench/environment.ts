import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import { stringify } from 'yaml';
import { createLogger } from '../src/observability/logger.js';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';
import { bearer, sendJson } from './http.js';

/** The cluster side of the bench: the sandbox (in this process), a kubeconfig for kapi, and the bench's users. */
export interface Environment {
  sandbox: Sandbox;
  kubeconfig: string;
  /** The admin User's bcrypt cost (work factor), read from its stored hash. */
  adminHashCost: number;
  /** A User made for the login storm, hashed at the admin's cost, so storms never touch the admin's sessions. */
  loginUser: { name: string; password: string; hash: string };
  nodeCount: number;
  podCount: number;
  stop(): Promise<void>;
}

interface UserObject {
  spec: { password: string };
}

const LOGIN_USER = 'bench-login';

export async function startEnvironment(options: { nodes: number; podsPerNode: number }): Promise<Environment> {
  const sandbox = await startSandbox({
    nodes: options.nodes,
    podsPerNode: options.podsPerNode,
    adminPassword: randomBytes(18).toString('base64url'),
    logger: createLogger('error', { silent: true }),
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'kapi-bench-'));
  try {
    const kubeconfig = path.join(dir, 'kubeconfig.yaml');
    // kapi's service-account token for the plain-http sandbox on loopback. The file holds a token: owner-only.
    writeFileSync(kubeconfig, sandboxKubeconfig(sandbox.url, sandbox.serviceAccountToken), { mode: 0o600 });

    const admin = bearer(sandbox.adminToken);
    const adminUser = await sendJson<UserObject>(`${sandbox.url}/apis/iam.kapi.io/v1beta1/users/admin`, {
      headers: admin,
    });
    const adminHashCost = bcrypt.getRounds(adminUser.spec.password);
    const password = randomBytes(18).toString('base64url');
    const hash = await bcrypt.hash(password, adminHashCost);
    await sendJson(`${sandbox.url}/apis/iam.kapi.io/v1beta1/users`, {
      method: 'POST',
      expect: 201,
      headers: { ...admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'iam.kapi.io/v1beta1',
        kind: 'User',
        metadata: { name: LOGIN_USER },
        spec: { email: `${LOGIN_USER}@bench.kapi.test`, password: hash, groups: [] },
      }),
    });

    // One object and kube's remainingItemCount: the count without moving 50,000 pods over the wire.
    const count = async (resource: string) => {
      const list = await sendJson<{ items: unknown[]; metadata: { remainingItemCount?: number } }>(
        `${sandbox.url}/api/v1/${resource}?limit=1`,
        { headers: admin },
      );
      return list.items.length + (list.metadata.remainingItemCount ?? 0);
    };
    return {
      sandbox,
      kubeconfig,
      adminHashCost,
      loginUser: { name: LOGIN_USER, password, hash },
      nodeCount: await count('nodes'),
      podCount: await count('pods'),
      async stop() {
        rmSync(dir, { recursive: true, force: true });
        await sandbox.stop();
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    await sandbox.stop();
    throw error;
  }
}

function sandboxKubeconfig(server: string, token: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'sandbox', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'sandbox', user: { token } }],
    contexts: [{ name: 'sandbox', context: { cluster: 'sandbox', user: 'sandbox' } }],
    'current-context': 'sandbox',
  });
}
