import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import type { LogLevel } from '../observability/logger.js';
import { DurationError, parseDurationNanos } from './duration.js';
import { DnSyntaxError, parseDn } from './identity-providers/ldap-syntax.js';

export type ClusterChoice = 'auto' | 'sandbox' | 'kubeconfig' | 'in-cluster';

/** Where the logging API reads logs (SPEC §6): the pod-log API, or an OpenSearch/Elasticsearch store. */
export interface LoggingOptions {
  backend: 'pod-log' | 'opensearch';
  /** pod-log: reads in flight at once, and containers one request may read. */
  readConcurrency: number;
  maxContainers: number;
  /** opensearch: the store's URL, index prefix, field names (`key=field` overrides), credentials and CA. */
  searchUrl: string | undefined;
  searchIndex: string;
  searchFields: Record<string, string>;
  /** `namespace/name` of a Secret with `username` and `password` (and optionally `ca.crt`). */
  searchSecret: { namespace: string; name: string } | undefined;
  searchCaFile: string | undefined;
  /** Exports, and queries (query, statistics, histogram), in flight at once per replica and per user; 429 beyond. */
  limits: {
    exports: { perProcess: number; perUser: number };
    queries: { perProcess: number; perUser: number };
  };
  /** An answer whose client takes none of its bytes for this long is ended (ms). */
  writeTimeoutMs: number;
  /**
   * Where Event Search reads: the cluster's own events (`events-api`, the default) or KubeSphere's kube-events
   * indices in the log store (`opensearch`, with the opensearch log backend), under `eventsSearchIndex`.
   */
  eventsBackend?: 'events-api' | 'opensearch';
  eventsSearchIndex?: string;
}

/** Everything the server is started with. Built once by `parseOptions`; nothing reads `process.env` later. */
export interface Options {
  port: number;
  tlsPort: number;
  metricsPort: number;
  /** Set only when given; otherwise `listenAddress` decides from where kapi runs. */
  bindAddress: string | undefined;
  cluster: ClusterChoice;
  kubeconfig: string | undefined;
  logLevel: LogLevel;
  /** `namespace/name` of the watched ClusterConfiguration. */
  configuration: { namespace: string; name: string };
  /** `namespace/name` of the Secret holding the token signing key. */
  signingKeySecret: { namespace: string; name: string };
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** `namespace/name` of a kubernetes.io/tls Secret, used when no files are given. */
  tlsSecret: { namespace: string; name: string } | undefined;
  /** Where a generated self-signed CA certificate is written. */
  tlsCaOut: string;
  /** The admission webhooks' own HTTPS listener (kube-apiserver calls it); 0: none (the HTTPS listener serves them). */
  webhookPort: number;
  /** `namespace/name` of the kubernetes.io/tls Secret of the webhook listener (its CA is in the webhook configuration). */
  webhookTlsSecret: { namespace: string; name: string } | undefined;
  sandboxNodes: number;
  sandboxAdminPassword: string | undefined;
  /** The sandbox's LDAP identity provider: a local slapd with a demo user, or a directory at a URL; undefined: none. */
  sandboxDirectory: SandboxDirectoryChoice | undefined;
  /** The sandbox's monitoring backend: a local Prometheus over the sandbox's series. */
  sandboxMonitoring: boolean;
  /** Proxies (addresses or CIDRs) whose X-Forwarded-For names the real client; empty: the socket's peer is. */
  trustedProxies: string[];
  /** The `iss` of tokens and the OpenID discovery issuer: an https URL clients reach kapi at. */
  issuerUrl: string | undefined;
  /**
   * The console's kubectl toolbox: the image of each user's kubectl pod, and the https URL kubectl in it reaches kapi
   * at (the Service's name), and this pod's address (POD_IP): with a self-signed certificate kubectl reaches this
   * very replica, whose CA it trusts. Undefined: the toolbox is not served.
   */
  kubectlToolbox: { image: string; kapiUrl: string; podIp?: string } | undefined;
  /** The largest body of an ordinary forwarded request (kube-apiserver's --max-resource-write-bytes). */
  maxRequestBodyBytes: number;
  logging: LoggingOptions;
  /** Time to receive a request's headers (and a TLS handshake). */
  readHeaderTimeoutMs: number;
  /** Time to receive a whole request, body included; 0: unbounded. Streams, once in, are never cut by it. */
  readTimeoutMs: number;
  /** How long a kept-alive connection may idle between requests. */
  idleTimeoutMs: number;
  /** Open connections one client address may hold across all listeners; 0: no cap. Trusted proxies are exempt. */
  maxConnectionsPerClient: number;
  /** A listing's cache (every kind but nodes) stops once unused this long. */
  listingCacheIdleMs: number;
  /** After SIGTERM: not ready but still serving this long, so load balancers stop sending before the listeners close. */
  shutdownDelayMs: number;
  /** After the delay: how long in-flight requests may finish before their connections are cut. */
  shutdownGraceMs: number;
  /** How long a listing waits for its kind's cache to read its first list before answering 503. */
  listingSyncTimeoutMs: number;
}

interface Spec {
  flag: string;
  env: string;
  help: string;
  fallback: string;
  /** A switch: the flag alone turns it on; its variable is true/false (or 1/0). */
  switch?: true;
}

const SPECS = {
  port: { flag: 'port', env: 'PORT', help: 'plain HTTP listener port', fallback: '9090' },
  tlsPort: { flag: 'tls-port', env: 'TLS_PORT', help: 'HTTPS listener port (0 disables it)', fallback: '9443' },
  metricsPort: {
    flag: 'metrics-port',
    env: 'METRICS_PORT',
    help: 'Prometheus metrics port (0 disables it)',
    fallback: '9091',
  },
  bindAddress: {
    flag: 'bind-address',
    env: 'BIND_ADDRESS',
    help: 'address the listeners bind to (default: 127.0.0.1 when serving the sandbox outside a pod, else 0.0.0.0)',
    fallback: '',
  },
  cluster: {
    flag: 'cluster',
    env: 'KAPI_CLUSTER',
    help: 'auto | sandbox | kubeconfig | in-cluster (auto: KAPI_SANDBOX=1 → sandbox, in a pod → in-cluster, KUBECONFIG or ~/.kube/config → kubeconfig, otherwise sandbox)',
    fallback: 'auto',
  },
  kubeconfig: { flag: 'kubeconfig', env: 'KUBECONFIG', help: 'kubeconfig file for --cluster=kubeconfig', fallback: '' },
  logLevel: { flag: 'log-level', env: 'LOG_LEVEL', help: 'error | warn | info | debug', fallback: 'info' },
  configuration: {
    flag: 'cluster-configuration',
    env: 'KAPI_CLUSTER_CONFIGURATION',
    help: 'namespace/name of the watched ClusterConfiguration',
    fallback: 'kapi-system/kapi',
  },
  signingKeySecret: {
    flag: 'signing-key-secret',
    env: 'KAPI_SIGNING_KEY_SECRET',
    help: 'namespace/name of the Secret holding the JWT signing key',
    fallback: 'kapi-system/kapi-apiserver-jwt',
  },
  tlsCertFile: {
    flag: 'tls-cert-file',
    env: 'TLS_CERT_FILE',
    help: 'PEM certificate for the HTTPS listener',
    fallback: '',
  },
  tlsKeyFile: {
    flag: 'tls-key-file',
    env: 'TLS_KEY_FILE',
    help: 'PEM private key for the HTTPS listener',
    fallback: '',
  },
  tlsSecret: {
    flag: 'tls-secret',
    env: 'TLS_SECRET',
    help: 'namespace/name of a kubernetes.io/tls Secret for the HTTPS listener',
    fallback: '',
  },
  webhookPort: {
    flag: 'webhook-port',
    env: 'WEBHOOK_PORT',
    help: 'HTTPS port of the admission webhooks alone, with --webhook-tls-secret (0: the HTTPS listener serves them)',
    fallback: '0',
  },
  webhookTlsSecret: {
    flag: 'webhook-tls-secret',
    env: 'WEBHOOK_TLS_SECRET',
    help: 'namespace/name of the kubernetes.io/tls Secret of the webhook listener',
    fallback: '',
  },
  tlsCaOut: {
    flag: 'tls-ca-out',
    env: 'TLS_CA_OUT',
    help: 'where the CA of a generated self-signed certificate is written',
    fallback: '.cache/kapi-ca.crt',
  },
  sandboxNodes: {
    flag: 'sandbox-nodes',
    env: 'KAPI_SANDBOX_NODES',
    help: 'nodes seeded into the sandbox',
    fallback: '6',
  },
  trustedProxies: {
    flag: 'trusted-proxies',
    env: 'TRUSTED_PROXIES',
    help: 'comma-separated addresses or CIDRs of proxies whose X-Forwarded-For names the client (audit, login limits)',
    fallback: '',
  },
  issuerUrl: {
    flag: 'issuer-url',
    env: 'KAPI_ISSUER_URL',
    help: 'https URL kapi is reached at, used as the tokens\' iss and for OpenID discovery (empty: iss "kapi")',
    fallback: '',
  },
  kubectlImage: {
    flag: 'kubectl-image',
    env: 'KAPI_KUBECTL_IMAGE',
    help: "image of the users' kubectl pods (the console's kubectl toolbox; needs a shell); empty: no toolbox",
    fallback: '',
  },
  kubectlToolboxUrl: {
    flag: 'kubectl-toolbox-url',
    env: 'KAPI_KUBECTL_TOOLBOX_URL',
    help: "https URL kubectl in a user's kubectl pod reaches kapi at (default: --issuer-url)",
    fallback: '',
  },
  maxRequestBodyBytes: {
    flag: 'max-request-body-bytes',
    env: 'MAX_REQUEST_BODY_BYTES',
    help: "largest body of a forwarded request other than a stream, in bytes: larger ones get 413 (as kube-apiserver's --max-resource-write-bytes)",
    fallback: '3145728',
  },
  logBackend: {
    flag: 'log-backend',
    env: 'KAPI_LOG_BACKEND',
    help: 'where the logging API reads logs: pod-log (the Kubernetes pod-log API) | opensearch',
    fallback: 'pod-log',
  },
  logReadConcurrency: {
    flag: 'log-read-concurrency',
    env: 'KAPI_LOG_READ_CONCURRENCY',
    help: 'pod-log backend: container log reads in flight at once, across all requests',
    fallback: '16',
  },
  logMaxContainers: {
    flag: 'log-max-containers',
    env: 'KAPI_LOG_MAX_CONTAINERS',
    help: 'pod-log backend: containers one logging request may read (more: 400, narrow the query)',
    fallback: '1000',
  },
  logMaxExports: {
    flag: 'log-max-exports',
    env: 'KAPI_LOG_MAX_EXPORTS',
    help: 'log exports in flight at once in this replica (more: 429); each holds up to about 8 MiB of lines',
    fallback: '4',
  },
  logMaxExportsPerUser: {
    flag: 'log-max-exports-per-user',
    env: 'KAPI_LOG_MAX_EXPORTS_PER_USER',
    help: 'log exports in flight at once for one user (more: 429)',
    fallback: '2',
  },
  logMaxQueries: {
    flag: 'log-max-queries',
    env: 'KAPI_LOG_MAX_QUERIES',
    help: 'log queries, statistics and histograms in flight at once in this replica (more: 429); each holds up to about 4 MiB',
    fallback: '8',
  },
  logMaxQueriesPerUser: {
    flag: 'log-max-queries-per-user',
    env: 'KAPI_LOG_MAX_QUERIES_PER_USER',
    help: 'log queries, statistics and histograms in flight at once for one user (more: 429)',
    fallback: '4',
  },
  logWriteTimeout: {
    flag: 'log-write-timeout',
    env: 'KAPI_LOG_WRITE_TIMEOUT',
    help: 'a logging answer (an export above all) whose client takes none of it for this long is ended (Go duration)',
    fallback: '60s',
  },
  logSearchUrl: {
    flag: 'log-search-url',
    env: 'KAPI_LOG_SEARCH_URL',
    help: 'opensearch backend: URL of OpenSearch or Elasticsearch, e.g. https://opensearch-cluster-data.kubesphere-logging-system.svc:9200',
    fallback: '',
  },
  eventsBackend: {
    flag: 'events-backend',
    env: 'KAPI_EVENTS_BACKEND',
    help: 'where Event Search reads: events-api (the cluster’s own events) | opensearch (the log store’s kube-events indices)',
    fallback: 'events-api',
  },
  eventsSearchIndex: {
    flag: 'events-search-index',
    env: 'KAPI_EVENTS_SEARCH_INDEX',
    help: 'opensearch events backend: index prefix; daily indices <prefix>-YYYY.MM.DD, as KubeSphere’s events exporter writes them',
    fallback: 'ks-logstash-events',
  },
  logSearchIndex: {
    flag: 'log-search-index',
    env: 'KAPI_LOG_SEARCH_INDEX',
    help: 'opensearch backend: index prefix; daily indices <prefix>-YYYY.MM.DD, as KubeSphere writes them',
    fallback: 'ks-logstash-log',
  },
  logSearchFields: {
    flag: 'log-search-fields',
    env: 'KAPI_LOG_SEARCH_FIELDS',
    help: 'opensearch backend: field-name overrides key=field,... (keys: time, log, namespace, pod, container, containerId)',
    fallback: '',
  },
  logSearchSecret: {
    flag: 'log-search-secret',
    env: 'KAPI_LOG_SEARCH_SECRET',
    help: 'opensearch backend: namespace/name of a Secret with username, password (and ca.crt)',
    fallback: '',
  },
  logSearchCaFile: {
    flag: 'log-search-ca-file',
    env: 'KAPI_LOG_SEARCH_CA_FILE',
    help: 'opensearch backend: PEM CA bundle that signed the store certificate',
    fallback: '',
  },
  readHeaderTimeout: {
    flag: 'read-header-timeout',
    env: 'READ_HEADER_TIMEOUT',
    help: "time a client has to send a request's headers, or to finish a TLS handshake (Go duration)",
    fallback: '20s',
  },
  readTimeout: {
    flag: 'read-timeout',
    env: 'READ_TIMEOUT',
    help: 'time a client has to send a whole request, body included (0: no limit); watches, log follows and exec are not cut by it',
    fallback: '60s',
  },
  idleTimeout: {
    flag: 'idle-timeout',
    env: 'IDLE_TIMEOUT',
    help: 'how long a kept-alive connection may wait for its next request',
    fallback: '65s',
  },
  maxConnectionsPerClient: {
    flag: 'max-connections-per-client',
    env: 'MAX_CONNECTIONS_PER_CLIENT',
    help: 'open connections one client address may hold across all listeners (0: no cap; --trusted-proxies are not capped)',
    fallback: '2048',
  },
  listingCacheIdle: {
    flag: 'listing-cache-idle',
    env: 'KAPI_LISTING_CACHE_IDLE',
    help: 'a listing cache (every kind but nodes: its watch and what it holds) stops once unused this long',
    fallback: '10m',
  },
  shutdownDelay: {
    flag: 'shutdown-delay',
    env: 'KAPI_SHUTDOWN_DELAY',
    help: 'after SIGTERM, /readyz fails and kapi keeps serving this long before it stops listening (the Service drops it first)',
    fallback: '5s',
  },
  shutdownGrace: {
    flag: 'shutdown-grace',
    env: 'KAPI_SHUTDOWN_GRACE',
    help: 'then watches and log follows end cleanly and in-flight requests get this long to finish before being cut',
    fallback: '10s',
  },
  listingSyncTimeout: {
    flag: 'listing-sync-timeout',
    env: 'KAPI_LISTING_SYNC_TIMEOUT',
    help: "how long a listing waits for its kind's cache to read its first list before answering 503 with Retry-After",
    fallback: '10s',
  },
  sandboxDirectory: {
    flag: 'sandbox-directory',
    env: 'KAPI_SANDBOX_DIRECTORY',
    help: 'sandbox only: an LDAP identity provider. demo: a local OpenLDAP (slapd) with a demo user and group; or ldaps://host[:port]/<users base DN> (ldap:// uses StartTLS; search as KAPI_SANDBOX_DIRECTORY_BIND_DN with KAPI_SANDBOX_DIRECTORY_BIND_PASSWORD, else anonymously; a private CA in KAPI_SANDBOX_DIRECTORY_CA_FILE)',
    fallback: '',
  },
  sandboxMonitoring: {
    flag: 'sandbox-monitoring',
    env: 'KAPI_SANDBOX_MONITORING',
    help: "sandbox only: the console's charts, live: a local Prometheus (Debian's) over series of the sandbox's nodes and pods, named in its ClusterConfiguration",
    fallback: 'false',
    switch: true,
  },
  sandboxAdminPassword: {
    flag: 'sandbox-admin-password',
    env: 'KAPI_SANDBOX_ADMIN_PASSWORD',
    help: "sandbox admin user's password (random and printed once when unset)",
    fallback: '',
  },
} satisfies Record<string, Spec>;

export class OptionsError extends Error {}

/** A switch's value: true or false (1 or 0) in its variable. */
function onOff(text: string, flag: string): boolean {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0' || text === '') return false;
  throw new OptionsError(`--${flag} is a switch: its variable is true or false, not "${text}"`);
}

/** `--sandbox-directory`: what the sandbox's LDAP identity provider is. */
export type SandboxDirectoryChoice =
  | { kind: 'demo' }
  | {
      kind: 'url';
      /** scheme://host[:port] */
      url: string;
      /** Where users are searched (by uid, or mail for a login with "@"). */
      baseDN: string;
      bindDN?: string;
      bindPassword?: string;
      /** PEM bundle of the directory's CA; default: the system's CAs. */
      caFile?: string;
    };

export function usage(): string {
  const lines = Object.values(SPECS).map((s: Spec) =>
    s.switch
      ? `  --${s.flag.padEnd(24)} ${s.help} [env ${s.env}=true]`
      : `  --${s.flag.padEnd(24)} ${s.help} [env ${s.env}${s.fallback ? `, default ${s.fallback}` : ''}]`,
  );
  return [
    'Usage: kapi-apiserver [options]',
    '',
    'Options (a flag wins over its environment variable):',
    ...lines,
    '  --version                  the version of kapi-apiserver and of Node.js',
    '  --help',
  ].join('\n');
}

/** Flags win over environment variables, which win over defaults. Throws `OptionsError` on a bad value. */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): Options | 'help' | 'version' {
  const flags: Record<string, { type: 'string' | 'boolean' }> = {
    help: { type: 'boolean' },
    version: { type: 'boolean' },
  };
  for (const spec of Object.values(SPECS) as Spec[]) flags[spec.flag] = { type: spec.switch ? 'boolean' : 'string' };
  const values = parseArgs({ args: argv, options: flags, strict: true }).values as Record<
    string,
    string | boolean | undefined
  >;
  if (values.help) return 'help';
  if (values.version) return 'version';
  const raw = (key: keyof typeof SPECS): string => {
    const spec: Spec = SPECS[key];
    const value = values[spec.flag];
    return (typeof value === 'boolean' ? String(value) : value) ?? env[spec.env] ?? spec.fallback;
  };

  let cluster = raw('cluster') as ClusterChoice;
  if (!['auto', 'sandbox', 'kubeconfig', 'in-cluster'].includes(cluster)) {
    throw new OptionsError(`--cluster must be auto, sandbox, kubeconfig or in-cluster, not "${cluster}"`);
  }
  if (cluster === 'auto' && env.KAPI_SANDBOX === '1') cluster = 'sandbox';
  const logLevel = raw('logLevel') as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(logLevel)) {
    throw new OptionsError(`--log-level must be error, warn, info or debug, not "${logLevel}"`);
  }
  const tlsSecret = raw('tlsSecret');
  const webhookTlsSecret = raw('webhookTlsSecret');
  const webhookPort = port(raw('webhookPort'), 'webhook-port');
  if (webhookPort !== 0 && !webhookTlsSecret)
    throw new OptionsError(
      '--webhook-port needs --webhook-tls-secret (the certificate kube-apiserver is told to trust)',
    );
  const readHeaderTimeoutMs = positiveMilliseconds(raw('readHeaderTimeout'), 'read-header-timeout');
  const readTimeoutMs = milliseconds(raw('readTimeout'), 'read-timeout');
  if (readTimeoutMs !== 0 && readHeaderTimeoutMs > readTimeoutMs) {
    throw new OptionsError('--read-header-timeout must not be longer than --read-timeout (the headers are part of it)');
  }
  return {
    port: port(raw('port'), 'port'),
    tlsPort: port(raw('tlsPort'), 'tls-port'),
    metricsPort: port(raw('metricsPort'), 'metrics-port'),
    bindAddress: raw('bindAddress') || undefined,
    cluster,
    kubeconfig: raw('kubeconfig') || undefined,
    logLevel,
    configuration: namespacedName(raw('configuration'), 'cluster-configuration'),
    signingKeySecret: namespacedName(raw('signingKeySecret'), 'signing-key-secret'),
    tlsCertFile: raw('tlsCertFile') || undefined,
    tlsKeyFile: raw('tlsKeyFile') || undefined,
    tlsSecret: tlsSecret ? namespacedName(tlsSecret, 'tls-secret') : undefined,
    tlsCaOut: raw('tlsCaOut'),
    webhookPort,
    webhookTlsSecret: webhookTlsSecret ? namespacedName(webhookTlsSecret, 'webhook-tls-secret') : undefined,
    sandboxNodes: count(raw('sandboxNodes'), 'sandbox-nodes'),
    sandboxAdminPassword: raw('sandboxAdminPassword') || undefined,
    sandboxDirectory: sandboxDirectory(raw('sandboxDirectory'), env),
    sandboxMonitoring: onOff(raw('sandboxMonitoring'), 'sandbox-monitoring'),
    trustedProxies: addressList(raw('trustedProxies'), 'trusted-proxies'),
    issuerUrl: issuerUrl(raw('issuerUrl'), 'issuer-url'),
    kubectlToolbox: kubectlToolbox(raw('kubectlImage'), raw('kubectlToolboxUrl') || raw('issuerUrl'), env.POD_IP),
    maxRequestBodyBytes: positive(raw('maxRequestBodyBytes'), 'max-request-body-bytes'),
    readHeaderTimeoutMs,
    readTimeoutMs,
    idleTimeoutMs: positiveMilliseconds(raw('idleTimeout'), 'idle-timeout'),
    maxConnectionsPerClient: count(raw('maxConnectionsPerClient'), 'max-connections-per-client'),
    listingCacheIdleMs: positiveMilliseconds(raw('listingCacheIdle'), 'listing-cache-idle'),
    shutdownDelayMs: milliseconds(raw('shutdownDelay'), 'shutdown-delay'),
    shutdownGraceMs: milliseconds(raw('shutdownGrace'), 'shutdown-grace'),
    listingSyncTimeoutMs: positiveMilliseconds(raw('listingSyncTimeout'), 'listing-sync-timeout'),
    logging: loggingOptions(raw),
  };
}

const LOG_BACKENDS: readonly string[] = ['pod-log', 'opensearch'];
const SEARCH_FIELD_KEYS = ['time', 'log', 'namespace', 'pod', 'container', 'containerId'];

function loggingOptions(raw: (key: keyof typeof SPECS) => string): LoggingOptions {
  const backend = raw('logBackend') as LoggingOptions['backend'];
  if (!LOG_BACKENDS.includes(backend)) {
    throw new OptionsError(`--log-backend must be ${LOG_BACKENDS.join(' or ')}, not "${backend}"`);
  }
  const searchUrl = raw('logSearchUrl') || undefined;
  if (searchUrl !== undefined && (!/^https?:\/\/[^/]/.test(searchUrl) || /^https?:\/\/[^/]*@/.test(searchUrl))) {
    // Credentials belong in the Secret (--log-search-secret), never in a URL that is logged and shown.
    throw new OptionsError('--log-search-url must be an http:// or https:// URL without credentials');
  }
  if (backend === 'opensearch' && searchUrl === undefined) {
    throw new OptionsError('--log-backend=opensearch needs --log-search-url (KAPI_LOG_SEARCH_URL)');
  }
  const searchFields: Record<string, string> = {};
  for (const entry of raw('logSearchFields').split(',').filter(Boolean)) {
    const [key, field, extra] = entry.split('=').map((part) => part.trim());
    if (!key || !SEARCH_FIELD_KEYS.includes(key) || !field || extra !== undefined) {
      throw new OptionsError(
        `--log-search-fields takes key=field pairs with keys ${SEARCH_FIELD_KEYS.join(', ')}, not "${entry}"`,
      );
    }
    searchFields[key] = field;
  }
  const index = raw('logSearchIndex');
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(index)) {
    throw new OptionsError(`--log-search-index must be a lower-case index prefix, not "${index}"`);
  }
  const secret = raw('logSearchSecret');
  const eventsBackend = raw('eventsBackend');
  if (eventsBackend !== 'events-api' && eventsBackend !== 'opensearch')
    throw new OptionsError(`--events-backend must be events-api or opensearch, not "${eventsBackend}"`);
  if (eventsBackend === 'opensearch' && backend !== 'opensearch')
    throw new OptionsError('--events-backend=opensearch reads the log store: it needs --log-backend=opensearch');
  const eventsIndex = raw('eventsSearchIndex');
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(eventsIndex))
    throw new OptionsError(`--events-search-index must be a lower-case index prefix, not "${eventsIndex}"`);
  return {
    backend,
    eventsBackend,
    eventsSearchIndex: eventsIndex,
    readConcurrency: positive(raw('logReadConcurrency'), 'log-read-concurrency'),
    maxContainers: positive(raw('logMaxContainers'), 'log-max-containers'),
    searchUrl,
    searchIndex: index,
    searchFields,
    searchSecret: secret ? namespacedName(secret, 'log-search-secret') : undefined,
    searchCaFile: raw('logSearchCaFile') || undefined,
    limits: {
      exports: {
        perProcess: positive(raw('logMaxExports'), 'log-max-exports'),
        perUser: positive(raw('logMaxExportsPerUser'), 'log-max-exports-per-user'),
      },
      queries: {
        perProcess: positive(raw('logMaxQueries'), 'log-max-queries'),
        perUser: positive(raw('logMaxQueriesPerUser'), 'log-max-queries-per-user'),
      },
    },
    writeTimeoutMs: positiveMilliseconds(raw('logWriteTimeout'), 'log-write-timeout'),
  };
}

/**
 * The address the listeners bind to when none was given: every interface in a pod (the Service must reach it) or
 * against a real cluster, but loopback for the sandbox on a workstation (`make run`), whose demo admin user is
 * cluster-admin and must not be offered to the whole network.
 */
export function listenAddress(
  given: string | undefined,
  cluster: 'sandbox' | 'kubeconfig' | 'in-cluster',
  env: NodeJS.ProcessEnv,
): string {
  if (given) return given;
  const inPod = Boolean(env.KUBERNETES_SERVICE_HOST);
  return cluster === 'sandbox' && !inPod ? '127.0.0.1' : '0.0.0.0';
}

function port(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65535)
    throw new OptionsError(`--${flag} must be a port number (0-65535), not "${text}"`);
  return n;
}

function count(text: string, flag: string): number {
  if (!/^\d+$/.test(text)) throw new OptionsError(`--${flag} must be a whole number, not "${text}"`);
  return Number(text);
}

/** A Go duration ("20s", "1m30s", "0") as whole milliseconds. */
function milliseconds(text: string, flag: string): number {
  try {
    const ms = parseDurationNanos(text) / 1_000_000n;
    if (ms > 2_147_483_647n) throw new DurationError('is too long (at most about 24 days)');
    return Number(ms);
  } catch (err) {
    if (err instanceof DurationError) throw new OptionsError(`--${flag} ${err.message}, not "${text}"`);
    throw err;
  }
}

/** As `milliseconds`, for the limits that must hold (0 would turn them off). */
function positiveMilliseconds(text: string, flag: string): number {
  const ms = milliseconds(text, flag);
  if (ms === 0) throw new OptionsError(`--${flag} must be longer than 0`);
  return ms;
}

function positive(text: string, flag: string): number {
  const n = count(text, flag);
  if (n === 0 || !Number.isSafeInteger(n))
    throw new OptionsError(`--${flag} must be a positive whole number, not "${text}"`);
  return n;
}

function addressList(text: string, flag: string): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const maxPrefix = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new OptionsError(`--${flag} takes IP addresses or CIDRs, not "${entry}"`);
    }
  }
  return entries;
}

/** As kube-apiserver's --oidc-issuer-url wants it: https, no query or fragment; no trailing slash (compared as text). */
/**
 * `--sandbox-directory`: `demo`, or an LDAP URL whose path is the users' base DN (RFC 4516:
 * `ldaps://ldap.example.com/ou=people,dc=example,dc=com`). The bind password comes from the environment only, never
 * from a flag (flags show in `ps`) nor the URL.
 */
function sandboxDirectory(text: string, env: NodeJS.ProcessEnv): SandboxDirectoryChoice | undefined {
  if (text === '') return undefined;
  if (text === 'demo') return { kind: 'demo' };
  const flag = '--sandbox-directory';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OptionsError(`${flag} must be demo or an ldaps:// or ldap:// URL, not "${text}"`);
  }
  if (url.protocol !== 'ldaps:' && url.protocol !== 'ldap:') {
    throw new OptionsError(`${flag} must be demo or an ldaps:// or ldap:// URL, not "${url.protocol}//…"`);
  }
  if (url.username || url.password) {
    throw new OptionsError(`${flag}: no credentials in the URL (KAPI_SANDBOX_DIRECTORY_BIND_DN and _BIND_PASSWORD)`);
  }
  if (url.search || url.hash) throw new OptionsError(`${flag}: the URL takes no query or fragment, only a base DN`);
  let baseDN: string;
  try {
    baseDN = decodeURIComponent(url.pathname.replace(/^\//, ''));
    if (baseDN === '') throw new DnSyntaxError('is empty');
    parseDn(baseDN);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new OptionsError(
      `${flag}: the URL's path must be the users' base DN (ldaps://host/ou=people,dc=example,dc=com): ${why}`,
    );
  }
  const bindDN = env.KAPI_SANDBOX_DIRECTORY_BIND_DN || undefined;
  const bindPassword = env.KAPI_SANDBOX_DIRECTORY_BIND_PASSWORD || undefined;
  if ((bindDN === undefined) !== (bindPassword === undefined)) {
    throw new OptionsError(
      'KAPI_SANDBOX_DIRECTORY_BIND_DN and KAPI_SANDBOX_DIRECTORY_BIND_PASSWORD go together (or neither: an anonymous search)',
    );
  }
  return {
    kind: 'url',
    url: `${url.protocol}//${url.host}`,
    baseDN,
    ...(bindDN !== undefined && bindPassword !== undefined && { bindDN, bindPassword }),
    ...(env.KAPI_SANDBOX_DIRECTORY_CA_FILE && { caFile: env.KAPI_SANDBOX_DIRECTORY_CA_FILE }),
  };
}

function issuerUrl(text: string, flag: string): string | undefined {
  if (text === '') return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OptionsError(`--${flag} must be an https URL, not "${text}"`);
  }
  if (url.protocol !== 'https:' || url.search || url.hash || url.username || url.password || text.endsWith('/')) {
    throw new OptionsError(`--${flag} must be an https URL without query, fragment or trailing slash, not "${text}"`);
  }
  return text;
}

function kubectlToolbox(
  image: string,
  url: string,
  podIp: string | undefined,
): { image: string; kapiUrl: string; podIp?: string } | undefined {
  if (image === '') return undefined;
  if (/\s/.test(image)) throw new OptionsError(`--kubectl-image must be an image reference, not "${image}"`);
  const kapiUrl = issuerUrl(url, 'kubectl-toolbox-url');
  if (!kapiUrl)
    throw new OptionsError('--kubectl-image needs --kubectl-toolbox-url (or --issuer-url): kubectl reaches kapi there');
  return { image, kapiUrl, ...(podIp && isIP(podIp) && { podIp }) };
}

function namespacedName(text: string, flag: string): { namespace: string; name: string } {
  const match = /^([a-z0-9][-a-z0-9]*)\/([a-z0-9][-a-z0-9.]*)$/.exec(text);
  if (!match) throw new OptionsError(`--${flag} must be namespace/name, not "${text}"`);
  return { namespace: match[1]!, name: match[2]! };
}
