import { durationField, optionalObject, wholeNumberField, booleanField } from './fields.js';

/**
 * The account settings of `spec.authentication`: the policy new passwords must meet, and how long login records are
 * kept. Pure.
 */
export interface PasswordPolicy {
  /** In characters (Unicode code points). Every password is also at most 72 bytes (bcrypt reads no more) and never
   * the user's name. */
  minLength: number;
}

export interface LoginRecordSettings {
  /** false: no login records are written (logins cost one etcd write less; the audit log still has every attempt). */
  enabled: boolean;
  /** Records older than this are dropped. */
  maxAgeSeconds: number;
  /** A user keeps at most this many records, the newest. */
  maxPerUser: number;
}

/** bcrypt reads the first 72 bytes of a password; a longer one would be checked by its first 72 only. */
export const MAX_PASSWORD_BYTES = 72;
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = { minLength: 8 };
export const DEFAULT_LOGIN_RECORDS: LoginRecordSettings = { enabled: true, maxAgeSeconds: 7 * 86_400, maxPerUser: 100 };
export const MAX_LOGIN_RECORDS_PER_USER = 1000;
const MAX_RECORD_AGE_SECONDS = 366 * 86_400;

export function parsePasswordPolicy(value: unknown, path: string, problems: string[]): PasswordPolicy {
  const policy = optionalObject(value, path, problems);
  return {
    minLength: wholeNumberField(
      policy?.minLength,
      `${path}.minLength`,
      [1, MAX_PASSWORD_BYTES],
      DEFAULT_PASSWORD_POLICY.minLength,
      problems,
    ),
  };
}

export function parseLoginRecords(value: unknown, path: string, problems: string[]): LoginRecordSettings {
  const records = optionalObject(value, path, problems);
  const maxAge = durationField(records?.maxAge, `${path}.maxAge`, problems);
  if (typeof maxAge === 'number' && (maxAge < 60 || maxAge > MAX_RECORD_AGE_SECONDS)) {
    problems.push(`${path}.maxAge: must be from 1m to ${MAX_RECORD_AGE_SECONDS / 3600}h`);
  }
  return {
    enabled: booleanField(records?.enabled, `${path}.enabled`, DEFAULT_LOGIN_RECORDS.enabled, problems),
    maxAgeSeconds: maxAge ?? DEFAULT_LOGIN_RECORDS.maxAgeSeconds,
    maxPerUser: wholeNumberField(
      records?.maxPerUser,
      `${path}.maxPerUser`,
      [1, MAX_LOGIN_RECORDS_PER_USER],
      DEFAULT_LOGIN_RECORDS.maxPerUser,
      problems,
    ),
  };
}
