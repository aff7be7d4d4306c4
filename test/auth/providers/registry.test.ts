import { IdentityProviders } from '../../../src/auth/providers/registry.js';
import type { IdentityProviderSettings } from '../../../src/config/cluster-configuration.js';
import { capturingLogger } from '../fakes.js';
import { FakeDirectory, providerSettings } from './fake-directory.js';

describe('IdentityProviders', () => {
  it('when the configuration changes, then unchanged providers keep their instance and changed or removed ones are closed', async () => {
    let configured: IdentityProviderSettings[] = [providerSettings('a'), providerSettings('b')];
    const built: FakeDirectory[] = [];
    const registry = new IdentityProviders(
      () => configured,
      {
        LDAP: (settings) => {
          const directory = new FakeDirectory(settings);
          built.push(directory);
          return directory;
        },
      },
      capturingLogger().logger,
    );
    const [a, b] = registry.list();
    expect(registry.list()).toEqual([a, b]);
    expect(built).toHaveLength(2);

    configured = [providerSettings('b', 'lookup'), providerSettings('a')];
    const [b2, a2] = registry.list();
    expect(a2).toBe(a);
    expect(b2).not.toBe(b);
    expect((b as FakeDirectory).closed).toBe(true);
    expect(registry.get('b')).toBe(b2);

    configured = [];
    expect(registry.list()).toEqual([]);
    expect((a as FakeDirectory).closed).toBe(true);
    await registry.close();
  });

  it('when a type has no factory, then its provider is left out and the log says so', () => {
    const { logger, lines } = capturingLogger();
    const registry = new IdentityProviders(() => [providerSettings('a')], {}, logger);
    expect(registry.list()).toEqual([]);
    expect(lines.join('\n')).toContain('identity provider type not available');
  });

  it('when closed, then every provider is closed', async () => {
    const directory = new FakeDirectory(providerSettings('a'));
    const registry = new IdentityProviders(
      () => [directory.settings],
      { LDAP: () => directory },
      capturingLogger().logger,
    );
    registry.list();
    await registry.close();
    expect(directory.closed).toBe(true);
  });
});
