import {
  InappropriateAuthError,
  InvalidCredentialsError,
  NoSuchObjectError,
  UnwillingToPerformError,
  type Entry,
} from 'ldapts';
import type { IdentityProviderSettings } from '../../../config/cluster-configuration.js';
import type { LdapProviderSettings } from '../../../config/identity-providers/index.js';
import type { LdapSettings } from '../../../config/identity-providers/ldap.js';
import { andFilter, equalityFilter } from '../../../config/identity-providers/ldap-syntax.js';
import type { Logger } from '../../../observability/logger.js';
import {
  ProviderUnavailable,
  type BeforePasswordCheck,
  type PasswordLoginResult,
  type PasswordProvider,
  type RefreshProvider,
  type UpstreamIdentity,
  type UpstreamLink,
} from '../identity-provider.js';
import { LdapConnectionPool, describe, type Connection } from './connection-pool.js';
import { firstValue, groupNamesFromEntries, memberOfGroupNames } from './entries.js';

/** A user in more groups than this keeps the first ones: a session holds at most 256 anyway. */
const MAX_GROUP_ENTRIES = 1000;

/**
 * An LDAP directory as an identity provider (dex's `connector/ldap/ldap.go`, done the same careful way): the service
 * account searches the login (every value RFC 4515-escaped), the password is checked by binding as the entry found,
 * and the groups are read in their own search (or from the user's memberOf). Nothing about a password is logged.
 */
export class LdapProvider implements PasswordProvider, RefreshProvider {
  readonly settings: LdapProviderSettings;
  private readonly ldap: LdapSettings;
  private readonly pool: LdapConnectionPool;
  private readonly log: Logger;

  constructor(settings: LdapProviderSettings, logger: Logger) {
    this.settings = settings;
    this.ldap = settings.ldap;
    this.pool = new LdapConnectionPool(settings.name, settings.ldap);
    this.log = logger.child({ provider: settings.name });
  }

  async login(login: string, password: string, beforeCheck?: BeforePasswordCheck): Promise<PasswordLoginResult> {
    // an empty password would be an anonymous bind, which succeeds (RFC 4513 §5.1.2): never sent
    if (password === '') return { wrongPassword: true };
    // a refusal before the check is the caller's answer, not a fault of the connection: it goes back to the pool
    let refusal: { error: unknown } | undefined;
    const result = await this.pool.use(async (connection): Promise<PasswordLoginResult | undefined> => {
      const entries = await this.search(
        connection,
        this.ldap.userSearch.baseDN,
        this.ldap.userSearch.scope,
        this.loginFilter(login),
      );
      if (entries.length === 0) return { unknownUser: true };
      if (entries.length > 1) {
        this.log.warn('a login matches several directory entries: refused (make the login attribute unique)', {
          entries: entries.length,
        });
        return { wrongPassword: true };
      }
      const entry = entries[0]!;
      const identity = await this.identityOf(connection, entry, login);
      if (beforeCheck) {
        refusal = await beforeCheck(identity).then(
          () => undefined,
          (error: unknown) => ({ error }),
        );
        if (refusal) return undefined;
      }
      connection.boundAs = 'unknown';
      this.pool.check(connection);
      try {
        await connection.client.bind(entry.dn, password);
      } catch (error) {
        if (refusesTheUser(error)) return { wrongPassword: true };
        throw this.unavailable(`the user's bind failed: ${describe(error)}`);
      }
      return { identity };
    });
    if (refusal) throw refusal.error;
    return result!;
  }

  async refresh(link: UpstreamLink): Promise<UpstreamIdentity | undefined> {
    return this.pool.use(async (connection) => {
      const search = this.ldap.userSearch;
      const entries =
        search.idAttribute === 'DN'
          ? await this.search(connection, link.userId, 'base', search.filter ?? '(objectClass=*)')
          : await this.search(
              connection,
              search.baseDN,
              search.scope,
              andFilter([...(search.filter ? [search.filter] : []), equalityFilter(search.idAttribute, link.userId)]),
            );
      if (entries.length !== 1) return undefined;
      const identity = await this.identityOf(connection, entries[0]!, link.username ?? '');
      return identity.userId === link.userId ? identity : undefined;
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** Connections open to the directory now, busy or idle (at most `maxConnections`). */
  get connections(): number {
    return this.pool.size;
  }

  /** The user's filter: the login attribute, or for a login with "@" the login or mail attribute. */
  private loginFilter(login: string): string {
    const { filter, loginAttribute, mailAttribute } = this.ldap.userSearch;
    const match =
      login.includes('@') && mailAttribute && mailAttribute !== loginAttribute
        ? `(|${equalityFilter(loginAttribute, login)}${equalityFilter(mailAttribute, login)})`
        : equalityFilter(loginAttribute, login);
    return andFilter([...(filter ? [filter] : []), match]);
  }

  private async identityOf(connection: Connection, entry: Entry, login: string): Promise<UpstreamIdentity> {
    const search = this.ldap.userSearch;
    const userId = search.idAttribute === 'DN' ? entry.dn : firstValue(entry, search.idAttribute);
    if (!userId) {
      this.log.error('a directory entry has no value of idAttribute: its logins are refused', {
        idAttribute: search.idAttribute,
      });
      throw this.unavailable(`the entry has no ${search.idAttribute}`);
    }
    const email = search.mailAttribute ? firstValue(entry, search.mailAttribute) : undefined;
    return {
      provider: this.settings.name,
      userId,
      username: firstValue(entry, search.nameAttribute) ?? login,
      ...(email ? { email } : {}),
      groups: await this.groupsOf(connection, entry),
    };
  }

  private async groupsOf(connection: Connection, entry: Entry): Promise<string[]> {
    const groups = this.ldap.memberOfAttribute ? memberOfGroupNames(entry, this.ldap.memberOfAttribute) : [];
    const search = this.ldap.groupSearch;
    if (!search) return groups;
    const member = search.userAttribute === 'DN' ? entry.dn : firstValue(entry, search.userAttribute);
    if (!member) return groups;
    const found = await this.search(
      connection,
      search.baseDN,
      search.scope,
      andFilter([...(search.filter ? [search.filter] : []), equalityFilter(search.memberAttribute, member)]),
      [search.nameAttribute],
      MAX_GROUP_ENTRIES,
    );
    return [...new Set([...groups, ...groupNamesFromEntries(found, search.nameAttribute)])];
  }

  private async search(
    connection: Connection,
    baseDN: string,
    scope: 'base' | 'one' | 'sub',
    filter: string,
    attributes = this.userAttributes(),
    sizeLimit = 2,
  ): Promise<Entry[]> {
    this.pool.check(connection);
    try {
      const { searchEntries } = await connection.client.search(baseDN, {
        scope,
        filter,
        attributes,
        sizeLimit,
        timeLimit: Math.ceil(this.ldap.timeoutSeconds),
        derefAliases: 'never',
      });
      return searchEntries;
    } catch (error) {
      if (error instanceof NoSuchObjectError && scope === 'base') return [];
      throw this.unavailable(`a search under ${baseDN} failed: ${describe(error)}`);
    }
  }

  private userAttributes(): string[] {
    const search = this.ldap.userSearch;
    const wanted = [search.loginAttribute, search.nameAttribute, search.mailAttribute, this.ldap.memberOfAttribute];
    if (search.idAttribute !== 'DN') wanted.push(search.idAttribute);
    const group = this.ldap.groupSearch;
    if (group && group.userAttribute !== 'DN') wanted.push(group.userAttribute);
    return [...new Set(wanted.filter((a): a is string => a !== undefined))];
  }

  private unavailable(reason: string): ProviderUnavailable {
    return new ProviderUnavailable(this.settings.name, reason);
  }
}

/**
 * A bind the directory refused because of the user (wrong password, locked or disabled account), as against one that
 * failed because of the directory (down, a protocol error).
 */
function refusesTheUser(error: unknown): boolean {
  return (
    error instanceof InvalidCredentialsError ||
    error instanceof UnwillingToPerformError ||
    error instanceof InappropriateAuthError
  );
}

/** The factory the identity registry uses for `type: LDAP`. */
export function ldapProvider(settings: IdentityProviderSettings, logger: Logger): LdapProvider {
  if (settings.type !== 'LDAP') throw new Error(`not an LDAP provider: ${settings.type}`);
  return new LdapProvider(settings, logger);
}
