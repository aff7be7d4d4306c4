import { X509Certificate } from 'node:crypto';
import { FilterParser } from 'ldapts';
import { DurationError, parseDuration } from '../duration.js';
import {
  describe,
  isObject,
  optionalObject,
  parsedUrl,
  referencedName,
  secretRefValue,
  wholeNumberField,
  booleanField,
  type SecretLookup,
} from '../fields.js';
import { DnSyntaxError, isAttributeType, parseDn } from './ldap-syntax.js';

/**
 * The `ldap` block of an identity provider of type LDAP, read into settings the provider runs with. Pure.
 *
 * Decisions:
 * - Transport: `ldaps://`, or `ldap://` with `startTLS: true`; certificates are always verified (the system CAs, or
 *   the PEM bundle `caSecretRef` names). Plain `ldap://` sends passwords readable on the wire, so it needs
 *   `insecureNoTLS: true` written out (as dex's `insecureNoSSL`); there is no switch that skips verification.
 * - The service account (`bindDN` + `bindPasswordSecretRef`, both or neither; neither: an anonymous search) searches
 *   users and groups; the user's own bind checks the password.
 * - The stable user id is `idAttribute` (default `DN`; `entryUUID` survives renames on OpenLDAP).
 * - Groups come from a group search (entries whose `memberAttribute` holds the user's DN, or another attribute of
 *   the user such as `uid` for posixGroup's `memberUid`), from the user's `memberOfAttribute` (the leftmost RDN value
 *   of each group DN), or both.
 */
export interface LdapUserSearch {
  baseDN: string;
  scope: 'sub' | 'one';
  /** An RFC 4515 filter every user must also match, e.g. `(objectClass=person)`. */
  filter?: string;
  /** Matched against the login name. */
  loginAttribute: string;
  /** Matched against a login that contains "@"; absent: e-mail logins are not tried in this directory. */
  mailAttribute?: string;
  /** The stable user id: an attribute, or `DN`. */
  idAttribute: string;
  /** The preferred user name (the base of an auto-created User's name). */
  nameAttribute: string;
}

export interface LdapGroupSearch {
  baseDN: string;
  scope: 'sub' | 'one';
  filter?: string;
  /** The group's attribute that lists its members. */
  memberAttribute: string;
  /** What of the user that attribute holds: `DN`, or an attribute of the user (e.g. `uid` for memberUid). */
  userAttribute: string;
  /** The group's name as Kubernetes sees it. */
  nameAttribute: string;
}

export interface LdapSettings {
  /** `ldap://host:port` or `ldaps://host:port`, normalized. */
  url: string;
  security: 'ldaps' | 'startTLS' | 'none';
  /** PEM CA bundle that must have signed the server's certificate; absent: the system's CAs. */
  caPem?: string;
  bindDN?: string;
  bindPassword?: string;
  userSearch: LdapUserSearch;
  groupSearch?: LdapGroupSearch;
  memberOfAttribute?: string;
  /** Each connect and each operation; a directory slower than this is unavailable (503). */
  timeoutSeconds: number;
  /** Connections one replica keeps to the directory at most, busy or idle. */
  maxConnections: number;
}

export const MAX_LDAP_CONNECTIONS = 64;
const DEFAULT_TIMEOUT_SECONDS = 5;
const DEFAULT_MAX_CONNECTIONS = 8;
const MAX_TIMEOUT_SECONDS = 60;
const MAX_FILTER_LENGTH = 1024;

export function parseLdapSettings(
  block: Record<string, unknown>,
  path: string,
  secrets: SecretLookup,
  problems: string[],
): LdapSettings | undefined {
  const before = problems.length;
  const transport = ldapUrl(block.url, `${path}.url`, problems);
  const startTLS = booleanField(block.startTLS, `${path}.startTLS`, false, problems);
  const insecure = booleanField(block.insecureNoTLS, `${path}.insecureNoTLS`, false, problems);
  let security: LdapSettings['security'] = 'ldaps';
  if (transport?.secure) {
    if (startTLS) problems.push(`${path}.startTLS: ldaps:// is TLS already; use ldap:// with startTLS`);
    if (insecure) problems.push(`${path}.insecureNoTLS: contradicts ldaps://`);
  } else if (transport) {
    if (startTLS && insecure) problems.push(`${path}: give startTLS or insecureNoTLS, not both`);
    else if (startTLS) security = 'startTLS';
    else if (insecure) security = 'none';
    else {
      problems.push(
        `${path}.url: ldap:// sends passwords unencrypted: use ldaps://, or startTLS: true, or (only on a trusted network) insecureNoTLS: true`,
      );
    }
  }
  let caPem: string | undefined;
  if (block.caSecretRef !== undefined) {
    if (security === 'none') problems.push(`${path}.caSecretRef: there is no TLS with insecureNoTLS`);
    caPem = caBundle(block.caSecretRef, `${path}.caSecretRef`, secrets, problems);
  }

  const bindDN = block.bindDN === undefined ? undefined : dnField(block.bindDN, `${path}.bindDN`, problems);
  let bindPassword: string | undefined;
  if (block.bindPasswordSecretRef !== undefined) {
    bindPassword = secretRefValue(block.bindPasswordSecretRef, `${path}.bindPasswordSecretRef`, secrets, problems);
  }
  if ((block.bindDN === undefined) !== (block.bindPasswordSecretRef === undefined)) {
    problems.push(`${path}: give bindDN and bindPasswordSecretRef together (or neither, for an anonymous search)`);
  }
  if (block.bindPassword !== undefined) {
    problems.push(`${path}.bindPassword: passwords are read from a Secret only: use bindPasswordSecretRef`);
  }

  const userSearch = userSearchSettings(block.userSearch, `${path}.userSearch`, problems);
  const groupBlock = optionalObject(block.groupSearch, `${path}.groupSearch`, problems);
  const groupSearch = groupBlock && groupSearchSettings(groupBlock, `${path}.groupSearch`, problems);
  const memberOfAttribute =
    block.memberOfAttribute === undefined
      ? undefined
      : attributeField(block.memberOfAttribute, `${path}.memberOfAttribute`, undefined, problems);
  const timeout = timeoutField(block.timeout, `${path}.timeout`, problems);
  const maxConnections = wholeNumberField(
    block.maxConnections,
    `${path}.maxConnections`,
    [1, MAX_LDAP_CONNECTIONS],
    DEFAULT_MAX_CONNECTIONS,
    problems,
  );

  if (problems.length > before || !transport || !userSearch) return undefined;
  const settings: LdapSettings = {
    url: transport.url,
    security,
    userSearch,
    timeoutSeconds: timeout,
    maxConnections,
  };
  if (caPem !== undefined) settings.caPem = caPem;
  if (bindDN !== undefined && bindPassword !== undefined) Object.assign(settings, { bindDN, bindPassword });
  if (groupSearch) settings.groupSearch = groupSearch;
  if (memberOfAttribute) settings.memberOfAttribute = memberOfAttribute;
  return settings;
}

/** The Secrets an `ldap` block names, read leniently. */
export function ldapSecretNames(block: unknown): string[] {
  if (!isObject(block)) return [];
  return [referencedName(block.caSecretRef), referencedName(block.bindPasswordSecretRef)].filter(
    (name): name is string => name !== undefined,
  );
}

function ldapUrl(value: unknown, path: string, problems: string[]): { url: string; secure: boolean } | undefined {
  const url = parsedUrl(value, path, problems, 'ldaps://host[:port] or ldap://host[:port]');
  if (!url) return undefined;
  if (url.protocol !== 'ldap:' && url.protocol !== 'ldaps:') {
    problems.push(`${path}: ${describe(value)} must start with ldaps:// or ldap://`);
    return undefined;
  }
  if (url.hostname === '' || url.username || url.password || (url.pathname !== '' && url.pathname !== '/')) {
    problems.push(`${path}: ${describe(value)} must be only a scheme, a host and a port (no credentials, no DN)`);
    return undefined;
  }
  if (url.search || url.hash) {
    problems.push(`${path}: ${describe(value)} must have no query or fragment`);
    return undefined;
  }
  const secure = url.protocol === 'ldaps:';
  const port = url.port || (secure ? '636' : '389');
  return { url: `${url.protocol}//${url.hostname}:${port}`, secure };
}

/** A PEM bundle of CA certificates from a Secret reference, each certificate readable. */
export function caBundle(ref: unknown, path: string, secrets: SecretLookup, problems: string[]): string | undefined {
  const pem = secretRefValue(ref, path, secrets, problems, { raw: true });
  if (pem === undefined) return undefined;
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) {
    problems.push(`${path}: the value holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    return undefined;
  }
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      problems.push(`${path}: a certificate in the bundle cannot be read`);
      return undefined;
    }
  }
  return blocks.join('\n');
}

function userSearchSettings(value: unknown, path: string, problems: string[]): LdapUserSearch | undefined {
  if (!isObject(value)) {
    problems.push(`${path}: is required (an object with baseDN and loginAttribute)`);
    return undefined;
  }
  const before = problems.length;
  const baseDN = dnField(value.baseDN, `${path}.baseDN`, problems);
  const scope = scopeField(value.scope, `${path}.scope`, problems);
  const filter = filterField(value.filter, `${path}.filter`, problems);
  const loginAttribute = attributeField(value.loginAttribute, `${path}.loginAttribute`, 'uid', problems);
  const mailAttribute =
    value.mailAttribute === undefined
      ? 'mail'
      : value.mailAttribute === ''
        ? undefined
        : attributeField(value.mailAttribute, `${path}.mailAttribute`, undefined, problems);
  const idAttribute = attributeField(value.idAttribute, `${path}.idAttribute`, 'DN', problems, { dn: true });
  const nameAttribute = attributeField(value.nameAttribute, `${path}.nameAttribute`, loginAttribute, problems);
  if (problems.length > before || baseDN === undefined) return undefined;
  const search: LdapUserSearch = {
    baseDN,
    scope,
    loginAttribute: loginAttribute!,
    idAttribute: idAttribute!,
    nameAttribute: nameAttribute!,
  };
  if (filter) search.filter = filter;
  if (mailAttribute) search.mailAttribute = mailAttribute;
  return search;
}

function groupSearchSettings(
  value: Record<string, unknown>,
  path: string,
  problems: string[],
): LdapGroupSearch | undefined {
  const before = problems.length;
  const baseDN = dnField(value.baseDN, `${path}.baseDN`, problems);
  const scope = scopeField(value.scope, `${path}.scope`, problems);
  const filter = filterField(value.filter, `${path}.filter`, problems);
  const memberAttribute = attributeField(value.memberAttribute, `${path}.memberAttribute`, 'member', problems);
  const userAttribute = attributeField(value.userAttribute, `${path}.userAttribute`, 'DN', problems, { dn: true });
  const nameAttribute = attributeField(value.nameAttribute, `${path}.nameAttribute`, 'cn', problems);
  if (problems.length > before || baseDN === undefined) return undefined;
  const search: LdapGroupSearch = {
    baseDN,
    scope,
    memberAttribute: memberAttribute!,
    userAttribute: userAttribute!,
    nameAttribute: nameAttribute!,
  };
  if (filter) search.filter = filter;
  return search;
}

function dnField(value: unknown, path: string, problems: string[]): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    problems.push(`${path}: is required (a DN such as ou=people,dc=example,dc=com)`);
    return undefined;
  }
  if (value.length > 1024) {
    problems.push(`${path}: longer than 1024 characters`);
    return undefined;
  }
  try {
    parseDn(value);
    return value;
  } catch (err) {
    if (!(err instanceof DnSyntaxError)) throw err;
    problems.push(`${path}: ${describe(value)} is not a DN (RFC 4514): ${err.message}`);
    return undefined;
  }
}

/** Seconds, fractions allowed (a directory on the next rack answers in milliseconds), from 10 ms to 60 s. */
function timeoutField(value: unknown, path: string, problems: string[]): number {
  if (value === undefined) return DEFAULT_TIMEOUT_SECONDS;
  try {
    if (typeof value !== 'string') throw new DurationError('is not a duration such as 5s');
    const seconds = parseDuration(value);
    if (seconds >= 0.01 && seconds <= MAX_TIMEOUT_SECONDS) return seconds;
    problems.push(`${path}: ${describe(value)} must be from 10ms to ${MAX_TIMEOUT_SECONDS}s`);
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    problems.push(`${path}: ${describe(value)} ${err.message}`);
  }
  return DEFAULT_TIMEOUT_SECONDS;
}

function scopeField(value: unknown, path: string, problems: string[]): 'sub' | 'one' {
  if (value === undefined || value === 'sub') return 'sub';
  if (value === 'one') return 'one';
  problems.push(`${path}: must be sub or one, not ${describe(value)}`);
  return 'sub';
}

function filterField(value: unknown, path: string, problems: string[]): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') {
    problems.push(`${path}: must be an LDAP filter such as (objectClass=person), not ${describe(value)}`);
    return undefined;
  }
  if (value.length > MAX_FILTER_LENGTH) {
    problems.push(`${path}: longer than ${MAX_FILTER_LENGTH} characters`);
    return undefined;
  }
  const trimmed = value.trim();
  try {
    if (!balancedParentheses(trimmed)) throw new Error('not one parenthesized filter');
    FilterParser.parseString(trimmed);
    return trimmed;
  } catch {
    problems.push(`${path}: ${describe(value)} is not an LDAP filter (RFC 4515), e.g. (objectClass=person)`);
    return undefined;
  }
}

/**
 * One filter in parentheses, every parenthesis matched (a value cannot hold one unescaped: RFC 4515 escapes them as
 * \\28 and \\29). ldapts's parser reads `(&(a=b)` as if it were closed; a directory would refuse it at each login.
 */
function balancedParentheses(filter: string): boolean {
  let depth = 0;
  for (let i = 0; i < filter.length; i++) {
    if (filter[i] === '(') depth++;
    else if (filter[i] === ')') depth--;
    if (depth < 0 || (depth === 0 && i < filter.length - 1)) return false;
  }
  return depth === 0 && filter.startsWith('(');
}

function attributeField(
  value: unknown,
  path: string,
  fallback: string | undefined,
  problems: string[],
  options: { dn?: boolean } = {},
): string | undefined {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (isAttributeType(value) || (options.dn && value === 'DN'))) return value;
  problems.push(
    `${path}: ${describe(value)} is not an attribute name such as uid${options.dn ? ' (or DN, the entry’s DN)' : ''}`,
  );
  return undefined;
}
