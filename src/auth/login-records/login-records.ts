import type { LoginRecord } from './login-record.js';

/** Where login attempts go and come back from: the cluster-backed `LoginRecorder`, or a test's memory. */
export interface LoginRecords {
  /** Buffers one attempt of an existing user (never waits, never fails the login). */
  record(username: string, record: LoginRecord): void;
  /** The user's records, newest first, as kept (age and count limits applied). */
  read(username: string): Promise<LoginRecord[]>;
}
