import type { Reflector } from '../kube/reflector.js';
import { Router, type RequestHandler } from 'express';
import type { AuthSettings } from '../config/cluster-configuration.js';
import type { ReadinessCheck } from '../kube/caches.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { accessGuard } from './authorization/access-guard.js';
import { authenticate, requestAuthenticator, type RequestAuthenticator } from './authenticate.js';
import { SubjectAccessReviewAuthorizer } from './authorization/authorizer.js';
import type { AccessGuard, Authorizer } from './identity.js';
import { loginAudit } from './oauth/login-audit.js';
import type { TokenEvents } from './oauth/issue-tokens.js';
import { LoginLimiter } from './users/login-limiter.js';
import { oauthRoutes } from './oauth/oauth-routes.js';
import { PasswordCheckPool } from './users/password-pool.js';
import { passwordVerifier, type PasswordVerifier } from './users/passwords.js';
import type { RevocationListener } from './sessions/revocations.js';
import { ClusterSessionStore, type SessionStore } from './sessions/sessions.js';
import { SecretSigningKey, type SigningKeyProvider } from './tokens/signing-key.js';
import { tokenPolicy, type TokenPolicy } from './tokens/tokens.js';
import { discoveryRoutes } from './tokens/discovery-routes.js';
import { DepartmentIndex } from './departments/department-index.js';
import { ClusterUserStore, type LoginMissReads, type UserStore } from './users/users.js';
import { PasswordHashes } from './users/password-hashes.js';
import type { CodeRedemptions } from './browser/authorization-codes.js';
import { browserRoutes } from './browser/browser-routes.js';
import { authorizationCodeGrant } from './browser/code-grant.js';
import { ClusterCodeRedemptions } from './browser/code-redemptions.js';
import { userInfoEndpoint } from './oauth/userinfo.js';
import { IdentityProviders, type ProviderFactories } from './providers/registry.js';
import { ldapProvider } from './providers/ldap/ldap-provider.js';
import { oidcProvider } from './providers/oidc/oidc-provider.js';
import { accountRoutes } from './account/account-routes.js';
import { LoginRecorder } from './login-records/login-recorder.js';
import type { LoginRecords } from './login-records/login-records.js';
import { LOCAL_PROVIDER } from '../config/identity-providers/index.js';
import type { LoginAttemptRecord } from './oauth/login-audit.js';
import { mintProbeToken, type ProbeToken } from './passable-token.js';

/** The identity provider types this build can run (types the configuration names but no factory builds are refused). */
export const PROVIDER_FACTORIES: ProviderFactories = { LDAP: ldapProvider, OIDC: oidcProvider };

export { withoutBearerSubprotocol, BEARER_SUBPROTOCOL_PREFIX } from './tokens/bearer-token.js';
export type { Revocation, RevocationListener } from './sessions/revocations.js';

/** What the server gets from identity: the public OAuth routes, authentication, authorization, readiness. */
export interface Identity {
  /**
   * Mount before authentication: it serves /oauth/token, /oauth/revoke, /oauth/logout, /oauth/userinfo, the browser
   * sign-in (/oauth/authorize, /oauth/login), and the published keys and OpenID discovery under /.well-known.
   */
  oauthRouter: Router;
  /** Mount under /kapis/iam.kapi.io/v1beta1 after authentication: password changes and login records. */
  accountRouter: Router;
  /** Middleware: `req.user`, or a 401/503 Status through the error handler. */
  authenticate: RequestHandler;
  /** The same check on a raw (upgrade) request; removes a token subprotocol entry on success. */
  authenticateRequest: RequestAuthenticator;
  authorizer: Authorizer;
  guard: AccessGuard;
  /**
   * Sessions ended and users deleted or disabled, as soon as this replica knows (its own deletes at once, others'
   * through the watches): for ending streams that were authenticated once, when they opened.
   */
  onRevoked(listener: RevocationListener): () => void;
  readiness: ReadinessCheck[];
  /** Ends every login session of the user (a deleted or disabled user's); how many there were. */
  endSessionsOf(username: string): Promise<number>;
  /** Makes `hash` the password of the User `user` (uid `uid`): its Secret in kapi's namespace. */
  setPasswordHash(user: string, uid: string, hash: string): Promise<void>;
  /** The watch of Users, for the listings that attach to it. */
  usersWatch: Reflector<unknown>;
  /** A token that asks kube-apiserver whether it accepts kapi's tokens (token pass-through), when it could at all. */
  passThroughProbe(): ProbeToken | undefined;
  /** Loads the signing key and starts the user and session watches; resolves once they synced or waited 10 s. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface IdentityConfig {
  client: KubeClient;
  logger: Logger;
  /** The current authentication settings (the watched ClusterConfiguration's snapshot), read per request. */
  settings: () => AuthSettings;
  signingKeySecret: { namespace: string; name: string };
  /** Sandbox only: a random in-memory signing key when the Secret is missing. */
  allowGeneratedKey: boolean;
  /** The `iss` of tokens (an https URL for OIDC consumers); default 'kapi'. */
  issuerUrl?: string;
  metrics?: Metrics;
  clock?: () => number;
  /** How each type of identity provider is built; default `PROVIDER_FACTORIES`. */
  providerFactories?: ProviderFactories;
  /** How often logins whose name the users cache does not know may read it from the cluster; default LOGIN_MISS_READS. */
  loginMissReads?: LoginMissReads;
  /** Called once a login created a User (a directory's first login), before the login is answered. */
  onUserCreated?: (name: string) => Promise<void>;
  /**
   * Whether the tenant guard holds the fields of Users that grant (groups, a hash in the object) to kapi's rules;
   * without it they are not taken. Default: trusted (tests of identity alone).
   */
  userFieldsTrusted?: () => boolean;
}

const START_SYNC_TIMEOUT_MS = 10_000;

/** Identity backed by the cluster: Users, LoginSessions and the signing-key Secret, read through `client`. */
export function createIdentity(config: IdentityConfig): Identity {
  const { client, logger } = config;
  const clock = config.clock ?? Date.now;
  const passwordHashes = new PasswordHashes(client, logger, config.signingKeySecret.namespace);
  const departments = new DepartmentIndex(client, logger);
  const users = new ClusterUserStore(
    client,
    logger,
    passwordHashes,
    config.loginMissReads,
    config.onUserCreated,
    config.userFieldsTrusted,
    departments,
  );
  const sessions = new ClusterSessionStore(client, logger, clock, () => {
    const settings = config.settings();
    return settings.multipleLogin ? settings.maxSessionsPerUser : 1;
  });
  const policy = tokenPolicy(config.issuerUrl);
  const keys = new SecretSigningKey({
    client,
    logger,
    secret: config.signingKeySecret,
    allowGenerated: config.allowGeneratedKey,
  });
  const metrics = config.metrics;
  const authorizer = new SubjectAccessReviewAuthorizer({
    client,
    logger,
    clock,
    onCacheLookup: metrics && ((result) => metrics.authorizationCacheLookups.inc({ result })),
  });
  const passwordChecks = new PasswordCheckPool();
  const redemptions = new ClusterCodeRedemptions(client, logger, clock);
  const providers = new IdentityProviders(
    () => config.settings().identityProviders,
    config.providerFactories ?? PROVIDER_FACTORIES,
    logger,
  );
  const loginRecords = new LoginRecorder({
    client,
    logger,
    settings: () => config.settings().loginRecords,
    user: (name) => users.get(name),
    clock,
  });
  const parts = assembleIdentity({
    providers,
    loginRecords,
    users,
    sessions,
    redemptions,
    keys,
    policy,
    authorizer,
    passwords: passwordVerifier((password, hash) => passwordChecks.compare(password, hash)),
    settings: config.settings,
    logger,
    clock,
    onLogin: metrics && ((grant, result) => metrics.logins.inc({ grant, result })),
    tokenEvents: metrics && {
      refreshed: (result) => metrics.tokenRefreshes.inc({ result }),
      revoked: (via) => metrics.sessionRevocations.inc({ via }),
    },
  });
  return {
    ...parts,
    onRevoked(listener) {
      const unsubscribed = [sessions.onRevoked(listener), users.onRevoked(listener)];
      return () => unsubscribed.forEach((unsubscribe) => unsubscribe());
    },
    // the departments' caches are not among them: until read (or where an upgrade has not applied their CRDs yet)
    // they only grant nothing, which is no reason to stop serving everyone
    readiness: [keys.readiness, users.readiness, passwordHashes.readiness, sessions.readiness],
    async endSessionsOf(username) {
      const ended = await sessions.listForUser(username);
      await Promise.all(ended.map((session) => sessions.delete(session.id)));
      return ended.length;
    },
    setPasswordHash: (user, uid, hash) => passwordHashes.set(user, uid, hash),
    usersWatch: users.watch,
    passThroughProbe() {
      const keySet = keys.keys();
      return keySet && mintProbeToken(keySet, policy.issuer, Math.floor(clock() / 1000));
    },
    async start() {
      users.start();
      departments.start();
      passwordHashes.start();
      loginRecords.start();
      sessions.start();
      redemptions.start();
      await keys.start();
      await Promise.all([
        users.waitForSync(START_SYNC_TIMEOUT_MS),
        departments.waitForSync(START_SYNC_TIMEOUT_MS),
        passwordHashes.waitForSync(START_SYNC_TIMEOUT_MS),
        sessions.waitForSync(START_SYNC_TIMEOUT_MS),
      ]).catch((err: unknown) =>
        logger.warn('identity caches not synced yet; /readyz reports it', { error: String(err) }),
      );
    },
    async stop() {
      redemptions.stop();
      await loginRecords.stop();
      await Promise.all([
        keys.stop(),
        users.stop(),
        departments.stop(),
        passwordHashes.stop(),
        sessions.stop(),
        passwordChecks.close(),
        providers.close(),
      ]);
    },
  };
}

/** The stores and collaborators identity is built from; tests hand in in-memory fakes. */
export interface IdentityParts {
  users: UserStore;
  sessions: SessionStore;
  /** Where redeemed authorization codes are recorded (single use across replicas). */
  redemptions: CodeRedemptions;
  keys: SigningKeyProvider;
  /** Default: tokenPolicy() (issuer 'kapi'). */
  policy?: TokenPolicy;
  authorizer: Authorizer;
  passwords: PasswordVerifier;
  settings: () => AuthSettings;
  logger: Logger;
  clock: () => number;
  onLogin?: (grant: string, result: string) => void;
  /** Refresh outcomes and revocations, for metrics. */
  tokenEvents?: TokenEvents;
  /** The configured identity providers; none: local Users only. */
  providers?: IdentityProviders;
  /** How new passwords are hashed; bcrypt at cost 10 unless given (tests use cost 4). */
  hashPassword?: (password: string) => Promise<string>;
  /** Where login attempts are recorded and read back; none: no login records. */
  loginRecords?: LoginRecords;
}

/** An attempt of a user who exists, as a login record (a name that matched nobody has no User to keep it). */
function recordAttempt(records: LoginRecords, attempt: LoginAttemptRecord, clock: () => number): void {
  if (!attempt.user || attempt.user.startsWith('unknown:')) return;
  records.record(attempt.user, {
    time: clock(),
    grant: attempt.grant,
    provider: attempt.provider ?? LOCAL_PROVIDER,
    client: attempt.client ?? '',
    sourceIP: attempt.sourceIp,
    userAgent: attempt.userAgent ?? '',
    result: attempt.result,
    reason: attempt.reason,
    ...(attempt.via ? { via: attempt.via } : {}),
  });
}

/** Wires the parts into routes and middleware; shared by `createIdentity` and tests. */
export function assembleIdentity(
  parts: IdentityParts,
): Pick<Identity, 'oauthRouter' | 'accountRouter' | 'authenticate' | 'authenticateRequest' | 'authorizer' | 'guard'> {
  const { users, sessions, keys, settings, logger, clock } = parts;
  const policy = parts.policy ?? tokenPolicy();
  const authenticateRequest = requestAuthenticator({ keys, policy, sessions, users, clock, logger, settings });
  const records = parts.loginRecords;
  const audit = loginAudit(logger, parts.onLogin, records && ((attempt) => recordAttempt(records, attempt, clock)));
  // one limiter for every password login: the token endpoint's and the login page's failures count together
  const limiter = new LoginLimiter(users);
  const events = parts.tokenEvents;
  const signIn = { users, sessions, keys, policy, settings, clock, logger, audit, events };
  const oauthRouter = Router();
  oauthRouter.use(discoveryRoutes({ keys, policy }));
  oauthRouter.use(
    oauthRoutes({
      issuer: {
        users,
        sessions,
        passwords: parts.passwords,
        providers: parts.providers,
        limiter,
        keys,
        policy,
        settings,
        clock,
        audit,
        logger,
        events,
        authorizationCode: (client, params, note) =>
          authorizationCodeGrant({ ...signIn, redemptions: parts.redemptions }, client, params, note),
      },
      browser: browserRoutes({ ...signIn, passwords: parts.passwords, providers: parts.providers, limiter }),
      userInfo: userInfoEndpoint({ authenticateRequest, users }),
      sessions,
      keys,
      policy,
      settings,
      clock,
      logger,
    }),
  );
  const accountRouter = accountRoutes({
    users,
    sessions,
    passwords: parts.passwords,
    limiter,
    authorizer: parts.authorizer,
    settings,
    clock,
    logger,
    events,
    hash: parts.hashPassword,
    loginRecords: records,
  });
  return {
    oauthRouter,
    accountRouter,
    authenticate: authenticate(authenticateRequest),
    authenticateRequest,
    authorizer: parts.authorizer,
    guard: accessGuard(parts.authorizer),
  };
}
