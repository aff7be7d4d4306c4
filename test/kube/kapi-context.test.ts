import { describe, expect, test } from '@jest/globals';
import { kapiContextReason } from '../../src/kube/kapi-context.js';
import type { KubeconfigContext } from '../../src/kube/kubeconfig-context.js';

function context(server: string, user: Record<string, unknown> | undefined): KubeconfigContext {
  return {
    name: 'ctx',
    cluster: { name: 'c', server: new URL(server), insecureSkipTlsVerify: false },
    user: user ? { name: 'u' } : undefined,
    written: { cluster: { server }, user },
  };
}

const kapiPlugin = { exec: { command: 'kubectl-kapi', args: ['token', '--server', 'https://kapi.example.com'] } };
const OWN = [9090, 9443];

describe('kapiContextReason', () => {
  test.each([
    ['its user runs kubectl-kapi', context('https://kapi.example.com', kapiPlugin), /logs in with kapi's own plugin/],
    [
      'its user runs kubectl-kapi by path',
      context('https://10.0.0.1:6443', { exec: { command: '/usr/local/bin/kubectl-kapi' } }),
      /kapi's own plugin/,
    ],
    [
      'its server is this kapi (https, loopback)',
      context('https://127.0.0.1:9443', { token: 't' }),
      /this kapi's own listener/,
    ],
    ['its server is this kapi (http, localhost)', context('http://localhost:9090', { token: 't' }), /own listener/],
    ['its server is this kapi (IPv6 loopback)', context('https://[::1]:9443', { token: 't' }), /own listener/],
  ])('when %s, then it is not taken as the cluster', (_name, ctx, reason) => {
    expect(kapiContextReason(ctx, OWN)).toMatch(reason);
  });

  test.each([
    ['a cluster with a token', context('https://10.0.0.1:6443', { token: 't' })],
    ['a loopback cluster on another port (a kind cluster)', context('https://127.0.0.1:6443', { token: 't' })],
    ['a cluster whose user runs another plugin', context('https://eks.example.com', { exec: { command: 'aws' } })],
    ['a context without a user', context('https://10.0.0.1:6443', undefined)],
  ])('when %s, then it may be the cluster', (_name, ctx) => {
    expect(kapiContextReason(ctx, OWN)).toBeUndefined();
  });
});
