import type { LoginRecordSettings } from '../../config/cluster-configuration.js';
import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { Logger } from '../../observability/logger.js';
import { LruMap } from '../lru-map.js';
import type { UserRecord } from '../users/user-record.js';
import {
  LOGIN_HISTORIES_PATH,
  boundedRecord,
  isStale,
  keptRecords,
  loginHistoryFrom,
  loginHistoryObject,
  type LoginHistory,
  type LoginRecord,
} from './login-record.js';

/**
 * Keeps login records without turning a login storm into an etcd write storm: `record` only buffers (no await, no
 * request); every `flushIntervalMs` the buffer is written, one `LoginHistory` object per user with everything that
 * user's logins added meanwhile — a thousand logins of one user in a second are one write. Writes go a few at a time
 * (`maxConcurrentWrites`), and the object a replica last wrote is remembered, so a write is one PUT (a GET only
 * after a conflict with another replica). What is not written yet is lost if the process dies (at most one
 * interval's records); it is shown by reads on this replica meanwhile. A sweep deletes histories whose User is gone
 * (or was created again) and those with nothing younger than the age limit.
 */
export interface LoginRecorderOptions {
  client: KubeClient;
  logger: Logger;
  settings: () => LoginRecordSettings;
  /** The User a history belongs to (its uid becomes the owner), from the watched cache. */
  user: (name: string) => Promise<UserRecord | undefined>;
  clock?: () => number;
  flushIntervalMs?: number;
  sweepIntervalMs?: number;
  maxConcurrentWrites?: number;
  /** Users with unwritten records at most; records of more are dropped (and the log says how many). */
  maxBufferedUsers?: number;
}

export const FLUSH_INTERVAL_MS = 2_000;
const SWEEP_INTERVAL_MS = 10 * 60_000;
const SWEEP_PAGE = 100;
const WRITE_ATTEMPTS = 4;
const REQUEST_TIMEOUT_MS = 10_000;

export class LoginRecorder {
  private buffer = new Map<string, LoginRecord[]>();
  /** Records taken from the buffer by a flush and not yet written: reads still show them. */
  private writing = new Map<string, LoginRecord[]>();
  private readonly written = new LruMap<string, LoginHistory>(10_000);
  private readonly log: Logger;
  private readonly clock: () => number;
  private flushing: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private dropped = 0;
  /** Object writes made (creates and replaces), for tests and the bench. */
  writes = 0;

  constructor(private readonly options: LoginRecorderOptions) {
    this.log = options.logger.child({ component: 'login-records' });
    this.clock = options.clock ?? Date.now;
  }

  /** Buffers one attempt of an existing user; nothing is written before the next flush. */
  record(username: string, record: LoginRecord): void {
    const settings = this.options.settings();
    if (!settings.enabled) return;
    let records = this.buffer.get(username);
    if (!records) {
      if (this.buffer.size >= (this.options.maxBufferedUsers ?? 10_000)) {
        this.dropped++;
        return;
      }
      this.buffer.set(username, (records = []));
    }
    records.push(boundedRecord(record));
    // more than a user keeps can never be written: the oldest go now, so a storm holds bounded memory
    if (records.length > settings.maxPerUser * 2) records.splice(0, records.length - settings.maxPerUser);
  }

  /** The user's records, newest first: what the cluster holds plus what this replica has not written yet. */
  async read(username: string): Promise<LoginRecord[]> {
    // taken before the read: a record a flush is writing is then either here or in what the read returns
    // (duplicates fold away), never in neither
    const pending = [...(this.writing.get(username) ?? []), ...(this.buffer.get(username) ?? [])];
    const stored = await this.readHistory(username);
    const user = await this.options.user(username);
    const own = stored && belongsTo(stored, user) ? [...stored.records].reverse() : [];
    return keptRecords([...own, ...pending], this.clock(), this.options.settings());
  }

  start(): void {
    this.flushTimer = setInterval(() => void this.flush(), this.options.flushIntervalMs ?? FLUSH_INTERVAL_MS);
    this.flushTimer.unref();
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs ?? SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** Writes what is buffered, then stops. */
  async stop(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.sweepTimer);
    await this.flush();
  }

  /** Writes every buffered user's records; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.flushBuffer().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushBuffer(): Promise<void> {
    if (this.dropped > 0) {
      this.log.warn('login records dropped: too many users with records not written yet', { dropped: this.dropped });
      this.dropped = 0;
    }
    const batch = [...this.buffer];
    this.writing = this.buffer;
    this.buffer = new Map();
    const queue = batch.values();
    const worker = async () => {
      for (let next = queue.next(); !next.done; next = queue.next()) {
        const [username, records] = next.value;
        try {
          await this.writeUser(username, records);
        } catch (error) {
          // kept for the next flush, unless the buffer has no room: records are worth less than memory
          const later = this.buffer.get(username) ?? [];
          if (this.buffer.has(username) || this.buffer.size < (this.options.maxBufferedUsers ?? 10_000)) {
            this.buffer.set(username, [...records, ...later]);
          }
          this.log.warn('could not write login records; trying again at the next flush', {
            user: username,
            error: String((error as Error)?.message ?? error),
          });
        } finally {
          this.writing.delete(username);
        }
      }
    };
    await Promise.all(Array.from({ length: this.options.maxConcurrentWrites ?? 4 }, worker));
  }

  private async writeUser(username: string, records: LoginRecord[]): Promise<void> {
    const user = await this.options.user(username);
    if (!user) return; // deleted meanwhile: nothing to keep
    let current = this.written.get(username) ?? (await this.readHistory(username));
    for (let attempt = 1; ; attempt++) {
      // stored newest first; the buffer oldest first: chronological order decides between equal times
      const own = current && belongsTo(current, user) ? [...current.records].reverse() : [];
      const next: LoginHistory = {
        username,
        ownerUid: user.uid,
        resourceVersion: current?.resourceVersion ?? '',
        records: keptRecords([...own, ...records], this.clock(), this.options.settings()),
      };
      try {
        const saved = await this.options.client.request<unknown>({
          method: current ? 'PUT' : 'POST',
          path: current ? `${LOGIN_HISTORIES_PATH}/${encodeURIComponent(username)}` : LOGIN_HISTORIES_PATH,
          body: loginHistoryObject(next),
          timeoutMs: REQUEST_TIMEOUT_MS,
        });
        this.writes++;
        this.written.set(username, loginHistoryFrom(saved));
        return;
      } catch (error) {
        // another replica wrote (409), or the object went (404) or came (409 on create): read and merge again
        const retry = error instanceof KubeApiError && (error.code === 409 || error.code === 404);
        if (!retry || attempt === WRITE_ATTEMPTS) throw error;
        this.written.delete(username);
        current = await this.readHistory(username);
      }
    }
  }

  private async readHistory(username: string): Promise<LoginHistory | undefined> {
    try {
      const raw = await this.options.client.request<unknown>({
        path: `${LOGIN_HISTORIES_PATH}/${encodeURIComponent(username)}`,
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      return loginHistoryFrom(raw);
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 404) return undefined;
      throw error;
    }
  }

  /**
   * Deletes the histories nobody needs: of a User that is gone (or created again under the name), or with every
   * record past the age limit. Page by page, so memory stays bounded whatever the number of users.
   */
  async sweep(): Promise<number> {
    let deleted = 0;
    let continueToken: string | undefined;
    try {
      do {
        const page = await this.options.client.request<{ items?: unknown[]; metadata?: { continue?: string } }>({
          path: LOGIN_HISTORIES_PATH,
          query: { limit: SWEEP_PAGE, ...(continueToken ? { continue: continueToken } : {}) },
          timeoutMs: REQUEST_TIMEOUT_MS,
        });
        for (const raw of page.items ?? []) {
          const history = loginHistoryFrom(raw);
          const user = await this.options.user(history.username);
          const stale = isStale(history, this.clock(), this.options.settings().maxAgeSeconds);
          if (user && belongsTo(history, user) && !stale) continue;
          if (await this.deleteHistory(history)) deleted++;
        }
        continueToken = page.metadata?.continue || undefined;
      } while (continueToken);
    } catch (error) {
      this.log.warn('sweeping login records failed; trying again later', {
        error: String((error as Error)?.message ?? error),
      });
    }
    if (deleted > 0) this.log.info('deleted login records of users gone or records past their age', { count: deleted });
    return deleted;
  }

  private async deleteHistory(history: LoginHistory): Promise<boolean> {
    this.written.delete(history.username);
    try {
      await this.options.client.request({
        method: 'DELETE',
        path: `${LOGIN_HISTORIES_PATH}/${encodeURIComponent(history.username)}`,
        // not one written since this page was read
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: history.resourceVersion } },
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && (error.code === 404 || error.code === 409)) return false;
      throw error;
    }
  }
}

/** A history belongs to this User unless it names another incarnation of the name. */
function belongsTo(history: LoginHistory, user: UserRecord | undefined): boolean {
  return !history.ownerUid || !user?.uid || history.ownerUid === user.uid;
}
