import { DurationError, parseDuration } from '../duration.js';
import { describe, isObject, parsedUrl, referencedName, secretRefValue, type SecretLookup } from '../fields.js';
import { caBundle } from './ldap.js';

/**
 * The `oidc` block of an identity provider of type OIDC (OpenID Connect: Keycloak, Azure AD / Entra ID, Okta, Google,
 * GitLab, Dex, …), read into settings the provider runs with. Pure.
 *
 * Decisions:
 * - `issuer` is an https URL; kapi reads its discovery document (`/.well-known/openid-configuration`) and keys from
 *   it, and checks every ID token against it. Its certificate is always verified (the system CAs, or the PEM bundle
 *   `caSecretRef` names); there is no switch that skips verification.
 * - The client secret comes from a Secret only (`clientSecretRef`); without one kapi is a public client of the
 *   provider (PKCE is sent either way).
 * - `redirectURL` is what the provider must have registered: kapi's `/oauth/callback/<name>` at the address browsers
 *   reach kapi by. Absent, it is derived from kapi's https issuer URL (`--issuer-url`).
 * - Claims: the user name from `usernameClaim` (default `preferred_username`, else `email`, else `sub`), the e-mail
 *   from `emailClaim`, groups from `groupsClaim` (none when absent). The stable id linking a User is always `sub`.
 */
export interface OidcSettings {
  issuer: string;
  clientID: string;
  clientSecret?: string;
  redirectURL?: string;
  /** Always starts with `openid`. */
  scopes: string[];
  usernameClaim: string;
  emailClaim: string;
  groupsClaim?: string;
  /** What the login page's button says after "Continue with"; default the provider's name. */
  displayName?: string;
  caPem?: string;
  /** Each request to the provider (discovery, keys, token); a slower provider is unavailable (503). */
  timeoutSeconds: number;
}

const DEFAULT_SCOPES = ['openid', 'profile', 'email'];
const MAX_SCOPES = 16;
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;
const CLAIM = /^[A-Za-z0-9_.:/-]{1,128}$/;
// eslint-disable-next-line no-control-regex
const DISPLAY_NAME = /^[^\u0000-\u001f\u007f]{1,64}$/;
const CALLBACK_PATH = /\/oauth\/callback\/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DEFAULT_TIMEOUT_SECONDS = 10;
const MAX_TIMEOUT_SECONDS = 60;

export function parseOidcSettings(
  block: Record<string, unknown>,
  path: string,
  secrets: SecretLookup,
  problems: string[],
): OidcSettings | undefined {
  const before = problems.length;
  const issuer = httpsUrl(block.issuer, `${path}.issuer`, problems, { required: true });
  const clientID = block.clientID;
  if (typeof clientID !== 'string' || clientID === '' || clientID.length > 255 || /\s/.test(clientID)) {
    problems.push(`${path}.clientID: is required (the client id registered at the provider, without spaces)`);
  }
  if (block.clientSecret !== undefined) {
    problems.push(`${path}.clientSecret: secrets are read from a Secret only: use clientSecretRef`);
  }
  const clientSecret =
    block.clientSecretRef === undefined
      ? undefined
      : secretRefValue(block.clientSecretRef, `${path}.clientSecretRef`, secrets, problems);
  const redirectURL = httpsUrl(block.redirectURL, `${path}.redirectURL`, problems, { loopbackHttp: true });
  if (redirectURL !== undefined && !CALLBACK_PATH.test(new URL(redirectURL).pathname)) {
    problems.push(`${path}.redirectURL: must end with /oauth/callback/<provider name>, kapi's callback`);
  }
  const scopes = scopeList(block.scopes, `${path}.scopes`, problems);
  const usernameClaim = claimField(block.usernameClaim, `${path}.usernameClaim`, 'preferred_username', problems);
  const emailClaim = claimField(block.emailClaim, `${path}.emailClaim`, 'email', problems);
  const groupsClaim =
    block.groupsClaim === undefined ? undefined : claimField(block.groupsClaim, `${path}.groupsClaim`, '', problems);
  let displayName: string | undefined;
  if (block.displayName !== undefined) {
    if (typeof block.displayName === 'string' && DISPLAY_NAME.test(block.displayName)) displayName = block.displayName;
    else problems.push(`${path}.displayName: must be 1-64 printable characters, not ${describe(block.displayName)}`);
  }
  const caPem =
    block.caSecretRef === undefined ? undefined : caBundle(block.caSecretRef, `${path}.caSecretRef`, secrets, problems);
  const timeoutSeconds = timeoutField(block.timeout, `${path}.timeout`, problems);

  if (problems.length > before || issuer === undefined) return undefined;
  const settings: OidcSettings = {
    issuer,
    clientID: clientID as string,
    scopes,
    usernameClaim,
    emailClaim,
    timeoutSeconds,
  };
  if (clientSecret !== undefined) settings.clientSecret = clientSecret;
  if (redirectURL !== undefined) settings.redirectURL = redirectURL;
  if (groupsClaim) settings.groupsClaim = groupsClaim;
  if (displayName !== undefined) settings.displayName = displayName;
  if (caPem !== undefined) settings.caPem = caPem;
  return settings;
}

/** The Secrets an `oidc` block names, read leniently. */
export function oidcSecretNames(block: unknown): string[] {
  if (!isObject(block)) return [];
  return [referencedName(block.clientSecretRef), referencedName(block.caSecretRef)].filter(
    (name): name is string => name !== undefined,
  );
}

const LOOPBACK = ['127.0.0.1', '[::1]', 'localhost'];

function httpsUrl(
  value: unknown,
  path: string,
  problems: string[],
  options: { required?: boolean; loopbackHttp?: boolean },
): string | undefined {
  if (value === undefined && !options.required) return undefined;
  const url = parsedUrl(value, path, problems, 'an https URL');
  if (!url) return undefined;
  const httpAllowed = options.loopbackHttp && url.protocol === 'http:' && LOOPBACK.includes(url.hostname);
  if (url.protocol !== 'https:' && !httpAllowed) {
    problems.push(`${path}: ${describe(value)} must be an https URL`);
    return undefined;
  }
  if (url.username || url.password || url.hash || url.search) {
    problems.push(`${path}: ${describe(value)} must have no user, query or fragment`);
    return undefined;
  }
  // the URL as written (its text is what the provider's issuer must equal)
  return value as string;
}

function scopeList(value: unknown, path: string, problems: string[]): string[] {
  if (value === undefined) return [...DEFAULT_SCOPES];
  if (!Array.isArray(value) || value.length > MAX_SCOPES) {
    problems.push(`${path}: must be a list of at most ${MAX_SCOPES} scopes, not ${describe(value)}`);
    return [];
  }
  const scopes = ['openid'];
  value.forEach((scope: unknown, index) => {
    if (typeof scope !== 'string' || !SCOPE.test(scope)) {
      problems.push(`${path}[${index}]: ${describe(scope)} is not a scope (printable, no spaces or quotes)`);
    } else if (!scopes.includes(scope)) scopes.push(scope);
  });
  return scopes;
}

function claimField(value: unknown, path: string, fallback: string, problems: string[]): string {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && CLAIM.test(value)) return value;
  problems.push(`${path}: ${describe(value)} is not a claim name`);
  return fallback;
}

function timeoutField(value: unknown, path: string, problems: string[]): number {
  if (value === undefined) return DEFAULT_TIMEOUT_SECONDS;
  try {
    if (typeof value !== 'string') throw new DurationError('is not a duration such as 10s');
    const seconds = parseDuration(value);
    if (seconds >= 0.1 && seconds <= MAX_TIMEOUT_SECONDS) return seconds;
    problems.push(`${path}: ${describe(value)} must be from 100ms to ${MAX_TIMEOUT_SECONDS}s`);
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    problems.push(`${path}: ${describe(value)} ${err.message}`);
  }
  return DEFAULT_TIMEOUT_SECONDS;
}
