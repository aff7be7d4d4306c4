import winston from 'winston';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type Logger = winston.Logger;

/** Field names whose values never reach a log line, whatever the caller passes. */
const SECRET_FIELDS =
  /^(authorization|password|client_secret|secret|token|access_token|refresh_token|signing_?key|cookie)$/i;

const redactSecrets = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (SECRET_FIELDS.test(key)) info[key] = '[redacted]';
  }
  return info;
});

/** JSON lines on stdout; `silent` is for tests that build many servers. */
export function createLogger(level: LogLevel = 'info', options: { silent?: boolean } = {}): Logger {
  return winston.createLogger({
    level,
    silent: options.silent ?? false,
    format: winston.format.combine(redactSecrets(), winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
}
