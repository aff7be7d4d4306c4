// First: V8 settings that must hold before anything else allocates.
import './observability/v8-tuning.js';
import { listenAddress, parseOptions, usage, type Options } from './config/options.js';
import { connectToCluster, kubeconfigFiles, kubeconfigIsKapi, resolveClusterSource } from './kube/cluster-source.js';
import { connectionFor, tokenAccess, type KubeConnection } from './kube/connection.js';
import { createLogger, type Logger } from './observability/logger.js';
import { packageRoot, packageVersion } from './apidocs/documents.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxDirectoryChoice } from './config/options.js';
import type { Sandbox } from './sandbox/index.js';
import type { SandboxDirectoryOption } from './sandbox/sandbox-directory.js';
import { serverOptionsFor, startKapiServer } from './server/server.js';

/** Composition root: options → cluster connection (sandbox or real) → server → signal handling. */
async function main(): Promise<void> {
  let options: Options | 'help' | 'version';
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
  if (options === 'version') {
    process.stdout.write(`kapi-apiserver ${packageVersion(packageRoot())} (Node.js ${process.version})\n`);
    return;
  }
  const logger = createLogger(options.logLevel);
  let source = resolveClusterSource(options.cluster, { ...process.env, KUBECONFIG: options.kubeconfig });
  if (source === 'kubeconfig') {
    // `kubectl kapi login` writes ~/.kube/config: its context is a kapi, never the cluster behind this one.
    const ownPorts = [options.port, options.tlsPort].filter((port) => port !== 0);
    const itself = kubeconfigIsKapi(kubeconfigFiles(options.kubeconfig, process.env), ownPorts);
    if (itself && options.cluster === 'kubeconfig') {
      process.stderr.write(`kapi-apiserver: --cluster=kubeconfig, but ${itself}\n`);
      process.exit(2);
    }
    if (itself) {
      logger.warn(`not connecting to the kubeconfig's cluster: ${itself}; starting the built-in sandbox instead`, {
        hint: 'KUBECONFIG=<a cluster admin kubeconfig> (or --kubeconfig, --cluster=kubeconfig) for a real cluster',
      });
      source = 'sandbox';
    }
  }
  const bindAddress = listenAddress(options.bindAddress, source, process.env);

  let sandbox: Sandbox | undefined;
  let connection: KubeConnection;
  const clusterLog = logger.child({ component: 'cluster' });
  if (source === 'sandbox') {
    // Loaded only when used: a server in a cluster never carries the sandbox's code.
    const { startSandbox } = await import('./sandbox/index.js');
    sandbox = await startSandbox({
      nodes: options.sandboxNodes,
      adminPassword: options.sandboxAdminPassword,
      ...(options.sandboxDirectory && { directory: await sandboxDirectoryOption(options.sandboxDirectory) }),
      logger,
    });
    connection = connectionFor(tokenAccess(sandbox.url, sandbox.serviceAccountToken), 'sandbox', { log: clusterLog });
  } else {
    connection = await connectToCluster(source, options.kubeconfig, { log: clusterLog });
  }

  // the console's charts, live: a local Prometheus over the sandbox's series
  let monitoring: { prometheusUrl: string; stop(): Promise<void> } | undefined;
  if (options.sandboxMonitoring && sandbox) {
    const { startSandboxMonitoring } = await import('./sandbox/monitoring/index.js');
    monitoring = await startSandboxMonitoring({
      sandboxUrl: sandbox.url,
      adminToken: sandbox.adminToken,
      rulesFile: join(packageRoot(), 'charts', 'kapi-apiserver', 'files', 'monitoring-rules.yaml'),
      configuration: options.configuration,
    });
  } else if (options.sandboxMonitoring) {
    logger.warn('--sandbox-monitoring is for the sandbox only: name a monitoring backend in the ClusterConfiguration');
  }

  const server = await startKapiServer({
    options: serverOptionsFor(options, source, bindAddress),
    connection,
    logger,
    allowGeneratedSigningKey: source === 'sandbox',
  });
  if (sandbox && server.httpsPort !== undefined && server.caFile) {
    // the sandbox calls kapi's workspace quota webhook as kube-apiserver would (the chart installs it in a cluster)
    const { quotaWebhookConfiguration } = await import('./workspace-quota/webhook-configuration.js');
    const ca = await readFile(server.caFile);
    const response = await fetch(
      `${sandbox.url}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${sandbox.adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(
          quotaWebhookConfiguration({ url: `https://127.0.0.1:${server.httpsPort}` }, ca.toString('base64')),
        ),
      },
    );
    if (!response.ok)
      logger.warn('the sandbox’s workspace quota webhook could not be installed', { status: response.status });
  }
  announce(logger, { ...options, bindAddress }, server, connection, sandbox);
  if (monitoring)
    process.stdout.write(
      `Monitoring: a local Prometheus at ${monitoring.prometheusUrl} scrapes series of the sandbox's nodes and pods ` +
        `(a pod's usage: its annotations sandbox.kapi.io/cpu and /memory, else a share of its requests); the ` +
        `console's charts read them through kapi.\n\n`,
    );

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', {
      signal,
      notReadyFor: `${options.shutdownDelayMs / 1000} s`,
      thenGrace: `${options.shutdownGraceMs / 1000} s`,
    });
    server
      .stop(options.shutdownGraceMs)
      .then(() => monitoring?.stop())
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
      `\nSandbox admin user: admin. Its password, ready to paste for the README's examples:\n\n` +
        `  export PASSWORD=${shellQuoted(sandbox.adminPassword)}\n\n` +
        `(A new one at every start; set KAPI_SANDBOX_ADMIN_PASSWORD to choose it.)\n\n`,
    );
  }
  const directory = sandbox?.directory;
  if (directory?.demoUser) {
    const demo = directory.demoUser;
    process.stdout.write(
      `Directory user (LDAP provider "${directory.provider}", a local slapd at ${directory.url}): ${demo.name}, in the ` +
        `directory group ${demo.group}, which may ${demo.clusterRole} the namespace ${demo.namespace}. Its password ` +
        `(a new one at every start) and a login:\n\n` +
        `  export DEMO_PASSWORD=${shellQuoted(demo.password)}\n` +
        `  curl -s -X POST localhost:${server.httpPort}/oauth/token -d grant_type=password -d username=${demo.name} ` +
        `-d "password=$DEMO_PASSWORD" -d client_id=kapi -d client_secret=kapi\n\n`,
    );
  } else if (directory) {
    process.stdout.write(
      `Directory logins (LDAP provider "${directory.provider}" at ${directory.url}): the users under ` +
        `${directory.usersDN} log in by uid (or mail) with their directory password; their groups come from memberOf. ` +
        `Grant a group rights with a RoleBinding (kubectl, through kapi as admin).\n\n`,
    );
  }
}

/** The sandbox's directory from `--sandbox-directory`: the CA file read here, at start, so a bad path stops it. */
async function sandboxDirectoryOption(choice: SandboxDirectoryChoice): Promise<SandboxDirectoryOption> {
  if (choice.kind === 'demo' || choice.caFile === undefined) return choice;
  const { caFile, ...rest } = choice;
  return { ...rest, caPem: await readFile(caFile, 'utf8') };
}

/** Single-quoted for a POSIX shell. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

main().catch((err: unknown) => {
  process.stderr.write(`kapi-apiserver failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
