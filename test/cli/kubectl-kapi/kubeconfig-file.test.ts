import { loginOf, withLogin, type Kubeconfig } from '../../../src/cli/kubectl-kapi/kubeconfig-file.js';

const CA = '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n';
const login = {
  server: 'https://kapi.example.com:9443',
  caPem: CA,
  username: 'alice',
  clientId: 'kapi',
  contextName: 'alice@kapi-kapi.example.com:9443',
};

describe('withLogin', () => {
  test('when the login was in the browser with the public client, then the exec arguments say so and hold no secret', () => {
    const config = withLogin({}, { ...login, clientId: 'kubectl', browser: true });
    expect(config.users![0]!.user!.exec).toMatchObject({
      args: ['token', '--server', login.server, '--username', 'alice', '--client-id', 'kubectl', '--browser'],
      env: null,
    });
  });

  test('when the kubeconfig is empty, then it gets the cluster with its CA, the exec user and the current context', () => {
    const config = withLogin({}, login);
    expect(config).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'kapi-kapi.example.com:9443',
          cluster: { server: login.server, 'certificate-authority-data': Buffer.from(CA).toString('base64') },
        },
      ],
      users: [
        {
          name: 'alice@kapi-kapi.example.com:9443',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: 'kubectl-kapi',
              args: ['token', '--server', login.server, '--username', 'alice'],
              env: null,
              interactiveMode: 'IfAvailable',
              provideClusterInfo: true,
            },
          },
        },
      ],
      contexts: [
        {
          name: login.contextName,
          context: { cluster: 'kapi-kapi.example.com:9443', user: 'alice@kapi-kapi.example.com:9443' },
        },
      ],
      'current-context': login.contextName,
    });
  });

  test('when the kubeconfig holds other entries and an older login, then the others stay and the login is replaced', () => {
    const existing: Kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      preferences: { colors: true },
      clusters: [
        { name: 'prod', cluster: { server: 'https://prod:6443' } },
        { name: 'kapi-kapi.example.com:9443', cluster: { server: 'https://old' } },
      ],
      users: [{ name: 'prod-admin', user: {} }],
      contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'prod-admin' } }],
      'current-context': 'prod',
    };
    const config = withLogin(existing, { ...login, clientId: 'cli', clientSecret: 's3cret' });
    expect(config.preferences).toEqual({ colors: true });
    expect(config.clusters!.map((entry) => [entry.name, entry.cluster?.server])).toEqual([
      ['prod', 'https://prod:6443'],
      ['kapi-kapi.example.com:9443', login.server],
    ]);
    expect(config.users!.map((entry) => entry.name)).toEqual(['prod-admin', 'alice@kapi-kapi.example.com:9443']);
    const exec = config.users![1]!.user!.exec!;
    expect(exec.args).toEqual(['token', '--server', login.server, '--username', 'alice', '--client-id', 'cli']);
    expect(exec.env).toEqual([{ name: 'KAPI_CLIENT_SECRET', value: 's3cret' }]);
    expect(config['current-context']).toBe(login.contextName);
  });
});

describe('loginOf', () => {
  const config = withLogin({ contexts: [{ name: 'other', context: { cluster: 'c', user: 'u' } }] }, login);

  test('when the context was written by login, then server, user, client and CA come back', () => {
    expect(loginOf(config, undefined)).toEqual({
      server: login.server,
      username: 'alice',
      clientId: 'kapi',
      caPem: CA,
    });
  });

  test.each([
    { name: 'a context that does not exist', context: 'missing', message: /"missing" is not in the kubeconfig/ },
    { name: 'a context of another kind of user', context: 'other', message: /was not written by kubectl kapi login/ },
  ])('when asked for $name, then the error says so', ({ context, message }) => {
    expect(() => loginOf(config, context)).toThrow(message);
  });

  test('when there is no current context, then the error asks for one', () => {
    expect(() => loginOf({}, undefined)).toThrow(/no current context/);
  });
});
