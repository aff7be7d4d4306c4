import { CHART_DIR, helm, RELEASE, setValues } from './helm.js';

describe('chart lint', () => {
  test.each([
    ['default values', {}],
    ['NodePort values', { 'service.type': 'NodePort', 'service.nodePort': 30880 }],
    ['no generated secrets (the manifests/ render)', { generateSecrets: false }],
    ['an ES256 key and an issuer URL', { 'signingKey.algorithm': 'ES256', 'oidc.issuerURL': 'https://kapi.example.com' }],
  ])('when linted strictly with %s, then helm lint passes', async (_name, values) => {
    const result = await helm(['lint', '--strict', CHART_DIR, ...setValues(values)]);
    expect(result.stderr + result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.code).toBe(0);
  });
});

describe('chart kubeVersion', () => {
  test.each([
    ['1.26.0', true],
    ['1.27.3', true],
    ['1.35.0', true],
    ['1.25.16', false],
  ])('when installed on Kubernetes %s, then helm accepts it: %s', async (version, accepted) => {
    const result = await helm(['template', RELEASE, CHART_DIR, '--kube-version', version]);
    if (accepted) expect(result).toMatchObject({ code: 0 });
    else expect(result.stderr).toMatch(/kubeVersion/);
  });
});

describe('chart values schema', () => {
  test.each<[string, Record<string, string | number | boolean>, RegExp]>([
    ['an unknown service.type', { 'service.type': 'Ingress' }, /service\/type/],
    ['a nodePort below 30000', { 'service.type': 'NodePort', 'service.nodePort': 80 }, /service\/nodePort/],
    ['a nodePort above 32767', { 'service.type': 'NodePort', 'service.nodePort': 40000 }, /service\/nodePort/],
    ['an unknown top-level key', { replicas: 3 }, /replicas/],
    ['an unknown key under service', { 'service.nodeport': 30880 }, /nodeport/],
    ['zero replicas', { replicaCount: 0 }, /replicaCount/],
    ['an admin email without @', { 'admin.email': 'admin' }, /admin\/email/],
    ['an unknown grant type', { 'clusterConfiguration.authentication.oauth.clients[0].grantTypes[0]': 'implicit' }, /grantTypes/],
    [
      'a public client with a secret',
      { 'clusterConfiguration.authentication.oauth.clients[1].secret': 'x' },
      /clients\/1/,
    ],
    [
      'a public client with the password grant',
      { 'clusterConfiguration.authentication.oauth.clients[1].grantTypes[0]': 'password' },
      /clients\/1/,
    ],
    [
      'a redirect URI with a fragment',
      { 'clusterConfiguration.authentication.oauth.clients[1].redirectURIs[0]': 'https://a.example/cb#x' },
      /redirectURIs/,
    ],
    [
      'an OIDC client secret written inline',
      {
        'clusterConfiguration.authentication.identityProviders[0].name': 'sso',
        'clusterConfiguration.authentication.identityProviders[0].type': 'OIDC',
        'clusterConfiguration.authentication.identityProviders[0].mappingMethod': 'auto',
        'clusterConfiguration.authentication.identityProviders[0].oidc.issuer': 'https://sso.example.com',
        'clusterConfiguration.authentication.identityProviders[0].oidc.clientID': 'kapi',
        'clusterConfiguration.authentication.identityProviders[0].oidc.clientSecret': 'inline',
      },
      /clientSecret/,
    ],
    ['a duration without unit', { 'clusterConfiguration.authentication.accessTokenMaxAge': '7200' }, /accessTokenMaxAge/],
    ['an unknown signing algorithm', { 'signingKey.algorithm': 'HS512' }, /signingKey\/algorithm/],
    ['an http issuer URL', { 'oidc.issuerURL': 'http://kapi.example.com' }, /oidc\/issuerURL/],
    ['an issuer URL with a trailing slash', { 'oidc.issuerURL': 'https://kapi.example.com/' }, /oidc\/issuerURL/],
    ['a wildcard user extra', { 'rbac.impersonateUserExtras[0]': '*' }, /impersonateUserExtras/],
    ['a read timeout without unit', { 'connections.readTimeout': '60' }, /connections\/readTimeout/],
    ['a negative connection cap', { 'connections.maxPerClient': -1 }, /connections\/maxPerClient/],
  ])('when the values hold %s, then helm template fails naming it', async (_name, values, message) => {
    const result = await helm(['template', RELEASE, CHART_DIR, ...setValues(values)]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/schema/);
    expect(result.stderr).toMatch(message);
  });

  test('when a node port is set on a ClusterIP Service, then helm template fails saying which type it needs', async () => {
    const result = await helm(['template', RELEASE, CHART_DIR, ...setValues({ 'service.nodePort': 30880 })]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('service.nodePort and service.httpsNodePort need service.type NodePort or LoadBalancer');
  });

  test('when the values are valid but unusual (LoadBalancer, both node ports, one replica), then helm template succeeds', async () => {
    const values = { 'service.type': 'LoadBalancer', 'service.nodePort': 30000, 'service.httpsNodePort': 32767, replicaCount: 1 };
    const result = await helm(['template', RELEASE, CHART_DIR, ...setValues(values)]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
