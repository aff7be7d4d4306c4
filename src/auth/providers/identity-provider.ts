import type { IdentityProviderSettings } from '../../config/cluster-configuration.js';
import type { UpstreamLink } from '../users/user-record.js';

/**
 * Identity providers: where a person may prove who they are besides a local User's password. Shaped as dex's
 * connectors (`connector/connector.go`): every provider returns the same plain `UpstreamIdentity`, and says what it
 * can do by the capability interfaces it implements — `PasswordProvider` (a user name and password checked upstream:
 * LDAP), `RefreshProvider` (the identity read again at a refresh, so groups follow the directory); redirect providers
 * (OpenID Connect, issue 19) add their own. Mapping an identity to a `User` is not the provider's job: it is
 * `mapToUser` (./map-to-user.ts), the same for every provider.
 */

/** Who the provider says the person is. Plain data, never a credential. */
export interface UpstreamIdentity {
  /** The provider's configured name (`identityProviders[].name`). */
  provider: string;
  /** Stable and unique within the provider (an LDAP DN or entryUUID, an OIDC `sub`): the link to a User. */
  userId: string;
  /** The name the person goes by upstream; the base of an auto-created User's name. */
  username: string;
  email?: string;
  /** Group names as the provider gives them (no prefix yet, `system:` not yet dropped). */
  groups: readonly string[];
}

/** What a User records of the identity it is linked to: see ../users/user-record.ts. */
export type { UpstreamLink } from '../users/user-record.js';

export interface IdentityProvider {
  /** The settings it runs with: name, type, mappingMethod, groupPrefix and its type's block. */
  readonly settings: IdentityProviderSettings;
  /** Ends its connections; logins in flight finish first. Called when the provider is removed or changed. */
  close(): Promise<void>;
}

export type PasswordLoginResult =
  | { identity: UpstreamIdentity }
  /** Nobody upstream by that login: the next provider may know them. */
  | { unknownUser: true }
  /** The person exists upstream and the password is wrong (or their account there refuses logins). */
  | { wrongPassword: true };

/**
 * Told who a login names once the provider has found them, before their password is checked. It may refuse the login
 * by rejecting (a locked User): the password is then never checked, so the answer cannot tell whether it was right.
 */
export type BeforePasswordCheck = (identity: UpstreamIdentity) => Promise<void>;

export interface PasswordProvider extends IdentityProvider {
  /**
   * Checks `password` for `login` (a user name, or an e-mail address when it contains "@"), calling `beforeCheck`
   * with the identity found first. Rejects with `ProviderUnavailable` when the provider cannot answer (down, slow,
   * saturated, misconfigured): that says nothing about the password, so it is never a failed login.
   */
  login(login: string, password: string, beforeCheck?: BeforePasswordCheck): Promise<PasswordLoginResult>;
}

export interface RefreshProvider extends IdentityProvider {
  /**
   * The identity as the provider sees it now (fresh groups), or `undefined` when it no longer knows the user (the
   * login session then ends). Rejects with `ProviderUnavailable` when it cannot answer.
   */
  refresh(link: UpstreamLink): Promise<UpstreamIdentity | undefined>;
}

/** The provider could not answer; the login or refresh is answered 503 and counts for nothing. */
export class ProviderUnavailable extends Error {
  constructor(
    readonly provider: string,
    /** For the log and the audit line; never a credential. */
    readonly reason: string,
  ) {
    super(`identity provider "${provider}" unavailable: ${reason}`);
    this.name = 'ProviderUnavailable';
  }
}

export function isPasswordProvider(provider: IdentityProvider): provider is PasswordProvider {
  return typeof (provider as Partial<PasswordProvider>).login === 'function';
}

export function isRefreshProvider(provider: IdentityProvider): provider is RefreshProvider {
  return typeof (provider as Partial<RefreshProvider>).refresh === 'function';
}

/** What an upstream sign-in from a browser is bound to: kept sealed in the browser until the provider answers. */
export interface UpstreamLoginRequest {
  /** kapi's callback for this provider, as the provider has it registered. */
  callbackUrl: string;
  /** Must come back with the answer (CSRF, RFC 6749 §10.12). */
  state: string;
  /** Must come back in the ID token (replay). */
  nonce: string;
  /** PKCE S256 challenge; its verifier stays in the browser's sealed cookie until the callback. */
  codeChallenge: string;
}

/**
 * A provider the browser is sent to (dex's `CallbackConnector`): OpenID Connect. kapi's login page shows a button
 * for each; `/oauth/login/{name}` sends the browser to `loginUrl`, and `/oauth/callback/{name}` hands the answer to
 * `handleCallback`, which proves the identity or refuses.
 */
export interface RedirectProvider extends IdentityProvider {
  /** What the login page's button says after "Continue with". */
  readonly displayName: string;
  /** Where to send the browser. Rejects with `ProviderUnavailable` when the provider's metadata cannot be read. */
  loginUrl(request: UpstreamLoginRequest): Promise<string>;
  /**
   * The identity the provider's answer proves. `answer` is the callback's query; `expected` what the sign-in was
   * bound to. Rejects with `UpstreamLoginRefused` when the answer is an error or cannot be trusted (an ID token with a
   * wrong signature, issuer, audience, nonce, or expired), `ProviderUnavailable` when the provider cannot be asked.
   */
  handleCallback(
    answer: URLSearchParams,
    expected: Omit<UpstreamLoginRequest, 'codeChallenge'> & { codeVerifier: string },
  ): Promise<UpstreamIdentity>;
}

/** The provider's answer proves nothing: the sign-in ends there (kapi's page says so, the audit line says why). */
export class UpstreamLoginRefused extends Error {
  constructor(
    readonly provider: string,
    /** For the log and the audit line; never a credential or token. */
    readonly reason: string,
  ) {
    super(`identity provider "${provider}" answer refused: ${reason}`);
    this.name = 'UpstreamLoginRefused';
  }
}

export function isRedirectProvider(provider: IdentityProvider): provider is RedirectProvider {
  return typeof (provider as Partial<RedirectProvider>).handleCallback === 'function';
}
