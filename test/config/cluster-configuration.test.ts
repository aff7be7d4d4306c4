import {
  DEFAULT_AUTH_SETTINGS,
  parseClusterConfiguration,
  referencedSecretNames,
  type AuthSettings,
  type SecretLookup,
} from '../../src/config/cluster-configuration.js';

/** Every secret value used below; none may ever appear in an error message. */
const SECRET_VALUES = ['s3cr3t-inline', 'from-the-secret', 'bad\nvalue', ' padded ', 'x'.repeat(513)];

const SECRETS: Record<string, Record<string, string>> = {
  'oauth-clients': {
    console: 'from-the-secret',
    newline: 'bad\nvalue',
    padded: ' padded ',
    empty: '',
    long: 'x'.repeat(513),
  },
};
const lookup: SecretLookup = (name) => SECRETS[name];

function withAuth(authentication: unknown): unknown {
  return { apiVersion: 'installer.kapi.io/v1alpha1', kind: 'ClusterConfiguration', spec: { authentication } };
}

function settingsOf(object: unknown): AuthSettings {
  const result = parseClusterConfiguration(object, lookup);
  if ('error' in result) throw new Error(`expected settings, got error: ${result.error}`);
  return result.settings;
}

function errorOf(object: unknown): string {
  const result = parseClusterConfiguration(object, lookup);
  if (!('error' in result)) throw new Error('expected an error');
  for (const secret of SECRET_VALUES) expect(result.error).not.toContain(secret);
  return result.error;
}

describe('parseClusterConfiguration', () => {
  it.each([
    ['the object has no spec', {}],
    ['spec has no authentication', { spec: {} }],
    ['authentication is empty', withAuth({})],
    ['authentication is null', withAuth(null)],
  ])('when %s, then every default applies', (_case, object) => {
    expect(settingsOf(object)).toEqual(DEFAULT_AUTH_SETTINGS);
  });

  it('when every field is given, then each is read', () => {
    const settings = settingsOf(
      withAuth({
        accessTokenMaxAge: '1h30m',
        refreshTokenMaxAge: '12h',
        multipleLogin: false,
        maxSessionsPerUser: 3,
        loginLimit: { maxFailures: 5, window: '15m' },
        oauth: {
          clients: [
            { name: 'kapi', secret: 's3cr3t-inline', grantTypes: ['password'] },
            { name: 'console', secretRef: { name: 'oauth-clients', key: 'console' }, grantTypes: ['refresh_token'] },
          ],
        },
      }),
    );
    expect(settings).toEqual({
      accessTokenMaxAgeSeconds: 5400,
      refreshTokenMaxAgeSeconds: 43200,
      multipleLogin: false,
      maxSessionsPerUser: 3,
      loginLimit: { maxFailures: 5, windowSeconds: 900 },
      clients: [
        { name: 'kapi', secret: 's3cr3t-inline', public: false, grantTypes: ['password'], redirectURIs: [] },
        {
          name: 'console',
          secret: 'from-the-secret',
          public: false,
          grantTypes: ['refresh_token'],
          redirectURIs: [],
        },
      ],
      identityProviders: [],
      passwordPolicy: { minLength: 8 },
      loginRecords: { enabled: true, maxAgeSeconds: 604800, maxPerUser: 100 },
    });
  });

  it.each([
    ['only accessTokenMaxAge is 1h', { accessTokenMaxAge: '1h' }, 3600, 14400],
    ['only accessTokenMaxAge is 3h', { accessTokenMaxAge: '3h' }, 10800, 21600],
    ['only refreshTokenMaxAge is 8h', { refreshTokenMaxAge: '8h' }, 7200, 28800],
    ['refresh equals access', { accessTokenMaxAge: '1h', refreshTokenMaxAge: '60m' }, 3600, 3600],
  ])('when %s, then the lifetimes are %p and %p seconds', (_case, auth, access, refresh) => {
    const settings = settingsOf(withAuth(auth));
    expect(settings.accessTokenMaxAgeSeconds).toBe(access);
    expect(settings.refreshTokenMaxAgeSeconds).toBe(refresh);
  });

  it('when a client omits grantTypes, then it may use password and refresh_token', () => {
    const settings = settingsOf(withAuth({ oauth: { clients: [{ name: 'a', secret: 'x1' }] } }));
    expect(settings.clients).toEqual([
      { name: 'a', secret: 'x1', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
    ]);
  });

  it.each([
    [
      'a public client without grantTypes',
      { name: 'kubectl', public: true, redirectURIs: ['http://127.0.0.1/callback'] },
      { secret: undefined, public: true, grantTypes: ['refresh_token', 'authorization_code'] },
    ],
    [
      'a confidential client with redirect URIs and without grantTypes',
      { name: 'console', secret: 'x1', redirectURIs: ['https://console.example.com/oauth/callback'] },
      { secret: 'x1', public: false, grantTypes: ['password', 'refresh_token', 'authorization_code'] },
    ],
    [
      'a confidential client naming authorization_code only',
      { name: 'app', secret: 'x1', grantTypes: ['authorization_code'], redirectURIs: ['com.example.app:/cb'] },
      { secret: 'x1', public: false, grantTypes: ['authorization_code'] },
    ],
  ])('when %s is given, then it is read with its grants', (_case, client, expected) => {
    const [read] = settingsOf(withAuth({ oauth: { clients: [client] } })).clients;
    expect(read).toEqual({ name: client.name, redirectURIs: client.redirectURIs, ...expected });
  });

  it.each([
    'https://console.example.com/oauth/callback',
    'https://console.example.com:8443/cb?tenant=a%20b&x=1',
    'http://127.0.0.1/callback',
    'http://127.0.0.1:8000/callback',
    'http://[::1]/callback',
    'http://localhost:8000/callback',
    'com.example.app:/oauth2redirect',
  ])('when the redirect URI %s is registered, then it is accepted as written', (uri) => {
    const [read] = settingsOf(
      withAuth({ oauth: { clients: [{ name: 'a', public: true, redirectURIs: [uri] }] } }),
    ).clients;
    expect(read!.redirectURIs).toEqual([uri]);
  });

  it('when oauth is given without clients, then the default client applies', () => {
    expect(settingsOf(withAuth({ oauth: {} })).clients).toEqual(DEFAULT_AUTH_SETTINGS.clients);
  });

  it('when unknown fields are present, then they are ignored', () => {
    const settings = settingsOf(withAuth({ futureSetting: 1, oauth: { clients: [{ name: 'a', secret: 'b', x: 1 }] } }));
    expect(settings.clients).toEqual([
      { name: 'a', secret: 'b', public: false, grantTypes: ['password', 'refresh_token'], redirectURIs: [] },
    ]);
  });

  it('when settings are read, then the snapshot is deeply frozen', () => {
    const settings = settingsOf(withAuth({ oauth: { clients: [{ name: 'a', secret: 'b' }] } }));
    expect(Object.isFrozen(settings)).toBe(true);
    expect(Object.isFrozen(settings.loginLimit)).toBe(true);
    expect(Object.isFrozen(settings.clients)).toBe(true);
    expect(Object.isFrozen(settings.clients[0])).toBe(true);
    expect(Object.isFrozen(settings.clients[0]!.grantTypes)).toBe(true);
    expect(Object.isFrozen(DEFAULT_AUTH_SETTINGS.clients[0]!.grantTypes)).toBe(true);
  });

  const A = 'spec.authentication';
  const C = `${A}.oauth.clients`;
  it.each([
    ['spec is a string', { spec: 'x' }, 'spec: must be an object, not "x"'],
    ['authentication is a list', withAuth([]), `${A}: must be an object, not a list`],
    [
      'accessTokenMaxAge is a number',
      withAuth({ accessTokenMaxAge: 7200 }),
      `${A}.accessTokenMaxAge: must be a duration such as "2h" or "90m", not 7200`,
    ],
    [
      'accessTokenMaxAge has no unit',
      withAuth({ accessTokenMaxAge: '7200' }),
      `${A}.accessTokenMaxAge: "7200" has a number without a unit`,
    ],
    [
      'accessTokenMaxAge is negative',
      withAuth({ accessTokenMaxAge: '-1h' }),
      `${A}.accessTokenMaxAge: "-1h" must not be negative`,
    ],
    [
      'accessTokenMaxAge is zero',
      withAuth({ accessTokenMaxAge: '0s' }),
      `${A}.accessTokenMaxAge: "0s" must be longer than zero`,
    ],
    [
      'accessTokenMaxAge is in days',
      withAuth({ accessTokenMaxAge: '1d' }),
      `${A}.accessTokenMaxAge: "1d" has an unknown unit "d"`,
    ],
    [
      'accessTokenMaxAge has a fraction of a second',
      withAuth({ accessTokenMaxAge: '1500ms' }),
      `${A}.accessTokenMaxAge: "1500ms" must be a whole number of seconds`,
    ],
    [
      'refreshTokenMaxAge is garbage',
      withAuth({ refreshTokenMaxAge: 'soon' }),
      `${A}.refreshTokenMaxAge: "soon" is not a duration`,
    ],
    [
      'refreshTokenMaxAge is shorter than accessTokenMaxAge',
      withAuth({ accessTokenMaxAge: '4h', refreshTokenMaxAge: '2h' }),
      `${A}.refreshTokenMaxAge: 2h must not be shorter than accessTokenMaxAge (4h)`,
    ],
    [
      'refreshTokenMaxAge is shorter than the default access lifetime',
      withAuth({ refreshTokenMaxAge: '90m' }),
      `${A}.refreshTokenMaxAge: 1h30m must not be shorter than accessTokenMaxAge (2h)`,
    ],
    [
      'multipleLogin is a string',
      withAuth({ multipleLogin: 'false' }),
      `${A}.multipleLogin: must be true or false, not "false"`,
    ],
    [
      'maxSessionsPerUser is zero',
      withAuth({ maxSessionsPerUser: 0 }),
      `${A}.maxSessionsPerUser: must be a whole number from 1 to 1000, not 0`,
    ],
    [
      'maxSessionsPerUser is a fraction',
      withAuth({ maxSessionsPerUser: 1.5 }),
      `${A}.maxSessionsPerUser: must be a whole number from 1 to 1000, not 1.5`,
    ],
    [
      'maxSessionsPerUser is too large',
      withAuth({ maxSessionsPerUser: 1001 }),
      `${A}.maxSessionsPerUser: must be a whole number from 1 to 1000, not 1001`,
    ],
    [
      'maxSessionsPerUser is a string',
      withAuth({ maxSessionsPerUser: '5' }),
      `${A}.maxSessionsPerUser: must be a whole number from 1 to 1000, not "5"`,
    ],
    ['loginLimit is a number', withAuth({ loginLimit: 10 }), `${A}.loginLimit: must be an object, not 10`],
    [
      'maxFailures is zero',
      withAuth({ loginLimit: { maxFailures: 0 } }),
      `${A}.loginLimit.maxFailures: must be a whole number from 1 to 100, not 0`,
    ],
    [
      'maxFailures is a fraction',
      withAuth({ loginLimit: { maxFailures: 2.5 } }),
      `${A}.loginLimit.maxFailures: must be a whole number from 1 to 100, not 2.5`,
    ],
    [
      'maxFailures is too large',
      withAuth({ loginLimit: { maxFailures: 101 } }),
      `${A}.loginLimit.maxFailures: must be a whole number from 1 to 100, not 101`,
    ],
    [
      'maxFailures is a string',
      withAuth({ loginLimit: { maxFailures: '10' } }),
      `${A}.loginLimit.maxFailures: must be a whole number from 1 to 100, not "10"`,
    ],
    [
      'window is zero',
      withAuth({ loginLimit: { window: '0' } }),
      `${A}.loginLimit.window: "0" must be longer than zero`,
    ],
    [
      'window is garbage',
      withAuth({ loginLimit: { window: 'ten minutes' } }),
      `${A}.loginLimit.window: "ten minutes" is not a duration such as 2h, 90m or 1h30m`,
    ],
    ['oauth is a string', withAuth({ oauth: 'x' }), `${A}.oauth: must be an object, not "x"`],
    ['clients is an object', withAuth({ oauth: { clients: {} } }), `${C}: must be a list of clients, not an object`],
    [
      'clients is empty',
      withAuth({ oauth: { clients: [] } }),
      `${C}: must name at least one client (omit it for the default client)`,
    ],
    [
      'there are 17 clients',
      withAuth({ oauth: { clients: Array.from({ length: 17 }, (_, i) => ({ name: `c${i}`, secret: 'x1' })) } }),
      `${C}: at most 16 clients, not 17`,
    ],
    [
      'a client is a string',
      withAuth({ oauth: { clients: ['kapi'] } }),
      `${C}[0]: must be an object with name, secret or secretRef, and grantTypes, not "kapi"`,
    ],
    ['a client has no name', withAuth({ oauth: { clients: [{ secret: 'x1' }] } }), `${C}[0].name: is required`],
    [
      'a client name has a space',
      withAuth({ oauth: { clients: [{ name: 'my app', secret: 'x1' }] } }),
      `${C}[0].name: "my app" must be 1-253 letters, digits`,
    ],
    [
      'two clients share a name',
      withAuth({
        oauth: {
          clients: [
            { name: 'a', secret: 'x1' },
            { name: 'a', secret: 'x2' },
          ],
        },
      }),
      `${C}[1].name: duplicate client name "a"`,
    ],
    [
      'a client has neither secret nor secretRef',
      withAuth({ oauth: { clients: [{ name: 'a' }] } }),
      `${C}[0]: one of secret or secretRef is required`,
    ],
    [
      'a client has both secret and secretRef',
      withAuth({
        oauth: {
          clients: [{ name: 'a', secret: 's3cr3t-inline', secretRef: { name: 'oauth-clients', key: 'console' } }],
        },
      }),
      `${C}[0]: give either secret or secretRef, not both`,
    ],
    [
      'a secret is a number',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 12345 }] } }),
      `${C}[0].secret: must be a string, not a number`,
    ],
    [
      'a secret is empty',
      withAuth({ oauth: { clients: [{ name: 'a', secret: '' }] } }),
      `${C}[0].secret: the secret is empty`,
    ],
    [
      'a secret ends with a newline',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 'bad\nvalue' }] } }),
      `${C}[0].secret: the secret contains a control character such as a newline`,
    ],
    [
      'a secret has surrounding spaces',
      withAuth({ oauth: { clients: [{ name: 'a', secret: ' padded ' }] } }),
      `${C}[0].secret: the secret starts or ends with a space`,
    ],
    [
      'a secret is too long',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 'x'.repeat(513) }] } }),
      `${C}[0].secret: the secret is longer than 512 characters`,
    ],
    [
      'secretRef is a string',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: 'oauth-clients' }] } }),
      `${C}[0].secretRef: must be an object with name and key, not "oauth-clients"`,
    ],
    [
      'secretRef has no name',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { key: 'console' } }] } }),
      `${C}[0].secretRef.name: is required`,
    ],
    [
      'secretRef has no key',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { name: 'oauth-clients' } }] } }),
      `${C}[0].secretRef.key: is required`,
    ],
    [
      'the Secret does not exist',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { name: 'nope', key: 'console' } }] } }),
      `${C}[0].secretRef: Secret "nope" not found in the ClusterConfiguration's namespace`,
    ],
    [
      'the Secret lacks the key',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { name: 'oauth-clients', key: 'nope' } }] } }),
      `${C}[0].secretRef: Secret "oauth-clients" has no key "nope"`,
    ],
    [
      'the Secret value is empty',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { name: 'oauth-clients', key: 'empty' } }] } }),
      `${C}[0].secretRef: the value of key "empty" in Secret "oauth-clients" is empty`,
    ],
    [
      'the Secret value ends with a newline',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { name: 'oauth-clients', key: 'newline' } }] } }),
      `${C}[0].secretRef: the value of key "newline" in Secret "oauth-clients" contains a control character`,
    ],
    [
      'the Secret value has surrounding spaces',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { name: 'oauth-clients', key: 'padded' } }] } }),
      `${C}[0].secretRef: the value of key "padded" in Secret "oauth-clients" starts or ends with a space`,
    ],
    [
      'the Secret value is too long',
      withAuth({ oauth: { clients: [{ name: 'a', secretRef: { name: 'oauth-clients', key: 'long' } }] } }),
      `${C}[0].secretRef: the value of key "long" in Secret "oauth-clients" is longer than 512 characters`,
    ],
    [
      'grantTypes is a string',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 'x1', grantTypes: 'password' }] } }),
      `${C}[0].grantTypes: must be a list of grant types (password, refresh_token or authorization_code), not "password"`,
    ],
    [
      'grantTypes is empty',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 'x1', grantTypes: [] }] } }),
      `${C}[0].grantTypes: must name at least one grant type (omit it for the defaults)`,
    ],
    [
      'a grant type is unknown',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 'x1', grantTypes: ['password', 'client_credentials'] }] } }),
      `${C}[0].grantTypes[1]: unknown grant type "client_credentials" (use password, refresh_token or authorization_code)`,
    ],
    [
      'a grant type repeats',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 'x1', grantTypes: ['password', 'password'] }] } }),
      `${C}[0].grantTypes[1]: duplicate grant type "password"`,
    ],
    [
      'a public client has a secret',
      withAuth({ oauth: { clients: [{ name: 'a', public: true, secret: 'x1', redirectURIs: ['http://[::1]/cb'] }] } }),
      `${C}[0]: a public client has no secret; remove secret and secretRef, or public: true`,
    ],
    [
      'public is not a boolean',
      withAuth({ oauth: { clients: [{ name: 'a', public: 'yes', secret: 'x1' }] } }),
      `${C}[0].public: must be true or false, not "yes"`,
    ],
    [
      'a public client asks for the password grant',
      withAuth({
        oauth: {
          clients: [
            {
              name: 'a',
              public: true,
              grantTypes: ['password', 'authorization_code'],
              redirectURIs: ['http://127.0.0.1/cb'],
            },
          ],
        },
      }),
      `${C}[0].grantTypes: a public client may not use the password grant (anyone could, with its name)`,
    ],
    [
      'authorization_code has no redirect URI',
      withAuth({ oauth: { clients: [{ name: 'a', secret: 'x1', grantTypes: ['authorization_code'] }] } }),
      `${C}[0].redirectURIs: the authorization_code grant needs at least one redirect URI`,
    ],
    [
      'a public client has no redirect URI',
      withAuth({ oauth: { clients: [{ name: 'a', public: true }] } }),
      `${C}[0].redirectURIs: the authorization_code grant needs at least one redirect URI`,
    ],
    [
      'redirect URIs come without the authorization_code grant',
      withAuth({
        oauth: {
          clients: [{ name: 'a', secret: 'x1', grantTypes: ['password'], redirectURIs: ['https://a.example/cb'] }],
        },
      }),
      `${C}[0].redirectURIs: only the authorization_code grant uses them, and grantTypes does not name it`,
    ],
    [
      'redirectURIs is a string',
      withAuth({ oauth: { clients: [{ name: 'a', public: true, redirectURIs: 'https://a.example/cb' }] } }),
      `${C}[0].redirectURIs: must be a list of URIs, not "https://a.example/cb"`,
    ],
    [
      'a redirect URI repeats',
      withAuth({
        oauth: {
          clients: [{ name: 'a', public: true, redirectURIs: ['https://a.example/cb', 'https://a.example/cb'] }],
        },
      }),
      `${C}[0].redirectURIs[1]: duplicate URI "https://a.example/cb"`,
    ],
    ...(
      [
        ['https://a.example/cb#x', 'has a fragment (#…), which a redirect URI may not have (RFC 6749 §3.1.2)'],
        ['https://*.example.com/cb', 'has a wildcard (*): redirect URIs are matched exactly (RFC 9700 §2.1)'],
        ['/oauth/callback', 'is not an absolute URI'],
        [
          'http://app.example.com/cb',
          'uses http for a host other than 127.0.0.1, [::1] or localhost; use https (RFC 9700 §2.6)',
        ],
        ['https://good.example@evil.example/cb', 'has a user name or password (user@host)'],
        ['https://a.example/x/../cb', 'is not written as a browser sends it: use "https://a.example/cb"'],
        ['HTTPS://A.example/cb', 'is not written as a browser sends it: use "https://a.example/cb"'],
        ['https://a.example', 'is not written as a browser sends it: use "https://a.example/"'],
        ['https://a.example/c b', 'contains a space, a control character or a backslash'],
        ['https://a.example\\@evil.example/', 'contains a space, a control character or a backslash'],
        [
          'javascript:alert(1)',
          'has the scheme "javascript": use https, http for loopback, or a private-use scheme named by a reverse domain name such as com.example.app (RFC 8252 §7.1)',
        ],
        [
          'com.example.app://host/cb',
          'names a host after "com.example.app://"; write it as com.example.app:/path (RFC 8252 §7.1)',
        ],
      ] as const
    ).map(([uri, problem]) => [
      `the redirect URI ${uri} is registered`,
      withAuth({ oauth: { clients: [{ name: 'a', public: true, redirectURIs: [uri] }] } }),
      `${C}[0].redirectURIs[0]: ${JSON.stringify(uri)} ${problem}`,
    ]),
  ])('when %s, then the error says so', (_case, object, message) => {
    expect(errorOf(object)).toContain(message);
  });

  it('when several fields are wrong, then every problem is reported', () => {
    const error = errorOf(
      withAuth({
        accessTokenMaxAge: 'x',
        multipleLogin: 1,
        oauth: { clients: [{ name: 'a', secret: 's3cr3t-inline', grantTypes: ['implicit'] }, { name: 'b' }] },
      }),
    );
    expect(error.split('; ')).toEqual([
      `${A}.accessTokenMaxAge: "x" is not a duration such as 2h, 90m or 1h30m`,
      `${A}.multipleLogin: must be true or false, not 1`,
      `${C}[0].grantTypes[0]: unknown grant type "implicit" (use password, refresh_token or authorization_code)`,
      `${C}[1]: one of secret or secretRef is required`,
    ]);
  });

  it('when a secret is given where a name is expected, then the message shows it at most cut short', () => {
    const error = errorOf(withAuth({ oauth: { clients: [{ name: 'y'.repeat(300), secret: 'x1' }] } }));
    expect(error).toContain(`"${'y'.repeat(64)}…" must be 1-253`);
  });
});

describe('referencedSecretNames', () => {
  it.each([
    ['there is no spec', {}, []],
    ['clients is not a list', withAuth({ oauth: { clients: {} } }), []],
    [
      'clients mix secrets and secretRefs',
      withAuth({
        oauth: {
          clients: [
            { name: 'a', secret: 'x' },
            { name: 'b', secretRef: { name: 's1', key: 'k' } },
            { name: 'c', secretRef: { name: 's2' } },
            { name: 'd', secretRef: { name: 's1', key: 'other' } },
            { name: 'e', secretRef: { name: 7 } },
            'junk',
          ],
        },
      }),
      ['s1', 's2'],
    ],
  ])('when %s, then the names are %p', (_case, object, names) => {
    expect([...referencedSecretNames(object)]).toEqual(names);
  });
});
