import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BareProxyOptions } from './bare-proxy-server.js';
import { startReadyChild } from './child-process.js';
import { DEPLOYED_RUNTIME_ENV, trialEnv } from './kapi-process.js';

/** The bare proxy (bare-proxy-server.ts), run as kapi runs (Node flags, allocator) so that its CPU compares with kapi's. */
export interface BareProxy {
  readonly pid: number;
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * As a child process of its own (bare-proxy-main.ts); or, given `insideKapi`, the one inside kapi's process
 * (bare-proxy-in-kapi.ts), handed its options there.
 */
export async function startBareProxy(
  options: BareProxyOptions,
  insideKapi?: { directory: string; pid: number },
): Promise<BareProxy> {
  if (insideKapi) return bareProxyInsideKapi(options, insideKapi.directory, insideKapi.pid);
  const child = await startReadyChild<{ port: number }>({
    what: 'the bare proxy',
    main: 'bare-proxy-main',
    args: options,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...DEPLOYED_RUNTIME_ENV,
      ...trialEnv(process.env.BENCH_BARE_PROXY_ENV),
    },
    // BENCH_BARE_PROXY_NODE_ARGS, as BENCH_KAPI_NODE_ARGS: Node flags for a look inside (`--cpu-prof --cpu-prof-dir=…`)
    nodeArgs: process.env.BENCH_BARE_PROXY_NODE_ARGS?.split(' ').filter(Boolean),
    timeoutMs: 10_000,
    stopGraceMs: 5_000,
  });
  return { pid: child.pid, url: `http://127.0.0.1:${child.ready.port}`, stop: () => child.stop() };
}

async function bareProxyInsideKapi(options: BareProxyOptions, directory: string, pid: number): Promise<BareProxy> {
  // kapi's token for the cluster is among the options: readable by this user only
  writeFileSync(path.join(directory, 'options.json'), JSON.stringify(options), { mode: 0o600 });
  const portFile = path.join(directory, 'port');
  for (let waited = 0; !existsSync(portFile); waited += 100) {
    if (waited >= 10_000) throw new Error('the bare proxy inside kapi did not say its port within 10 s');
    await sleep(100);
  }
  const port = Number(readFileSync(portFile, 'utf8'));
  if (!(port > 0)) throw new Error('the bare proxy inside kapi said no port');
  return { pid, url: `http://127.0.0.1:${port}`, stop: async () => {} };
}
