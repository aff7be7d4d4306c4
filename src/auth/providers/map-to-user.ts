import type { IdentityProviderSettings } from '../../config/cluster-configuration.js';
import type { Logger } from '../../observability/logger.js';
import type { UserRecord } from '../users/user-record.js';
import type { UserStore } from '../users/users.js';
import type { UpstreamIdentity } from './identity-provider.js';
import { candidateUserNames, linkedUserObject, sessionGroups } from './user-link.js';

export { LOCAL_PROVIDER } from '../../config/identity-providers/index.js';

/**
 * Who logged in, whichever way: the User, the provider that vouched for them, and the groups the login session
 * keeps from that provider (prefixed, `system:` dropped). Every grant that starts a session takes one.
 */
export interface SignedInUser {
  user: UserRecord;
  /** `LOCAL_PROVIDER` for a local User's own password; else the name of the provider that vouched for the user. */
  provider: string;
  upstreamGroups: readonly string[];
}

export type Mapping = { signedIn: SignedInUser } | { refused: string };

/**
 * The User an upstream identity maps to (SPEC §14):
 * - a User linked to exactly this identity (same provider, same id) is the one, whatever its name;
 * - `lookup`: no linked User, no login;
 * - `auto`: the first login creates a linked User under the first free candidate name (./user-link.ts); a name taken
 *   by a local User or another identity's User is never taken over. Two replicas creating at once end with the same
 *   User: the loser of the create reads the winner's and finds it linked to the same identity.
 * - a Disabled User refuses the login. A lock (AuthLimitExceeded) is the caller's to check, with its limits.
 * The refusal reasons are for the audit line only; the client always gets the one invalid_grant description.
 */
export async function signInUpstream(
  identity: UpstreamIdentity,
  provider: Pick<IdentityProviderSettings, 'name' | 'mappingMethod' | 'groupPrefix'>,
  users: UserStore,
  logger: Logger,
): Promise<Mapping> {
  if (identity.provider !== provider.name) throw new Error('an identity mapped through another provider');
  const user = await linkedUser(identity, provider, users, logger);
  if ('refused' in user) return user;
  if (user.state === 'Disabled') return { refused: 'user disabled' };
  return {
    signedIn: {
      user,
      provider: provider.name,
      upstreamGroups: sessionGroups(identity.groups, provider.groupPrefix),
    },
  };
}

async function linkedUser(
  identity: UpstreamIdentity,
  provider: Pick<IdentityProviderSettings, 'name' | 'mappingMethod'>,
  users: UserStore,
  logger: Logger,
): Promise<UserRecord | { refused: string }> {
  const linked = await users.findLinked(identity.provider, identity.userId);
  if (linked) return linked;
  if (provider.mappingMethod === 'lookup') return { refused: 'no user linked to this identity (mappingMethod lookup)' };

  const emailTaken = identity.email ? (await users.find(identity.email, { cacheOnly: true })) !== undefined : true;
  for (const name of candidateUserNames(identity)) {
    const existing = await users.get(name);
    if (existing) {
      if (isLinkedTo(existing, identity)) return existing;
      continue;
    }
    const created = await users.create(linkedUserObject(identity, name, !emailTaken));
    if (created !== 'exists') {
      logger.info('user created for an upstream identity', {
        audit: 'user',
        user: created.name,
        provider: identity.provider,
      });
      return created;
    }
    // created a moment ago elsewhere: ours if it stands for the same identity (another replica's first login)
    const winner = await users.get(name);
    if (winner && isLinkedTo(winner, identity)) return winner;
  }
  logger.warn('no free user name for an upstream identity: every candidate is another user', {
    provider: identity.provider,
    candidates: candidateUserNames(identity),
  });
  return { refused: 'no free user name' };
}

function isLinkedTo(user: UserRecord, identity: UpstreamIdentity): boolean {
  return user.link?.provider === identity.provider && user.link.userId === identity.userId;
}
