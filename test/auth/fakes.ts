/**
 * In-memory stand-ins for identity's stores, sharing the interfaces of the cluster-backed ones (so the HTTP tests
 * run without a cluster), plus a clock the tests move and a logger whose lines the tests read.
 */
import bcrypt from 'bcrypt';
import type { AuthSettings } from '../../src/config/cluster-configuration.js';
import type { UserStatusPatch } from '../../src/auth/users/login-limits.js';
import type { LoginSession, SessionSpec } from '../../src/auth/sessions/session-record.js';
import { newSessionId, sessionsBeyondCap } from '../../src/auth/sessions/session-record.js';
import { SessionExists, type SessionStore } from '../../src/auth/sessions/sessions.js';
import type { CodeRedemptions, Redemption } from '../../src/auth/browser/authorization-codes.js';
import { hmacKeySet } from '../../src/auth/tokens/key-set.js';
import type { SigningKeyProvider } from '../../src/auth/tokens/signing-key.js';
import {
  userRecordFrom,
  type UpstreamLink,
  type UserRecord,
  type UserState,
} from '../../src/auth/users/user-record.js';
import type { UserStore } from '../../src/auth/users/users.js';
import type { AccessDecision, Authorizer, ResourceAttributes, UserInfo } from '../../src/auth/identity.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { keptRecords, type LoginRecord } from '../../src/auth/login-records/login-record.js';
import type { LoginRecords } from '../../src/auth/login-records/login-records.js';

export const TEST_SETTINGS: AuthSettings = {
  accessTokenMaxAgeSeconds: 7200,
  refreshTokenMaxAgeSeconds: 14400,
  multipleLogin: true,
  maxSessionsPerUser: 20,
  loginLimit: { maxFailures: 3, windowSeconds: 600 },
  clients: [
    { name: 'kapi', secret: 'kapi-secret', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
    { name: 'cli', secret: 'cli secret+/&=', public: false, grantTypes: ['password'], redirectURIs: [] },
  ],
  identityProviders: [],
  passwordPolicy: { minLength: 8 },
  loginRecords: { enabled: true, maxAgeSeconds: 604800, maxPerUser: 100 },
};

/** bcrypt cost 4: the fastest the library allows, so suites stay quick. */
export function hashPassword(password: string): string {
  return bcrypt.hashSync(password, 4);
}

export class FakeClock {
  constructor(public now = Date.parse('2031-03-04T05:06:07Z')) {}
  readonly read = (): number => this.now;
  advance(seconds: number): void {
    this.now += seconds * 1000;
  }
}

export class InMemoryUserStore implements UserStore {
  readonly users = new Map<string, UserRecord>();
  statusWrites = 0;
  private version = 1;

  add(
    name: string,
    options: {
      password?: string;
      hash?: string;
      email?: string;
      groups?: string[];
      state?: UserState;
      link?: UpstreamLink;
    } = {},
  ): UserRecord {
    const user: UserRecord = {
      name,
      uid: `uid-${name}`,
      resourceVersion: String(this.version++),
      email: options.email,
      passwordHash: options.hash ?? (options.password === undefined ? undefined : hashPassword(options.password)),
      groups: options.groups ?? [],
      state: options.state ?? 'Active',
      failedLogins: [],
      ...(options.link ? { link: options.link } : {}),
    };
    this.users.set(name, user);
    return user;
  }

  setState(name: string, state: UserState): void {
    const user = this.users.get(name);
    if (user) this.users.set(name, { ...user, state, resourceVersion: String(this.version++) });
  }

  async find(login: string): Promise<UserRecord | undefined> {
    if (!login.includes('@')) return this.users.get(login);
    return [...this.users.values()].find((u) => u.email?.toLowerCase() === login.toLowerCase());
  }

  async get(name: string): Promise<UserRecord | undefined> {
    return this.users.get(name);
  }

  known(name: string): UserRecord | undefined {
    return this.users.get(name);
  }

  /** Users created through `create` (auto mapping), as the objects sent. */
  readonly created: Record<string, unknown>[] = [];

  async findLinked(provider: string, userId: string): Promise<UserRecord | undefined> {
    const linked = [...this.users.values()].filter((u) => u.link?.provider === provider && u.link.userId === userId);
    return linked.length === 1 ? linked[0] : undefined;
  }

  async create(object: Record<string, unknown>): Promise<UserRecord | 'exists'> {
    const record = userRecordFrom({
      ...object,
      metadata: { ...(object.metadata as object), uid: `uid-${String((object.metadata as { name: string }).name)}` },
    });
    if (this.users.has(record.name)) return 'exists';
    this.created.push(object);
    const user = { ...record, resourceVersion: String(this.version++) };
    this.users.set(user.name, user);
    return user;
  }

  async passwordHashOf(user: UserRecord): Promise<string | undefined> {
    return this.users.get(user.name)?.passwordHash;
  }

  groupsOf(user: UserRecord): readonly string[] {
    return user.groups;
  }

  async replacePassword(
    name: string,
    hash: string,
    allowed: (user: UserRecord) => boolean,
  ): Promise<'replaced' | 'gone' | 'refused'> {
    const user = this.users.get(name);
    if (!user) return 'gone';
    if (!allowed(user)) return 'refused';
    this.users.set(name, { ...user, passwordHash: hash, resourceVersion: String(this.version++) });
    return 'replaced';
  }

  async updateStatus(name: string, change: (user: UserRecord) => UserStatusPatch | undefined): Promise<void> {
    const user = this.users.get(name);
    if (!user) return;
    const patch = change(user);
    if (!patch) return;
    this.statusWrites++;
    const next: UserRecord = { ...user, resourceVersion: String(this.version++) };
    if (patch.state) next.state = patch.state;
    if (patch.lockedUntil === null) next.lockedUntil = undefined;
    else if (patch.lockedUntil !== undefined) next.lockedUntil = Date.parse(patch.lockedUntil);
    if (patch.failedLogins === null) next.failedLogins = [];
    else if (patch.failedLogins) {
      next.failedLogins = patch.failedLogins.map((f) => ({ time: Date.parse(f.time), sourceIP: f.sourceIP }));
    }
    this.users.set(name, next);
  }
}

export class InMemorySessionStore implements SessionStore {
  readonly sessions = new Map<string, LoginSession>();
  private version = 1;
  /** Runs before a replace is applied: lets a test interleave another write (a concurrent refresh). */
  beforeReplace: (() => Promise<void>) | undefined;

  async create(spec: SessionSpec, id = newSessionId()): Promise<LoginSession> {
    if (this.sessions.has(id)) throw new SessionExists(id);
    const session: LoginSession = { ...spec, id, resourceVersion: String(this.version++) };
    this.sessions.set(session.id, session);
    return session;
  }

  async find(id: string): Promise<LoginSession | undefined> {
    return this.sessions.get(id);
  }

  /** As the cluster store: memory answers at once unless `askedOnly` (to take the asked path in a test). */
  askedOnly = false;
  known(id: string): LoginSession | undefined {
    return this.askedOnly ? undefined : this.sessions.get(id);
  }

  async read(id: string): Promise<LoginSession | undefined> {
    return this.sessions.get(id);
  }

  async replace(session: LoginSession, spec: SessionSpec): Promise<LoginSession | 'conflict' | 'gone'> {
    await this.beforeReplace?.();
    const current = this.sessions.get(session.id);
    if (!current) return 'gone';
    if (current.resourceVersion !== session.resourceVersion) return 'conflict';
    const next: LoginSession = { ...spec, id: session.id, resourceVersion: String(this.version++) };
    this.sessions.set(session.id, next);
    return next;
  }

  async delete(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  async listForUser(username: string): Promise<LoginSession[]> {
    return [...this.sessions.values()].filter((s) => s.username === username);
  }

  async endBeyondCap(username: string, cap: number, keep: string): Promise<string[]> {
    const others = (await this.listForUser(username)).filter((session) => session.id !== keep);
    const beyond = sessionsBeyondCap(others, cap - 1);
    for (const session of beyond) this.sessions.delete(session.id);
    return beyond.map((session) => session.id);
  }
}

export function staticKey(key = Buffer.alloc(32, 7)): SigningKeyProvider {
  const keys = hmacKeySet(key);
  return { keys: () => keys };
}

/** Allows what `allowed` says, and records what it was asked. */
export class RecordingAuthorizer implements Authorizer {
  readonly asked: Array<{ user: UserInfo; attributes: ResourceAttributes }> = [];
  constructor(private readonly allowed: (user: UserInfo, attributes: ResourceAttributes) => boolean) {}
  async authorize(user: UserInfo, attributes: ResourceAttributes): Promise<AccessDecision> {
    this.asked.push({ user, attributes });
    return { allowed: this.allowed(user, attributes) };
  }
}

/** A logger as production builds it (same formats, redaction included) whose finished lines the test can read. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger('debug', { sink: (line) => lines.push(line) });
  return { logger, lines };
}

/** Redemptions in memory; several identities built on one instance behave like replicas of one cluster. */
export class InMemoryCodeRedemptions implements CodeRedemptions {
  readonly records = new Map<string, Redemption>();

  async record(digest: string, redemption: Redemption): Promise<boolean> {
    if (this.records.has(digest)) return false;
    this.records.set(digest, redemption);
    return true;
  }
}

/** Login records kept in memory, with the recorder's limits (newest first, age and count). */
export class InMemoryLoginRecords implements LoginRecords {
  readonly byUser = new Map<string, LoginRecord[]>();
  constructor(
    private readonly limits: () => { maxAgeSeconds: number; maxPerUser: number },
    private readonly clock: () => number,
  ) {}

  record(username: string, record: LoginRecord): void {
    this.byUser.set(username, [...(this.byUser.get(username) ?? []), record]);
  }

  async read(username: string): Promise<LoginRecord[]> {
    return keptRecords(this.byUser.get(username) ?? [], this.clock(), this.limits());
  }
}

/** A user store's password Secrets where there are none: every hash is the one a User object still holds. */
export const noPasswordHashes = {
  hashOf: async () => undefined,
  set: async () => {
    throw new Error('no password Secrets in this test');
  },
};
