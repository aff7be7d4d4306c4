import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemBinary } from '../support/system-binaries.js';

/**
 * Debian's Prometheus and node exporter on loopback for a suite: started with a configuration the suite writes,
 * logging every query it runs (`query_log_file`), and stopped at the end, never left running. A port freed for one may
 * be taken by another process first; the process then exits saying so, and another port is tried.
 */
export interface LivePrometheus {
  readonly url: string;
  readonly dir: string;
  /** The queries asked over its HTTP API since it started, in order (rule evaluations left out). */
  apiQueries(): LoggedQuery[];
  stop(): Promise<void>;
}

export interface LoggedQuery {
  query: string;
  path: string;
  params: Record<string, unknown>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

interface Process {
  child: ChildProcess;
  log: () => string;
  stop: () => Promise<void>;
}

/** Starts `binary` on a free port (`args(port)`) until `ready(port)` answers; retries on a port taken meanwhile. */
async function startOnFreePort(
  what: string,
  binary: string,
  args: (port: number) => string[],
  ready: (port: number) => Promise<boolean>,
): Promise<Process & { port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let output = '';
    const child = spawn(binary, args(port), { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-20_000)));
    child.stderr!.on('data', (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-20_000)));
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    };
    const state = await until(`${what} ready`, async () => {
      if (child.exitCode !== null) return 'exited';
      return (await ready(port).catch(() => false)) ? 'ready' : undefined;
    });
    if (state === 'ready') return { child, port, log: () => output, stop };
    if (attempt >= 3 || !/address already in use/.test(output))
      throw new Error(`${what} exited (${child.exitCode}):\n${output.slice(-2000)}`);
  }
}

/** Debian's node exporter: the real series of this machine, as one node's. */
export async function startNodeExporter(): Promise<{ address: string; stop(): Promise<void> }> {
  const started = await startOnFreePort(
    'prometheus-node-exporter',
    systemBinary('prometheus-node-exporter'),
    (port) => [`--web.listen-address=127.0.0.1:${port}`],
    async (port) => (await fetch(`http://127.0.0.1:${port}/metrics`)).ok,
  );
  return { address: `127.0.0.1:${started.port}`, stop: started.stop };
}

/**
 * Debian's Prometheus with `config` (YAML text; `rule_files` and other paths relative to its directory, where
 * `files` are written first).
 */
export async function startPrometheus(config: string, files: Record<string, string> = {}): Promise<LivePrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-live-prometheus-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const queryLog = join(dir, 'query.log');
  writeFileSync(join(dir, 'prometheus.yml'), config.replace('{{QUERY_LOG}}', queryLog));
  let started: Process & { port: number };
  try {
    started = await startOnFreePort(
      'prometheus',
      systemBinary('prometheus'),
      (port) => [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.console.templates=',
        '--web.console.libraries=',
      ],
      async (port) => (await fetch(`http://127.0.0.1:${port}/-/ready`)).ok,
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `http://127.0.0.1:${started.port}`,
    dir,
    apiQueries() {
      if (!existsSync(queryLog)) return [];
      return readFileSync(queryLog, 'utf8')
        .split('\n')
        .filter((text) => text.trim() !== '')
        .map((text) => JSON.parse(text) as { params?: Record<string, unknown>; httpRequest?: { path?: string } })
        .filter((entry) => entry.httpRequest !== undefined)
        .map((entry) => ({
          query: String(entry.params?.query ?? ''),
          path: String(entry.httpRequest?.path ?? ''),
          params: entry.params ?? {},
        }));
    },
    async stop() {
      await started.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
