import type { BareProxyOptions } from './bare-proxy-main.js';
import { startReadyChild } from './child-process.js';
import { DEPLOYED_NODE_OPTIONS } from './kapi-process.js';

/** bare-proxy-main.ts as a child process, run with kapi's Node flags so that its CPU compares with kapi's. */
export interface BareProxy {
  readonly pid: number;
  readonly url: string;
  stop(): Promise<void>;
}

export async function startBareProxy(options: BareProxyOptions): Promise<BareProxy> {
  const child = await startReadyChild<{ port: number }>({
    what: 'the bare proxy',
    main: 'bare-proxy-main',
    args: options,
    // BENCH_BARE_PROXY_NODE_ARGS, as BENCH_KAPI_NODE_ARGS: Node flags for a look inside (`--cpu-prof --cpu-prof-dir=…`)
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_OPTIONS: [DEPLOYED_NODE_OPTIONS, process.env.BENCH_BARE_PROXY_NODE_ARGS ?? ''].join(' ').trim(),
    },
    timeoutMs: 10_000,
    stopGraceMs: 5_000,
  });
  return { pid: child.pid, url: `http://127.0.0.1:${child.ready.port}`, stop: () => child.stop() };
}
