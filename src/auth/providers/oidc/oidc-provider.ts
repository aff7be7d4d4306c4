import * as client from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { IdentityProviderSettings, OidcProviderSettings } from '../../../config/identity-providers/index.js';
import type { Logger } from '../../../observability/logger.js';
import { timesProblem } from '../../tokens/tokens.js';
import {
  ProviderUnavailable,
  UpstreamLoginRefused,
  type RedirectProvider,
  type UpstreamIdentity,
  type UpstreamLoginRequest,
} from '../identity-provider.js';

/** How long the provider's metadata is kept before it is read again (its keys are refetched on an unknown kid). */
const METADATA_MAX_AGE_MS = 60 * 60_000;
const MAX_GROUPS = 256;
/**
 * An ID token only proves a sign-in that just happened: one valid for longer than a day (providers issue them for
 * minutes to an hour) was not issued for that, and is refused like one issued in the future.
 */
const MAX_ID_TOKEN_LIFETIME_SECONDS = 24 * 3600;

/**
 * An OpenID Connect provider (Keycloak, Entra ID, Okta, Google, GitLab, Dex…) as a `RedirectProvider`, through
 * openid-client (an OpenID-certified relying party library): the provider's discovery document is read at the first
 * sign-in and kept for an hour; the authorization request carries PKCE S256, `state` and `nonce`; at the callback the
 * answer's `state` (and `iss`, RFC 9207, when the provider sends it) is checked, the code is exchanged, and the ID
 * token is verified — its signature against the provider's published keys (non-repudiation checks on: kapi does not
 * rely on TLS alone), `iss`, `aud`, `azp`, `exp`, `iat` and `nonce`. The stable user id is `sub`.
 */
export class OidcProvider implements RedirectProvider {
  readonly displayName: string;
  private configuration: { value: Promise<client.Configuration>; at: number } | undefined;
  private readonly agent: Agent | undefined;
  private readonly log: Logger;

  constructor(
    readonly settings: OidcProviderSettings,
    logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.displayName = settings.oidc.displayName ?? settings.name;
    this.agent = settings.oidc.caPem ? new Agent({ connect: { ca: settings.oidc.caPem } }) : undefined;
    this.log = logger.child({ component: 'oidc-provider', provider: settings.name });
  }

  async loginUrl(request: UpstreamLoginRequest): Promise<string> {
    const configuration = await this.metadata();
    return client.buildAuthorizationUrl(configuration, {
      response_type: 'code',
      redirect_uri: request.callbackUrl,
      scope: this.settings.oidc.scopes.join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    }).href;
  }

  async handleCallback(
    answer: URLSearchParams,
    expected: Omit<UpstreamLoginRequest, 'codeChallenge'> & { codeVerifier: string },
  ): Promise<UpstreamIdentity> {
    const configuration = await this.metadata();
    // the callback as the provider sent it: kapi's registered callback URL with the answer's parameters
    const current = new URL(expected.callbackUrl);
    current.search = answer.toString();
    let claims: client.IDToken | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (err) {
      throw this.classify(err);
    }
    if (!claims) throw new UpstreamLoginRefused(this.settings.name, 'no ID token');
    const times = timesProblem(claims, Math.floor(this.now() / 1000), MAX_ID_TOKEN_LIFETIME_SECONDS);
    if (times) throw new UpstreamLoginRefused(this.settings.name, `ID token ${times}`);
    return this.identity(claims);
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }

  /** The user the claims name: `sub` links; the name, e-mail and groups come from the configured claims. */
  private identity(claims: client.IDToken): UpstreamIdentity {
    const { usernameClaim, emailClaim, groupsClaim } = this.settings.oidc;
    const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
    // an address the provider says it has not verified is not the user's address
    const email = claims.email_verified === false ? undefined : text(claims[emailClaim]);
    const username = text(claims[usernameClaim]) ?? email ?? claims.sub;
    const raw = groupsClaim === undefined ? undefined : claims[groupsClaim];
    const groups = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw])
      .filter((group): group is string => typeof group === 'string' && group !== '')
      .slice(0, MAX_GROUPS);
    if (Array.isArray(raw) && raw.length > MAX_GROUPS) {
      this.log.warn('more groups than kapi keeps; the rest are dropped', { kept: MAX_GROUPS, given: raw.length });
    }
    return { provider: this.settings.name, userId: claims.sub, username, email, groups };
  }

  /** The provider's metadata, read once and kept an hour; a failed read is tried again at the next sign-in. */
  private metadata(): Promise<client.Configuration> {
    const now = this.now();
    if (!this.configuration || now - this.configuration.at > METADATA_MAX_AGE_MS) {
      const { oidc } = this.settings;
      const authentication = oidc.clientSecret ? client.ClientSecretBasic(oidc.clientSecret) : client.None();
      const value = client
        .discovery(new URL(oidc.issuer), oidc.clientID, undefined, authentication, {
          timeout: oidc.timeoutSeconds,
          execute: [client.enableNonRepudiationChecks],
          ...(this.agent ? { [client.customFetch]: this.fetchWithCa() } : {}),
        })
        .then((configuration) => {
          if (this.agent) configuration[client.customFetch] = this.fetchWithCa();
          return configuration;
        });
      const entry = { value, at: now };
      this.configuration = entry;
      value.catch((err: unknown) => {
        if (this.configuration === entry) this.configuration = undefined;
        this.log.warn('could not read the provider’s OpenID configuration', { error: describe(err) });
      });
    }
    return this.configuration.value.catch((err: unknown) => {
      throw new ProviderUnavailable(this.settings.name, `discovery failed: ${describe(err)}`);
    });
  }

  /** Requests to the provider through a connection pool that trusts `caSecretRef`'s CAs (and only them). */
  private fetchWithCa(): client.CustomFetch {
    const dispatcher = this.agent!;
    return ((url: string, options: client.CustomFetchOptions) =>
      undiciFetch(url, { ...options, dispatcher } as Parameters<
        typeof undiciFetch
      >[1])) as unknown as client.CustomFetch;
  }

  /** A provider that cannot be asked (network, timeout, 5xx) is unavailable; any other failure refuses the answer. */
  private classify(err: unknown): Error {
    if (err instanceof ProviderUnavailable || err instanceof UpstreamLoginRefused) return err;
    if (err instanceof client.AuthorizationResponseError) {
      return new UpstreamLoginRefused(this.settings.name, `the provider answered ${printable(err.error)}`);
    }
    if (err instanceof client.ResponseBodyError) {
      if (err.status >= 500)
        return new ProviderUnavailable(this.settings.name, `token endpoint answered ${err.status}`);
      return new UpstreamLoginRefused(this.settings.name, `token endpoint answered ${printable(err.error)}`);
    }
    const code = (err as { code?: unknown }).code;
    if (err instanceof client.ClientError && typeof code === 'string' && code.startsWith('OAUTH_')) {
      if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON') {
        return new ProviderUnavailable(this.settings.name, describe(err));
      }
      return new UpstreamLoginRefused(this.settings.name, `${code}: ${describe(err)}`);
    }
    return new ProviderUnavailable(this.settings.name, describe(err));
  }
}

export function oidcProvider(settings: IdentityProviderSettings, logger: Logger): OidcProvider {
  if (settings.type !== 'OIDC') throw new Error(`not an OIDC provider: ${settings.type}`);
  return new OidcProvider(settings, logger);
}

function describe(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const causeMessage = (err as { cause?: { message?: unknown } } | null)?.cause?.message;
  const cause = typeof causeMessage === 'string' ? ` (${causeMessage})` : '';
  return `${text}${cause}`.slice(0, 300);
}

function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
}
