import type { IdentityProviderSettings } from '../../config/cluster-configuration.js';
import type { IdentityProviderType } from '../../config/identity-providers/index.js';
import type { Logger } from '../../observability/logger.js';
import type { IdentityProvider } from './identity-provider.js';

/** Builds the provider one configuration entry describes (it may connect lazily, at its first login). */
export type ProviderFactory = (settings: IdentityProviderSettings, logger: Logger) => IdentityProvider;
export type ProviderFactories = Partial<Record<IdentityProviderType, ProviderFactory>>;

/**
 * The providers of the configuration in effect, followed snapshot by snapshot: a provider whose settings did not
 * change keeps its instance (and its connection pool); a changed or removed one is closed once the new set is in
 * place (its logins in flight finish). Read per login, so a change applies at the next one.
 */
export class IdentityProviders {
  private source: readonly IdentityProviderSettings[] | undefined;
  private current: { key: string; provider: IdentityProvider }[] = [];
  private readonly log: Logger;
  private closed = false;

  constructor(
    private readonly settings: () => readonly IdentityProviderSettings[],
    private readonly factories: ProviderFactories,
    logger: Logger,
  ) {
    this.log = logger.child({ component: 'identity-providers' });
  }

  /** The providers in configured order. */
  list(): readonly IdentityProvider[] {
    this.follow();
    return this.current.map((entry) => entry.provider);
  }

  get(name: string): IdentityProvider | undefined {
    return this.list().find((provider) => provider.settings.name === name);
  }

  async close(): Promise<void> {
    this.closed = true;
    const providers = this.current.map((entry) => entry.provider);
    this.current = [];
    await Promise.all(providers.map((provider) => this.closeQuietly(provider)));
  }

  private follow(): void {
    const wanted = this.settings();
    if (wanted === this.source || this.closed) return;
    this.source = wanted;
    const previous = new Map(this.current.map((entry) => [entry.key, entry.provider]));
    const next: { key: string; provider: IdentityProvider }[] = [];
    for (const settings of wanted) {
      const key = JSON.stringify(settings);
      const kept = previous.get(key);
      if (kept) {
        previous.delete(key);
        next.push({ key, provider: kept });
        continue;
      }
      const factory = this.factories[settings.type];
      if (!factory) {
        this.log.error('identity provider type not available: its logins are refused', {
          provider: settings.name,
          type: settings.type,
        });
        continue;
      }
      next.push({ key, provider: factory(settings, this.log) });
      this.log.info('identity provider in effect', {
        provider: settings.name,
        type: settings.type,
        mappingMethod: settings.mappingMethod,
      });
    }
    this.current = next;
    for (const stale of previous.values()) void this.closeQuietly(stale);
  }

  private async closeQuietly(provider: IdentityProvider): Promise<void> {
    try {
      await provider.close();
    } catch (error) {
      this.log.warn('closing an identity provider failed', { provider: provider.settings.name, error: String(error) });
    }
  }
}
