import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import type { ReadinessCheck } from '../../kube/caches.js';
import { Reflector } from '../../kube/reflector.js';
import { SharedVersionRead, resourceVersionReached } from '../../kube/resource-version.js';
import type { Logger } from '../../observability/logger.js';
import { isObjectName } from '../kube-names.js';
import type { UserStatusPatch } from './login-limits.js';
import { LruMap } from '../lru-map.js';
import {
  RevocationEvents,
  userChangeRevocations,
  userDeletedRevocation,
  type Revocation,
  type RevocationListener,
} from '../sessions/revocations.js';
import { USERS_PATH, emailKey, userRecordFrom, type UserRecord } from './user-record.js';

/** The users identity reads and the status it writes. The cluster store and the in-memory test fake share it. */
export interface UserStore {
  /**
   * By name, or by e-mail when the login contains "@", for a login: from the watched cache, never a cluster read per
   * name (anyone may try any name); a miss waits, bounded, for the cache to catch up with the cluster. Fails while
   * the cache has not synced. `cacheOnly` answers from the cache as it stands (for an audit line: no wait, no read).
   */
  find(login: string, options?: { cacheOnly?: boolean }): Promise<UserRecord | undefined>;
  /** By name; checked on every authenticated request, so it is answered from the cache when it can be. */
  get(name: string): Promise<UserRecord | undefined>;
  /**
   * Writes the status `change` computes from the freshest copy of the user; a concurrent write (409) means read
   * again and compute again. `change` answering `undefined` writes nothing.
   */
  updateStatus(name: string, change: (user: UserRecord) => UserStatusPatch | undefined): Promise<void>;
}

const STATUS_WRITE_ATTEMPTS = 5;
const REQUEST_TIMEOUT_MS = 10_000;
/** Not in the cache, as against in it and unusable (an e-mail address two users share). */
const MISSING = Symbol('missing');
const orUndefined = (found: UserRecord | undefined | typeof MISSING) => (found === MISSING ? undefined : found);

/** How a login's cache miss is made sure of: see `ClusterUserStore.find`. */
export interface LoginFreshness {
  /** The longest a login waits for the cache to catch up with the cluster, reading its version included. */
  waitMs: number;
  /** A read of the users' current resourceVersion serves every miss for this long after it started. */
  reuseVersionMs: number;
  /** Monotonic milliseconds, for the reuse window. */
  now?: () => number;
}

export const LOGIN_FRESHNESS: LoginFreshness = { waitMs: 2000, reuseVersionMs: 1000 };

/**
 * Users from a watched cache of `users.iam.kapi.io`, with an e-mail index. Logins are answered from the cache, made
 * sure of as kube-apiserver's consistent reads from its watch cache are: a miss waits (bounded) until the watch has
 * caught up with the collection's current resourceVersion, so a User created a moment ago can log in at once, while
 * a flood of made-up names costs kube-apiserver about one small list per second, never a read per name. For a
 * bearer token (`get`) a name missing from the cache is read once directly
 * (a user created a moment ago and logged in on a replica whose watch was faster); names known to be gone are
 * remembered (bounded) so a deleted user's tokens do not cause a read per request. A user deleted or disabled (as the
 * watch reports it) is told to `onRevoked` listeners.
 */
export class ClusterUserStore implements UserStore {
  private readonly reflector: Reflector<UserRecord>;
  private readonly byEmail = new Map<string, Set<string>>();
  private readonly gone = new LruMap<string, true>(10_000);
  private readonly log: Logger;
  private readonly revocations: RevocationEvents;
  private readonly collectionVersion: SharedVersionRead;

  constructor(
    private readonly client: KubeClient,
    logger: Logger,
    private readonly freshness: LoginFreshness = LOGIN_FRESHNESS,
  ) {
    this.log = logger.child({ component: 'users' });
    this.collectionVersion = new SharedVersionRead(
      () => this.readCollectionVersion(),
      freshness.reuseVersionMs,
      freshness.now,
    );
    this.revocations = new RevocationEvents(this.log);
    this.reflector = new Reflector<UserRecord>({
      client,
      logger,
      name: 'users',
      listPath: USERS_PATH,
      transform: userRecordFrom,
    });
    this.reflector.on('added', (user) => {
      this.gone.delete(user.name);
      this.index(user);
      this.revoke(userChangeRevocations(user, undefined));
    });
    this.reflector.on('modified', (user, old) => {
      if (old) this.unindex(old);
      this.index(user);
      this.revoke(userChangeRevocations(user, old));
    });
    this.reflector.on('deleted', (user) => {
      this.unindex(user);
      this.gone.set(user.name, true);
      this.revoke([userDeletedRevocation(user)]);
    });
  }

  /** Users deleted or disabled, as this replica's watch sees it. */
  onRevoked(listener: RevocationListener): () => void {
    return this.revocations.on(listener);
  }

  get readiness(): ReadinessCheck {
    return this.reflector.readiness;
  }

  start(): void {
    this.reflector.start();
  }

  waitForSync(timeoutMs: number): Promise<void> {
    return this.reflector.waitForSync(timeoutMs);
  }

  stop(): Promise<void> {
    return this.reflector.stop();
  }

  /**
   * A miss is made sure of before it is believed: the users' current resourceVersion is read (shared, see
   * `SharedVersionRead`), and the login waits until the watch has reached it or delivered the user, at most
   * `waitMs`. If that read fails or the wait runs out, the cache answers as it stands.
   */
  async find(login: string, options: { cacheOnly?: boolean } = {}): Promise<UserRecord | undefined> {
    // an unsynced cache cannot tell "nobody" from "not read yet": the login is answered 503, and counts for nothing
    if (!this.reflector.synced) throw new Error('the users cache has not synced yet');
    const cached = this.fromCache(login);
    if (cached !== MISSING || options.cacheOnly) return orUndefined(cached);
    // a login that cannot be a User's name or e-mail will never be one: no read, no wait
    if (!login.includes('@') && !isObjectName(login)) return undefined;
    const startedAt = Date.now();
    let target: string;
    try {
      target = await this.collectionVersion.current();
    } catch {
      return orUndefined(this.fromCache(login));
    }
    const left = this.freshness.waitMs - (Date.now() - startedAt);
    const seenAtStart = this.reflector.lastResourceVersion;
    await this.reflector.waitUntil(
      () => {
        if (this.fromCache(login) !== MISSING) return true;
        const seen = this.reflector.lastResourceVersion;
        // not comparable (not kube-apiserver's decimal versions): the next event or bookmark is the best there is
        return resourceVersionReached(seen, target) ?? seen !== seenAtStart;
      },
      Math.max(0, left),
    );
    return orUndefined(this.fromCache(login));
  }

  /** A user by name or by its e-mail address; undefined when an address is shared (neither may use it). */
  private fromCache(login: string): UserRecord | undefined | typeof MISSING {
    if (!login.includes('@')) return this.reflector.get(login) ?? MISSING;
    const names = this.byEmail.get(emailKey(login));
    if (!names || names.size === 0) return MISSING;
    if (names.size > 1) {
      // Two users with one address: neither may log in with it, rather than whichever the cache returns first.
      this.log.warn('e-mail address shared by several users; log in by name', { users: [...names].slice(0, 5) });
      return undefined;
    }
    const [name] = names;
    return this.reflector.get(name!) ?? MISSING;
  }

  /** One small page of the users, for its resourceVersion: what the collection is at now (a consistent read). */
  private async readCollectionVersion(): Promise<string> {
    try {
      const list = await this.client.request<{ metadata?: { resourceVersion?: string } }>({
        path: USERS_PATH,
        query: { limit: 1 },
        timeoutMs: this.freshness.waitMs,
      });
      const version = list.metadata?.resourceVersion;
      if (!version) throw new Error('the users list carried no resourceVersion');
      return version;
    } catch (error) {
      // shared by every miss for a while, so this is logged about once per read, not once per login
      this.log.warn('could not read the users resourceVersion; logins answer from the cache as it is', {
        error: describeError(error),
      });
      throw error;
    }
  }

  async get(name: string): Promise<UserRecord | undefined> {
    const cached = this.reflector.get(name);
    if (cached) return cached;
    if (!isObjectName(name) || this.gone.has(name)) return undefined;
    const fetched = await this.read(name);
    if (!fetched) this.gone.set(name, true);
    return fetched;
  }

  async updateStatus(name: string, change: (user: UserRecord) => UserStatusPatch | undefined): Promise<void> {
    let user = await this.get(name);
    for (let attempt = 1; user && attempt <= STATUS_WRITE_ATTEMPTS; attempt++) {
      const status = change(user);
      if (!status) return;
      try {
        await this.client.request({
          method: 'PATCH',
          path: `${USERS_PATH}/${encodeURIComponent(name)}/status`,
          contentType: 'application/merge-patch+json',
          // the resourceVersion makes the patch conditional: a concurrent writer's change is never overwritten
          body: { metadata: user.resourceVersion ? { resourceVersion: user.resourceVersion } : {}, status },
          timeoutMs: REQUEST_TIMEOUT_MS,
        });
        return;
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 404) return;
        if (!(err instanceof KubeApiError && err.code === 409) || attempt === STATUS_WRITE_ATTEMPTS) throw err;
        user = await this.read(name);
      }
    }
  }

  private async read(name: string): Promise<UserRecord | undefined> {
    try {
      const raw = await this.client.request<unknown>({
        path: `${USERS_PATH}/${encodeURIComponent(name)}`,
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      return userRecordFrom(raw);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  private revoke(revocations: readonly Revocation[]): void {
    for (const revocation of revocations) this.revocations.emit(revocation);
  }

  private index(user: UserRecord): void {
    if (!user.email) return;
    const key = emailKey(user.email);
    const names = this.byEmail.get(key) ?? new Set<string>();
    names.add(user.name);
    this.byEmail.set(key, names);
  }

  private unindex(user: UserRecord): void {
    if (!user.email) return;
    const key = emailKey(user.email);
    const names = this.byEmail.get(key);
    names?.delete(user.name);
    if (names?.size === 0) this.byEmail.delete(key);
  }
}
