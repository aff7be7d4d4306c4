import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import { stringify } from 'yaml';
import { bearer, sendJson } from './http.js';
import type { ClusterScale } from '../src/sandbox/index.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.js';
import { setBackendTrust } from './tls.js';

/**
 * The cluster side of the bench: the sandbox (its own process, HTTPS with its own CA unless BENCH_SANDBOX_TLS=0) or
 * a real cluster (BENCH_KUBECONFIG, see cluster-environment.ts), a kubeconfig for kapi, and the bench's users.
 */
export interface Environment {
  target: 'sandbox' | 'cluster';
  /** kube-apiserver's (or the sandbox's) base URL; requests to it use the thread's backend trust. */
  backendUrl: string;
  /**
   * Who the direct path is: on the sandbox kapi's own identity (its service account); on a cluster an ordinary
   * identity with the bench user's rights.
   */
  directHeaders: Record<string, string>;
  /** On a cluster: kapi's credentials plus the Impersonate-* headers kapi sends for the bench user (impersonation's own cost). */
  impersonatingHeaders?: Record<string, string | string[]>;
  /** Who the bench itself reads as (the direct node page, counts). */
  adminHeaders: Record<string, string>;
  /** The kapi User the bench logs in as (allowed to read nodes). */
  kapiUser: { name: string; password: string };
  /** Settings kapi needs for this cluster (environment variables). */
  kapiEnv: Record<string, string>;
  /**
   * The bench's kit only: kube-apiserver trusts a kapi at `url` as an OpenID issuer (serving certificate, CA and RSA
   * signing key in `dir`), for the token pass-through rows.
   */
  issuer?: { url: string; dir: string };
  /** Whether rows may write to the backend (patch nodes): the sandbox and the bench's own kit, never BENCH_KUBECONFIG's. */
  writable?: boolean;
  /** The sandbox, when that is the backend (the login storm and the logging row need it). */
  sandbox?: SandboxProcess & { adminPassword: string };
  kubeconfig: string;
  /** Processes besides kapi whose CPU each load run accounts (the sandbox), by role. */
  backendPids: Record<string, number>;
  /** The admin User's bcrypt cost (work factor), read from its stored hash. */
  adminHashCost: number;
  /** A User made for the login storm, hashed at the admin's cost, so storms never touch the admin's sessions. */
  loginUser: { name: string; password: string; hash: string };
  nodeCount: number;
  podCount: number;
  /** The sandbox's start, seeding included, to its first answer (ms); not for a real cluster. */
  seedMs?: number;
  stop(): Promise<void>;
}

interface PasswordSecret {
  data: { bcrypt: string };
}

const LOGIN_USER = 'bench-login';

export async function startEnvironment(options: {
  nodes: number;
  podsPerNode: number;
  tls: boolean;
  timeoutMs: number;
  scale?: ClusterScale;
}): Promise<Environment> {
  const adminPassword = randomBytes(18).toString('base64url');
  const seedStarted = Date.now();
  const sandbox = { ...(await startSandboxProcess({ ...options, adminPassword })), adminPassword };
  const seedMs = Date.now() - seedStarted;
  setBackendTrust(sandbox.caPem ? { ca: sandbox.caPem } : {});
  const dir = mkdtempSync(path.join(tmpdir(), 'kapi-bench-'));
  try {
    const kubeconfig = path.join(dir, 'kubeconfig.yaml');
    // kapi's service-account token and the sandbox's CA, as in a pod. The file holds a token: owner-only.
    writeFileSync(kubeconfig, sandboxKubeconfig(sandbox.url, sandbox.serviceAccountToken, sandbox.caPem), {
      mode: 0o600,
    });

    const admin = bearer(sandbox.adminToken);
    // the admin's hash is in its password Secret (kapi keeps none in User objects)
    const adminSecret = await sendJson<PasswordSecret>(
      `${sandbox.url}/api/v1/namespaces/kapi-system/secrets/password-admin`,
      { headers: admin },
    );
    const adminHashCost = bcrypt.getRounds(Buffer.from(adminSecret.data.bcrypt, 'base64').toString('utf8'));
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
      target: 'sandbox',
      backendUrl: sandbox.url,
      directHeaders: bearer(sandbox.serviceAccountToken),
      adminHeaders: admin,
      kapiUser: { name: 'admin', password: adminPassword },
      kapiEnv: {},
      sandbox,
      kubeconfig,
      backendPids: { sandbox: sandbox.pid },
      adminHashCost,
      loginUser: { name: LOGIN_USER, password, hash },
      nodeCount: await count('nodes'),
      podCount: await count('pods'),
      seedMs,
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

function sandboxKubeconfig(server: string, token: string, caPem: string | undefined): string {
  // Plain http only on loopback (BENCH_SANDBOX_TLS=0), where kapi sends credentials only when told it may.
  const cluster = caPem
    ? { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') }
    : { server, 'insecure-skip-tls-verify': true };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'sandbox', cluster }],
    users: [{ name: 'sandbox', user: { token } }],
    contexts: [{ name: 'sandbox', context: { cluster: 'sandbox', user: 'sandbox' } }],
    'current-context': 'sandbox',
  });
}
