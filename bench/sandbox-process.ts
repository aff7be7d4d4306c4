import type { SandboxProcessOptions, SandboxProcessReady } from './sandbox-main.js';
import { startReadyChild } from './child-process.js';

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
  const child = await startReadyChild<SandboxProcessReady>({
    what: 'the sandbox process',
    main: 'sandbox-main',
    args: given,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    ipc: true,
    timeoutMs,
    stopGraceMs: STOP_GRACE_MS,
  });
  return { ...child.ready, pid: child.pid, stop: () => child.stop() };
}
