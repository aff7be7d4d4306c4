import { spawn } from 'node:child_process';
import path from 'node:path';
import type { BareProxyOptions } from './bare-proxy-main.js';
import { DEPLOYED_NODE_OPTIONS } from './kapi-process.js';

/** bare-proxy-main.ts as a child process, run with kapi's Node flags so that its CPU compares with kapi's. */
export interface BareProxy {
  readonly pid: number;
  readonly url: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

export async function startBareProxy(options: BareProxyOptions): Promise<BareProxy> {
  const main = path.join(path.dirname(new URL(import.meta.url).pathname), 'bare-proxy-main.js');
  const child = spawn(process.execPath, [main, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_OPTIONS: DEPLOYED_NODE_OPTIONS },
  });
  if (child.pid === undefined) throw new Error('the bare proxy could not be spawned');
  const pid = child.pid;
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => fail(new Error(`the bare proxy did not listen within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
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
      resolve((JSON.parse(buffered.slice(0, newline)) as { port: number }).port);
    });
    child.once('exit', (code, signal) =>
      fail(new Error(`the bare proxy exited (${signal ?? `code ${code}`}):\n${errors}`)),
    );
  });
  return {
    pid,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
