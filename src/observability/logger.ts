export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type LogFields = Record<string, unknown>;
/** Where finished lines go: one JSON text per entry (no newline), with its level. */
export type LogSink = (line: string, level: LogLevel) => void;

const SEVERITY: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** Field names whose values never reach a log line, whatever the caller passes. */
const SECRET_FIELDS =
  /^(authorization|password|client_secret|secret|token|access_token|refresh_token|signing_?key|cookie)$/i;

/**
 * JSON lines: the logger's context fields, the entry's fields with secrets redacted, then level, message and time
 * (so no field can stand in for them). kapi's own logger rather than winston: the audit line is written for every
 * forwarded request, and winston passes each line through a chain of object streams (about 5 µs of the ~145 µs a
 * forwarded GET cost kapi at concurrency 1, npm run bench).
 */
export class Logger {
  private readonly threshold: number;

  constructor(
    readonly level: LogLevel,
    private readonly sink: LogSink,
    private readonly context: LogFields = {},
  ) {
    this.threshold = SEVERITY[level];
  }

  /** Whether entries of this level are written at all, so a caller can skip gathering fields for nothing. */
  isLevelEnabled(level: LogLevel): boolean {
    return SEVERITY[level] <= this.threshold;
  }

  error(message: string, fields?: LogFields): void {
    this.write('error', message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.write('warn', message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.write('info', message, fields);
  }

  debug(message: string, fields?: LogFields): void {
    this.write('debug', message, fields);
  }

  /** The same sink and level, with these fields on every line (an entry's own fields win). */
  child(fields: LogFields): Logger {
    return new Logger(this.level, this.sink, { ...this.context, ...fields });
  }

  /**
   * An info entry whose fields come already encoded as JSON members (`"a":1,"b":"x"`, no secrets among them), named
   * in `names`: the line is the one `info(message, fields)` would write, without building a record object and
   * encoding it as a whole. For the audit line, written once per request (access-log.ts).
   */
  infoEncoded(message: string, members: string, names: ReadonlySet<string>): void {
    if (SEVERITY.info > this.threshold) return;
    let context = this.encodedContext.get(names);
    if (context === undefined) {
      const rest: LogFields = {};
      for (const key in this.context) if (!names.has(key)) rest[key] = this.context[key];
      context = jsonLine('info', '', rest, undefined).replace(/"level":"info","message":"","timestamp":"[^"]*"\}$/, '');
      this.encodedContext.set(names, context);
    }
    this.sink(
      `${context}${members},"level":"info","message":${JSON.stringify(message)},"timestamp":"${isoNow()}"}`,
      'info',
    );
  }

  /** This logger's context as the opening of a line (`{` and its members, each with a comma), per set of names left out. */
  private readonly encodedContext = new WeakMap<ReadonlySet<string>, string>();

  private write(level: LogLevel, message: string, fields: LogFields | undefined): void {
    if (SEVERITY[level] > this.threshold) return;
    this.sink(jsonLine(level, message, this.context, fields), level);
  }
}

/**
 * `new Date().toISOString()`, with the text up to the second made once a second: the audit line's timestamp is
 * written once per request, and a Date and its formatting each time were a measurable share of the line's cost.
 */
export function isoNow(at = Date.now()): string {
  const now = Math.floor(at);
  const second = Math.floor(now / 1000);
  if (second !== timestampSecond) {
    timestampSecond = second;
    timestampPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  return `${timestampPrefix}${MILLISECONDS[now - second * 1000]}Z`;
}
let timestampSecond = Number.NaN;
let timestampPrefix = '';
/** '000' … '999'. */
const MILLISECONDS = Array.from({ length: 1000 }, (_, ms) => String(ms).padStart(3, '0'));

/** Whether a field name is a secret's, remembered: field names come from kapi's code, a small fixed set. */
const secretField = new Map<string, boolean>();
function isSecretField(key: string): boolean {
  let secret = secretField.get(key);
  if (secret === undefined) {
    secret = SECRET_FIELDS.test(key);
    if (secretField.size < 1024) secretField.set(key, secret);
  }
  return secret;
}

function jsonLine(level: LogLevel, message: string, context: LogFields, fields: LogFields | undefined): string {
  const record: LogFields = {};
  for (const key in context) record[key] = isSecretField(key) ? '[redacted]' : context[key];
  if (fields) for (const key in fields) record[key] = isSecretField(key) ? '[redacted]' : fields[key];
  record.level = level;
  record.message = message;
  record.timestamp = isoNow();
  try {
    return JSON.stringify(record);
  } catch {
    // A cycle or a BigInt: the entry is still written, without its fields, instead of failing the caller.
    return JSON.stringify({
      level,
      message,
      timestamp: record.timestamp,
      logError: 'fields could not be encoded as JSON',
    });
  }
}

/**
 * Info and debug lines wait at most this long. A write to stdout (a pipe to the container runtime) is a synchronous
 * system call that also wakes the reader; with an audit line per request, one write per request cost kapi about a
 * tenth of its CPU per forwarded request when requests come one at a time (npm run bench).
 */
const FLUSH_INTERVAL_MS = 50;
/** Past this much waiting text it is written at once, so a burst never piles up in memory. */
const PENDING_BYTES = 64 * 1024;

/**
 * Waiting lines are copied into a buffer outside the JavaScript heap, not kept as strings: strings that wait for the
 * flush outlive two young-generation collections and are promoted to the old generation, and at thousands of
 * requests a second that promotion alone kept V8 running full collections back to back (npm run bench: kapi's CPU per
 * forwarded request doubled whenever it happened).
 */
let pending = Buffer.allocUnsafe(PENDING_BYTES);
let pendingLength = 0;
let flushTimer: NodeJS.Timeout | undefined;

/** Writes every waiting line now (also on process exit, so nothing logged before an exit is lost). */
export function flushLogs(): void {
  if (flushTimer) {
    clearTimeout(flushTimer);
    flushTimer = undefined;
  }
  if (pendingLength === 0) return;
  const text = pending.subarray(0, pendingLength);
  // A fresh buffer: the stream may still hold this one until its write completes.
  pending = Buffer.allocUnsafe(PENDING_BYTES);
  pendingLength = 0;
  process.stdout.write(text);
}
process.once('exit', flushLogs);

/** stdout, in batches: at most one write per flush interval for routine lines; warnings and errors at once. */
const batchedStdout: LogSink = (line, level) => {
  // At most three bytes of UTF-8 per UTF-16 unit: room is checked without encoding the line twice.
  const bytes = line.length * 3 + 1;
  if (pendingLength + bytes > PENDING_BYTES) flushLogs();
  if (bytes > PENDING_BYTES) {
    // A line larger than the whole buffer goes out by itself.
    process.stdout.write(`${line}\n`);
  } else {
    pendingLength += pending.write(line, pendingLength);
    pending[pendingLength++] = 0x0a;
  }
  if (level === 'warn' || level === 'error') {
    flushLogs();
  } else if (!flushTimer && pendingLength > 0) {
    flushTimer = setTimeout(flushLogs, FLUSH_INTERVAL_MS).unref();
  }
};

/** JSON lines on stdout by default; `silent` is for tests that build many servers, `sink` for tests that read them. */
export function createLogger(level: LogLevel = 'info', options: { silent?: boolean; sink?: LogSink } = {}): Logger {
  const sink: LogSink = options.silent ? () => undefined : (options.sink ?? batchedStdout);
  return new Logger(level, sink);
}
