import winston from 'winston';

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

/** JSON lines on stdout; `silent` is for tests that build many servers. */
export function createLogger(level: LogLevel = 'info', options: { silent?: boolean } = {}): Logger {
  return winston.createLogger({
    level,
    silent: options.silent ?? false,
    format: jsonLine(),
    transports: [new winston.transports.Console()],
  });
}
