import { MAX_REDIRECT_URIS, redirectUriProblem } from './redirect-uri.js';
import {
  checkedSecret,
  deepFreeze,
  describe,
  durationField,
  field,
  isObject,
  isWholeNumberIn,
  optionalObject,
  referencedName,
  secretRefValue,
  typeName,
  type SecretLookup,
} from './fields.js';
import {
  identityProviderSecretNames,
  parseIdentityProviders,
  type IdentityProviderSettings,
} from './identity-providers/index.js';

import {
  DEFAULT_LOGIN_RECORDS,
  DEFAULT_PASSWORD_POLICY,
  parseLoginRecords,
  parsePasswordPolicy,
  type LoginRecordSettings,
  type PasswordPolicy,
} from './account-settings.js';
import { monitoringSecretNames, parseMonitoring, type MonitoringSettings } from './monitoring-settings.js';

export { DurationError, parseDuration } from './duration.js';
export type { LoginRecordSettings, PasswordPolicy } from './account-settings.js';
export type { MonitoringSettings } from './monitoring-settings.js';
export type { SecretLookup } from './fields.js';
export type { IdentityProviderSettings, MappingMethod } from './identity-providers/index.js';

/**
 * The authentication settings of a ClusterConfiguration (`installer.kapi.io/v1alpha1`), read into one immutable
 * snapshot. Pure: the Secrets that `secretRef`s name come in through a lookup, so this is tested without a cluster.
 *
 * Decisions:
 * - Every field is optional and takes its default (`DEFAULT_AUTH_SETTINGS`); absent `oauth.clients` means the
 *   default `kapi` client, while an explicit empty list is an error (nobody could log in).
 * - `refreshTokenMaxAge` shorter than `accessTokenMaxAge` is an error: clients refresh when the access token
 *   expires, so such a refresh token could never be used — almost always swapped values. When only the access
 *   lifetime is given, the refresh lifetime is twice it (or the 4h default when that is longer), never an error.
 * - Durations must be whole seconds (token lifetimes and windows are counted in seconds) and greater than zero.
 * - A client secret may not be blank or carry control characters or surrounding spaces: a Secret written with
 *   `echo` (trailing newline) would otherwise make every login fail with no visible reason.
 * - A client is confidential (a secret or secretRef) or `public: true` (no secret: a browser app or a native app
 *   such as kubectl, which cannot keep one). Public clients may not use the password grant: anyone could use it with
 *   the client_id alone. `authorization_code` needs `redirectURIs`, and `redirectURIs` need that grant; a client
 *   that omits `grantTypes` gets password and refresh_token (confidential) or authorization_code and refresh_token
 *   (public), and authorization_code as well when it registers redirect URIs.
 * - Unknown fields are ignored, not refused, so an older replica keeps working while a newer CRD rolls out
 *   (the API server prunes them anyway).
 * - Messages name the field path and the offending value, except for secrets, whose values never appear.
 * - Identity providers (`identityProviders`, see ./identity-providers/) are part of the same snapshot: a change to
 *   one applies, or is refused with the rest, like any other field.
 */
export type GrantType = 'password' | 'refresh_token' | 'authorization_code';

export const GRANT_TYPES: readonly GrantType[] = Object.freeze(['password', 'refresh_token', 'authorization_code']);

export interface OAuthClient {
  name: string;
  /** The client_secret of a confidential client; `undefined` for a public one. */
  secret: string | undefined;
  /** No secret: it proves nothing but its client_id, so PKCE and exact redirect URIs are what protect its codes. */
  public: boolean;
  grantTypes: readonly GrantType[];
  /** Where the authorization endpoint may send the browser back (exact match; loopback IPs on any port). */
  redirectURIs: readonly string[];
}

export interface AuthSettings {
  accessTokenMaxAgeSeconds: number;
  refreshTokenMaxAgeSeconds: number;
  /** False: a new login ends the user's other sessions. */
  multipleLogin: boolean;
  /** Login sessions one user may hold; a login beyond it ends the user's oldest sessions. */
  maxSessionsPerUser: number;
  /** Failed logins allowed per user and per client address within the window. */
  loginLimit: { maxFailures: number; windowSeconds: number };
  clients: readonly OAuthClient[];
  /** Where logins may come from besides local Users, in the order they are asked. */
  identityProviders: readonly IdentityProviderSettings[];
  /** What a new password must be (PUT …/users/{name}/password). */
  passwordPolicy: PasswordPolicy;
  /** Login records (GET …/users/{name}/loginrecords): whether kept, how long, how many per user. */
  loginRecords: LoginRecordSettings;
  /** The monitoring backend (`spec.monitoring`, SPEC §19); undefined: none (every metric answered empty). */
  monitoring?: MonitoringSettings;
}

export const DEFAULT_AUTH_SETTINGS: AuthSettings = deepFreeze({
  accessTokenMaxAgeSeconds: 7200,
  refreshTokenMaxAgeSeconds: 14400,
  multipleLogin: true,
  maxSessionsPerUser: 20,
  loginLimit: { maxFailures: 10, windowSeconds: 600 },
  clients: [
    { name: 'kapi', secret: 'kapi', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
  ],
  identityProviders: [],
  passwordPolicy: DEFAULT_PASSWORD_POLICY,
  loginRecords: DEFAULT_LOGIN_RECORDS,
});

export type ParseResult = { settings: AuthSettings } | { error: string };

/** Limits the CRD schema also enforces; checked here too in case the object predates the CRD or bypassed it. */
export const MAX_CLIENTS = 16;
export const MAX_LOGIN_FAILURES = 100;
export const MAX_SESSIONS_PER_USER = 1000;
const CLIENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,252}$/;

const BASE = 'spec.authentication';

/** Reads a ClusterConfiguration object. Every problem is reported, joined by "; ", each prefixed by its field path. */
export function parseClusterConfiguration(object: unknown, secrets: SecretLookup): ParseResult {
  const problems: string[] = [];
  const spec = optionalObject(isObject(object) ? object.spec : undefined, 'spec', problems);
  const auth = optionalObject(spec?.authentication, BASE, problems);
  const defaults = DEFAULT_AUTH_SETTINGS;

  const access = durationField(auth?.accessTokenMaxAge, `${BASE}.accessTokenMaxAge`, problems);
  const refresh = durationField(auth?.refreshTokenMaxAge, `${BASE}.refreshTokenMaxAge`, problems);
  const accessSeconds = access ?? defaults.accessTokenMaxAgeSeconds;
  const refreshSeconds = refresh ?? Math.max(defaults.refreshTokenMaxAgeSeconds, 2 * accessSeconds);
  if (access !== null && refresh !== null && refreshSeconds < accessSeconds) {
    problems.push(
      `${BASE}.refreshTokenMaxAge: ${describeSeconds(refreshSeconds)} must not be shorter than accessTokenMaxAge (${describeSeconds(accessSeconds)})`,
    );
  }

  let multipleLogin = defaults.multipleLogin;
  if (auth?.multipleLogin !== undefined) {
    if (typeof auth.multipleLogin === 'boolean') multipleLogin = auth.multipleLogin;
    else problems.push(`${BASE}.multipleLogin: must be true or false, not ${describe(auth.multipleLogin)}`);
  }

  let maxSessionsPerUser = defaults.maxSessionsPerUser;
  if (auth?.maxSessionsPerUser !== undefined) {
    const value = auth.maxSessionsPerUser;
    if (isWholeNumberIn(value, 1, MAX_SESSIONS_PER_USER)) maxSessionsPerUser = value;
    else {
      problems.push(
        `${BASE}.maxSessionsPerUser: must be a whole number from 1 to ${MAX_SESSIONS_PER_USER}, not ${describe(value)}`,
      );
    }
  }

  const limit = optionalObject(auth?.loginLimit, `${BASE}.loginLimit`, problems);
  let maxFailures = defaults.loginLimit.maxFailures;
  if (limit?.maxFailures !== undefined) {
    const value = limit.maxFailures;
    if (isWholeNumberIn(value, 1, MAX_LOGIN_FAILURES)) {
      maxFailures = value;
    } else {
      problems.push(
        `${BASE}.loginLimit.maxFailures: must be a whole number from 1 to ${MAX_LOGIN_FAILURES}, not ${describe(value)}`,
      );
    }
  }
  const window = durationField(limit?.window, `${BASE}.loginLimit.window`, problems);

  const oauth = optionalObject(auth?.oauth, `${BASE}.oauth`, problems);
  const clients = oauth?.clients === undefined ? defaults.clients : clientList(oauth.clients, secrets, problems);
  const identityProviders = parseIdentityProviders(
    auth?.identityProviders,
    `${BASE}.identityProviders`,
    secrets,
    problems,
  );
  const passwordPolicy = parsePasswordPolicy(auth?.passwordPolicy, `${BASE}.passwordPolicy`, problems);
  const loginRecords = parseLoginRecords(auth?.loginRecords, `${BASE}.loginRecords`, problems);
  const monitoring = parseMonitoring(spec?.monitoring, 'spec.monitoring', secrets, problems);

  if (problems.length > 0) return { error: problems.join('; ') };
  return {
    settings: deepFreeze({
      accessTokenMaxAgeSeconds: accessSeconds,
      refreshTokenMaxAgeSeconds: refreshSeconds,
      multipleLogin,
      maxSessionsPerUser,
      loginLimit: { maxFailures, windowSeconds: window ?? defaults.loginLimit.windowSeconds },
      clients: clients.map((c) => ({
        name: c.name,
        secret: c.secret,
        public: c.public,
        grantTypes: [...c.grantTypes],
        redirectURIs: [...c.redirectURIs],
      })),
      identityProviders,
      passwordPolicy,
      loginRecords,
      ...(monitoring && { monitoring }),
    }),
  };
}

/**
 * The Secrets the object's `secretRef`s name, read leniently from an object that may be invalid: the watcher
 * watches these before it parses, so a missing Secret is reported as missing rather than as not loaded yet.
 */
export function referencedSecretNames(object: unknown): Set<string> {
  const names = new Set<string>();
  const authentication = field(field(object, 'spec'), 'authentication');
  const clients = field(field(authentication, 'oauth'), 'clients');
  if (Array.isArray(clients)) {
    for (const client of clients.slice(0, MAX_CLIENTS)) {
      const name = referencedName(field(client, 'secretRef'));
      if (name) names.add(name);
    }
  }
  for (const name of identityProviderSecretNames(field(authentication, 'identityProviders'))) names.add(name);
  for (const name of monitoringSecretNames(field(field(object, 'spec'), 'monitoring'))) names.add(name);
  return names;
}

function clientList(value: unknown, secrets: SecretLookup, problems: string[]): OAuthClient[] {
  const path = `${BASE}.oauth.clients`;
  if (!Array.isArray(value)) {
    problems.push(`${path}: must be a list of clients, not ${describe(value)}`);
    return [];
  }
  if (value.length === 0) problems.push(`${path}: must name at least one client (omit it for the default client)`);
  if (value.length > MAX_CLIENTS) problems.push(`${path}: at most ${MAX_CLIENTS} clients, not ${value.length}`);
  const clients: OAuthClient[] = [];
  const seen = new Set<string>();
  value.slice(0, MAX_CLIENTS).forEach((item: unknown, index) => {
    const client = oauthClient(item, `${path}[${index}]`, secrets, problems);
    if (!client) return;
    if (seen.has(client.name)) problems.push(`${path}[${index}].name: duplicate client name ${describe(client.name)}`);
    seen.add(client.name);
    clients.push(client);
  });
  return clients;
}

function oauthClient(item: unknown, path: string, secrets: SecretLookup, problems: string[]): OAuthClient | undefined {
  if (!isObject(item)) {
    problems.push(`${path}: must be an object with name, secret or secretRef, and grantTypes, not ${describe(item)}`);
    return undefined;
  }
  const before = problems.length;
  const name = item.name;
  if (typeof name !== 'string' || name === '') problems.push(`${path}.name: is required`);
  else if (!CLIENT_NAME.test(name)) {
    problems.push(
      `${path}.name: ${describe(name)} must be 1-253 letters, digits, ".", "_", "~" or "-", starting with a letter or digit`,
    );
  }
  let isPublic = false;
  if (item.public !== undefined) {
    if (typeof item.public === 'boolean') isPublic = item.public;
    else problems.push(`${path}.public: must be true or false, not ${describe(item.public)}`);
  }
  let secret: string | undefined;
  if (!isPublic) secret = clientSecret(item, path, secrets, problems);
  else if (item.secret !== undefined || item.secretRef !== undefined) {
    problems.push(`${path}: a public client has no secret; remove secret and secretRef, or public: true`);
  }
  const beforeRedirects = problems.length;
  const redirectURIs = redirectUriList(item.redirectURIs, `${path}.redirectURIs`, problems);
  const redirectsValid = problems.length === beforeRedirects;
  const grantTypes = grantTypeList(item.grantTypes, `${path}.grantTypes`, problems, {
    isPublic,
    redirects: redirectURIs.length > 0,
  });
  if (isPublic && grantTypes.includes('password')) {
    problems.push(`${path}.grantTypes: a public client may not use the password grant (anyone could, with its name)`);
  }
  if (grantTypes.includes('authorization_code') && redirectURIs.length === 0 && redirectsValid) {
    problems.push(`${path}.redirectURIs: the authorization_code grant needs at least one redirect URI`);
  }
  if (redirectURIs.length > 0 && !grantTypes.includes('authorization_code')) {
    problems.push(`${path}.redirectURIs: only the authorization_code grant uses them, and grantTypes does not name it`);
  }
  if (problems.length > before) return undefined;
  return { name: name as string, secret, public: isPublic, grantTypes, redirectURIs };
}

function redirectUriList(value: unknown, path: string, problems: string[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(`${path}: must be a list of URIs, not ${describe(value)}`);
    return [];
  }
  if (value.length > MAX_REDIRECT_URIS)
    problems.push(`${path}: at most ${MAX_REDIRECT_URIS} URIs, not ${value.length}`);
  const uris: string[] = [];
  value.slice(0, MAX_REDIRECT_URIS).forEach((uri: unknown, index) => {
    if (typeof uri !== 'string') {
      problems.push(`${path}[${index}]: must be a string, not ${typeName(uri)}`);
      return;
    }
    const problem = redirectUriProblem(uri);
    if (problem) problems.push(`${path}[${index}]: ${describe(uri)} ${problem}`);
    else if (uris.includes(uri)) problems.push(`${path}[${index}]: duplicate URI ${describe(uri)}`);
    else uris.push(uri);
  });
  return uris;
}

function clientSecret(
  item: Record<string, unknown>,
  path: string,
  secrets: SecretLookup,
  problems: string[],
): string | undefined {
  const { secret, secretRef } = item;
  if (secret !== undefined && secretRef !== undefined) {
    problems.push(`${path}: give either secret or secretRef, not both`);
    return undefined;
  }
  if (secret === undefined && secretRef === undefined) {
    problems.push(`${path}: one of secret or secretRef is required`);
    return undefined;
  }
  if (secret !== undefined) {
    if (typeof secret !== 'string') {
      problems.push(`${path}.secret: must be a string, not ${typeName(secret)}`);
      return undefined;
    }
    return checkedSecret(secret, `${path}.secret`, 'the secret', problems);
  }
  return secretRefValue(secretRef, `${path}.secretRef`, secrets, problems);
}

const GRANT_TYPE_NAMES = 'password, refresh_token or authorization_code';

function grantTypeList(
  value: unknown,
  path: string,
  problems: string[],
  client: { isPublic: boolean; redirects: boolean },
): GrantType[] {
  if (value === undefined) {
    const first: GrantType[] = client.isPublic ? [] : ['password'];
    return [...first, 'refresh_token', ...(client.isPublic || client.redirects ? ['authorization_code' as const] : [])];
  }
  if (!Array.isArray(value)) {
    problems.push(`${path}: must be a list of grant types (${GRANT_TYPE_NAMES}), not ${describe(value)}`);
    return [];
  }
  if (value.length === 0) problems.push(`${path}: must name at least one grant type (omit it for the defaults)`);
  const grants: GrantType[] = [];
  value.forEach((grant: unknown, index) => {
    if (!GRANT_TYPES.includes(grant as GrantType)) {
      problems.push(`${path}[${index}]: unknown grant type ${describe(grant)} (use ${GRANT_TYPE_NAMES})`);
    } else if (grants.includes(grant as GrantType)) {
      problems.push(`${path}[${index}]: duplicate grant type "${grant as string}"`);
    } else {
      grants.push(grant as GrantType);
    }
  });
  return grants;
}

function describeSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}
