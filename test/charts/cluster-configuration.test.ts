import { findObject, renderChart, setValues, type KubeObject } from './helm.js';

interface ClusterConfiguration extends KubeObject {
  spec: {
    authentication: {
      accessTokenMaxAge?: string;
      refreshTokenMaxAge?: string;
      multipleLogin?: boolean;
      maxSessionsPerUser?: number;
      loginLimit?: { maxFailures?: number; window?: string };
      oauth?: {
        clients?: {
          name: string;
          public?: boolean;
          secret?: string;
          secretRef?: { name: string; key: string };
          grantTypes?: string[];
          redirectURIs?: string[];
        }[];
      };
    };
  };
}

describe('chart ClusterConfiguration', () => {
  test('when rendered with default values, then kapi-system/kapi holds the SPEC §3 defaults, the client kapi/kapi and the public client kubectl', async () => {
    const configuration = findObject<ClusterConfiguration>(await renderChart(), 'ClusterConfiguration', 'kapi');
    expect(configuration.apiVersion).toBe('installer.kapi.io/v1alpha1');
    expect(configuration.metadata.namespace).toBe('kapi-system');
    expect(configuration.spec.authentication).toEqual({
      accessTokenMaxAge: '2h',
      refreshTokenMaxAge: '4h',
      multipleLogin: true,
      maxSessionsPerUser: 20,
      loginLimit: { maxFailures: 10, window: '10m' },
      oauth: {
        clients: [
          { name: 'kapi', secret: 'kapi', grantTypes: ['password', 'refresh_token'] },
          {
            name: 'kubectl',
            public: true,
            grantTypes: ['authorization_code', 'refresh_token'],
            redirectURIs: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
          },
        ],
      },
      identityProviders: [],
      passwordPolicy: { minLength: 8 },
      loginRecords: { enabled: true, maxAge: '168h', maxPerUser: 100 },
    });
  });

  test('when a public client with redirect URIs is set, then the ClusterConfiguration carries it as given', async () => {
    const objects = await renderChart(
      setValues({
        'clusterConfiguration.authentication.oauth.clients[0].name': 'console',
        'clusterConfiguration.authentication.oauth.clients[0].public': true,
        'clusterConfiguration.authentication.oauth.clients[0].redirectURIs[0]': 'https://console.example.com/oauth/callback',
      }),
    );
    const { authentication } = findObject<ClusterConfiguration>(objects, 'ClusterConfiguration', 'kapi').spec;
    expect(authentication.oauth!.clients).toEqual([
      { name: 'console', public: true, redirectURIs: ['https://console.example.com/oauth/callback'] },
    ]);
  });

  test('when authentication values are set, then the ClusterConfiguration carries them', async () => {
    const objects = await renderChart(
      setValues({
        'clusterConfiguration.authentication.accessTokenMaxAge': '30m',
        'clusterConfiguration.authentication.multipleLogin': false,
        'clusterConfiguration.authentication.maxSessionsPerUser': 3,
        'clusterConfiguration.authentication.oauth.clients[0].name': 'console',
        'clusterConfiguration.authentication.oauth.clients[0].secretRef.name': 'console-client',
        'clusterConfiguration.authentication.oauth.clients[0].secretRef.key': 'secret',
      }),
    );
    const { authentication } = findObject<ClusterConfiguration>(objects, 'ClusterConfiguration', 'kapi').spec;
    expect(authentication.accessTokenMaxAge).toBe('30m');
    expect(authentication.multipleLogin).toBe(false);
    expect(authentication.maxSessionsPerUser).toBe(3);
    expect(authentication.oauth!.clients).toEqual([{ name: 'console', secretRef: { name: 'console-client', key: 'secret' } }]);
  });

  test('when an OIDC identity provider is set, then the ClusterConfiguration carries it, its secret by reference', async () => {
    const objects = await renderChart(
      setValues({
        'clusterConfiguration.authentication.identityProviders[0].name': 'keycloak',
        'clusterConfiguration.authentication.identityProviders[0].type': 'OIDC',
        'clusterConfiguration.authentication.identityProviders[0].mappingMethod': 'auto',
        'clusterConfiguration.authentication.identityProviders[0].oidc.issuer': 'https://sso.example.com/realms/kapi',
        'clusterConfiguration.authentication.identityProviders[0].oidc.clientID': 'kapi',
        'clusterConfiguration.authentication.identityProviders[0].oidc.clientSecretRef.name': 'keycloak-client',
        'clusterConfiguration.authentication.identityProviders[0].oidc.clientSecretRef.key': 'secret',
      }),
    );
    const configuration = findObject<ClusterConfiguration>(objects, 'ClusterConfiguration', 'kapi');
    expect((configuration.spec.authentication as Record<string, unknown>).identityProviders).toEqual([
      {
        name: 'keycloak',
        type: 'OIDC',
        mappingMethod: 'auto',
        oidc: {
          issuer: 'https://sso.example.com/realms/kapi',
          clientID: 'kapi',
          clientSecretRef: { name: 'keycloak-client', key: 'secret' },
        },
      },
    ]);
  });

  test('when an LDAP identity provider, a password policy and login records are set, then the ClusterConfiguration carries them', async () => {
    const objects = await renderChart(
      setValues({
        'clusterConfiguration.authentication.identityProviders[0].name': 'corp',
        'clusterConfiguration.authentication.identityProviders[0].type': 'LDAP',
        'clusterConfiguration.authentication.identityProviders[0].mappingMethod': 'lookup',
        'clusterConfiguration.authentication.identityProviders[0].ldap.url': 'ldaps://ldap.example.com',
        'clusterConfiguration.authentication.identityProviders[0].ldap.bindDN': 'cn=kapi\\,dc=example\\,dc=com',
        'clusterConfiguration.authentication.identityProviders[0].ldap.bindPasswordSecretRef.name': 'ldap-bind',
        'clusterConfiguration.authentication.identityProviders[0].ldap.bindPasswordSecretRef.key': 'password',
        'clusterConfiguration.authentication.identityProviders[0].ldap.userSearch.baseDN': 'dc=example\\,dc=com',
        'clusterConfiguration.authentication.passwordPolicy.minLength': 12,
        'clusterConfiguration.authentication.loginRecords.maxPerUser': 20,
      }),
    );
    const { authentication } = findObject<ClusterConfiguration>(objects, 'ClusterConfiguration', 'kapi').spec as unknown as {
      authentication: Record<string, unknown>;
    };
    expect(authentication.identityProviders).toEqual([
      {
        name: 'corp',
        type: 'LDAP',
        mappingMethod: 'lookup',
        ldap: {
          url: 'ldaps://ldap.example.com',
          bindDN: 'cn=kapi,dc=example,dc=com',
          bindPasswordSecretRef: { name: 'ldap-bind', key: 'password' },
          userSearch: { baseDN: 'dc=example,dc=com' },
        },
      },
    ]);
    expect(authentication.passwordPolicy).toEqual({ minLength: 12 });
    expect(authentication.loginRecords).toEqual({ enabled: true, maxAge: '168h', maxPerUser: 20 });
  });

  test('when an LDAP provider carries its bind password inline, then the chart refuses it', async () => {
    await expect(
      renderChart(
        setValues({
          'clusterConfiguration.authentication.identityProviders[0].name': 'corp',
          'clusterConfiguration.authentication.identityProviders[0].type': 'LDAP',
          'clusterConfiguration.authentication.identityProviders[0].mappingMethod': 'auto',
          'clusterConfiguration.authentication.identityProviders[0].ldap.url': 'ldaps://ldap.example.com',
          'clusterConfiguration.authentication.identityProviders[0].ldap.userSearch.baseDN': 'dc=x',
          'clusterConfiguration.authentication.identityProviders[0].ldap.bindPassword': 'inline',
        }),
      ),
    ).rejects.toThrow(/bindPassword/);
  });

  test('when clusterConfiguration.create=false, then no ClusterConfiguration is rendered', async () => {
    const objects = await renderChart(['--set', 'clusterConfiguration.create=false']);
    expect(objects.filter((object) => object.kind === 'ClusterConfiguration')).toEqual([]);
  });
});
