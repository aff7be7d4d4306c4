import { describe, field, isObject, type SecretLookup } from '../fields.js';
import { ldapSecretNames, parseLdapSettings, type LdapSettings } from './ldap.js';
import { oidcSecretNames, parseOidcSettings, type OidcSettings } from './oidc.js';

/**
 * `spec.authentication.identityProviders[]`: where logins may come from besides local Users. Pure.
 *
 * Each entry has the fields every provider shares (`name`, `type`, `mappingMethod`, `groupPrefix`) and one settings
 * block named after its type in lower case (`ldap` for `LDAP`): a type is a row of `PROVIDER_TYPES`, its settings
 * parser and the Secrets it references. KubeSphere 3.4 keeps a free-form `provider` map; a typed block lets the CRD
 * schema check every field and keeps one type's settings out of another's.
 *
 * - `mappingMethod` is required: `auto` creates a User at a first login, `lookup` admits only Users an administrator
 *   linked to the upstream identity. Choosing between them is a security decision, so it has no default.
 * - `name` is a DNS label: it goes into labels of the Users it links, and into URLs (`/oauth/callback/{name}`).
 *   `local` is reserved: login records name local Users' logins so.
 * - Secrets (bind passwords, client secrets, CA bundles) are read through Secret references only.
 */
export type MappingMethod = 'auto' | 'lookup';

export interface ProviderCommon {
  name: string;
  mappingMethod: MappingMethod;
  /** Prepended to every upstream group name (`ldap:` → `ldap:developers`); empty by default. */
  groupPrefix: string;
}

export interface LdapProviderSettings extends ProviderCommon {
  type: 'LDAP';
  ldap: LdapSettings;
}

export interface OidcProviderSettings extends ProviderCommon {
  type: 'OIDC';
  oidc: OidcSettings;
}

/** One configured provider; a new type adds its member here and its row to `PROVIDER_TYPES`. */
export type IdentityProviderSettings = LdapProviderSettings | OidcProviderSettings;
export type IdentityProviderType = IdentityProviderSettings['type'];

/** How one type is read: the name of its settings block, its parser, and the Secrets a block references. */
interface ProviderType<T extends IdentityProviderType> {
  block: string;
  parse(
    block: Record<string, unknown>,
    path: string,
    secrets: SecretLookup,
    problems: string[],
  ): Omit<Extract<IdentityProviderSettings, { type: T }>, keyof ProviderCommon | 'type'> | undefined;
  secretNames(block: unknown): string[];
}

const PROVIDER_TYPES: { [T in IdentityProviderType]: ProviderType<T> } = {
  LDAP: {
    block: 'ldap',
    parse: (block, path, secrets, problems) => {
      const ldap = parseLdapSettings(block, path, secrets, problems);
      return ldap && { ldap };
    },
    secretNames: ldapSecretNames,
  },
  OIDC: {
    block: 'oidc',
    parse: (block, path, secrets, problems) => {
      const oidc = parseOidcSettings(block, path, secrets, problems);
      return oidc && { oidc };
    },
    secretNames: oidcSecretNames,
  },
};

export const IDENTITY_PROVIDER_TYPES = Object.keys(PROVIDER_TYPES) as IdentityProviderType[];
/** The name login records give local Users' logins; no provider may take it. */
export const LOCAL_PROVIDER = 'local';
export const MAX_IDENTITY_PROVIDERS = 8;
const PROVIDER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
// eslint-disable-next-line no-control-regex
const GROUP_PREFIX = /^[^\s\u0000-\u001f\u007f]{0,63}$/;
const MAPPING_METHODS: readonly MappingMethod[] = ['auto', 'lookup'];

export function parseIdentityProviders(
  value: unknown,
  path: string,
  secrets: SecretLookup,
  problems: string[],
): IdentityProviderSettings[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${path}: must be a list of identity providers, not ${describe(value)}`);
    return [];
  }
  if (value.length > MAX_IDENTITY_PROVIDERS) {
    problems.push(`${path}: at most ${MAX_IDENTITY_PROVIDERS} identity providers, not ${value.length}`);
  }
  const providers: IdentityProviderSettings[] = [];
  const seen = new Set<string>();
  value.slice(0, MAX_IDENTITY_PROVIDERS).forEach((item: unknown, index) => {
    const provider = identityProvider(item, `${path}[${index}]`, secrets, problems);
    if (!provider) return;
    if (seen.has(provider.name)) problems.push(`${path}[${index}].name: duplicate provider name "${provider.name}"`);
    seen.add(provider.name);
    providers.push(provider);
  });
  return providers;
}

/** The Secrets the providers' blocks name, read leniently (the watcher watches them before it parses). */
export function identityProviderSecretNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.slice(0, MAX_IDENTITY_PROVIDERS).flatMap((item: unknown) => {
    const type = PROVIDER_TYPES[field(item, 'type') as IdentityProviderType] as
      ProviderType<IdentityProviderType> | undefined;
    return type ? type.secretNames(field(item, type.block)) : [];
  });
}

function identityProvider(
  item: unknown,
  path: string,
  secrets: SecretLookup,
  problems: string[],
): IdentityProviderSettings | undefined {
  if (!isObject(item)) {
    problems.push(`${path}: must be an object with name, type, mappingMethod and the type's settings`);
    return undefined;
  }
  const before = problems.length;
  const { name, type: typeName, mappingMethod, groupPrefix } = item;
  if (typeof name !== 'string' || name === '') problems.push(`${path}.name: is required`);
  else if (!PROVIDER_NAME.test(name)) {
    problems.push(`${path}.name: ${describe(name)} must be a DNS label (1-63 lower-case letters, digits and "-")`);
  } else if (name === LOCAL_PROVIDER) problems.push(`${path}.name: "${LOCAL_PROVIDER}" is reserved for local users`);
  if (!MAPPING_METHODS.includes(mappingMethod as MappingMethod)) {
    problems.push(
      `${path}.mappingMethod: ${mappingMethod === undefined ? 'is required' : `${describe(mappingMethod)} is not`} auto (create a User at the first login) or lookup (only Users linked by an administrator)`,
    );
  }
  if (groupPrefix !== undefined && (typeof groupPrefix !== 'string' || !GROUP_PREFIX.test(groupPrefix))) {
    problems.push(`${path}.groupPrefix: must be at most 63 characters without spaces, not ${describe(groupPrefix)}`);
  }
  const type = PROVIDER_TYPES[typeName as IdentityProviderType] as ProviderType<IdentityProviderType> | undefined;
  if (!type) {
    problems.push(
      `${path}.type: ${typeName === undefined ? 'is required' : `${describe(typeName)} is not a known type`} (${IDENTITY_PROVIDER_TYPES.join(', ')})`,
    );
    return undefined;
  }
  for (const other of Object.values(PROVIDER_TYPES)) {
    if (other.block !== type.block && item[other.block] !== undefined) {
      problems.push(`${path}.${other.block}: only for another type (this provider's settings go in ${type.block})`);
    }
  }
  const block = item[type.block];
  if (!isObject(block)) {
    problems.push(`${path}.${type.block}: is required for type ${typeName as string} (an object)`);
    return undefined;
  }
  const settings = type.parse(block, `${path}.${type.block}`, secrets, problems);
  if (problems.length > before || !settings) return undefined;
  return {
    name: name as string,
    type: typeName as IdentityProviderType,
    mappingMethod: mappingMethod as MappingMethod,
    groupPrefix: (groupPrefix as string | undefined) ?? '',
    ...settings,
  } as IdentityProviderSettings;
}
