import bcrypt from 'bcrypt';
import type { AuthSettings } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import {
  BadRequestError,
  ForbiddenError,
  InvalidParameterError,
  NotFoundError,
  ServiceUnavailableError,
  TooManyRequestsError,
} from '../../server/errors.js';
import type { Authorizer, UserInfo } from '../identity.js';
import type { TokenEvents } from '../oauth/issue-tokens.js';
import type { SessionStore } from '../sessions/sessions.js';
import type { LoginLimiter } from '../users/login-limiter.js';
import { PasswordChecksBusy, type PasswordVerifier } from '../users/passwords.js';
import type { UserRecord } from '../users/user-record.js';
import type { UserStore } from '../users/users.js';
import { passwordProblem } from './password-policy.js';

/**
 * `PUT /kapis/iam.kapi.io/v1beta1/users/{name}/password` (SPEC §14): a user changes their own password with the
 * current one; an administrator — whom the cluster's RBAC allows `update` on `users/password` in `iam.kapi.io` — sets
 * anyone's without it. The new password meets the configured policy; afterwards every other login session of the
 * user ends (the caller's own stays), on every replica. A directory user's password lives in the directory: 400.
 */
export interface PasswordChangeDeps {
  users: UserStore;
  sessions: SessionStore;
  passwords: PasswordVerifier;
  limiter: LoginLimiter;
  authorizer: Authorizer;
  settings: () => AuthSettings;
  clock: () => number;
  logger: Logger;
  events?: TokenEvents;
  /** bcrypt at cost 10 unless given (tests use cost 4). */
  hash?: (password: string) => Promise<string>;
}

export interface PasswordChange {
  /** Required when the caller changes their own password. */
  currentPassword?: string;
  password: string;
}

export interface PasswordChanged {
  /** The user's login sessions that ended (all but the caller's own). */
  endedSessions: number;
}

const BCRYPT_COST = 10;

/** A new password's bcrypt hash, at kapi's cost (10). */
export const hashPassword = (password: string): Promise<string> => bcrypt.hash(password, BCRYPT_COST);

export async function changePassword(
  deps: PasswordChangeDeps,
  caller: UserInfo,
  target: string,
  change: PasswordChange,
  sourceIp: string,
): Promise<PasswordChanged> {
  const own = caller.username === target;
  if (!own) await requireAdministrator(deps.authorizer, caller, target);
  const user = await deps.users.get(target);
  if (!user)
    throw new NotFoundError(`users.iam.kapi.io "${target}" not found`, {
      name: target,
      group: 'iam.kapi.io',
      kind: 'users',
    });
  if (user.link) throw keptUpstream(target, user.link.provider);
  const problem = passwordProblem(change.password, target, deps.settings().passwordPolicy);
  if (problem) throw new InvalidParameterError('password', problem);
  if (own) await checkCurrentPassword(deps, user, change.currentPassword, sourceIp);

  const hash = await (deps.hash ?? hashPassword)(change.password);
  const outcome = await deps.users.replacePassword(target, hash, (fresh) => !fresh.link && fresh.uid === user.uid);
  if (outcome === 'gone') throw new NotFoundError(`users.iam.kapi.io "${target}" not found`, { name: target });
  // linked to a provider (or deleted and created again) since it was read
  if (outcome === 'refused')
    throw new BadRequestError(`the password of user "${target}" is now kept by an identity provider`);

  const keep = own ? caller.sessionId : undefined;
  const others = (await deps.sessions.listForUser(target)).filter((session) => session.id !== keep);
  await Promise.all(others.map((session) => deps.sessions.delete(session.id)));
  for (let i = 0; i < others.length; i++) deps.events?.revoked?.('password_change');
  deps.logger.info('password changed', {
    audit: 'password',
    user: target,
    by: caller.username,
    sourceIp,
    endedSessions: others.length,
  });
  return { endedSessions: others.length };
}

function keptUpstream(target: string, provider: string): BadRequestError {
  return new BadRequestError(
    `the password of user "${target}" is kept by identity provider "${provider}": change it there`,
  );
}

async function requireAdministrator(authorizer: Authorizer, caller: UserInfo, target: string): Promise<void> {
  const decision = await authorizer.authorize(caller, {
    verb: 'update',
    group: 'iam.kapi.io',
    resource: 'users',
    subresource: 'password',
    name: target,
  });
  if (!decision.allowed) {
    throw new ForbiddenError(
      `users.iam.kapi.io "${target}" is forbidden: User "${caller.username}" cannot update resource "users/password" in API group "iam.kapi.io" at the cluster scope`,
      { name: target, group: 'iam.kapi.io', kind: 'users' },
    );
  }
}

/**
 * The current password, checked under the same brute-force limits as a login: a stolen access token must not turn
 * into unlimited guesses at the password it could then replace.
 */
async function checkCurrentPassword(
  deps: PasswordChangeDeps,
  user: UserRecord,
  currentPassword: string | undefined,
  sourceIp: string,
): Promise<void> {
  if (currentPassword === undefined || currentPassword === '') {
    throw new InvalidParameterError('currentPassword', 'is required to change your own password');
  }
  const admission = await deps.limiter.admit(
    { sourceIp, login: user.name, lookup: (name) => deps.users.find(name) },
    deps.clock,
    () => deps.settings().loginLimit,
  );
  if ('busy' in admission) throw new ServiceUnavailableError('too many password checks are running; try again');
  if ('retryAfterSeconds' in admission) {
    throw new TooManyRequestsError('too many failed password checks; try again later', admission.retryAfterSeconds);
  }
  const { admitted } = admission;
  let matches: boolean;
  try {
    matches = await deps.passwords.verify(currentPassword, await deps.users.passwordHashOf(user));
  } catch (err) {
    admitted.withdrawn();
    if (err instanceof PasswordChecksBusy)
      throw new ServiceUnavailableError('too many password checks are running; try again');
    throw err;
  }
  if (!matches) {
    await admitted.failed(deps.clock());
    throw new InvalidParameterError('currentPassword', 'is not the current password');
  }
  // a right password is no login: nothing to record
  admitted.withdrawn();
}
