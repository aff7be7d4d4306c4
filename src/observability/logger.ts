import winston from 'winston';
import TransportStream from 'winston-transport';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type Logger = winston.Logger;

/** Field names whose values never reach a log line, whatever the caller passes. */
const SECRET_FIELDS =
  /^(authorization|password|client_secret|secret|token|access_token|refresh_token|signing_?key|cookie)$/i;

/** Where winston's transports read the formatted line (triple-beam's MESSAGE). */
const MESSAGE = Symbol.for('message');

/**
 * One JSON line per entry: the fields with secrets redacted, then the time. Plain JSON.stringify costs well under half
 * of logform's timestamp()+json() (safe-stable-stringify), which matters for the audit line every request writes;
 * fields it cannot encode (a cycle, a BigInt) are replaced by a note instead of failing the request.
 */
const jsonLine = winston.format((info) => {
  const record: Record<string, unknown> = {};
  for (const key of Object.keys(info)) record[key] = SECRET_FIELDS.test(key) ? '[redacted]' : info[key];
  record.timestamp = new Date().toISOString();
  let line: string;
  try {
    line = JSON.stringify(record);
  } catch {
    line = JSON.stringify({
      level: info.level,
      message: info.message,
      timestamp: record.timestamp,
      logError: 'fields could not be encoded as JSON',
    });
  }
  (info as unknown as Record<symbol, unknown>)[MESSAGE] = line;
  return info;
});

/** Lines waiting for the end of the current event-loop turn. */
const pendingLines: string[] = [];
let flushScheduled = false;
/** Past this many waiting lines they are written at once, so a burst never piles up in memory. */
const MAX_PENDING_LINES = 512;

/** Writes every waiting line now (also on process exit, so nothing logged before an exit is lost). */
export function flushLogs(): void {
  if (pendingLines.length === 0) return;
  const text = pendingLines.join('');
  pendingLines.length = 0;
  process.stdout.write(text);
}
process.once('exit', flushLogs);

/**
 * stdout, one write per event-loop turn: a write to a pipe is a synchronous system call, and with an audit line per
 * request, writing each line alone cost a third of the forwarding throughput (npm run bench).
 */
class BatchedStdout extends TransportStream {
  override log(info: Record<string | symbol, unknown>, next: () => void): void {
    pendingLines.push(`${String(info[MESSAGE])}\n`);
    if (pendingLines.length >= MAX_PENDING_LINES) {
      flushLogs();
    } else if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(() => {
        flushScheduled = false;
        flushLogs();
      }).unref();
    }
    next();
  }
}

/** JSON lines on stdout; `silent` is for tests that build many servers. */
export function createLogger(level: LogLevel = 'info', options: { silent?: boolean } = {}): Logger {
  return winston.createLogger({
    level,
    silent: options.silent ?? false,
    format: jsonLine(),
    transports: [new BatchedStdout()],
  });
}
