import { createHmac, randomBytes } from 'node:crypto';
import type { AuthSettings } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import type { AdmittedLogin, LoginLimiter } from '../users/login-limiter.js';
import { userLockRemaining } from '../users/login-limits.js';
import {
  ProviderUnavailable,
  isPasswordProvider,
  type PasswordLoginResult,
  type PasswordProvider,
  type UpstreamIdentity,
} from '../providers/identity-provider.js';
import { LOCAL_PROVIDER, signInUpstream, type Mapping, type SignedInUser } from '../providers/map-to-user.js';
import type { IdentityProviders } from '../providers/registry.js';
import { PasswordChecksBusy, type PasswordVerifier } from '../users/passwords.js';
import type { UserRecord } from '../users/user-record.js';
import type { UserStore } from '../users/users.js';
import { BAD_CREDENTIALS, invalidGrant, temporarilyUnavailable, tooManyAttempts } from './oauth-error.js';

/**
 * A user name (or e-mail) and password checked under the brute-force limits: the one path every password login
 * takes, whether it comes to the token endpoint (password grant) or to kapi's login page. Failures and lockouts are
 * the same for both, and so are the answers (`OAuthError`s the caller audits and turns into its own format).
 */
export interface PasswordLoginDeps {
  users: UserStore;
  passwords: PasswordVerifier;
  limiter: LoginLimiter;
  settings: () => AuthSettings;
  clock: () => number;
  logger: Logger;
  /** The configured identity providers; none: local Users only. */
  providers?: IdentityProviders;
}

export interface PasswordAttempt {
  login: string;
  password: string;
  sourceIp: string;
}

/** What the audit line says about who tried, filled in as the attempt is understood. */
export interface AttemptSubject {
  user?: string;
  /** `local`, or the identity provider that answered. */
  provider?: string;
}

/** A login longer than this is nobody's name: no directory is asked (the attempt still counts as a failure). */
export const MAX_UPSTREAM_LOGIN_BYTES = 1024;

/**
 * Who this password belongs to, or an `OAuthError`: 400 invalid_grant (the one description whether or not the
 * user exists), 429 while a limit holds, 503 when the checks are saturated or a directory cannot answer.
 *
 * Which password counts: a User linked to an identity provider logs in at that provider only; a local User with a
 * password hash is checked here only (a directory account of the same name never shadows it); any other login —
 * nobody by that name or e-mail, or a User with neither — is offered to the password providers in configured order,
 * the first that knows the login deciding. Every wrong password, wherever it was checked, counts towards the same
 * limits; a provider that cannot answer counts for nothing.
 */
export async function checkPassword(
  deps: PasswordLoginDeps,
  attempt: PasswordAttempt,
  note: AttemptSubject,
): Promise<SignedInUser> {
  const { login } = attempt;
  const admission = await deps.limiter.admit(
    {
      sourceIp: attempt.sourceIp,
      login,
      lookup: async (name) => {
        const found = await deps.users.find(name);
        note.user = found ? found.name : unknownLogin(name);
        return found;
      },
    },
    deps.clock,
    () => deps.settings().loginLimit,
  );
  // refused before the user was looked up (a limited address): the audit line still names who was tried
  if (!('admitted' in admission)) note.user ??= await auditedName(deps.users, login);
  if ('busy' in admission) {
    throw temporarilyUnavailable('too many logins are being checked right now; try again').because(
      'waited too long for the login checks in flight',
    );
  }
  if ('retryAfterSeconds' in admission) {
    throw tooManyAttempts(admission.retryAfterSeconds).because(`too many failures (${admission.limitedBy})`);
  }
  const { admitted } = admission;
  const hash = admitted.user && !admitted.user.link ? await deps.users.passwordHashOf(admitted.user) : undefined;
  const route = passwordRoute(admitted.user, hash, deps.providers);
  if ('providers' in route) return upstreamLogin(deps, attempt, admitted, route.providers, note);
  note.provider = LOCAL_PROVIDER;
  const user = await localLogin(deps, attempt, admitted, hash);
  return { user, provider: LOCAL_PROVIDER, upstreamGroups: [] };
}

type PasswordRoute = { local: true } | { providers: readonly PasswordProvider[] };

/** Where a login's password is checked (see `checkPassword`); a linked User whose provider is gone: nowhere. */
function passwordRoute(
  user: UserRecord | undefined,
  hash: string | undefined,
  providers: IdentityProviders | undefined,
): PasswordRoute {
  if (user?.link) {
    const provider = providers?.get(user.link.provider);
    return { providers: provider && isPasswordProvider(provider) ? [provider] : [] };
  }
  if (hash) return { local: true };
  const upstream = (providers?.list() ?? []).filter(isPasswordProvider);
  return upstream.length > 0 ? { providers: upstream } : { local: true };
}

async function localLogin(
  deps: PasswordLoginDeps,
  attempt: PasswordAttempt,
  admitted: AdmittedLogin,
  hash: string | undefined,
) {
  const user = admitted.user;
  const now = deps.clock();
  let matches: boolean;
  try {
    matches = await deps.passwords.verify(attempt.password, hash);
  } catch (err) {
    // saturated checks say nothing about the password: never a failed login, never a step towards a lockout
    if (err instanceof PasswordChecksBusy) {
      admitted.withdrawn();
      throw temporarilyUnavailable('too many logins are being checked right now; try again').because(
        'password checks saturated',
      );
    }
    await admitted.failed(deps.clock());
    throw err;
  }
  if (!matches || !user || user.state === 'Disabled') await admitted.failed(deps.clock());
  if (!user) throw invalidGrant(BAD_CREDENTIALS).because('unknown user');
  if (!matches) throw invalidGrant(BAD_CREDENTIALS).because('wrong password');
  if (user.state === 'Disabled') throw invalidGrant(BAD_CREDENTIALS).because('user disabled');
  recordSuccess(deps, admitted, user, now);
  return user;
}

/**
 * The password checked at the providers, in order, then the identity mapped to its User (./providers/map-to-user).
 * A provider that cannot answer is skipped: a later one may know the login; if none does, the answer is 503 (the
 * login may have been good) and nothing counts. An empty password is never sent anywhere: LDAP takes a bind
 * without one as an anonymous bind that succeeds (RFC 4513 §5.1.2).
 */
async function upstreamLogin(
  deps: PasswordLoginDeps,
  attempt: PasswordAttempt,
  admitted: AdmittedLogin,
  providers: readonly PasswordProvider[],
  note: AttemptSubject,
): Promise<SignedInUser> {
  const { login, password } = attempt;
  if (providers.length === 0) {
    admitted.withdrawn();
    throw invalidGrant(BAD_CREDENTIALS).because('the identity provider of the user is not configured');
  }
  // A failure here costs the bcrypt check a local User's failure costs, so the time of the answer does not tell
  // local names from the others (SPEC §2: the same answer for unknown users).
  const refuse = async (reason: string, owner?: UserRecord): Promise<never> => {
    await deps.passwords.verify(password, undefined).catch(() => false);
    await admitted.failed(deps.clock(), owner);
    throw invalidGrant(BAD_CREDENTIALS).because(reason);
  };
  if (password === '' || Buffer.byteLength(login, 'utf8') > MAX_UPSTREAM_LOGIN_BYTES) {
    return refuse(password === '' ? 'empty password' : 'unknown user');
  }
  let unavailable: ProviderUnavailable | undefined;
  for (const provider of providers) {
    const name = provider.settings.name;
    /** The User the directory's entry is linked to: its lock and failures count whatever variant was typed. */
    let linked: UserRecord | undefined;
    const beforeCheck = async (identity: UpstreamIdentity) => {
      linked = await deps.users.findLinked(identity.provider, identity.userId);
      if (!linked) return;
      note.user = linked.name;
      note.provider = name;
      const locked = deps.limiter.lockRemaining(linked, deps.clock(), deps.settings().loginLimit);
      if (locked !== undefined) throw tooManyAttempts(locked).because('too many failures (user or name)');
    };
    let result: PasswordLoginResult;
    try {
      result = await provider.login(login, password, beforeCheck);
    } catch (err) {
      if (!(err instanceof ProviderUnavailable)) {
        admitted.withdrawn();
        throw err;
      }
      deps.logger.warn('identity provider unavailable for a login', { provider: name, reason: err.reason });
      unavailable ??= err;
      continue;
    }
    if ('unknownUser' in result) continue;
    note.provider = name;
    if ('wrongPassword' in result) return refuse('wrong password', linked);
    let mapping: Mapping;
    try {
      mapping = await signInUpstream(result.identity, provider.settings, deps.users, deps.logger);
    } catch (err) {
      // the cluster could not be asked: nothing is known about the User, so nothing counts
      admitted.withdrawn();
      throw err;
    }
    if ('refused' in mapping) return refuse(mapping.refused, linked);
    const { user } = mapping.signedIn;
    note.user = user.name;
    const now = deps.clock();
    const locked = userLockRemaining(user, now);
    if (locked !== undefined) {
      admitted.withdrawn();
      throw tooManyAttempts(locked).because('too many failures (user or name)');
    }
    recordSuccess(deps, admitted, user, now);
    return mapping.signedIn;
  }
  if (unavailable) {
    admitted.withdrawn();
    throw temporarilyUnavailable('the identity provider cannot be reached right now; try again').because(
      `identity provider unavailable (${unavailable.provider})`,
    );
  }
  return refuse('unknown user');
}

/**
 * The success bookkeeping (last login, cleared failures) goes on beside the session's creation, not before it: during
 * an etcd outage a login then fails once, after the session write's own timeout, instead of after both in turn.
 */
function recordSuccess(deps: PasswordLoginDeps, admitted: AdmittedLogin, user: UserRecord, now: number): void {
  void admitted.succeeded(now).catch((err: unknown) => {
    // the login stands; only the bookkeeping (last login, cleared failures) is missing
    deps.logger.warn('could not record a successful login in the User status', { user: user.name, error: String(err) });
  });
}

/**
 * A name that matches nobody may be a password typed into the wrong field, so it is logged only as a keyed digest:
 * repeated attempts on one name still correlate within this process, but the log holds nothing to guess against.
 */
const UNKNOWN_LOGIN_KEY = randomBytes(32);
export function unknownLogin(login: string): string {
  return `unknown:${createHmac('sha256', UNKNOWN_LOGIN_KEY).update(login).digest('hex').slice(0, 12)}`;
}

/** The name an attempt tried, for the audit line: from the watched cache as it stands, never a cluster read. */
async function auditedName(users: UserStore, login: string): Promise<string> {
  const user = await users.find(login, { cacheOnly: true }).catch(() => undefined);
  return user ? user.name : unknownLogin(login);
}
