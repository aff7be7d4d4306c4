import { KubeApiError, type KubeClient } from '../../kube/client.js';
import { describeError } from '../../kube/cache-health.js';
import type { ReadinessCheck } from '../../kube/caches.js';
import { Reflector } from '../../kube/reflector.js';
import type { Logger } from '../../observability/logger.js';
import { isObjectName } from '../kube-names.js';
import type { UserStatusPatch } from './login-limits.js';
import { LruMap } from '../lru-map.js';
import { ReadBudget } from './read-budget.js';
import {
  RevocationEvents,
  userChangeRevocations,
  userDeletedRevocation,
  type Revocation,
  type RevocationListener,
} from '../sessions/revocations.js';
import { USERS_PATH, emailKey, linkKey, userRecordFrom, type UserRecord } from './user-record.js';
import type { PasswordHashes } from './password-hashes.js';

/** The users identity reads and the status it writes. The cluster store and the in-memory test fake share it. */
export interface UserStore {
  /**
   * By name, or by e-mail when the login contains "@", for a login: from the watched cache; a name the cache does
   * not know may be read directly, within a global budget (anyone may try any name). Fails while the cache has not
   * synced. `cacheOnly` answers from the cache as it stands (for an audit line: no read).
   */
  find(login: string, options?: { cacheOnly?: boolean }): Promise<UserRecord | undefined>;
  /** By name; checked on every authenticated request, so it is answered from the cache when it can be. */
  get(name: string): Promise<UserRecord | undefined>;
  /** What `get` would answer, when the cache holds the user; undefined when `get` must be asked. */
  known?(name: string): UserRecord | undefined;
  /**
   * Writes the status `change` computes from the freshest copy of the user; a concurrent write (409) means read
   * again and compute again. `change` answering `undefined` writes nothing.
   */
  updateStatus(name: string, change: (user: UserRecord) => UserStatusPatch | undefined): Promise<void>;
  /** The User linked to this upstream identity (labels and annotations), from the watched cache. */
  findLinked(provider: string, userId: string): Promise<UserRecord | undefined>;
  /** Creates a User from its object; 'exists' when the name is taken (the caller reads it and decides). */
  create(object: Record<string, unknown>): Promise<UserRecord | 'exists'>;
  /**
   * The user's password hash: its own (a Secret in kapi's namespace, password-hashes.ts), else one still in the User
   * object as KubeSphere kept it (`spec.password`, until kapi's user controller has moved it, and only while the tenant
   * guard holds that field to `update users/password`); undefined when none.
   */
  passwordHashOf(user: UserRecord): Promise<string | undefined>;
  /**
   * The groups kapi asserts for the user (`Impersonate-Group`, a token's `groups`): its `spec.groups`, while the tenant
   * guard holds that field to `impersonate groups`; none otherwise (anyone who may edit Users could add one).
   */
  groupsOf(user: UserRecord): readonly string[];
  /**
   * Makes `hash` the password of the freshest copy of the User, if `allowed` still holds for it (a concurrent change
   * may have linked it to a provider): its password Secret, and no hash left in the User object.
   */
  replacePassword(
    name: string,
    hash: string,
    allowed: (user: UserRecord) => boolean,
  ): Promise<'replaced' | 'gone' | 'refused'>;
}

const STATUS_WRITE_ATTEMPTS = 5;
const NO_GROUPS: readonly string[] = Object.freeze([]);
const REQUEST_TIMEOUT_MS = 10_000;
/** Not in the cache, as against in it and unusable (an e-mail address two users share). */
const MISSING = Symbol('missing');
const orUndefined = (found: UserRecord | undefined | typeof MISSING) => (found === MISSING ? undefined : found);

/** How many logins whose name the cache does not know may read it from the cluster: see `ClusterUserStore.find`. */
export interface LoginMissReads {
  /** Sustained reads per second, for all logins together. */
  perSecond: number;
  /** Reads allowed at once after a quiet spell. */
  burst: number;
  /** Monotonic milliseconds, for the refill. */
  now?: () => number;
}

export const LOGIN_MISS_READS: LoginMissReads = { perSecond: 5, burst: 10 };
/** A login waits no longer than this for its read; a slow cluster then answers from the cache. */
const MISS_READ_TIMEOUT_MS = 2000;
/** A read by name that failed: the login is answered from the cache. */
const READ_FAILED = Symbol('read failed');

/**
 * Users from a watched cache of `users.iam.kapi.io`, with an e-mail index. Logins are answered from the cache; a
 * name it does not know is read directly (one GET), so a User created a moment ago can log in at once, and an
 * unknown name costs about what a known one does (no wait that would tell them apart). Those reads share a global
 * budget (`LoginMissReads`), so a flood of made-up names costs kube-apiserver a bounded rate whatever is tried. For a
 * bearer token (`get`) a name missing from the cache is read once directly
 * (a user created a moment ago and logged in on a replica whose watch was faster); names known to be gone are
 * remembered (bounded) so a deleted user's tokens do not cause a read per request. A user deleted or disabled (as the
 * watch reports it) is told to `onRevoked` listeners.
 */
export class ClusterUserStore implements UserStore {
  private readonly reflector: Reflector<UserRecord>;
  private readonly byEmail = new Map<string, Set<string>>();
  /** Names of the Users linked to each upstream identity (normally one: an administrator may have linked two). */
  private readonly byLink = new Map<string, Set<string>>();
  private readonly gone = new LruMap<string, true>(10_000);
  private readonly log: Logger;
  private readonly revocations: RevocationEvents;
  private readonly missReadBudget: ReadBudget;
  /** Reads in flight for logins' misses, by name: concurrent logins for one name share one read. */
  private readonly missReads = new Map<string, Promise<UserRecord | undefined | typeof READ_FAILED>>();
  private readonly withDepartments = new WeakMap<
    UserRecord,
    { departments: readonly string[]; groups: readonly string[] }
  >();

  constructor(
    private readonly client: KubeClient,
    logger: Logger,
    private readonly hashes: Pick<PasswordHashes, 'hashOf' | 'set'>,
    missReads: LoginMissReads = LOGIN_MISS_READS,
    private readonly onCreated?: (name: string) => Promise<void>,
    /** Whether the fields of a User that grant (groups, a hash in it) can be trusted: the tenant guard is in place. */
    private readonly objectFieldsTrusted: () => boolean = () => true,
    /** The RBAC groups of a user's departments (the same array while they do not change). */
    private readonly departments?: { of(username: string): readonly string[] },
  ) {
    this.log = logger.child({ component: 'users' });
    this.missReadBudget = new ReadBudget(
      missReads.perSecond,
      missReads.burst,
      missReads.now ?? (() => performance.now()),
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

  /** The watch of Users itself, for caches that attach to it (the listing of users) instead of watching again. */
  get watch(): Reflector<unknown> {
    return this.reflector as Reflector<unknown>;
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
   * A name the cache does not know is read directly, when the budget allows: the watch may lag behind (a User
   * created a moment ago), and the read takes about what a known user's lookup does. An e-mail address is not a name
   * that can be read, so it is answered from the cache. An empty budget or a failed read answers from the cache.
   */
  async find(login: string, options: { cacheOnly?: boolean } = {}): Promise<UserRecord | undefined> {
    // an unsynced cache cannot tell "nobody" from "not read yet": the login is answered 503, and counts for nothing
    if (!this.reflector.synced) throw new Error('the users cache has not synced yet');
    const cached = this.fromCache(login);
    if (cached !== MISSING || options.cacheOnly) return orUndefined(cached);
    // a login that cannot be a User's name will never be one: no read
    if (login.includes('@') || !isObjectName(login)) return undefined;
    let read = this.missReads.get(login);
    if (!read) {
      if (!this.missReadBudget.take()) return orUndefined(this.fromCache(login));
      read = this.readMiss(login);
      this.missReads.set(login, read);
      void read.finally(() => this.missReads.delete(login));
    }
    const fetched = await read;
    return fetched === READ_FAILED || fetched === undefined ? orUndefined(this.fromCache(login)) : fetched;
  }

  private async readMiss(name: string): Promise<UserRecord | undefined | typeof READ_FAILED> {
    try {
      return await this.read(name, MISS_READ_TIMEOUT_MS);
    } catch (error) {
      // bounded by the budget, so this is logged a few times a second at most
      this.log.warn('could not read a user for a login; answering from the cache', { error: describeError(error) });
      return READ_FAILED;
    }
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

  known(name: string): UserRecord | undefined {
    return this.reflector.get(name);
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

  private async read(name: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<UserRecord | undefined> {
    try {
      const raw = await this.client.request<unknown>({
        path: `${USERS_PATH}/${encodeURIComponent(name)}`,
        timeoutMs,
      });
      return userRecordFrom(raw);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  async findLinked(provider: string, userId: string): Promise<UserRecord | undefined> {
    if (!this.reflector.synced) throw new Error('the users cache has not synced yet');
    const names = this.byLink.get(linkKey(provider, userId));
    if (!names || names.size === 0) return undefined;
    if (names.size > 1) {
      // two Users claim one identity: neither is used, rather than whichever the cache returns first
      this.log.warn('an upstream identity is linked to several users; only one may be', {
        provider,
        users: [...names].slice(0, 5),
      });
      return undefined;
    }
    const [name] = names;
    return this.reflector.get(name!);
  }

  async passwordHashOf(user: UserRecord): Promise<string | undefined> {
    return (await this.hashes.hashOf(user)) ?? (this.objectFieldsTrusted() ? user.passwordHash : undefined);
  }

  groupsOf(user: UserRecord): readonly string[] {
    // departments follow GroupBindings, fields the tenant guard holds as it holds spec.groups
    if (!this.objectFieldsTrusted()) return NO_GROUPS;
    const departments = this.departments?.of(user.name) ?? NO_GROUPS;
    if (departments.length === 0) return user.groups;
    // one array per user record and departments, so what is derived from it per session is derived once
    const known = this.withDepartments.get(user);
    if (known?.departments === departments) return known.groups;
    const groups = Object.freeze([...new Set([...user.groups, ...departments])]);
    this.withDepartments.set(user, { departments, groups });
    return groups;
  }

  async replacePassword(
    name: string,
    hash: string,
    allowed: (user: UserRecord) => boolean,
  ): Promise<'replaced' | 'gone' | 'refused'> {
    const user = await this.read(name);
    if (!user || !user.uid) return 'gone';
    if (!allowed(user)) return 'refused';
    await this.hashes.set(name, user.uid, hash);
    // a hash KubeSphere kept in the User would still be read by whoever may list Users, and taken for a login
    if (user.passwordHash) await removeHashFromUser(this.client, name).catch(() => undefined);
    return 'replaced';
  }

  async create(object: Record<string, unknown>): Promise<UserRecord | 'exists'> {
    try {
      const created = await this.client.request<unknown>({
        method: 'POST',
        path: USERS_PATH,
        body: object,
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      const user = userRecordFrom(created);
      this.gone.delete(user.name);
      // what comes with a new user (its platform role) fails apart: the login goes on, the log says what is missing
      await this.onCreated?.(user.name).catch((err: unknown) =>
        this.log.warn('what a new user is given could not be written', { user: user.name, error: String(err) }),
      );
      return user;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) {
        // someone created it a moment ago: a read by name must not answer from the "gone" memory
        const name = (object.metadata as { name?: unknown } | undefined)?.name;
        if (typeof name === 'string') this.gone.delete(name);
        return 'exists';
      }
      throw err;
    }
  }

  private revoke(revocations: readonly Revocation[]): void {
    for (const revocation of revocations) this.revocations.emit(revocation);
  }

  private index(user: UserRecord): void {
    if (user.link) addTo(this.byLink, linkKey(user.link.provider, user.link.userId), user.name);
    if (!user.email) return;
    const key = emailKey(user.email);
    const names = this.byEmail.get(key) ?? new Set<string>();
    names.add(user.name);
    this.byEmail.set(key, names);
  }

  private unindex(user: UserRecord): void {
    if (user.link) removeFrom(this.byLink, linkKey(user.link.provider, user.link.userId), user.name);
    if (!user.email) return;
    const key = emailKey(user.email);
    const names = this.byEmail.get(key);
    names?.delete(user.name);
    if (names?.size === 0) this.byEmail.delete(key);
  }
}

function addTo(index: Map<string, Set<string>>, key: string, name: string): void {
  const names = index.get(key) ?? new Set<string>();
  names.add(name);
  index.set(key, names);
}

function removeFrom(index: Map<string, Set<string>>, key: string, name: string): void {
  const names = index.get(key);
  names?.delete(name);
  if (names?.size === 0) index.delete(key);
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Takes a password hash out of a User object (pure): `spec.password`, and the copy kubectl keeps in its
 * last-applied-configuration annotation; undefined when there is none. A JSON patch, conditional on the version read.
 */
export function hashRemovalPatch(raw: unknown): unknown[] | undefined {
  const user = raw as {
    metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
    spec?: Record<string, unknown>;
  };
  const operations: unknown[] = [];
  if (typeof user?.spec?.password === 'string') operations.push({ op: 'remove', path: '/spec/password' });
  const applied = user?.metadata?.annotations?.[LAST_APPLIED];
  if (typeof applied === 'string' && applied.includes('"password"')) {
    let kept: string | undefined;
    try {
      const parsed = JSON.parse(applied);
      if (parsed?.spec && typeof parsed.spec === 'object') delete parsed.spec.password;
      kept = JSON.stringify(parsed);
    } catch {
      kept = undefined;
    }
    const path = `/metadata/annotations/${LAST_APPLIED.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    operations.push(kept === undefined ? { op: 'remove', path } : { op: 'replace', path, value: kept });
  }
  if (operations.length === 0) return undefined;
  return [{ op: 'test', path: '/metadata/resourceVersion', value: user?.metadata?.resourceVersion }, ...operations];
}

/**
 * Removes a hash from the User object, as read now (a write in between makes the patch's test fail: the caller tries
 * again later).
 */
export async function removeHashFromUser(client: KubeClient, name: string): Promise<void> {
  const raw = await client.request<Record<string, unknown>>({
    path: `${USERS_PATH}/${encodeURIComponent(name)}`,
    timeoutMs: REQUEST_TIMEOUT_MS,
  });
  const patch = hashRemovalPatch(raw);
  if (!patch) return;
  await client.request({
    method: 'PATCH',
    path: `${USERS_PATH}/${encodeURIComponent(name)}`,
    contentType: 'application/json-patch+json',
    body: patch,
    timeoutMs: REQUEST_TIMEOUT_MS,
  });
}
