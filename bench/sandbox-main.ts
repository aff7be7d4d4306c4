/**
 * The bench's backend as its own process: the sandbox over HTTPS with its own CA, as kube-apiserver serves, so its
 * CPU time is its own (/proc/<pid>/stat) and kapi reaches it over the TLS hop a cluster has. Options come as one JSON
 * argument; the first stdout line is the sandbox's address, CA and credentials for the parent (a pipe, never a log).
 */
import { createLogger } from '../src/observability/logger.js';
import { childOptions } from './child-process.js';
import { startSandbox, type ClusterScale } from '../src/sandbox/index.js';

export interface SandboxProcessOptions {
  nodes: number;
  podsPerNode: number;
  adminPassword: string;
  tls: boolean;
  /** The listing rows' cluster: Deployments, Services and ConfigMaps by the thousand. */
  scale?: ClusterScale;
}

export interface SandboxProcessReady {
  url: string;
  caPem?: string;
  serviceAccountToken: string;
  adminToken: string;
}

const options = childOptions<SandboxProcessOptions>();
const sandbox = await startSandbox({
  nodes: options.nodes,
  podsPerNode: options.podsPerNode,
  adminPassword: options.adminPassword,
  tls: options.tls,
  ...(options.scale && { scale: options.scale }),
  logger: createLogger('error', { silent: true }),
  // Every container's log holds 10,000 lines over the last 4 hours (generated when read, never stored): the logging
  // rows read 200 of them.
  logHistory: { lines: 10_000, spanMs: 4 * 3600_000 },
});
const ready: SandboxProcessReady = {
  url: sandbox.url,
  caPem: sandbox.caPem,
  serviceAccountToken: sandbox.serviceAccountToken,
  adminToken: sandbox.adminToken,
};
process.stdout.write(`${JSON.stringify(ready)}\n`);

const stop = () => void sandbox.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
// The parent went away without stopping it: no orphan sandbox keeps running.
process.on('disconnect', stop);
