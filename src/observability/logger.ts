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

/** Lines waiting to be written, and their size in UTF-16 units (≈ bytes for these ASCII-heavy lines). */
const pendingLines: string[] = [];
let pendingSize = 0;
let flushTimer: NodeJS.Timeout | undefined;
/**
 * Info and debug lines wait at most this long. A write to stdout (a pipe to the container runtime) is a synchronous
 * system call that also wakes the reader; with an audit line per request, one write per request cost kapi about a
 * tenth of its CPU per forwarded request when requests come one at a time (npm run bench).
 */
const FLUSH_INTERVAL_MS = 50;
/** Past this much waiting text it is written at once, so a burst never piles up in memory. */
const MAX_PENDING_SIZE = 64 * 1024;
/** Warnings and errors are written at once (with every line before them), so a crash right after loses none. */
const URGENT_LEVELS = new Set(['warn', 'error']);

/** Writes every waiting line now (also on process exit, so nothing logged before an exit is lost). */
export function flushLogs(): void {
  if (flushTimer) {
    clearTimeout(flushTimer);
    flushTimer = undefined;
  }
  if (pendingLines.length === 0) return;
  const text = pendingLines.join('');
  pendingLines.length = 0;
  pendingSize = 0;
  process.stdout.write(text);
}
process.once('exit', flushLogs);

/** stdout, in batches: at most one write per flush interval for routine lines, at once for warnings and errors. */
class BatchedStdout extends TransportStream {
  override log(info: Record<string | symbol, unknown>, next: () => void): void {
    const line = `${String(info[MESSAGE])}\n`;
    pendingLines.push(line);
    pendingSize += line.length;
    if (pendingSize >= MAX_PENDING_SIZE || URGENT_LEVELS.has(String(info.level))) {
      flushLogs();
    } else if (!flushTimer) {
      flushTimer = setTimeout(flushLogs, FLUSH_INTERVAL_MS).unref();
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
