import { createHmac, randomBytes } from 'node:crypto';
import type { AuthSettings } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import type { LoginLimiter } from '../users/login-limiter.js';
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
}

export interface PasswordAttempt {
  login: string;
  password: string;
  sourceIp: string;
}

/** What the audit line says about who tried, filled in as the attempt is understood. */
export interface AttemptSubject {
  user?: string;
}

/**
 * The user whose password this is, or an `OAuthError`: 400 invalid_grant (the one description whether or not the
 * user exists), 429 while a limit holds, 503 when the checks are saturated.
 */
export async function checkPassword(
  deps: PasswordLoginDeps,
  attempt: PasswordAttempt,
  note: AttemptSubject,
): Promise<UserRecord> {
  const { login, password } = attempt;
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
  const user = admitted.user;
  const now = deps.clock();
  let matches: boolean;
  try {
    matches = await deps.passwords.verify(password, user?.passwordHash);
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
  await admitted.succeeded(now).catch((err: unknown) => {
    // the login stands; only the bookkeeping (last login, cleared failures) is missing
    deps.logger.warn('could not record a successful login in the User status', { user: user.name, error: String(err) });
  });
  return user;
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
