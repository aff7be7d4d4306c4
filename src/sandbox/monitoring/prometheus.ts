import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Debian's Prometheus (and node exporter) as a process of the sandbox's or a test's, on loopback: started with a
 * configuration the caller writes (with a query log), and stopped again, never left running. A port freed for it may
 * be taken by another process first; it then exits saying so, and another port is tried.
 */
export function prometheusBinary(name: 'prometheus' | 'prometheus-node-exporter' = 'prometheus'): string {
  const variable = `KAPI_${name.toUpperCase().replaceAll('-', '_')}`;
  const path = process.env[variable] ?? `/usr/bin/${name}`;
  if (!existsSync(path))
    throw new Error(
      `${path} is missing: run \`make system-deps\` (apt-get install prometheus prometheus-node-exporter) or set ${variable}`,
    );
  return path;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RunningProcess {
  readonly port: number;
  readonly child: ChildProcess;
  /** The last of its output. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `binary` with `args(port)` on a free port until `ready(port)`; another port when that one was taken. */
export async function startOnFreePort(
  what: string,
  binary: string,
  args: (port: number) => string[],
  ready: (port: number) => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<RunningProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let output = '';
    const child = spawn(binary, args(port), { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-20_000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    // a parent that exits without stopping it must not leave it running
    const killOnExit = () => child.kill('SIGTERM');
    process.once('exit', killOnExit);
    const stop = async () => {
      process.off('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    };
    const deadline = Date.now() + timeoutMs;
    let state: 'ready' | 'exited' | undefined;
    while (!state) {
      if (child.exitCode !== null) state = 'exited';
      else if (await ready(port).catch(() => false)) state = 'ready';
      else if (Date.now() > deadline) {
        await stop();
        throw new Error(`${what} did not get ready within ${timeoutMs / 1000} s:\n${output.slice(-2000)}`);
      } else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (state === 'ready') return { port, child, output: () => output, stop };
    process.off('exit', killOnExit);
    if (attempt >= 3 || !/address already in use/.test(output))
      throw new Error(`${what} exited (${child.exitCode}):\n${output.slice(-2000)}`);
  }
}

export interface PrometheusProcess {
  readonly url: string;
  /** Its directory: configuration, files, data and `query.log`. */
  readonly dir: string;
  readonly queryLog: string;
  stop(): Promise<void>;
}

/**
 * Prometheus with `config` (YAML; `{{QUERY_LOG}}` stands for its query log's path; relative paths are in its
 * directory, where `files` are written first); its directory is removed when it stops.
 */
export async function startPrometheus(config: string, files: Record<string, string> = {}): Promise<PrometheusProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-prometheus-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const queryLog = join(dir, 'query.log');
  writeFileSync(join(dir, 'prometheus.yml'), config.replace('{{QUERY_LOG}}', queryLog));
  let started: RunningProcess;
  try {
    started = await startOnFreePort(
      'prometheus',
      prometheusBinary(),
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
    queryLog,
    async stop() {
      await started.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's node exporter: this machine's series. */
export async function startNodeExporter(): Promise<{ address: string; stop(): Promise<void> }> {
  const started = await startOnFreePort(
    'prometheus-node-exporter',
    prometheusBinary('prometheus-node-exporter'),
    (port) => [`--web.listen-address=127.0.0.1:${port}`],
    async (port) => (await fetch(`http://127.0.0.1:${port}/metrics`)).ok,
  );
  return { address: `127.0.0.1:${started.port}`, stop: started.stop };
}
