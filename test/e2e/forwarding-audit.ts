import type { KubeApiError, KubeClient } from '../../src/kube/client.js';
import type { Sandbox, SandboxAuditEntry } from '../../src/sandbox/index.js';
import { KAPI_SERVICE_ACCOUNT } from '../../src/sandbox/policy.js';
import type { KubeStatus } from '../../src/server/errors.js';

/**
 * What kube-apiserver saw. On the sandbox its audit trail (the effective user of every request, and who impersonated
 * it); on any target, kube's own answer to the same request made directly, for "passed through unchanged" checks.
 */

/** The sandbox's audit entries recorded after this call (the trail keeps the same entry objects as it grows). */
export function auditSince(sandbox: Sandbox): () => readonly SandboxAuditEntry[] {
  const last = sandbox.audit.at(-1);
  return () => {
    const entries = sandbox.audit;
    if (!last) return entries;
    const at = entries.lastIndexOf(last);
    if (at < 0) throw new Error('the sandbox audit trail rolled past the mark; take the mark closer to the request');
    return entries.slice(at + 1);
  };
}

/** The sandbox admin the suites arrange objects as (`e2e.admin`). */
const SANDBOX_ADMIN = 'sandbox-admin';

/**
 * Whether an entry is background to a case rather than a request kapi forwarded: kapi's own traffic (its caches and
 * identity store, as its service account, impersonating no one; a relist or re-watch can come at any time) or the
 * test arranging objects as the sandbox admin.
 */
export function isBackground(entry: SandboxAuditEntry): boolean {
  if (entry.impersonatedBy !== undefined) return false;
  return entry.user === KAPI_SERVICE_ACCOUNT || entry.user === SANDBOX_ADMIN;
}

/** kube-apiserver's error answer to `path` for `username`, asked directly by the admin impersonating that user. */
export async function kubeErrorAs(admin: KubeClient, username: string, path: string): Promise<KubeStatus> {
  try {
    await admin.request({ path, headers: { 'Impersonate-User': username } });
  } catch (error) {
    const status = (error as KubeApiError).status;
    if (status) return status;
    throw error;
  }
  throw new Error(`kube-apiserver allowed GET ${path} for ${username}`);
}
