/**
 * The identity HTTP surface over in-memory stores: the /oauth router, the authentication middleware and the guard,
 * mounted the way the server mounts them, with the server's own error handler for Status answers. Two instances
 * built on the same stores behave like two replicas on one cluster.
 */
import bcrypt from 'bcrypt';
import express from 'express';
import request from 'supertest';
import type { AuthSettings } from '../../src/config/cluster-configuration.js';
import { assembleIdentity } from '../../src/auth/index.js';
import type { TokenEvents } from '../../src/auth/oauth/issue-tokens.js';
import type { Authorizer } from '../../src/auth/identity.js';
import { bcryptPasswords, type PasswordVerifier } from '../../src/auth/users/passwords.js';
import type { SigningKeyProvider } from '../../src/auth/tokens/signing-key.js';
import type { TokenPolicy } from '../../src/auth/tokens/tokens.js';
import type { SessionStore } from '../../src/auth/sessions/sessions.js';
import type { UserStore } from '../../src/auth/users/users.js';
import type { IdentityProviders } from '../../src/auth/providers/registry.js';
import { errorHandler, notFound } from '../../src/server/error-handler.js';
import { requestId } from '../../src/server/request-id.js';
import {
  FakeClock,
  InMemoryCodeRedemptions,
  InMemoryLoginRecords,
  InMemorySessionStore,
  InMemoryUserStore,
  RecordingAuthorizer,
  TEST_SETTINGS,
  capturingLogger,
  staticKey,
} from './fakes.js';

export interface TestIdentity {
  app: express.Express;
  identity: ReturnType<typeof assembleIdentity>;
  users: InMemoryUserStore;
  sessions: InMemorySessionStore;
  redemptions: InMemoryCodeRedemptions;
  clock: FakeClock;
  /** Every finished log line, as production would print it. */
  lines: string[];
  /** Read per request: tests may change it, as the ClusterConfiguration watcher would. */
  settings: { current: AuthSettings };
  records: InMemoryLoginRecords;
}

export interface TestIdentityOptions {
  settings?: Partial<AuthSettings>;
  users?: InMemoryUserStore;
  sessions?: InMemorySessionStore;
  redemptions?: InMemoryCodeRedemptions;
  clock?: FakeClock;
  keys?: SigningKeyProvider;
  policy?: TokenPolicy;
  authorizer?: Authorizer;
  /** Wraps the stores, e.g. to make them fail. */
  wrapUsers?: (users: UserStore) => UserStore;
  wrapSessions?: (sessions: SessionStore) => SessionStore;
  onLogin?: (grant: string, result: string) => void;
  /** Refresh outcomes and revocations (metrics). */
  tokenEvents?: TokenEvents;
  /** bcrypt on libuv's pool unless given (e.g. a saturated pool). */
  passwords?: PasswordVerifier;
  /** Identity providers (e.g. `FakeDirectory`s in a registry). */
  providers?: IdentityProviders;
}

export function testIdentity(options: TestIdentityOptions = {}): TestIdentity {
  const users = options.users ?? new InMemoryUserStore();
  const sessions = options.sessions ?? new InMemorySessionStore();
  const redemptions = options.redemptions ?? new InMemoryCodeRedemptions();
  const clock = options.clock ?? new FakeClock();
  const settings = { current: { ...TEST_SETTINGS, ...options.settings } };
  const { logger, lines } = capturingLogger();
  const records = new InMemoryLoginRecords(() => settings.current.loginRecords, clock.read);
  const identity = assembleIdentity({
    loginRecords: records,
    users: options.wrapUsers ? options.wrapUsers(users) : users,
    sessions: options.wrapSessions ? options.wrapSessions(sessions) : sessions,
    redemptions,
    keys: options.keys ?? staticKey(),
    policy: options.policy,
    authorizer: options.authorizer ?? new RecordingAuthorizer((user) => user.groups.includes('node-readers')),
    passwords: options.passwords ?? bcryptPasswords,
    settings: () => settings.current,
    logger,
    clock: clock.read,
    onLogin: options.onLogin,
    tokenEvents: options.tokenEvents,
    providers: options.providers,
    hashPassword: (password) => bcrypt.hash(password, 4),
  });

  const app = express();
  // the tests choose the client address per request through X-Forwarded-For
  app.set('trust proxy', true);
  app.use(requestId);
  app.use(identity.oauthRouter);
  app.use(identity.authenticate);
  app.use(identity.accountRouter);
  app.get('/whoami', (req, res) => {
    res.json(req.user);
  });
  app.get(
    '/kapis/resources.kapi.io/v1alpha3/nodes',
    identity.guard({ verb: 'list', resource: 'nodes' }),
    (_req, res) => {
      res.json({ items: [], totalItems: 0 });
    },
  );
  app.use(notFound);
  app.use(errorHandler(logger));
  return { app, identity, users, sessions, redemptions, clock, lines, settings, records };
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
}

/** POST /oauth/token with a form body, from `ip`. */
export function tokenRequest(app: express.Express, form: Record<string, string>, ip = '192.0.2.1') {
  return request(app)
    .post('/oauth/token')
    .set('X-Forwarded-For', ip)
    .type('form')
    .send(new URLSearchParams(form).toString());
}

export const client = { client_id: 'kapi', client_secret: 'kapi-secret' };

export async function login(app: express.Express, username: string, password: string, ip?: string): Promise<Tokens> {
  const res = await tokenRequest(app, { grant_type: 'password', username, password, ...client }, ip);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Tokens;
}

export function refresh(app: express.Express, refreshToken: string) {
  return tokenRequest(app, { grant_type: 'refresh_token', refresh_token: refreshToken, ...client });
}

export function whoami(app: express.Express, accessToken: string) {
  return request(app).get('/whoami').set('Authorization', `Bearer ${accessToken}`);
}
