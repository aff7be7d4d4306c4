import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { kubectlServer, userKubeconfig } from '../../../../src/apis/resources/v1alpha2/kubeconfig.js';

describe('kubectlServer', () => {
  test.each([
    ['the published address wins', 'https://kapi.example.com', '10.0.0.1:80', 9443, 'https://kapi.example.com'],
    ['the request’s host on the HTTPS port', undefined, '127.0.0.1:9090', 9443, 'https://127.0.0.1:9443'],
    [
      'a host without a port',
      undefined,
      'kapi-apiserver.kapi-system.svc',
      9443,
      'https://kapi-apiserver.kapi-system.svc:9443',
    ],
    ['an IPv6 host', undefined, '[::1]:9090', 9443, 'https://[::1]:9443'],
    ['no HTTPS listener', undefined, '127.0.0.1:9090', undefined, undefined],
    ['no host', undefined, undefined, 9443, undefined],
    ['a host that is no host', undefined, 'a b/c', 9443, undefined],
  ])('when %s, then the server is as expected', (_case, published, host, port, expected) => {
    expect(kubectlServer(published, host, port)).toBe(expected);
  });
});

describe('userKubeconfig', () => {
  test.each([
    ['password', 'kapi', ['token', '--server', 'https://k:9443', '--username', 'alice']],
    [
      'browser',
      'kubectl',
      ['token', '--server', 'https://k:9443', '--username', 'alice', '--client-id', 'kubectl', '--browser'],
    ],
  ] as const)(
    'when the user signs in by %s, then the plugin is told so, and the file holds no credential',
    (signIn, _client, args) => {
      const text = userKubeconfig({ server: 'https://k:9443', caPem: 'PEM', username: 'alice', signIn });
      const config = parse(text);
      expect(config['current-context']).toBe('alice@kapi');
      expect(config.clusters).toEqual([
        {
          name: 'kapi-k:9443',
          cluster: { server: 'https://k:9443', 'certificate-authority-data': Buffer.from('PEM').toString('base64') },
        },
      ]);
      expect(config.users).toEqual([
        {
          name: 'alice@kapi-k:9443',
          user: {
            exec: expect.objectContaining({
              command: 'kubectl-kapi',
              args,
              interactiveMode: 'IfAvailable',
              provideClusterInfo: true,
              env: null,
            }),
          },
        },
      ]);
      expect(text).not.toMatch(/token:|client-key|password:/);
    },
  );
});
