import { spawn } from 'node:child_process';
import path from 'node:path';

/** The environment variable a bench child reads its options from (JSON). */
export const CHILD_OPTIONS_VARIABLE = 'KAPI_BENCH_CHILD_OPTIONS';

/** A child's options, as `startReadyChild` passed them. */
export function childOptions<T>(): T {
  return JSON.parse(process.env[CHILD_OPTIONS_VARIABLE] ?? '{}') as T;
}

/** A bench process of its own (`node <main>.js <options as JSON>`), once it has said it is ready. */
export interface ReadyChild<Ready> {
  readonly pid: number;
  /** The JSON line the child printed first on stdout. */
  readonly ready: Ready;
  /** SIGTERM, then SIGKILL after the grace time; once, however often it is called. */
  stop(): Promise<void>;
}

/**
 * Starts `bench/<main>.js` with its options in its environment (`childOptions()`) and waits for its first stdout line (JSON): ready. A child
 * that exits first, or says nothing within `timeoutMs`, fails the start with the end of its stderr.
 */
export async function startReadyChild<Ready>(options: {
  /** What the child is, for errors: "the sandbox process". */
  what: string;
  main: string;
  args: unknown;
  env: NodeJS.ProcessEnv;
  /** Node and V8 flags on the command line (NODE_OPTIONS refuses most V8 flags, `--log-ic` among them). */
  nodeArgs?: readonly string[];
  /** An IPC channel too (the sandbox answers the bench's questions over it). */
  ipc?: boolean;
  timeoutMs: number;
  stopGraceMs: number;
}): Promise<ReadyChild<Ready>> {
  const main = path.join(path.dirname(new URL(import.meta.url).pathname), `${options.main}.js`);
  // The options travel in the environment, not on the command line, where anyone on the machine can read them with
  // `ps` (the bare proxy's carry kapi's service-account token for the kit).
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), main], {
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    env: { ...options.env, [CHILD_OPTIONS_VARIABLE]: JSON.stringify(options.args) },
  });
  if (child.pid === undefined) throw new Error(`${options.what} could not be spawned`);
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2_000)));

  const ready = await new Promise<Ready>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => fail(new Error(`${options.what} did not start within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      resolve(JSON.parse(buffered.slice(0, newline)) as Ready);
    });
    child.once('exit', (code, signal) =>
      fail(new Error(`${options.what} exited (${signal ?? `code ${code}`}) before it was ready:\n${errors}`)),
    );
  });

  let stopping: Promise<void> | undefined;
  return {
    pid,
    ready,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), options.stopGraceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
