import type { Logger } from '../../observability/logger.js';

/**
 * One JSON line per token request: who tried, with which client, from where, and how it ended. It carries no
 * password, secret or token: only names, the address, the result and an internal reason.
 */
export type LoginResult = 'success' | 'failure' | 'limited' | 'error';

export interface LoginAttemptRecord {
  grant: string;
  /** The user's name; `unknown:<digest>` for a name that matches nobody (it may be a mistyped password). */
  user?: string;
  client?: string;
  /** `local` or the identity provider that answered, once known. */
  provider?: string;
  sourceIp: string;
  result: LoginResult;
  reason: string;
  /** Where a password came from when not the token endpoint: `login_page`. */
  via?: string;
  /** The client's User-Agent (login records keep it; the audit line does not). */
  userAgent?: string;
}

export type LoginAudit = (record: LoginAttemptRecord) => void;

/** The grant label of the login metric: a fixed set, whatever a client sends. */
const GRANT_LABELS = new Set(['password', 'refresh_token', 'authorization_code', 'upstream']);

export function loginAudit(
  logger: Logger,
  onResult?: (grant: string, result: LoginResult) => void,
  /** Every attempt, after its audit line (login records). */
  onRecord?: (record: LoginAttemptRecord) => void,
): LoginAudit {
  return (record) => {
    logger.info('login attempt', {
      audit: 'login',
      grant: printable(record.grant, 32),
      user: record.user === undefined ? undefined : printable(record.user, 254),
      client: record.client === undefined ? undefined : printable(record.client, 253),
      provider: record.provider,
      sourceIp: record.sourceIp,
      result: record.result,
      reason: record.reason,
      ...(record.via === undefined ? {} : { via: record.via }),
    });
    onResult?.(GRANT_LABELS.has(record.grant) ? record.grant : 'other', record.result);
    onRecord?.(record);
  };
}

/** Caller-supplied text in a log line: no control characters, bounded length. */
function printable(text: string, max: number): string {
  let safe = '';
  for (const char of text) safe += char.charCodeAt(0) < 0x20 || char === '\u007f' ? '?' : char;
  return safe.length > max ? `${safe.slice(0, max)}…` : safe;
}
