// First: V8 settings that must hold before anything else allocates.
import './observability/v8-tuning.js';
import { listenAddress, parseOptions, usage, type Options } from './config/options.js';
import { resolveClusterSource, connectToCluster } from './kube/cluster-source.js';
import { connectionFor, tokenAccess, type KubeConnection } from './kube/connection.js';
import { createLogger, type Logger } from './observability/logger.js';
import type { Sandbox } from './sandbox/index.js';
import { startKapiServer } from './server/server.js';

/** Composition root: options → cluster connection (sandbox or real) → server → signal handling. */
async function main(): Promise<void> {
  let options: Options | 'help';
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${usage()}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  const logger = createLogger(options.logLevel);
  const source = resolveClusterSource(options.cluster, { ...process.env, KUBECONFIG: options.kubeconfig });
  const bindAddress = listenAddress(options.bindAddress, source, process.env);

  let sandbox: Sandbox | undefined;
  let connection: KubeConnection;
  if (source === 'sandbox') {
    // Loaded only when used: a server in a cluster never carries the sandbox's code.
    const { startSandbox } = await import('./sandbox/index.js');
    sandbox = await startSandbox({ nodes: options.sandboxNodes, adminPassword: options.sandboxAdminPassword, logger });
    connection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox');
  } else {
    connection = await connectToCluster(source, options.kubeconfig);
  }

  const server = await startKapiServer({
    options: {
      ...options,
      bindAddress,
      tlsPort: options.tlsPort === 0 ? undefined : options.tlsPort,
      metricsPort: options.metricsPort === 0 ? undefined : options.metricsPort,
    },
    connection,
    logger,
    allowGeneratedSigningKey: source === 'sandbox',
  });
  announce(logger, { ...options, bindAddress }, server, connection, sandbox);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    server
      .stop()
      .then(() => sandbox?.stop())
      .then(() => connection.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error('shutdown failed', { error: String(err) });
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

function announce(
  logger: Logger,
  options: Options & { bindAddress: string },
  server: Awaited<ReturnType<typeof startKapiServer>>,
  connection: KubeConnection,
  sandbox: Sandbox | undefined,
): void {
  const bound = options.bindAddress;
  const host = bound === '0.0.0.0' || bound === '::' ? 'localhost' : bound.includes(':') ? `[${bound}]` : bound;
  logger.info('kapi-apiserver listening', {
    http: `http://${host}:${server.httpPort}`,
    https: server.httpsPort ? `https://${host}:${server.httpsPort}` : undefined,
    caFile: server.caFile,
    metrics: server.metricsPort ? `http://${host}:${server.metricsPort}/metrics` : undefined,
    cluster: connection.describe(),
  });
  if (sandbox && !options.sandboxAdminPassword && sandbox.adminPassword) {
    // Printed once, on the terminal only, so a newcomer can log in; never part of a structured log line.
    process.stdout.write(
      `\nSandbox admin user: admin  password: ${sandbox.adminPassword}\n` +
        `Set KAPI_SANDBOX_ADMIN_PASSWORD to choose it.\n\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`kapi-apiserver failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
