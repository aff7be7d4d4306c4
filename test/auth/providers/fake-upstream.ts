/**
 * A redirect provider in memory, for the browser sign-in's own logic (the real OpenID Connect provider is tested
 * against oidc-provider in test/auth/providers/oidc/): its "authorization endpoint" is a URL on a host that does not
 * exist, and the test plays the provider's answer by calling kapi's callback with what `answerFor` gives.
 */
import {
  ProviderUnavailable,
  UpstreamLoginRefused,
  type RedirectProvider,
  type UpstreamIdentity,
  type UpstreamLoginRequest,
} from '../../../src/auth/providers/identity-provider.js';
import type { IdentityProviderSettings } from '../../../src/config/cluster-configuration.js';

export class FakeUpstream implements RedirectProvider {
  readonly displayName: string;
  /** The requests it was asked to start, by state. */
  readonly started = new Map<string, UpstreamLoginRequest>();
  /** What a code proves: the identity, or why it proves nothing. */
  readonly codes = new Map<string, UpstreamIdentity | 'refused'>();
  down = false;

  constructor(readonly settings: IdentityProviderSettings) {
    this.displayName = `${settings.name} SSO`;
  }

  async loginUrl(request: UpstreamLoginRequest): Promise<string> {
    if (this.down) throw new ProviderUnavailable(this.settings.name, 'connection refused');
    this.started.set(request.state, request);
    return `https://sso.invalid/authorize?state=${encodeURIComponent(request.state)}`;
  }

  async handleCallback(
    answer: URLSearchParams,
    expected: Omit<UpstreamLoginRequest, 'codeChallenge'> & { codeVerifier: string },
  ): Promise<UpstreamIdentity> {
    if (this.down) throw new ProviderUnavailable(this.settings.name, 'connection refused');
    if (answer.get('error')) throw new UpstreamLoginRefused(this.settings.name, `answered ${answer.get('error')}`);
    const started = this.started.get(expected.state);
    if (!started || started.nonce !== expected.nonce || started.callbackUrl !== expected.callbackUrl) {
      throw new UpstreamLoginRefused(this.settings.name, 'not a sign-in this provider started');
    }
    const proven = this.codes.get(answer.get('code') ?? '');
    if (!proven || proven === 'refused') throw new UpstreamLoginRefused(this.settings.name, 'ID token refused');
    this.codes.delete(answer.get('code')!);
    return proven;
  }

  async close(): Promise<void> {}
}

export function upstreamSettings(name: string, mappingMethod: 'auto' | 'lookup' = 'auto'): IdentityProviderSettings {
  return {
    name,
    type: 'OIDC',
    mappingMethod,
    groupPrefix: `${name}:`,
    oidc: {
      issuer: 'https://sso.invalid',
      clientID: 'kapi',
      scopes: ['openid'],
      usernameClaim: 'preferred_username',
      emailClaim: 'email',
      timeoutSeconds: 5,
    },
  };
}
