import { listenAddress, OptionsError, parseOptions, usage } from '../../src/config/options.js';

describe('parseOptions', () => {
  test('when nothing is given, then the documented defaults apply', () => {
    expect(parseOptions([], {})).toMatchObject({
      port: 9090,
      tlsPort: 9443,
      metricsPort: 9091,
      bindAddress: undefined,
      cluster: 'auto',
      kubeconfig: undefined,
      logLevel: 'info',
      configuration: { namespace: 'kapi-system', name: 'kapi' },
      signingKeySecret: { namespace: 'kapi-system', name: 'kapi-apiserver-jwt' },
      sandboxNodes: 6,
      maxRequestBodyBytes: 3 * 1024 * 1024,
      readHeaderTimeoutMs: 20_000,
      readTimeoutMs: 60_000,
      idleTimeoutMs: 65_000,
      maxConnectionsPerClient: 2048,
    });
  });

  test('when connection limits are given as Go durations, then they are read in milliseconds', () => {
    const options = parseOptions(['--read-header-timeout=1.5s', '--idle-timeout', '2m'], {
      READ_TIMEOUT: '1m30s',
      MAX_CONNECTIONS_PER_CLIENT: '0',
    });
    expect(options).toMatchObject({
      readHeaderTimeoutMs: 1500,
      readTimeoutMs: 90_000,
      idleTimeoutMs: 120_000,
      maxConnectionsPerClient: 0,
    });
    expect(parseOptions([], { READ_TIMEOUT: '0' })).toMatchObject({ readTimeoutMs: 0 });
  });

  test.each([
    ['the sandbox on a workstation (make run)', undefined, 'sandbox', {}, '127.0.0.1'],
    ['the sandbox in a pod', undefined, 'sandbox', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, '0.0.0.0'],
    ['a pod serving its cluster', undefined, 'in-cluster', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, '0.0.0.0'],
    ['a kubeconfig cluster', undefined, 'kubeconfig', {}, '0.0.0.0'],
    ['the sandbox with an address given', '0.0.0.0', 'sandbox', {}, '0.0.0.0'],
    ['a pod with an address given', '10.0.0.7', 'in-cluster', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, '10.0.0.7'],
  ] as const)('when kapi runs %s, then the listeners bind to %s', (_case, given, cluster, env, expected) => {
    expect(listenAddress(given, cluster, env)).toBe(expected);
  });

  test('when BIND_ADDRESS or --bind-address is set, then it is kept as given', () => {
    expect(parseOptions([], { BIND_ADDRESS: '0.0.0.0' })).toMatchObject({ bindAddress: '0.0.0.0' });
    expect(parseOptions(['--bind-address', '::1'], { BIND_ADDRESS: '0.0.0.0' })).toMatchObject({ bindAddress: '::1' });
  });

  test('when a flag and its environment variable are both set, then the flag wins', () => {
    const options = parseOptions(['--port', '8080', '--log-level=debug'], {
      PORT: '7070',
      LOG_LEVEL: 'warn',
      TLS_PORT: '0',
    });
    expect(options).toMatchObject({ port: 8080, logLevel: 'debug', tlsPort: 0 });
  });

  test.each([
    [{ KAPI_SANDBOX: '1' }, [], 'sandbox'],
    [{ KAPI_SANDBOX: '1' }, ['--cluster', 'kubeconfig'], 'kubeconfig'],
    [{ KAPI_CLUSTER: 'in-cluster' }, [], 'in-cluster'],
    [{}, [], 'auto'],
  ])('when the environment is %j and flags %j, then the cluster choice is %s', (env, argv, expected) => {
    expect(parseOptions(argv, env)).toMatchObject({ cluster: expected });
  });

  test.each([
    [['--port', 'http'], /--port must be a port number/],
    [['--port', '70000'], /--port must be a port number/],
    [['--cluster', 'minikube'], /--cluster must be/],
    [['--log-level', 'loud'], /--log-level must be/],
    [['--cluster-configuration', 'kapi'], /namespace\/name/],
    [['--sandbox-nodes=-3'], /whole number/],
    [['--max-request-body-bytes', '0'], /--max-request-body-bytes must be a positive whole number/],
    [['--max-request-body-bytes', '3Mi'], /--max-request-body-bytes must be a whole number/],
    [['--read-header-timeout', '0'], /--read-header-timeout must be longer than 0/],
    [['--idle-timeout', '0s'], /--idle-timeout must be longer than 0/],
    [['--read-timeout', '30'], /--read-timeout has a number without a unit/],
    [['--read-header-timeout', '2m', '--read-timeout', '1m'], /must not be longer than --read-timeout/],
    [['--read-timeout', '9999h'], /--read-timeout is too long/],
    [['--max-connections-per-client', 'many'], /--max-connections-per-client must be a whole number/],
  ])('when given %j, then it is refused with a message naming the flag', (argv, message) => {
    expect(() => parseOptions(argv, {})).toThrow(OptionsError);
    expect(() => parseOptions(argv, {})).toThrow(message);
  });

  test('when trusted proxies are listed, then addresses and CIDRs are kept and anything else is refused', () => {
    expect(parseOptions([], { TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.7,fd00::/8' })).toMatchObject({
      trustedProxies: ['10.0.0.0/8', '192.168.1.7', 'fd00::/8'],
    });
    expect(parseOptions([], {})).toMatchObject({ trustedProxies: [] });
    for (const bad of ['10.0.0.0/33', 'proxy.local', '10.0.0.1/8/2', '::1/129']) {
      expect(() => parseOptions(['--trusted-proxies', bad], {})).toThrow(/--trusted-proxies/);
    }
  });

  test('when an issuer URL is given, then an https URL is kept and anything else is refused', () => {
    expect(parseOptions([], { KAPI_ISSUER_URL: 'https://kapi.example.com:9443' })).toMatchObject({
      issuerUrl: 'https://kapi.example.com:9443',
    });
    expect(parseOptions([], {})).toMatchObject({ issuerUrl: undefined });
    for (const bad of [
      'http://kapi',
      'kapi',
      'https://kapi/?a=1',
      'https://kapi/#x',
      'https://kapi/',
      'https://u:p@kapi',
    ]) {
      expect(() => parseOptions(['--issuer-url', bad], {})).toThrow(/--issuer-url must be an https URL/);
    }
  });

  test('when a kubectl image is given, then the toolbox needs kapi’s https URL for it, and keeps the pod’s address', () => {
    expect(parseOptions([], {})).toMatchObject({ kubectlToolbox: undefined });
    expect(
      parseOptions(['--kubectl-image', 'alpine/k8s:1.32.3'], {
        KAPI_KUBECTL_TOOLBOX_URL: 'https://kapi-apiserver.kapi.svc:443',
        POD_IP: '10.1.2.3',
      }),
    ).toMatchObject({
      kubectlToolbox: { image: 'alpine/k8s:1.32.3', kapiUrl: 'https://kapi-apiserver.kapi.svc:443', podIp: '10.1.2.3' },
    });
    // the issuer URL serves when none is given; a POD_IP that is no address is ignored
    expect(parseOptions(['--kubectl-image=k', '--issuer-url=https://kapi.example.com'], { POD_IP: 'x' })).toMatchObject(
      {
        kubectlToolbox: { image: 'k', kapiUrl: 'https://kapi.example.com' },
      },
    );
    expect(parseOptions(['--kubectl-image=k', '--issuer-url=https://k'], { POD_IP: 'x' })).not.toMatchObject({
      kubectlToolbox: { podIp: expect.anything() },
    });
    expect(() => parseOptions(['--kubectl-image=k'], {})).toThrow(/--kubectl-image needs --kubectl-toolbox-url/);
    expect(() => parseOptions(['--kubectl-image=k', '--kubectl-toolbox-url=http://kapi'], {})).toThrow(
      /--kubectl-toolbox-url must be an https URL/,
    );
    expect(() => parseOptions(['--kubectl-image=a b', '--issuer-url=https://k'], {})).toThrow(
      /--kubectl-image must be/,
    );
  });

  test('when nothing about logging is given, then the pod-log backend is used with its bounds', () => {
    expect(parseOptions([], {})).toMatchObject({
      logging: { backend: 'pod-log', readConcurrency: 16, maxContainers: 1000, searchIndex: 'ks-logstash-log' },
    });
    expect(
      parseOptions(['--log-read-concurrency=4'], { KAPI_LOG_MAX_CONTAINERS: '50', KAPI_LOG_READ_CONCURRENCY: '8' }),
    ).toMatchObject({ logging: { readConcurrency: 4, maxContainers: 50 } });
  });

  test('when nothing bounds logging requests, then the documented limits and write timeout apply; flags and env change them', () => {
    expect(parseOptions([], {})).toMatchObject({
      logging: {
        limits: { exports: { perProcess: 4, perUser: 2 }, queries: { perProcess: 8, perUser: 4 } },
        writeTimeoutMs: 60_000,
      },
    });
    expect(
      parseOptions(['--log-max-exports=10', '--log-write-timeout=2m'], {
        KAPI_LOG_MAX_EXPORTS_PER_USER: '3',
        KAPI_LOG_MAX_QUERIES: '32',
        KAPI_LOG_MAX_QUERIES_PER_USER: '6',
        KAPI_LOG_WRITE_TIMEOUT: '5s',
      }),
    ).toMatchObject({
      logging: {
        limits: { exports: { perProcess: 10, perUser: 3 }, queries: { perProcess: 32, perUser: 6 } },
        writeTimeoutMs: 120_000,
      },
    });
  });

  test.each([
    [['--log-max-exports', '0'], /--log-max-exports must be a positive whole number/],
    [['--log-max-queries-per-user', 'all'], /--log-max-queries-per-user must be a whole number/],
    [['--log-write-timeout', '0'], /--log-write-timeout must be longer than 0/],
    [['--log-write-timeout', '60'], /--log-write-timeout/],
    [['--log-backend', 'loki'], /--log-backend must be/],
    [['--log-read-concurrency', '0'], /--log-read-concurrency must be a positive whole number/],
    [['--log-max-containers', 'many'], /whole number/],
    [['--log-search-url', 'opensearch:9200'], /http:\/\/ or https:\/\//],
    [['--log-search-url', 'https://admin:pw@opensearch:9200'], /without credentials/],
    [['--log-backend', 'opensearch'], /needs --log-search-url/],
    [['--log-search-index', 'Logs*'], /lower-case index prefix/],
    [['--log-search-fields', 'time'], /key=field/],
    [['--log-search-fields', 'colour=c'], /keys time, log/],
  ])('when logging is given %j, then it is refused with a message naming the flag', (argv, message) => {
    expect(() => parseOptions(argv, {})).toThrow(message);
  });

  test('when an unknown flag is given, then parsing fails instead of ignoring it', () => {
    expect(() => parseOptions(['--prot', '1'], {})).toThrow();
  });

  test('when --version is given, then the version is asked for, and usage lists it', () => {
    expect(parseOptions(['--version'], {})).toBe('version');
    expect(usage()).toContain('--version');
  });

  test('when --help is given, then help is asked for and usage lists every flag with its variable', () => {
    expect(parseOptions(['--help'], {})).toBe('help');
    const text = usage();
    for (const fragment of [
      '--port',
      'PORT',
      '--bind-address',
      '--cluster',
      'KUBECONFIG',
      '--log-level',
      '--tls-port',
    ]) {
      expect(text).toContain(fragment);
    }
  });
});

describe('--sandbox-directory', () => {
  const dn = 'ou=people,dc=example,dc=com';
  test.each([
    ['nothing', [], {}, undefined],
    ['demo', ['--sandbox-directory=demo'], {}, { kind: 'demo' }],
    ['demo from the environment', [], { KAPI_SANDBOX_DIRECTORY: 'demo' }, { kind: 'demo' }],
    [
      'an ldaps URL with its base DN',
      [`--sandbox-directory=ldaps://ldap.example.com:636/${dn}`],
      {},
      { kind: 'url', url: 'ldaps://ldap.example.com:636', baseDN: dn },
    ],
    [
      'an ldap URL whose DN is percent-encoded, with a bind account and a CA',
      ['--sandbox-directory=ldap://ldap.example.com/ou%3Dpeople%2Cdc%3Dexample%2Cdc%3Dcom'],
      {
        KAPI_SANDBOX_DIRECTORY_BIND_DN: 'cn=kapi,dc=example,dc=com',
        KAPI_SANDBOX_DIRECTORY_BIND_PASSWORD: 'bind secret',
        KAPI_SANDBOX_DIRECTORY_CA_FILE: '/tmp/ca.pem',
      },
      {
        kind: 'url',
        url: 'ldap://ldap.example.com',
        baseDN: dn,
        bindDN: 'cn=kapi,dc=example,dc=com',
        bindPassword: 'bind secret',
        caFile: '/tmp/ca.pem',
      },
    ],
  ] as const)('when given %s, then it is read as such', (_case, argv, env, expected) => {
    expect((parseOptions([...argv], env) as { sandboxDirectory: unknown }).sandboxDirectory).toEqual(expected);
  });

  test.each([
    [
      'another scheme',
      ['--sandbox-directory=https://ldap.example.com/dc=x'],
      {},
      /must be demo or an ldaps:\/\/ or ldap:\/\/ URL/,
    ],
    ['no URL', ['--sandbox-directory=slapd'], {}, /must be demo or an ldaps:\/\/ or ldap:\/\/ URL, not "slapd"/],
    [
      'credentials in the URL',
      ['--sandbox-directory=ldaps://cn=x:pw@ldap.example.com/dc=x'],
      {},
      /no credentials in the URL/,
    ],
    ['no base DN', ['--sandbox-directory=ldaps://ldap.example.com'], {}, /the URL's path must be the users' base DN/],
    ['a base DN that is no DN', ['--sandbox-directory=ldaps://ldap.example.com/people'], {}, /the users' base DN/],
    ['a query', ['--sandbox-directory=ldaps://ldap.example.com/dc=x?uid'], {}, /no query or fragment/],
    [
      'a bind DN without its password',
      ['--sandbox-directory=ldaps://ldap.example.com/dc=x'],
      { KAPI_SANDBOX_DIRECTORY_BIND_DN: 'cn=kapi,dc=x' },
      /go together/,
    ],
  ] as const)(
    'when given %s, then the options are refused with a message that says so',
    (_case, argv, env, message) => {
      expect(() => parseOptions([...argv], env)).toThrow(OptionsError);
      expect(() => parseOptions([...argv], env)).toThrow(message);
    },
  );

  test('when a bind password is refused, then the message does not show it', () => {
    expect(() =>
      parseOptions(['--sandbox-directory=ldaps://ldap.example.com/dc=x'], {
        KAPI_SANDBOX_DIRECTORY_BIND_PASSWORD: 'hunter2-secret',
      }),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining('hunter2') }) as Error);
  });
});

describe('--sandbox-monitoring', () => {
  test.each([
    [[], {}, false],
    [['--sandbox-monitoring'], {}, true],
    [[], { KAPI_SANDBOX_MONITORING: 'true' }, true],
    [[], { KAPI_SANDBOX_MONITORING: '1' }, true],
    [[], { KAPI_SANDBOX_MONITORING: 'false' }, false],
  ])('when given as %j with %j, then it is %p', (argv, env, expected) => {
    expect((parseOptions([...argv], env) as { sandboxMonitoring: boolean }).sandboxMonitoring).toBe(expected);
  });

  test('when its variable is neither true nor false, then a clear error', () => {
    expect(() => parseOptions([], { KAPI_SANDBOX_MONITORING: 'yes' })).toThrow(
      '--sandbox-monitoring is a switch: its variable is true or false, not "yes"',
    );
    expect(usage()).toContain('--sandbox-monitoring');
  });
});
