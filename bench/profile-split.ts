import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Where one process's CPU per request goes, window by window: `perf script` of a `perf record -k CLOCK_MONOTONIC -p
 * <pid>` taken over a bench run, cut by the load windows that run wrote (BENCH_LOAD_WINDOWS=<file>, bench/load.ts),
 * and summed per symbol and per request for each target and concurrency (windows without a warm-up of their own, the
 * forwarding row's warm-up runs, are left out). Two targets served by the same process
 * (kapi, and the bare proxy inside it: BENCH_BARE_PROXY_IN_KAPI=1) are then compared symbol by symbol.
 *
 *   node dist/bench/profile-split.js <perf.data> <windows file> <host:port[/path]> <other host:port[/path]> [rows]
 *
 * The recording must be of `cpu-clock` (`perf record -e cpu-clock`: its periods are nanoseconds) and without `-g`.
 */
interface LoadWindow {
  target: string;
  concurrency: number;
  from: number;
  to: number;
  warmupMs?: number;
  operations: number;
}

const [perfData, windowsFile, first, second, rowsArg] = process.argv.slice(2);
if (!perfData || !windowsFile || !first || !second) {
  process.stderr.write('usage: profile-split <perf.data> <windows file> <host:port> <other host:port> [rows]\n');
  process.exit(2);
}
const rows = Number(rowsArg ?? 30);
const windows = readFileSync(windowsFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as LoadWindow)
  .filter((window) => window.warmupMs !== 0);

/** Samples as [time ns, period ns, symbol], in time order. */
const samples: [number, number, string][] = [];
const script = execFileSync('perf', ['script', '-i', perfData, '-F', 'time,period,ip,sym', '--ns'], {
  maxBuffer: 1 << 30,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
for (const line of script.split('\n')) {
  const match = /^\s*(\d+)\.(\d{9}):\s+(\d+)\s+\S+\s+(.*)$/.exec(line);
  if (match) samples.push([Number(match[1]) * 1e9 + Number(match[2]), Number(match[3]), match[4]!.trim()]);
}
samples.sort((a, b) => a[0] - b[0]);

function firstAtOrAfter(time: number): number {
  let low = 0;
  let high = samples.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (samples[mid]![0] < time) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** µs per request by symbol, and in all, over every window of `target` (host:port, or with its path) at `concurrency`. */
function perRequest(target: string, concurrency: number) {
  const bySymbol = new Map<string, number>();
  let operations = 0;
  let total = 0;
  for (const window of windows) {
    if (!`${window.target}/`.startsWith(`${target}/`) || window.concurrency !== concurrency) continue;
    operations += window.operations;
    for (let i = firstAtOrAfter(window.from); i < samples.length && samples[i]![0] <= window.to; i++) {
      const [, period, symbol] = samples[i]!;
      bySymbol.set(symbol, (bySymbol.get(symbol) ?? 0) + period);
      total += period;
    }
  }
  const us = (ns: number) => ns / Math.max(1, operations) / 1000;
  return { operations, total: us(total), bySymbol: new Map([...bySymbol].map(([symbol, ns]) => [symbol, us(ns)])) };
}

for (const concurrency of [...new Set(windows.map((window) => window.concurrency))].sort((a, b) => a - b)) {
  const a = perRequest(first, concurrency);
  const b = perRequest(second, concurrency);
  if (!a.operations || !b.operations) continue;
  process.stdout.write(
    `c${concurrency}: ${first} ${a.total.toFixed(1)} µs/req (${a.operations} requests), ${second} ${b.total.toFixed(1)} µs/req (${b.operations}); difference by symbol, µs/req:\n`,
  );
  const symbols = new Set([...a.bySymbol.keys(), ...b.bySymbol.keys()]);
  const differences = [...symbols]
    .map((symbol) => ({ symbol, a: a.bySymbol.get(symbol) ?? 0, b: b.bySymbol.get(symbol) ?? 0 }))
    .sort((x, y) => y.a - y.b - (x.a - x.b));
  for (const { symbol, a: x, b: y } of differences.slice(0, rows)) {
    process.stdout.write(
      `  ${(x - y >= 0 ? '+' : '') + (x - y).toFixed(2)}  ${x.toFixed(2)}  ${y.toFixed(2)}  ${symbol.slice(0, 110)}\n`,
    );
  }
}
