import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { generate } from 'selfsigned';
import type { KubeClient } from '../kube/client.js';

/** The HTTPS listener's key and certificate chain (PEM), and where they came from. */
export interface ServingCertificate {
  key: string;
  cert: string;
  /** The CA certificate of a generated certificate (clients trust this one). */
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
  /** Now, for the generated certificates' validity (tests). */
  now?: Date;
}

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
    const { key, cert } = await readTlsSecret(options.client, options.secret);
    return { key, cert, source: 'secret' };
  }
  return generateServingCertificate(options);
}

async function readTlsSecret(
  client: KubeClient,
  ref: { namespace: string; name: string },
): Promise<{ key: string; cert: string }> {
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
  return pair;
}

async function generateServingCertificate(options: ServingCertificateOptions): Promise<ServingCertificate> {
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

/** Written beside and renamed, so a reader never sees half a file. */
async function writeCaFile(path: string, pem: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, pem, { mode: 0o644 });
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
