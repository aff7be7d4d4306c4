/**
 * A line of `GET .../pods/{pod}/log?timestamps=true`: kubelet's RFC 3339 timestamp (nanoseconds, any zone), a space,
 * the text. Times are kept as whole seconds plus nanoseconds, so lines order exactly as the runtime wrote them.
 */
export interface TimedLine {
  readonly sec: number;
  readonly nano: number;
  readonly text: string;
}

const STAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2}) /;

/** The line's time and text, or undefined when it carries no timestamp (kubelet always sends one). */
export function parseLogLine(line: string): TimedLine | undefined {
  const match = STAMP.exec(line);
  if (!match) return undefined;
  const ms = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return {
    sec: Math.floor(ms / 1000),
    nano: match[2] ? Number(match[2].padEnd(9, '0')) : 0,
    text: line.slice(match[0].length),
  };
}

/** Epoch milliseconds with the sub-millisecond part as a fraction: one number to place a line in a time window. */
export function lineMs(line: { sec: number; nano: number }): number {
  return line.sec * 1000 + line.nano / 1e6;
}

/** RFC 3339 with all nine fraction digits, UTC: the `time` of a returned record. */
export function formatTime(sec: number, nano: number): string {
  return `${new Date(sec * 1000).toISOString().slice(0, 19)}.${String(nano).padStart(9, '0')}Z`;
}

/** RFC 3339 at whole seconds, for the pod-log API's `sinceTime` (which has second precision). */
export function sinceTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
