import { spawn } from 'node:child_process';
import path from 'node:path';
import type { SandboxProcessOptions, SandboxProcessReady } from './sandbox-main.js';

/** The sandbox running as a child process (bench/sandbox-main.ts). */
export interface SandboxProcess extends SandboxProcessReady {
  readonly pid: number;
  stop(): Promise<void>;
}

const STOP_GRACE_MS = 10_000;

export async function startSandboxProcess(
  options: SandboxProcessOptions & { timeoutMs: number },
): Promise<SandboxProcess> {
  const { timeoutMs, ...given } = options;
  const main = path.join(path.dirname(new URL(import.meta.url).pathname), 'sandbox-main.js');
  const child = spawn(process.execPath, [main, JSON.stringify(given)], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  if (child.pid === undefined) throw new Error('the sandbox process could not be spawned');
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2_000)));

  const ready = await new Promise<SandboxProcessReady>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => fail(new Error(`the sandbox process did not start within ${timeoutMs} ms`)),
      timeoutMs,
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
      resolve(JSON.parse(buffered.slice(0, newline)) as SandboxProcessReady);
    });
    child.once('exit', (code, signal) =>
      fail(new Error(`the sandbox process exited (${signal ?? `code ${code}`}) before it was ready:\n${errors}`)),
    );
  });

  let stopping: Promise<void> | undefined;
  return {
    ...ready,
    pid,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
