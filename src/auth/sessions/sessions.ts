import { KubeApiError, type KubeClient } from '../../kube/client.js';
import type { ReadinessCheck } from '../../kube/caches.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';
import { LruMap } from '../lru-map.js';
import { ExpiryTimer } from './expiry-timer.js';
import { RevocationEvents, type RevocationListener } from './revocations.js';
import {
  SESSIONS_PATH,
  USERNAME_LABEL,
  isSessionAlive,
  isSessionId,
  loginSessionFrom,
  loginSessionObject,
  newSessionId,
  sessionsBeyondCap,
  usernameLabelValue,
  type LoginSession,
  type SessionSpec,
} from './session-record.js';

/** A session of that id exists already: an id chosen in advance (an authorization code's) is used once. */
export class SessionExists extends Error {
  constructor(readonly id: string) {
    super(`login session ${id} exists already`);
    this.name = 'SessionExists';
  }
}

/** Login sessions as identity uses them. The cluster store and the in-memory test fake share it. */
export interface SessionStore {
  /** A new session, named `id` when given (else a random id); `SessionExists` when that name is taken. */
  create(spec: SessionSpec, id?: string): Promise<LoginSession>;
  /** The session if it exists: checked on every authenticated request, so answered from the cache when it can be. */
  find(id: string): Promise<LoginSession | undefined>;
  /**
   * What `find` would answer, when it can be answered from memory at once; undefined when `find` must be asked
   * (the session is not in memory, or not alive). Spares the request path a promise.
   */
  known?(id: string): LoginSession | undefined;
  /** Read from the cluster, bypassing the cache (after a conflict). */
  read(id: string): Promise<LoginSession | undefined>;
  /** Replaces the spec if the session is unchanged since `session` was read; 'conflict' when it changed. */
  replace(session: LoginSession, spec: SessionSpec): Promise<LoginSession | 'conflict' | 'gone'>;
  /** Revokes the session; an already deleted one is no error. */
  delete(id: string): Promise<void>;
  /** Read from the cluster (not the cache), so a login a moment ago on another replica is included. */
  listForUser(username: string): Promise<LoginSession[]>;
  /**
   * Ends the user's sessions beyond `cap`, those that logged in first, as this replica knows them (its watch, and
   * the sessions it created itself), never `keep` (the login that asks); the ids ended.
   */
  endBeyondCap(username: string, cap: number, keep: string): Promise<string[]>;
}

const REQUEST_TIMEOUT_MS = 10_000;
const SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 200;

interface KubeList {
  items?: unknown[];
}

/**
 * LoginSessions in the cluster, watched by every replica. A session is alive when the cache holds it or, on a
 * miss, when a direct read finds it (created a moment ago on another replica). Deleted ids go to a bounded set of
 * tombstones, so revoked tokens never cause a read. Expired sessions, and those beyond a user's cap (logins on two
 * replicas at once may each have missed the other's), are deleted periodically by any replica.
 * Every way a session ends — deleted here, seen deleted by the watch, or reaching its `expiresAt` (at that moment,
 * by a timer for the earliest) — is reported to `onRevoked` listeners.
 */
export class ClusterSessionStore implements SessionStore {
  private readonly reflector: Reflector<LoginSession>;
  private readonly deleted = new LruMap<string, true>(50_000);
  private readonly reading = new Map<string, Promise<LoginSession | undefined>>();
  /** Session ids by user name, from the watch; and sessions created here that the watch has not delivered yet. */
  private readonly byUser = new Map<string, Set<string>>();
  private readonly createdHere = new LruMap<string, LoginSession>(10_000);
  private readonly expiries: ExpiryTimer;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  private readonly revocations: RevocationEvents;

  constructor(
    private readonly client: KubeClient,
    logger: Logger,
    private readonly clock: () => number = Date.now,
    /** The sessions a user may hold, read at each sweep (the current configuration). */
    private readonly maxSessionsPerUser: () => number = () => Infinity,
  ) {
    this.log = logger.child({ component: 'sessions' });
    this.revocations = new RevocationEvents(this.log);
    this.reflector = new Reflector<LoginSession>({
      client,
      logger,
      name: 'loginsessions',
      listPath: SESSIONS_PATH,
      transform: loginSessionFrom,
    });
    // a session reaching its end is told at that moment (what it holds open is cut); the sweep deletes it later
    this.expiries = new ExpiryTimer(clock, (id) => this.revocations.emit({ kind: 'session', sessionId: id }));
    this.reflector.on('added', (session) => {
      this.createdHere.delete(session.id);
      this.index(session);
      this.expiries.set(session.id, session.expiresAt * 1000);
    });
    this.reflector.on('modified', (session) => this.expiries.set(session.id, session.expiresAt * 1000));
    this.reflector.on('deleted', (session) => {
      this.unindex(session);
      this.expiries.delete(session.id);
      this.ended(session.id);
    });
  }

  /** Sessions ended on this replica (at once) or on any other (when the watch reports it). */
  onRevoked(listener: RevocationListener): () => void {
    return this.revocations.on(listener);
  }

  get readiness(): ReadinessCheck {
    return this.reflector.readiness;
  }

  start(): void {
    this.reflector.start();
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  waitForSync(timeoutMs: number): Promise<void> {
    return this.reflector.waitForSync(timeoutMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    this.expiries.stop();
    await this.reflector.stop();
  }

  async create(spec: SessionSpec, id = newSessionId()): Promise<LoginSession> {
    if (!isSessionId(id)) throw new Error('a login session id is 32 hexadecimal digits');
    let created: unknown;
    try {
      created = await this.client.request<unknown>({
        method: 'POST',
        path: SESSIONS_PATH,
        body: loginSessionObject(id, spec),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) throw new SessionExists(id);
      throw err;
    }
    const session = loginSessionFrom(created);
    if (!this.reflector.get(session.id)) this.createdHere.set(session.id, session);
    return session;
  }

  known(id: string): LoginSession | undefined {
    return this.deleted.has(id) ? undefined : this.reflector.get(id);
  }

  async find(id: string): Promise<LoginSession | undefined> {
    // ids are never reused: once deleted, a session stays dead, even while the watch has not reported it yet
    if (this.deleted.has(id)) return undefined;
    const cached = this.reflector.get(id);
    if (cached) return cached;
    if (!isSessionId(id)) return undefined;
    // concurrent requests right after a login elsewhere share one read
    let pending = this.reading.get(id);
    if (!pending) {
      pending = this.read(id).finally(() => this.reading.delete(id));
      this.reading.set(id, pending);
    }
    const session = await pending;
    if (!session) this.deleted.set(id, true);
    return session;
  }

  async read(id: string): Promise<LoginSession | undefined> {
    try {
      const raw = await this.client.request<unknown>({ path: this.pathOf(id), timeoutMs: REQUEST_TIMEOUT_MS });
      return loginSessionFrom(raw);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  async replace(session: LoginSession, spec: SessionSpec): Promise<LoginSession | 'conflict' | 'gone'> {
    try {
      const updated = await this.client.request<unknown>({
        method: 'PUT',
        path: this.pathOf(session.id),
        body: loginSessionObject(session.id, spec, session),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      return loginSessionFrom(updated);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) return 'conflict';
      if (err instanceof KubeApiError && err.code === 404) return 'gone';
      throw err;
    }
  }

  async delete(id: string): Promise<void> {
    if (!isSessionId(id)) return;
    // refused here at once, not only once the watch reports the deletion
    this.ended(id);
    try {
      await this.client.request({ method: 'DELETE', path: this.pathOf(id), timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 404)) throw err;
    }
  }

  async listForUser(username: string): Promise<LoginSession[]> {
    const list = await this.client.request<KubeList>({
      path: SESSIONS_PATH,
      query: { labelSelector: `${USERNAME_LABEL}=${usernameLabelValue(username)}` },
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    const sessions: LoginSession[] = [];
    for (const raw of list.items ?? []) {
      try {
        const session = loginSessionFrom(raw);
        if (session.username === username) sessions.push(session);
      } catch {
        // an unreadable object is no session of this user
      }
    }
    return sessions;
  }

  async endBeyondCap(username: string, cap: number, keep: string): Promise<string[]> {
    const ids = this.byUser.get(username) ?? new Set<string>();
    const sessions = [...ids].flatMap((id) => this.reflector.get(id) ?? []);
    for (const session of this.createdHere.values()) {
      if (session.username === username && !ids.has(session.id)) sessions.push(session);
    }
    const others = sessions.filter((session) => session.id !== keep && !this.deleted.has(session.id));
    const beyond = sessionsBeyondCap(others, cap - 1);
    await Promise.all(beyond.map((session) => this.delete(session.id)));
    return beyond.map((session) => session.id);
  }

  /**
   * Deletes sessions past their end, and those beyond their user's cap. Every replica may run it; losing a race to
   * another is a harmless 404.
   */
  async sweep(): Promise<number> {
    const nowSeconds = Math.floor(this.clock() / 1000);
    const cap = this.maxSessionsPerUser();
    const overCap = [...this.byUser.entries()]
      .filter(([, ids]) => ids.size > cap)
      .flatMap(([, ids]) =>
        sessionsBeyondCap(
          [...ids].flatMap((id) => this.reflector.get(id) ?? []),
          cap,
        ),
      );
    const expired = this.reflector
      .list()
      .filter((session) => !isSessionAlive(session, nowSeconds))
      .concat(overCap)
      .slice(0, SWEEP_BATCH);
    let removed = 0;
    for (const session of expired) {
      try {
        await this.delete(session.id);
        removed++;
      } catch (err) {
        this.log.warn('could not delete an expired login session', { session: session.id, error: String(err) });
      }
    }
    if (removed > 0) this.log.info('deleted expired login sessions and those beyond the cap', { count: removed });
    return removed;
  }

  /** Repeats (the watch confirming a local delete) are harmless: ending what is already ended does nothing. */
  private ended(id: string): void {
    this.deleted.set(id, true);
    this.createdHere.delete(id);
    this.revocations.emit({ kind: 'session', sessionId: id });
  }

  private index(session: LoginSession): void {
    let ids = this.byUser.get(session.username);
    if (!ids) this.byUser.set(session.username, (ids = new Set()));
    ids.add(session.id);
  }

  private unindex(session: LoginSession): void {
    const ids = this.byUser.get(session.username);
    ids?.delete(session.id);
    if (ids?.size === 0) this.byUser.delete(session.username);
  }

  private pathOf(id: string): string {
    return `${SESSIONS_PATH}/${encodeURIComponent(id)}`;
  }
}
