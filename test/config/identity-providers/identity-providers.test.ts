import type { LdapProviderSettings } from '../../../src/config/identity-providers/index.js';
import { CA_PEM } from '../fakes.js';
import {
  DEFAULT_AUTH_SETTINGS,
  parseClusterConfiguration,
  referencedSecretNames,
  type SecretLookup,
} from '../../../src/config/cluster-configuration.js';

const BIND_PASSWORD = 'bind-S3cret';
const SECRETS: Record<string, Record<string, string>> = {
  ldap: { password: BIND_PASSWORD, 'ca.crt': CA_PEM, newline: 'bind\n', junk: 'not a certificate' },
};
const lookup: SecretLookup = (name) => SECRETS[name];

function withProviders(identityProviders: unknown): unknown {
  return { spec: { authentication: { identityProviders } } };
}

const LDAP = {
  url: 'ldaps://ldap.example.com',
  bindDN: 'cn=kapi,ou=services,dc=example,dc=com',
  bindPasswordSecretRef: { name: 'ldap', key: 'password' },
  userSearch: { baseDN: 'ou=people,dc=example,dc=com' },
};
const provider = (overrides: Record<string, unknown> = {}, ldap: Record<string, unknown> = {}) => ({
  name: 'corp',
  type: 'LDAP',
  mappingMethod: 'auto',
  ldap: { ...LDAP, ...ldap },
  ...overrides,
});

/** The providers read (the LDAP ones these cases configure). */
function providersOf(object: unknown) {
  const result = parseClusterConfiguration(object, lookup);
  if ('error' in result) throw new Error(`expected settings, got: ${result.error}`);
  return result.settings.identityProviders as LdapProviderSettings[];
}

function errorOf(object: unknown): string {
  const result = parseClusterConfiguration(object, lookup);
  if (!('error' in result)) throw new Error('expected an error');
  expect(result.error).not.toContain(BIND_PASSWORD);
  expect(result.error).not.toContain('MII');
  return result.error;
}

describe('identityProviders', () => {
  it('when none are configured, then there are none', () => {
    expect(DEFAULT_AUTH_SETTINGS.identityProviders).toEqual([]);
    expect(providersOf(withProviders(undefined))).toEqual([]);
    expect(providersOf(withProviders([]))).toEqual([]);
  });

  it('when an LDAP provider gives only what it must, then every default applies', () => {
    expect(providersOf(withProviders([provider()]))).toEqual([
      {
        name: 'corp',
        type: 'LDAP',
        mappingMethod: 'auto',
        groupPrefix: '',
        ldap: {
          url: 'ldaps://ldap.example.com:636',
          security: 'ldaps',
          bindDN: 'cn=kapi,ou=services,dc=example,dc=com',
          bindPassword: BIND_PASSWORD,
          userSearch: {
            baseDN: 'ou=people,dc=example,dc=com',
            scope: 'sub',
            loginAttribute: 'uid',
            mailAttribute: 'mail',
            idAttribute: 'DN',
            nameAttribute: 'uid',
          },
          timeoutSeconds: 5,
          maxConnections: 8,
        },
      },
    ]);
  });

  it('when every field is given, then each is read', () => {
    const [read] = providersOf(
      withProviders([
        provider(
          { name: 'ad', mappingMethod: 'lookup', groupPrefix: 'ad:' },
          {
            url: 'ldap://dc1.example.com:3268',
            startTLS: true,
            caSecretRef: { name: 'ldap', key: 'ca.crt' },
            userSearch: {
              baseDN: 'ou=people,dc=example,dc=com',
              scope: 'one',
              filter: ' (objectClass=person) ',
              loginAttribute: 'sAMAccountName',
              mailAttribute: 'userPrincipalName',
              idAttribute: 'objectGUID',
              nameAttribute: 'cn',
            },
            groupSearch: {
              baseDN: 'ou=groups,dc=example,dc=com',
              scope: 'one',
              filter: '(objectClass=posixGroup)',
              memberAttribute: 'memberUid',
              userAttribute: 'uid',
              nameAttribute: 'gidName',
            },
            memberOfAttribute: 'memberOf',
            timeout: '2500ms',
            maxConnections: 3,
          },
        ),
      ]),
    );
    expect(read).toMatchObject({ name: 'ad', mappingMethod: 'lookup', groupPrefix: 'ad:' });
    expect(read!.ldap).toEqual({
      url: 'ldap://dc1.example.com:3268',
      security: 'startTLS',
      caPem: CA_PEM,
      bindDN: 'cn=kapi,ou=services,dc=example,dc=com',
      bindPassword: BIND_PASSWORD,
      userSearch: {
        baseDN: 'ou=people,dc=example,dc=com',
        scope: 'one',
        filter: '(objectClass=person)',
        loginAttribute: 'sAMAccountName',
        mailAttribute: 'userPrincipalName',
        idAttribute: 'objectGUID',
        nameAttribute: 'cn',
      },
      groupSearch: {
        baseDN: 'ou=groups,dc=example,dc=com',
        scope: 'one',
        filter: '(objectClass=posixGroup)',
        memberAttribute: 'memberUid',
        userAttribute: 'uid',
        nameAttribute: 'gidName',
      },
      memberOfAttribute: 'memberOf',
      timeoutSeconds: 2.5,
      maxConnections: 3,
    });
  });

  it('when the timeout is fractional, then it is kept as is (milliseconds count for a directory)', () => {
    expect(providersOf(withProviders([provider({}, { timeout: '1500ms' })]))[0]!.ldap.timeoutSeconds).toBe(1.5);
  });

  it('when there is no service account, then the search is anonymous', () => {
    const [read] = providersOf(withProviders([provider({}, { bindDN: undefined, bindPasswordSecretRef: undefined })]));
    expect(read!.ldap.bindDN).toBeUndefined();
    expect(read!.ldap.bindPassword).toBeUndefined();
  });

  it('when mailAttribute is empty, then e-mail logins are off for that directory', () => {
    const [read] = providersOf(
      withProviders([provider({}, { userSearch: { baseDN: 'dc=example,dc=com', mailAttribute: '' } })]),
    );
    expect(read!.ldap.userSearch.mailAttribute).toBeUndefined();
  });

  it('when ldap:// says insecureNoTLS, then it is plain LDAP', () => {
    const [read] = providersOf(withProviders([provider({}, { url: 'ldap://127.0.0.1:3890', insecureNoTLS: true })]));
    expect(read!.ldap).toMatchObject({ url: 'ldap://127.0.0.1:3890', security: 'none' });
  });

  it('when two providers are given, then they keep their order', () => {
    const names = providersOf(withProviders([provider({ name: 'b' }), provider({ name: 'a' })])).map((p) => p.name);
    expect(names).toEqual(['b', 'a']);
  });

  it.each([
    ['the list is an object', {}, 'identityProviders: must be a list'],
    ['an entry is a string', ['x'], 'identityProviders[0]: must be an object'],
    ['the name is missing', [provider({ name: undefined })], 'identityProviders[0].name: is required'],
    ['the name is not a DNS label', [provider({ name: 'Corp_LDAP' })], '"Corp_LDAP" must be a DNS label'],
    ['the name is local', [provider({ name: 'local' })], '"local" is reserved'],
    [
      'two providers share a name',
      [provider(), provider()],
      'identityProviders[1].name: duplicate provider name "corp"',
    ],
    ['the type is missing', [provider({ type: undefined })], 'identityProviders[0].type: is required (LDAP, OIDC)'],
    ['the type is unknown', [provider({ type: 'GitHub' })], '"GitHub" is not a known type (LDAP, OIDC)'],
    ['mappingMethod is missing', [provider({ mappingMethod: undefined })], 'mappingMethod: is required auto'],
    ['mappingMethod is unknown', [provider({ mappingMethod: 'mixed' })], 'mappingMethod: "mixed" is not auto'],
    ['groupPrefix has a space', [provider({ groupPrefix: 'a b' })], 'groupPrefix: must be at most 63 characters'],
    ['the ldap block is missing', [provider({ ldap: undefined })], 'ldap: is required for type LDAP'],
    ['the url is missing', [provider({}, { url: undefined })], 'ldap.url: is required'],
    ['the url is http', [provider({}, { url: 'https://ldap.example.com' })], 'must start with ldaps:// or ldap://'],
    ['the url carries a DN', [provider({}, { url: 'ldaps://h/dc=x' })], 'must be only a scheme, a host and a port'],
    ['the url carries credentials', [provider({}, { url: 'ldaps://u:p@h' })], 'must be only a scheme, a host'],
    ['ldap:// has no TLS choice', [provider({}, { url: 'ldap://h' })], 'ldap:// sends passwords unencrypted'],
    ['ldaps:// asks for StartTLS', [provider({}, { startTLS: true })], 'ldaps:// is TLS already'],
    [
      'ldap:// asks for both',
      [provider({}, { url: 'ldap://h', startTLS: true, insecureNoTLS: true })],
      'give startTLS or insecureNoTLS, not both',
    ],
    [
      'a CA is given without TLS',
      [provider({}, { url: 'ldap://h', insecureNoTLS: true, caSecretRef: { name: 'ldap', key: 'ca.crt' } })],
      'caSecretRef: there is no TLS with insecureNoTLS',
    ],
    [
      'the CA is not a certificate',
      [provider({}, { caSecretRef: { name: 'ldap', key: 'junk' } })],
      'holds no PEM certificate',
    ],
    [
      'the CA Secret is missing',
      [provider({}, { caSecretRef: { name: 'nope', key: 'ca' } })],
      'Secret "nope" not found',
    ],
    [
      'a bind password is inline',
      [provider({}, { bindPassword: 'x' })],
      'bindPassword: passwords are read from a Secret',
    ],
    [
      'the bind password has a newline',
      [provider({}, { bindPasswordSecretRef: { name: 'ldap', key: 'newline' } })],
      'contains a control character',
    ],
    [
      'bindDN comes without its password',
      [provider({}, { bindPasswordSecretRef: undefined })],
      'give bindDN and bindPasswordSecretRef together',
    ],
    ['bindDN is not a DN', [provider({}, { bindDN: 'kapi' })], 'bindDN: "kapi" is not a DN (RFC 4514)'],
    ['userSearch is missing', [provider({}, { userSearch: undefined })], 'userSearch: is required'],
    ['the base DN is missing', [provider({}, { userSearch: {} })], 'userSearch.baseDN: is required'],
    [
      'the base DN has an unescaped quote',
      [provider({}, { userSearch: { baseDN: 'ou="x",dc=y' } })],
      'userSearch.baseDN: "ou=\\"x\\",dc=y" is not a DN',
    ],
    [
      'the scope is base',
      [provider({}, { userSearch: { baseDN: 'dc=x', scope: 'base' } })],
      'scope: must be sub or one',
    ],
    [
      'the filter is not a filter',
      [provider({}, { userSearch: { baseDN: 'dc=x', filter: 'objectClass=person' } })],
      'userSearch.filter: "objectClass=person" is not an LDAP filter',
    ],
    [
      'the filter is unbalanced',
      [provider({}, { userSearch: { baseDN: 'dc=x', filter: '(&(a=b)' } })],
      'is not an LDAP filter',
    ],
    [
      'the login attribute is a filter',
      [provider({}, { userSearch: { baseDN: 'dc=x', loginAttribute: 'uid)(cn=*' } })],
      'loginAttribute: "uid)(cn=*" is not an attribute name',
    ],
    [
      'the group search has no base DN',
      [provider({}, { groupSearch: { memberAttribute: 'member' } })],
      'groupSearch.baseDN: is required',
    ],
    ['the timeout is too long', [provider({}, { timeout: '2m' })], 'ldap.timeout: "2m" must be from 10ms to 60s'],
    ['the timeout is text', [provider({}, { timeout: 'soon' })], 'ldap.timeout: "soon"'],
    [
      'maxConnections is zero',
      [provider({}, { maxConnections: 0 })],
      'maxConnections: must be a whole number from 1 to 64',
    ],
  ])('when %s, then the configuration is refused naming it', (_case, providers, message) => {
    expect(errorOf(withProviders(providers))).toContain(message);
  });

  it('when nine providers are given, then at most eight are allowed', () => {
    const nine = Array.from({ length: 9 }, (_, i) => provider({ name: `p${i}` }));
    expect(errorOf(withProviders(nine))).toContain('at most 8 identity providers, not 9');
  });
});

describe('referencedSecretNames with identity providers', () => {
  it('when providers reference Secrets, then those are watched with the clients’ Secrets', () => {
    const object = {
      spec: {
        authentication: {
          oauth: { clients: [{ name: 'a', secretRef: { name: 'clients', key: 'a' } }] },
          identityProviders: [
            provider({}, { caSecretRef: { name: 'ldap-ca', key: 'ca.crt' } }),
            provider({ name: 'x', type: 'Unknown' }),
            'junk',
          ],
        },
      },
    };
    expect([...referencedSecretNames(object)].sort()).toEqual(['clients', 'ldap', 'ldap-ca']);
  });
});
