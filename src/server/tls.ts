import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { generate } from 'selfsigned';
import type { KubeClient } from '../kube/client.js';
import { Reflector } from '../kube/reflector.js';
import type { Logger } from '../observability/logger.js';

/** The HTTPS listener's key and certificate chain (PEM), and where they came from. */
export interface ServingCertificate {
  key: string;
  cert: string;
  /** The CA certificate of a generated certificate, or a Secret's `ca.crt` (clients trust this one). */
  ca?: string;
  source: 'files' | 'secret' | 'self-signed';
  /** Where the generated CA was written. */
  caFile?: string;
}

export interface ServingCertificateOptions {
  certFile: string | undefined;
  keyFile: string | undefined;
  /** A kubernetes.io/tls Secret (`tls.crt`, `tls.key`), used when no files are given. */
  secret: { namespace: string; name: string } | undefined;
  client?: KubeClient;
  /** Where a generated CA certificate is written (its key never is). */
  caOut: string;
  /** Extra DNS names or IPs the generated certificate is valid for. */
  hosts: readonly string[];
  /**
   * Keep a generated certificate across restarts (the sandbox on a workstation): its key and certificate are written
   * here (`kapi-serving.key`, 0600, and `kapi-serving.crt`) beside the CA at `caOut`, and reused while they are valid
   * for a week more, match each other and the CA, and cover the hosts; otherwise new ones are made. Deleting the
   * files asks for new ones. Absent: a generated certificate lives as long as the process (in a pod).
   */
  keepIn?: string;
  /** Now, for the generated certificates' validity (tests). */
  now?: Date;
}

/** A kept certificate closer to its end than this is made anew (clients then need the new CA, once a year). */
const RENEW_BEFORE_MS = 7 * 86_400_000;

/** Names the Service is reached by inside the cluster, and loopback for local runs and port-forwards. */
const DEFAULT_HOSTS = [
  'localhost',
  '127.0.0.1',
  '::1',
  'kapi-apiserver',
  'kapi-apiserver.kapi-system',
  'kapi-apiserver.kapi-system.svc',
  'kapi-apiserver.kapi-system.svc.cluster.local',
];

const DAY_MS = 86_400_000;

/**
 * Files win, then the Secret, then a CA and serving certificate generated at start (the CA written to `caOut` so
 * clients such as kubectl can verify the server). A key that does not match its certificate fails start-up here,
 * not at the first handshake.
 */
export async function loadServingCertificate(options: ServingCertificateOptions): Promise<ServingCertificate> {
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) {
      throw new Error(
        'a TLS certificate file needs its key file and the other way round (--tls-cert-file, --tls-key-file)',
      );
    }
    const [cert, key] = await Promise.all([readFile(options.certFile, 'utf8'), readFile(options.keyFile, 'utf8')]);
    checkPair(cert, key, `${options.certFile} and ${options.keyFile}`);
    return { key, cert, source: 'files' };
  }
  if (options.secret) {
    if (!options.client) throw new Error('reading the TLS Secret needs a Kubernetes client');
    const { key, cert, ca } = await readTlsSecret(options.client, options.secret);
    return { key, cert, ...(ca && { ca }), source: 'secret' };
  }
  return generateServingCertificate(options);
}

async function readTlsSecret(
  client: KubeClient,
  ref: { namespace: string; name: string },
): Promise<{ key: string; cert: string; ca?: string }> {
  const where = `Secret ${ref.namespace}/${ref.name}`;
  const secret = await client.request<V1Secret>({
    path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}`,
    timeoutMs: 10_000,
  });
  const crt = secret.data?.['tls.crt'];
  const key = secret.data?.['tls.key'];
  if (!crt || !key) throw new Error(`${where} has no tls.crt and tls.key (a kubernetes.io/tls Secret is expected)`);
  const pair = { cert: Buffer.from(crt, 'base64').toString('utf8'), key: Buffer.from(key, 'base64').toString('utf8') };
  checkPair(pair.cert, pair.key, where);
  // the issuer's CA, as cert-manager writes it: users' kubeconfigs and kubectl pods trust it
  const ca = secret.data?.['ca.crt'];
  return ca ? { ...pair, ca: Buffer.from(ca, 'base64').toString('utf8') } : pair;
}

async function generateServingCertificate(options: ServingCertificateOptions): Promise<ServingCertificate> {
  const kept = options.keepIn ? await keptCertificate(options, options.keepIn) : undefined;
  if (kept) return kept;
  const made = await newServingCertificate(options);
  if (options.keepIn) {
    await mkdir(options.keepIn, { recursive: true });
    await writeAtomically(join(options.keepIn, KEPT_KEY), made.key, 0o600);
    await writeAtomically(join(options.keepIn, KEPT_CERT), made.cert, 0o644);
  }
  return made;
}

const KEPT_KEY = 'kapi-serving.key';
const KEPT_CERT = 'kapi-serving.crt';

/** The certificate kept in `dir` and its CA at `caOut`, when still good for the hosts asked; else undefined. */
async function keptCertificate(
  options: ServingCertificateOptions,
  dir: string,
): Promise<ServingCertificate | undefined> {
  let key: string;
  let cert: string;
  let ca: string;
  try {
    [key, cert, ca] = await Promise.all([
      readFile(join(dir, KEPT_KEY), 'utf8'),
      readFile(join(dir, KEPT_CERT), 'utf8'),
      readFile(options.caOut, 'utf8'),
    ]);
    checkPair(cert, key, dir);
    const leaf = new X509Certificate(cert);
    const authority = new X509Certificate(ca);
    const now = (options.now ?? new Date()).getTime();
    const fresh = Date.parse(leaf.validFrom) <= now && Date.parse(leaf.validTo) - now > RENEW_BEFORE_MS;
    const signed = leaf.checkIssued(authority) && leaf.verify(authority.publicKey);
    const hosts = [...DEFAULT_HOSTS, ...options.hosts.filter((host) => host !== '')];
    const covers = hosts.every((host) => (isIP(host) ? leaf.checkIP(host) : leaf.checkHost(host)) !== undefined);
    if (!fresh || !signed || !covers) return undefined;
  } catch {
    return undefined;
  }
  return { key, cert, ca, source: 'self-signed', caFile: options.caOut };
}

async function newServingCertificate(options: ServingCertificateOptions): Promise<ServingCertificate> {
  const notBeforeDate = new Date((options.now ?? new Date()).getTime() - 60_000);
  const ca = await generate(
    [{ name: 'commonName', value: `kapi-apiserver-ca@${Math.floor(notBeforeDate.getTime() / 1000)}` }],
    {
      keyType: 'ec',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate: new Date(notBeforeDate.getTime() + 3650 * DAY_MS),
      extensions: [
        { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    },
  );
  const hosts = [...new Set([...DEFAULT_HOSTS, ...options.hosts.filter((host) => host !== '')])];
  const serving = await generate([{ name: 'commonName', value: 'kapi-apiserver' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 365 * DAY_MS),
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: hosts.map((host) =>
          isIP(host) ? { type: 7 as const, ip: host } : { type: 2 as const, value: host },
        ),
      },
    ],
  });
  await writeCaFile(options.caOut, ca.cert);
  // The CA's key is dropped here: nothing else can ever be signed with it.
  return { key: serving.private, cert: serving.cert, ca: ca.cert, source: 'self-signed', caFile: options.caOut };
}

async function writeCaFile(path: string, pem: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeAtomically(path, pem, 0o644);
}

/** Written beside and renamed, so a reader never sees half a file; the mode is set whatever the umask. */
async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode });
  await chmod(temporary, mode);
  await rename(temporary, path);
}

function checkPair(cert: string, key: string, where: string): void {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    throw new Error(`${where}: the certificate is not a PEM X.509 certificate`, { cause: error });
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new Error(`${where}: the key is not a PEM private key`, { cause: error });
  }
  if (!certificate.checkPrivateKey(privateKey)) throw new Error(`${where}: the key does not match the certificate`);
}

/** A key and certificate chain to serve, after a change was seen and checked. */
export interface CertificatePair {
  key: string;
  cert: string;
}

export interface CertificateWatch {
  stop(): Promise<void>;
}

/** Files are also re-read this often, in case a change event is missed (some volume types send none). */
const FILE_POLL_MS = 30_000;
/** Editors and kubelet's atomic swap make several events for one change: they settle first. */
const SETTLE_MS = 100;

/**
 * Follows the serving certificate where it came from — the files (watched, and re-read every 30 s) or the Secret
 * (watched) — and calls `apply` with each new pair that is valid. The listener swaps its secure context
 * (`tls.Server#setSecureContext`): new handshakes get the new certificate; open connections, watches and exec
 * sessions keep theirs. A half-written or mismatched pair is skipped (logged), and the pair served stays. A
 * generated certificate lives as long as the process and is never reloaded.
 */
export function watchServingCertificate(
  options: ServingCertificateOptions & { logger: Logger },
  served: ServingCertificate,
  apply: (pair: CertificatePair) => void,
): CertificateWatch | undefined {
  const log = options.logger.child({ component: 'serving-certificate' });
  let fingerprint = fingerprintOf(served);
  const offer = (pair: CertificatePair, where: string) => {
    const next = fingerprintOf(pair);
    if (next === fingerprint) return;
    try {
      checkPair(pair.cert, pair.key, where);
    } catch (err) {
      log.warn('serving certificate changed but is unusable; the current one stays', { reason: messageOf(err) });
      return;
    }
    fingerprint = next;
    apply(pair);
    const leaf = new X509Certificate(pair.cert);
    log.info('serving certificate reloaded', { from: where, subject: leaf.subject, validTo: leaf.validTo });
  };
  if (served.source === 'files' && options.certFile && options.keyFile) {
    return watchFiles(options.certFile, options.keyFile, offer, log);
  }
  if (served.source === 'secret' && options.secret && options.client) {
    return watchSecret(options.client, options.secret, options.logger, offer);
  }
  return undefined;
}

function watchFiles(
  certFile: string,
  keyFile: string,
  offer: (pair: CertificatePair, where: string) => void,
  log: Logger,
): CertificateWatch {
  const where = `${certFile} and ${keyFile}`;
  let settle: NodeJS.Timeout | undefined;
  const reread = () => {
    Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]).then(
      ([cert, key]) => offer({ cert, key }, where),
      (err: unknown) =>
        log.warn('serving certificate files unreadable; the current one stays', { error: messageOf(err) }),
    );
  };
  const changed = () => {
    clearTimeout(settle);
    settle = setTimeout(reread, SETTLE_MS);
  };
  // Directories, not the files: a mounted Secret is updated by swapping a symlink, which replaces the files.
  const watchers: FSWatcher[] = [...new Set([dirname(certFile), dirname(keyFile)])].flatMap((directory) => {
    try {
      const watcher = watch(directory, changed);
      watcher.on('error', (err) =>
        log.warn('watching certificate files failed; polling only', { error: messageOf(err) }),
      );
      return [watcher];
    } catch (err) {
      log.warn('watching certificate files failed; polling only', { error: messageOf(err) });
      return [];
    }
  });
  const poll = setInterval(reread, FILE_POLL_MS);
  poll.unref();
  return {
    async stop() {
      clearTimeout(settle);
      clearInterval(poll);
      for (const watcher of watchers) watcher.close();
    },
  };
}

function watchSecret(
  client: KubeClient,
  ref: { namespace: string; name: string },
  logger: Logger,
  offer: (pair: CertificatePair, where: string) => void,
): CertificateWatch {
  const where = `Secret ${ref.namespace}/${ref.name}`;
  const secretWatch = new Reflector<CertificatePair | undefined>({
    client,
    logger,
    name: `secret:${ref.namespace}/${ref.name}`,
    listPath: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets`,
    fieldSelector: `metadata.name=${ref.name}`,
    transform: (raw: V1Secret) => {
      const cert = raw?.data?.['tls.crt'];
      const key = raw?.data?.['tls.key'];
      return cert && key
        ? { cert: Buffer.from(cert, 'base64').toString('utf8'), key: Buffer.from(key, 'base64').toString('utf8') }
        : undefined;
    },
  });
  const changed = (pair: CertificatePair | undefined) => {
    if (pair) offer(pair, where);
  };
  secretWatch.on('added', changed);
  secretWatch.on('modified', changed);
  secretWatch.start();
  return { stop: () => secretWatch.stop() };
}

function fingerprintOf(pair: CertificatePair): string {
  return createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
