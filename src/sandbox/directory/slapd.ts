import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/**
 * A real OpenLDAP server (Debian's `slapd`) on loopback, for the directory tests, the bench and `make run` with a demo
 * directory: a generated slapd.conf (mdb database, the memberOf overlay, TLS with a generated CA), listening on
 * ldap:// (StartTLS offered) and ldaps:// ports of its own.
 *
 * Ports: slapd cannot be handed a socket and takes ":0" for its default port (389), so each start tries random ports
 * and slapd binds them itself; the start counts only once /proc shows the listening sockets owned by this slapd
 * process (a port someone else holds makes slapd exit, and another pair is tried). No port is freed and then reused.
 */
export interface SlapdOptions {
  /** A directory of its own (configuration, database, certificates); removed by `stop({ remove: true })`. */
  dir: string;
  /** e.g. dc=kapi,dc=test */
  suffix: string;
  rootPassword: string;
  /** The slapd binary; `KAPI_SLAPD` or /usr/sbin/slapd by default. */
  binary?: string;
}

export interface Slapd {
  readonly ldapUrl: string;
  readonly ldapsUrl: string;
  readonly port: number;
  readonly tlsPort: number;
  /** The CA that signed the server's certificate (for 127.0.0.1 and localhost). */
  readonly caPem: string;
  readonly rootDN: string;
  readonly rootPassword: string;
  readonly pid: number;
  /** SIGSTOP: the ports stay held and connections hang (a directory that stopped answering). */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** SIGTERM, and waits for the process to end (connections are then refused). */
  stop(options?: { remove?: boolean }): Promise<void>;
}

const PORT_RANGE: [number, number] = [20_000, 32_000];
const START_ATTEMPTS = 12;

export function slapdBinary(): string {
  const path = process.env.KAPI_SLAPD ?? '/usr/sbin/slapd';
  if (!existsSync(path)) {
    throw new Error(
      `${path} is missing: run \`make system-deps\` (apt-get install slapd ldap-utils) or set KAPI_SLAPD`,
    );
  }
  return path;
}

export async function startSlapd(options: SlapdOptions): Promise<Slapd> {
  const binary = options.binary ?? slapdBinary();
  const { dir } = options;
  await mkdir(join(dir, 'db'), { recursive: true });
  const tls = await certificates();
  await writeFile(join(dir, 'ca.crt'), tls.caPem);
  await writeFile(join(dir, 'server.crt'), tls.certPem);
  await writeFile(join(dir, 'server.key'), tls.keyPem, { mode: 0o600 });
  const rootDN = `cn=admin,${options.suffix}`;
  await writeFile(join(dir, 'slapd.conf'), slapdConf(dir, options.suffix, rootDN, options.rootPassword));

  let lastError = '';
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const port = randomInt(PORT_RANGE[0], PORT_RANGE[1]);
    const tlsPort = randomInt(PORT_RANGE[0], PORT_RANGE[1]);
    if (port === tlsPort) continue;
    const started = await launch(binary, dir, port, tlsPort);
    if ('error' in started) {
      lastError = started.error;
      continue;
    }
    const child = started.child;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      ldapUrl: `ldap://127.0.0.1:${port}`,
      ldapsUrl: `ldaps://127.0.0.1:${tlsPort}`,
      port,
      tlsPort,
      caPem: tls.caPem,
      rootDN,
      rootPassword: options.rootPassword,
      pid: child.pid!,
      pause: () => child.kill('SIGSTOP'),
      resume: () => child.kill('SIGCONT'),
      async stop(stopOptions = {}) {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGCONT');
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(killer);
        }
        if (stopOptions.remove) await rm(dir, { recursive: true, force: true });
      },
    };
  }
  throw new Error(`slapd did not start in ${START_ATTEMPTS} attempts: ${lastError}`);
}

/** Starts slapd on two ports; resolves once /proc shows both listening sockets owned by it, or with why not. */
async function launch(
  binary: string,
  dir: string,
  port: number,
  tlsPort: number,
): Promise<{ child: ChildProcess } | { error: string }> {
  const urls = `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${tlsPort}/`;
  // -d 0: stay in the foreground (the test owns the process), log nothing but what slapd must say on stderr
  const child = spawn(binary, ['-f', join(dir, 'slapd.conf'), '-h', urls, '-d', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (stderr.length < 8192) stderr += chunk.toString('utf8');
  });
  const exit = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(`slapd exited (${signal ?? code}): ${stderr.trim().slice(-500)}`));
    child.once('error', (error) => resolve(`slapd could not run: ${error.message}`));
  });
  let exitReason: string | undefined;
  void exit.then((reason) => (exitReason = reason));
  for (;;) {
    if (exitReason !== undefined) return { error: exitReason };
    if (child.pid !== undefined && (await listensOn(child.pid, [port, tlsPort]))) return { child };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether every port in `ports` is a listening TCP socket of process `pid` (read from /proc, no connection made). */
async function listensOn(pid: number, ports: number[]): Promise<boolean> {
  let inodes: Set<string>;
  try {
    const fds = await readdir(`/proc/${pid}/fd`);
    const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
    inodes = new Set(links.flatMap((link) => /^socket:\[(\d+)\]$/.exec(link)?.[1] ?? []));
  } catch {
    return false;
  }
  const table =
    (await readFile('/proc/net/tcp', 'utf8').catch(() => '')) +
    (await readFile('/proc/net/tcp6', 'utf8').catch(() => ''));
  const listening = new Set<number>();
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // local_address, st (0A = LISTEN), inode
    if (fields[3] === '0A' && inodes.has(fields[9]!)) listening.add(parseInt(fields[1]!.split(':')[1]!, 16));
  }
  return ports.every((p) => listening.has(p));
}

function slapdConf(dir: string, suffix: string, rootDN: string, rootPassword: string): string {
  const schema = '/etc/ldap/schema';
  return `# generated for one test directory: do not edit
include ${schema}/core.schema
include ${schema}/cosine.schema
include ${schema}/inetorgperson.schema
include ${schema}/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
pidfile ${join(dir, 'slapd.pid')}
argsfile ${join(dir, 'slapd.args')}
TLSCACertificateFile ${join(dir, 'ca.crt')}
TLSCertificateFile ${join(dir, 'server.crt')}
TLSCertificateKeyFile ${join(dir, 'server.key')}
sizelimit 5000

database mdb
maxsize 67108864
suffix "${suffix}"
rootdn "${rootDN}"
rootpw ${rootPassword}
directory ${join(dir, 'db')}
index objectClass,uid,mail,member eq

# passwords: only for binding; the service account reads everything else, users their own entry
access to attrs=userPassword
  by anonymous auth
  by * none
access to *
  by dn.exact="cn=kapi-reader,${suffix}" read
  by self read
  by * none

overlay memberof
`;
}

/** A CA and a server certificate for 127.0.0.1 and localhost it signed (EC P-256), valid for a week. */
async function certificates(): Promise<{ caPem: string; certPem: string; keyPem: string }> {
  const notAfterDate = new Date(Date.now() + 7 * 86_400_000);
  const ca = await generate(
    [{ name: 'commonName', value: `kapi test directory CA ${randomBytes(4).toString('hex')}` }],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    },
  );
  const server = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { caPem: ca.cert, certPem: server.cert, keyPem: server.private };
}
