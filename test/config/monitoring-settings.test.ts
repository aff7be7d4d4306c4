import { describe, expect, it } from '@jest/globals';
import {
  parseClusterConfiguration,
  referencedSecretNames,
  type SecretLookup,
} from '../../src/config/cluster-configuration.js';
import { CA_PEM } from './fakes.js';

const TOKEN = 'prom-T0ken';
const SECRETS: Record<string, Record<string, string>> = {
  prometheus: { token: TOKEN, 'ca.crt': CA_PEM, newline: 'tok\n', junk: 'not a certificate' },
};
const lookup: SecretLookup = (name) => SECRETS[name];
const withMonitoring = (monitoring: unknown) => ({ spec: { monitoring } });

const parse = (monitoring: unknown) => parseClusterConfiguration(withMonitoring(monitoring), lookup);
const errorOf = (monitoring: unknown): string => {
  const result = parse(monitoring);
  if (!('error' in result)) throw new Error('expected an error');
  expect(result.error).not.toContain(TOKEN);
  expect(result.error).not.toContain('MIIB');
  return result.error;
};

describe('spec.monitoring', () => {
  it('when there is none, then no backend (every metric is answered empty)', () => {
    const result = parseClusterConfiguration({ spec: {} }, lookup);
    expect('settings' in result && result.settings.monitoring).toBeUndefined();
  });

  it('when an in-cluster http endpoint is named, then it is the backend, without a trailing slash', () => {
    expect(parse({ endpoint: 'http://prometheus-k8s.monitoring.svc:9090/' })).toEqual({
      settings: expect.objectContaining({ monitoring: { endpoint: 'http://prometheus-k8s.monitoring.svc:9090' } }),
    });
  });

  it('when an https endpoint has a token and a CA, then both are read from their Secret', () => {
    const result = parse({
      endpoint: 'https://thanos.example.com/prefix',
      bearerTokenSecretRef: { name: 'prometheus', key: 'token' },
      caSecretRef: { name: 'prometheus', key: 'ca.crt' },
    });
    expect(result).toEqual({
      settings: expect.objectContaining({
        monitoring: { endpoint: 'https://thanos.example.com/prefix', bearerToken: TOKEN, ca: CA_PEM },
      }),
    });
  });

  it.each([
    [{}, 'spec.monitoring.endpoint: is required'],
    [{ endpoint: 'ftp://x' }, 'must be an http or https URL'],
    [{ endpoint: 'not a url' }, 'is not a URL'],
    [{ endpoint: 'http://u:p@prom:9090' }, 'must have no user or password'],
    [{ endpoint: 'http://prom:9090?x=1' }, 'must have no query or fragment'],
    [
      { endpoint: 'http://prom:9090', bearerTokenSecretRef: { name: 'prometheus', key: 'token' } },
      'spec.monitoring.bearerTokenSecretRef: a token is sent over https only',
    ],
    [
      { endpoint: 'http://prom:9090', caSecretRef: { name: 'prometheus', key: 'ca.crt' } },
      'spec.monitoring.caSecretRef: there is no TLS to an http endpoint',
    ],
    [
      { endpoint: 'https://prom', bearerTokenSecretRef: { name: 'prometheus', key: 'newline' } },
      'contains a control character',
    ],
    [
      { endpoint: 'https://prom', bearerTokenSecretRef: { name: 'missing', key: 'token' } },
      'Secret "missing" not found',
    ],
    [{ endpoint: 'https://prom', caSecretRef: { name: 'prometheus', key: 'junk' } }, 'holds no PEM certificate'],
    ['http://prom', 'spec.monitoring: must be an object'],
  ])('when %j, then the configuration is refused: %s', (monitoring, message) => {
    expect(errorOf(monitoring)).toContain(message);
  });

  it('when the endpoint holds a password, then the refusal does not quote it', () => {
    expect(errorOf({ endpoint: 'https://kapi:Pr0m-Passw0rd@prom.example.com' })).not.toContain('Pr0m-Passw0rd');
  });

  it('when a token goes to a loopback http endpoint, then it is accepted (a sidecar)', () => {
    const result = parse({
      endpoint: 'http://127.0.0.1:9090',
      bearerTokenSecretRef: { name: 'prometheus', key: 'token' },
    });
    expect('settings' in result && result.settings.monitoring?.bearerToken).toBe(TOKEN);
  });

  it('when its Secrets are named, then the watcher is told to watch them', () => {
    const object = withMonitoring({
      endpoint: 'https://prom',
      bearerTokenSecretRef: { name: 'prom-token', key: 't' },
      caSecretRef: { name: 'prom-ca', key: 'c' },
    });
    expect([...referencedSecretNames(object)]).toEqual(['prom-token', 'prom-ca']);
  });
});
