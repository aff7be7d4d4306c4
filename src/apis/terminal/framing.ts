/**
 * The container terminal's two framings, pure: KubeSphere's, between the console and kapi (JSON text messages
 * `{"Op":"stdin","Data":…}`, `{"Op":"resize","Rows":…,"Cols":…}` in; `{"Op":"stdout","Data":…}` out), and
 * Kubernetes' `v4.channel.k8s.io`, between kapi and kube-apiserver (binary messages whose first byte is the channel:
 * 0 stdin, 1 stdout, 2 stderr, 3 the exec's outcome as a Status, 4 resize).
 */

export const EXEC_PROTOCOL = 'v4.channel.k8s.io';
export const STDIN = 0;
export const STDOUT = 1;
export const STDERR = 2;
export const OUTCOME = 3;
export const RESIZE = 4;

/** The shells a terminal may ask for by name, as KubeSphere allows them. */
const SHELLS = new Set(['bash', 'sh']);

export type ConsoleMessage =
  { op: 'stdin'; data: string } | { op: 'resize'; rows: number; cols: number } | { op: 'invalid'; reason: string };

/** A message of the console's (KubeSphere's framing). */
export function consoleMessage(text: string): ConsoleMessage {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { op: 'invalid', reason: 'a terminal message is JSON' };
  }
  const { Op, Data, Rows, Cols } = (message ?? {}) as Record<string, unknown>;
  if (Op === 'stdin' && typeof Data === 'string') return { op: 'stdin', data: Data };
  const size = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 0 && (n as number) <= 65535;
  if (Op === 'resize' && size(Rows) && size(Cols)) return { op: 'resize', rows: Rows, cols: Cols };
  return { op: 'invalid', reason: `unknown message type '${typeof Op === 'string' ? Op.slice(0, 32) : ''}'` };
}

/** What the terminal shows: output for the console (`toast` for kapi's own words, which it prints the same way). */
export function consoleOutput(data: string, op: 'stdout' | 'toast' = 'stdout'): string {
  return JSON.stringify({ Op: op, Data: data });
}

/** A frame kapi sends kube-apiserver: stdin bytes, or the window's size. */
export function stdinFrame(data: string): Buffer {
  return Buffer.concat([Buffer.from([STDIN]), Buffer.from(data, 'utf8')]);
}

export function resizeFrame(rows: number, cols: number): Buffer {
  return Buffer.concat([Buffer.from([RESIZE]), Buffer.from(JSON.stringify({ Width: cols, Height: rows }))]);
}

export type ExecFrame =
  { kind: 'output'; data: Buffer } | { kind: 'outcome'; success: boolean; message: string } | { kind: 'other' };

/** A frame kube-apiserver sent: output (stdout, stderr), the exec's outcome, or nothing kapi shows. */
export function execFrame(frame: Buffer): ExecFrame {
  if (frame.length === 0) return { kind: 'other' };
  const channel = frame[0];
  const data = frame.subarray(1);
  if (channel === STDOUT || channel === STDERR) return { kind: 'output', data };
  if (channel !== OUTCOME) return { kind: 'other' };
  let status: { status?: unknown; message?: unknown; reason?: unknown };
  try {
    status = JSON.parse(data.toString('utf8')) as typeof status;
  } catch {
    return { kind: 'outcome', success: false, message: data.toString('utf8').slice(0, 1024) };
  }
  if (status?.status === 'Success') return { kind: 'outcome', success: true, message: 'Process exited' };
  const message = typeof status?.message === 'string' ? status.message : String(status?.reason ?? 'the command failed');
  return { kind: 'outcome', success: false, message: message.slice(0, 1024) };
}

/**
 * The exec a terminal opens (its path and query at kube-apiserver): the shell asked for when it is one of KubeSphere's
 * (`bash`, `sh`), else bash where the container has it and sh otherwise; stdin, stdout, stderr and a tty.
 */
export function execTarget(namespace: string, pod: string, container: string | undefined, shell: string | undefined) {
  const command =
    shell && SHELLS.has(shell) ? [shell] : ['sh', '-c', 'command -v bash >/dev/null 2>&1 && exec bash || exec sh'];
  return commandTarget(namespace, pod, container, command);
}

/** The exec of `command` with a tty (the kubectl toolbox's own command). */
export function commandTarget(namespace: string, pod: string, container: string | undefined, command: string[]) {
  const query = new URLSearchParams();
  if (container) query.set('container', container);
  for (const word of command) query.append('command', word);
  for (const stream of ['stdin', 'stdout', 'stderr', 'tty']) query.set(stream, 'true');
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/exec?${query}`;
}

/** A WebSocket close reason: at most 123 bytes of UTF-8 (RFC 6455), cut on a character. */
export function closeReason(text: string): string {
  let reason = text;
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
  return reason;
}
