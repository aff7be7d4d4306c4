import type { Logger } from '../../observability/logger.js';
import { ProviderUnavailable, isRefreshProvider } from '../providers/identity-provider.js';
import type { IdentityProviders } from '../providers/registry.js';
import { sessionGroups } from '../providers/user-link.js';
import type { LoginSession } from '../sessions/session-record.js';
import type { UserRecord } from '../users/user-record.js';
import { BAD_REFRESH_TOKEN, invalidGrant, temporarilyUnavailable } from './oauth-error.js';

/**
 * A refresh of a session its identity provider vouched for reads the user's groups there again, so a person taken
 * out of a directory group loses that group's rights at the next refresh (SPEC §14). Answers the groups the rotated
 * session keeps: `undefined` (keep the session's) for a local User or a provider that cannot refresh. An
 * `OAuthError` when the provider is gone from the configuration or no longer knows the user (the caller ends the
 * session), or 503 when it cannot answer (the session stands; try again).
 */
export async function refreshedUpstreamGroups(
  providers: IdentityProviders | undefined,
  user: UserRecord,
  session: LoginSession,
  logger: Logger,
): Promise<{ groups: readonly string[] | undefined } | { ended: string }> {
  if (!user.link) return { groups: undefined };
  const provider = providers?.get(user.link.provider);
  if (!provider) return { ended: 'identity provider no longer configured' };
  if (!isRefreshProvider(provider)) return { groups: session.groups };
  try {
    const identity = await provider.refresh(user.link);
    if (!identity) return { ended: 'the identity provider no longer knows the user' };
    return { groups: sessionGroups(identity.groups, provider.settings.groupPrefix) };
  } catch (err) {
    if (!(err instanceof ProviderUnavailable)) throw err;
    logger.warn('identity provider unavailable for a refresh', { provider: err.provider, reason: err.reason });
    throw temporarilyUnavailable('the identity provider cannot be reached right now; try again').because(
      `identity provider unavailable (${err.provider})`,
    );
  }
}

/** The refusal for a session whose upstream identity ended. */
export const upstreamEnded = (reason: string) => invalidGrant(BAD_REFRESH_TOKEN).because(reason);
