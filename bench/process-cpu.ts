import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU time of whole processes from the kernel's accounting (/proc/<pid>/stat utime + stime, every thread), the
 * figure that stays meaningful on a shared, noisy machine where wall-clock throughput does not.
 */

/** Clock ticks per second for /proc's utime/stime (USER_HZ; 100 on every common Linux build). */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Processes whose CPU is accounted, by role (kapi, backend, …). */
export type CpuPids = Record<string, number>;
/** CPU milliseconds by role. */
export type CpuMs = Record<string, number>;

/** utime + stime of a process in milliseconds; NaN when it cannot be read (gone, not Linux). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // fields 14 and 15 of proc(5)
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

export function cpuSnapshot(pids: CpuPids): CpuMs {
  return Object.fromEntries(Object.entries(pids).map(([role, pid]) => [role, processCpuMs(pid)]));
}

/** CPU spent by each process since `before` was taken. */
export function cpuSince(pids: CpuPids, before: CpuMs): CpuMs {
  const now = cpuSnapshot(pids);
  return Object.fromEntries(Object.entries(now).map(([role, ms]) => [role, ms - (before[role] ?? Number.NaN)]));
}

/** CPU microseconds per operation by role. */
export function perOperationUs(cpu: CpuMs, operations: number): CpuMs {
  return Object.fromEntries(Object.entries(cpu).map(([role, ms]) => [role, (ms * 1000) / operations]));
}

/** "kapi 412 µs, backend 180 µs" */
export function formatCpu(perOperation: CpuMs, unit = 'req'): string {
  const entries = Object.entries(perOperation);
  if (entries.length === 0) return 'CPU not measured';
  const text = entries.map(([role, us]) => `${role} ${Number.isFinite(us) ? Math.round(us) : 'n/a'} µs`).join(', ');
  return `CPU/${unit}: ${text}`;
}
