import { basename } from 'node:path';
import type { KubeconfigContext } from './kubeconfig-context.js';

/** The credential plugin of kapi itself (`kubectl kapi login` writes contexts whose user runs it). */
const KAPI_PLUGIN = 'kubectl-kapi';
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]']);

/**
 * Why a kubeconfig context is a kapi server rather than a Kubernetes cluster, or undefined. Pure. A context whose user
 * logs in with kapi's own plugin was written by `kubectl kapi login`: its server is a kapi, which forwards to a
 * cluster but cannot be one for another kapi. A context whose server is this kapi's own listener (loopback, one of
 * `ownPorts`) would make kapi its own backend and never become ready.
 */
export function kapiContextReason(context: KubeconfigContext, ownPorts: readonly number[]): string | undefined {
  const exec = context.written.user?.['exec'];
  const command = exec && typeof exec === 'object' ? (exec as { command?: unknown }).command : undefined;
  if (typeof command === 'string' && basename(command) === KAPI_PLUGIN) {
    return (
      `the kubeconfig context "${context.name}" logs in with kapi's own plugin (kubectl-kapi, written by ` +
      '"kubectl kapi login"): its server is a kapi, not a Kubernetes cluster'
    );
  }
  const server = context.cluster.server;
  const port = Number(server.port || (server.protocol === 'https:' ? 443 : 80));
  const loopback = LOOPBACK.has(server.hostname) || /^127\./.test(server.hostname);
  if (loopback && ownPorts.includes(port)) {
    return `the kubeconfig context "${context.name}" points at ${server.origin}, this kapi's own listener`;
  }
  return undefined;
}
