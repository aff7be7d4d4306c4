import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { send } from './http.js';
import { collectGarbage, inspectorUrl, writeHeapSnapshot, type HeapUsage } from './inspector.js';

/** kapi-apiserver as a child process, so its memory is its own. */
export interface KapiProcess {
  readonly pid: number;
  readonly url: string;
  readonly metricsUrl: string;
  /** Resolves once /readyz answers 200 (caches synced, configuration and signing key loaded); the time it took. */
  ready(timeoutMs: number): Promise<number>;
  memory(): ProcessMemory;
  /** A full GC in kapi (over its loopback inspector), then its process.memoryUsage(). */
  collectGarbage(): Promise<HeapUsage>;
  /** A heap snapshot written to `file` (DevTools format). */
  heapSnapshot(file: string): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited in time. */
  stop(): Promise<void>;
  /** BENCH_BARE_PROXY_IN_KAPI=1: where the bare proxy inside kapi's process says its port (bare-proxy-in-kapi.ts). */
  readonly bareProxyDirectory?: string;
}

export interface ProcessMemory {
  /** Current resident set (VmRSS), MiB. */
  rssMiB: number;
  /** Peak resident set since start (VmHWM), MiB. */
  peakMiB: number;
}

const STOP_GRACE_MS = 15_000;
/** kapi's Node flags as the chart and the image set them. */
export const DEPLOYED_NODE_OPTIONS = '--max-semi-space-size=4 --max-old-space-size=192';
/**
 * The image's allocator, jemalloc, where this machine has Debian's (`make system-deps` installs libjemalloc2); else
 * glibc with the chart's settings, and the bench says so (`allocatorNote`).
 */
const JEMALLOC = readdirSync('/usr/lib', { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name.endsWith('-linux-gnu'))
  .map((entry) => path.join('/usr/lib', entry.name, 'libjemalloc.so.2'))
  .find((path) => existsSync(path));
export const allocatorNote = JEMALLOC
  ? `allocator: jemalloc (${JEMALLOC}), as the image preloads it`
  : 'allocator: glibc (no libjemalloc.so.2 here, as the image has: make system-deps); RSS reads higher than deployed';
/** kapi's runtime as the image and the chart set it (Dockerfile ENV, values.yaml nodeOptions and malloc). */
export const DEPLOYED_RUNTIME_ENV: Readonly<Record<string, string>> = {
  NODE_OPTIONS: DEPLOYED_NODE_OPTIONS,
  ...(JEMALLOC && {
    LD_PRELOAD: JEMALLOC,
    MALLOC_CONF: 'background_thread:true,narenas:2',
  }),
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

/** `NAME=value,NAME2=value` (BENCH_KAPI_ENV, BENCH_BARE_PROXY_ENV): more environment for a trial. */
export function trialEnv(spec: string | undefined): Record<string, string> {
  return Object.fromEntries(
    (spec?.split(',').filter((pair) => pair.includes('=')) ?? []).map((pair) => [
      pair.slice(0, pair.indexOf('=')),
      pair.slice(pair.indexOf('=') + 1),
    ]),
  );
}
/** The last lines of kapi's output are kept to explain a failed start; nothing else of it is printed. */
const KEPT_OUTPUT_LINES = 20;

export async function startKapiProcess(options: {
  kubeconfig: string;
  root: string;
  env?: Record<string, string>;
}): Promise<KapiProcess> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    TLS_PORT: '0',
    METRICS_PORT: String(metricsPort),
    BIND_ADDRESS: '127.0.0.1',
    KAPI_CLUSTER: 'kubeconfig',
    KUBECONFIG: options.kubeconfig,
    // The deployed default: one audit line per request is part of the cost being measured.
    LOG_LEVEL: process.env.BENCH_KAPI_LOG_LEVEL ?? 'info',
    ...DEPLOYED_RUNTIME_ENV,
    ...options.env,
    // BENCH_KAPI_ENV="NAME=value,NAME2=value": more of kapi's environment, for a trial (an allocator setting, a flag)
    ...trialEnv(process.env.BENCH_KAPI_ENV),
  };
  // The inspector (loopback, random port) is only used to force a full GC before memory is read.
  // BENCH_KAPI_NODE_ARGS adds Node flags for a look inside, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const extra = process.env.BENCH_KAPI_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  // BENCH_BARE_PROXY_IN_KAPI=1: the forwarding rows' bare proxy runs inside kapi's process (bare-proxy-in-kapi.ts)
  let bareProxyDirectory: string | undefined;
  if (process.env.BENCH_BARE_PROXY_IN_KAPI === '1') {
    bareProxyDirectory = mkdtempSync(path.join(os.tmpdir(), 'kapi-bench-bare-'));
    env.KAPI_BENCH_BARE_PROXY_DIR = bareProxyDirectory;
    extra.push(`--import=${path.join(options.root, 'dist/bench/bare-proxy-in-kapi.js')}`);
  }
  const child = spawn(
    process.execPath,
    [...extra, '--inspect=127.0.0.1:0', path.join(options.root, 'dist/src/main.js')],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = keepLastLines(child);
  // BENCH_KAPI_LOG=<file>: kapi's whole output (its JSON log lines) appended there, to see what it did under load.
  if (process.env.BENCH_KAPI_LOG) {
    const log = createWriteStream(process.env.BENCH_KAPI_LOG, { flags: 'a' });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
  }
  let inspector: string | undefined;
  child.stderr?.on('data', (chunk: Buffer) => (inspector ??= inspectorUrl(chunk.toString('utf8'))));
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = signal ? `signal ${signal}` : `code ${code}`;
      resolve();
    }),
  );
  if (child.pid === undefined) throw new Error('kapi-apiserver could not be spawned');
  const pid = child.pid;
  const url = `http://127.0.0.1:${port}`;

  return {
    pid,
    url,
    bareProxyDirectory,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    async ready(timeoutMs) {
      const started = Date.now();
      for (;;) {
        if (exit) throw new Error(`kapi-apiserver exited (${exit}) before it was ready:\n${output()}`);
        const answer = await send(`${url}/readyz?verbose`, { timeoutMs: 2_000 }).catch(() => undefined);
        if (answer?.status === 200) return Date.now() - started;
        if (Date.now() - started > timeoutMs) {
          const why = answer ? answer.body.toString('utf8').trim() : 'no answer';
          throw new Error(`kapi-apiserver not ready after ${timeoutMs} ms:\n${why}\n${output()}`);
        }
        await sleep(100);
      }
    },
    memory: () => readMemory(pid),
    collectGarbage: () =>
      inspector ? collectGarbage(inspector) : Promise.reject(new Error('kapi printed no inspector address')),
    heapSnapshot: (file) =>
      inspector ? writeHeapSnapshot(inspector, file) : Promise.reject(new Error('kapi printed no inspector address')),
    async stop() {
      if (!exit) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      if (bareProxyDirectory) rmSync(bareProxyDirectory, { recursive: true, force: true });
    },
  };
}

/**
 * Starts VmHWM over from the current RSS (Linux: `5` written to /proc/<pid>/clear_refs), so a row's peak is its own
 * rather than the highest of every row before it. False where the kernel does not allow it.
 */
export function resetPeakMemory(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** VmRSS and VmHWM from /proc/<pid>/status (Linux), in MiB. */
export function readMemory(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]);
  };
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function keepLastLines(child: ChildProcess): () => string {
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((line) => line && !isInspectorNotice(line)),
    );
    lines.splice(0, Math.max(0, lines.length - KEPT_OUTPUT_LINES));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // BENCH_KAPI_OUTPUT=<file>: all of kapi's output kept in <file>.<pid> too (with BENCH_KAPI_NODE_ARGS=--trace-gc, say)
  if (process.env.BENCH_KAPI_OUTPUT) {
    const all = createWriteStream(`${process.env.BENCH_KAPI_OUTPUT}.${child.pid}`);
    child.stdout?.pipe(all);
    child.stderr?.pipe(all);
  }
  return () => lines.map((line) => `  kapi| ${line}`).join('\n');
}

/** Node's own lines about the inspector: not kapi's output. */
function isInspectorNotice(line: string): boolean {
  return /^(Debugger listening on|For help, see: https:\/\/nodejs\.org|Debugger attached|Debugger ending)/.test(line);
}
