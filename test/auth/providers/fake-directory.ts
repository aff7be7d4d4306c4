/**
 * An in-memory password provider for the identity tests that need no real directory (the LDAP provider itself is
 * tested against a real slapd in test/auth/providers/ldap/). It implements the same capability interfaces.
 */
import type { IdentityProviderSettings } from '../../../src/config/cluster-configuration.js';
import {
  ProviderUnavailable,
  type BeforePasswordCheck,
  type PasswordLoginResult,
  type PasswordProvider,
  type RefreshProvider,
  type UpstreamIdentity,
  type UpstreamLink,
} from '../../../src/auth/providers/identity-provider.js';
import { IdentityProviders } from '../../../src/auth/providers/registry.js';
import { canonicalLogin } from '../../../src/auth/users/login-limiter.js';
import type { Logger } from '../../../src/observability/logger.js';

export interface DirectoryAccount {
  userId: string;
  password: string;
  email?: string;
  groups?: string[];
}

export class FakeDirectory implements PasswordProvider, RefreshProvider {
  readonly accounts = new Map<string, DirectoryAccount>();
  /** Every login asked, in order. */
  readonly asked: string[] = [];
  refreshes = 0;
  down = false;
  closed = false;

  constructor(readonly settings: IdentityProviderSettings) {}

  add(login: string, account: DirectoryAccount): this {
    this.accounts.set(login, account);
    return this;
  }

  /** Passwords checked, in order (a refused `beforeCheck` checks none). */
  readonly checked: string[] = [];

  /** Matches logins as a directory does: case, width and surrounding spaces do not matter (RFC 4518). */
  async login(login: string, password: string, beforeCheck?: BeforePasswordCheck): Promise<PasswordLoginResult> {
    this.asked.push(login);
    if (this.down) throw new ProviderUnavailable(this.settings.name, 'connection refused');
    const key = canonicalLogin(login);
    const found = [...this.accounts].find(([name, account]) => name === key || account.email === key);
    if (!found) return { unknownUser: true };
    const [name, account] = found;
    await beforeCheck?.(this.identity(name, account));
    this.checked.push(name);
    if (account.password !== password) return { wrongPassword: true };
    return { identity: this.identity(name, account) };
  }

  async refresh(link: UpstreamLink): Promise<UpstreamIdentity | undefined> {
    this.refreshes++;
    if (this.down) throw new ProviderUnavailable(this.settings.name, 'connection refused');
    const found = [...this.accounts].find(([, account]) => account.userId === link.userId);
    return found && this.identity(found[0], found[1]);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private identity(name: string, account: DirectoryAccount): UpstreamIdentity {
    return {
      provider: this.settings.name,
      userId: account.userId,
      username: name,
      email: account.email,
      groups: account.groups ?? [],
    };
  }
}

/** Settings of an LDAP-typed provider (the fake ignores the block; the registry keys instances by it). */
export function providerSettings(
  name: string,
  mappingMethod: 'auto' | 'lookup' = 'auto',
  groupPrefix = '',
): IdentityProviderSettings {
  return {
    name,
    type: 'LDAP',
    mappingMethod,
    groupPrefix,
    ldap: {
      url: 'ldaps://directory.invalid:636',
      security: 'ldaps',
      userSearch: { baseDN: 'dc=x', scope: 'sub', loginAttribute: 'uid', idAttribute: 'DN', nameAttribute: 'uid' },
      timeoutSeconds: 5,
      maxConnections: 8,
    },
  };
}

/** A registry over fixed fake directories, as the server builds one over the configuration's providers. */
export function fakeProviders(directories: FakeDirectory[], logger: Logger): IdentityProviders {
  const byName = new Map(directories.map((d) => [d.settings.name, d]));
  const settings = directories.map((d) => d.settings);
  return new IdentityProviders(() => settings, { LDAP: (s) => byName.get(s.name)! }, logger);
}
