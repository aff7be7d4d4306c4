import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { kubeconfigFileAccess, kubeconfigFiles } from '../src/kube/cluster-source.js';
import { connectionFor } from '../src/kube/connection.js';
import { startClusterEnvironment } from './cluster-environment.js';
import type { Environment } from './environment.js';
import { describeAnswer, send } from './http.js';
import { startKit, type Kit } from './kit.js';
import { seedKit, type SeedSize } from './kit-seed.js';
import { detail } from './report.js';
import { setBackendTrust } from './tls.js';

/**
 * The bench's real kube-apiserver (BENCH_REAL): the 1.32 kit of ../shared/kube in `.cache/kube-bench-1.32-<size>`
 * (one directory per cluster size, so a seeded etcd is reused by the next run of that size), started on
 * BENCH_KIT_PORT / BENCH_KIT_ETCD_PORT (the kit's defaults, 18443 / 13379), kapi's CRDs installed, the seed written
 * through kube-apiserver once (kit-seed.ts), and stopped when the bench is done with it (also on Ctrl-C).
 * kube-apiserver's and etcd's CPU are accounted in every row.
 */
export interface KitEnvironment extends Environment {
  kit: Kit;
  /** The kapi kube-apiserver trusts as an OpenID issuer (token pass-through): its URL and its keys' directory. */
  issuer: KitIssuer;
  /** How the seed went: reused (found complete) or written now, and how long that took. */
  seed: { reused: boolean; ms: number };
}

const ESTABLISHED_TIMEOUT_MS = 60_000;

/**
 * A kapi at `url` (loopback, a fixed port) that kube-apiserver trusts as an OpenID issuer, so that the forwarding row
 * can measure token pass-through (SPEC §5): `dir` holds its serving certificate (`tls.crt`, `tls.key`), their CA
 * (`ca.crt`, named in kube-apiserver's `--oidc-ca-file`) and its RSA signing key (`signing.pem`).
 */
export interface KitIssuer {
  url: string;
  dir: string;
}

const execFileAsync = promisify(execFile);

/** The issuer's keys, made with openssl, fresh for each start (kube-apiserver reads the CA when it starts). */
async function makeIssuer(dir: string, port: number): Promise<{ issuer: KitIssuer; flags: string }> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const openssl = (...args: string[]) => execFileAsync('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=kapi-bench-issuer-ca',
    '-days',
    '2',
  );
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'tls.key',
    '-out',
    'tls.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(
    path.join(dir, 'tls.ext'),
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    'tls.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'tls.crt',
    '-days',
    '2',
    '-extfile',
    'tls.ext',
  );
  await openssl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'signing.pem');
  const url = `https://127.0.0.1:${port}`;
  const flags = [
    `--oidc-issuer-url=${url}`,
    '--oidc-client-id=kapi',
    '--oidc-username-claim=username',
    '--oidc-username-prefix=-',
    '--oidc-groups-claim=groups',
    `--oidc-ca-file=${path.join(dir, 'ca.crt')}`,
  ].join(' ');
  return { issuer: { url, dir }, flags };
}

export function kitDirectory(root: string, version: string, size: SeedSize): string {
  const scale = size.scale
    ? `-${size.scale.deployments}d${size.scale.services}s${size.scale.configMaps}c${size.scale.namespaces}n`
    : '';
  return path.join(root, '.cache', `kube-bench-${version}-${size.nodes}x${size.podsPerNode}${scale}`);
}

export async function startKitEnvironment(options: {
  root: string;
  home: string;
  size: SeedSize;
  port: number;
  etcdPort: number;
  /** The HTTPS port of the kapi kube-apiserver trusts as an OpenID issuer. */
  issuerPort: number;
}): Promise<KitEnvironment> {
  const version = '1.32';
  const dir = kitDirectory(options.root, version, options.size);
  detail(`kube-apiserver ${version} kit in ${path.relative(options.root, dir)} (https://127.0.0.1:${options.port})`);
  const { issuer, flags } = await makeIssuer(path.join(dir, 'kapi-issuer'), options.issuerPort);
  const kit = await startKit({
    version,
    home: options.home,
    dir,
    port: options.port,
    etcdPort: options.etcdPort,
    extraArgs: flags,
  });
  // Ctrl-C or a kill while the kit runs: stop it before leaving (it runs in its own session, out of reach otherwise).
  const onSignal = (signal: NodeJS.Signals) => {
    void kit.stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const release = async () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await kit.stop();
  };
  try {
    const access = await kubeconfigFileAccess(kubeconfigFiles(kit.kubeconfig, process.env));
    const connection = connectionFor(access, 'kubeconfig');
    const headers = await connection.authHeaders();
    connection.close();
    setBackendTrust({ ca: access.ca?.toString('utf8'), rejectUnauthorized: true });
    await installCrds(kit.url, headers, path.join(options.root, 'crds'));
    const seed = await seedKit(kit.url, headers, options.size);
    detail(
      seed.reused
        ? `seed found complete (marker default/kapi-bench-seed): reused as it is`
        : `seeded in ${(seed.ms / 1000).toFixed(0)} s (kept for the next run of this size)`,
    );
    const env = await startClusterEnvironment(kit.kubeconfig, { backendPids: kit.pids(), writable: true });
    return {
      ...env,
      kit,
      issuer,
      seed,
      async stop() {
        await env.stop();
        await release();
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/** kapi's CRDs from crds/, created where missing, then waited for until Established. */
async function installCrds(url: string, headers: Record<string, string>, dir: string): Promise<void> {
  const crds = readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(readFileSync(path.join(dir, file), 'utf8')).map((doc) => doc.toJSON()))
    .filter((doc: { kind?: string } | null) => doc?.kind === 'CustomResourceDefinition') as {
    metadata: { name: string };
  }[];
  const base = `${url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`;
  for (const crd of crds) {
    const created = await send(base, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify(crd),
    });
    if (created.status !== 201 && created.status !== 409) {
      throw new Error(`CRD ${crd.metadata.name}: ${describeAnswer(created)}`);
    }
  }
  const started = Date.now();
  for (const crd of crds) {
    for (;;) {
      const answer = await send(`${base}/${crd.metadata.name}`, { headers });
      const conditions =
        (JSON.parse(answer.body.toString('utf8')) as { status?: { conditions?: { type: string; status: string }[] } })
          .status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() - started > ESTABLISHED_TIMEOUT_MS) throw new Error(`CRD ${crd.metadata.name} not Established`);
      await sleep(200);
    }
  }
}
