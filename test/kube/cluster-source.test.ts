import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClusterChoice } from '../../src/config/options.js';
import {
  SERVICE_ACCOUNT_TOKEN,
  connectToCluster,
  inClusterAccess,
  kubeconfigFiles,
  resolveClusterSource,
} from '../../src/kube/cluster-source.js';

const HOME_CONFIG = path.join('/home/me', '.kube', 'config');

describe('resolveClusterSource', () => {
  it.each<[string, ClusterChoice, Record<string, string>, string[], string]>([
    ['sandbox is chosen', 'sandbox', { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, [SERVICE_ACCOUNT_TOKEN], 'sandbox'],
    [
      'kubeconfig is chosen, even in a pod',
      'kubeconfig',
      { KUBERNETES_SERVICE_HOST: '10.0.0.1' },
      [SERVICE_ACCOUNT_TOKEN],
      'kubeconfig',
    ],
    ['in-cluster is chosen', 'in-cluster', {}, [], 'in-cluster'],
    [
      'auto, in a pod with a mounted token',
      'auto',
      { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBECONFIG: '/k' },
      [SERVICE_ACCOUNT_TOKEN],
      'in-cluster',
    ],
    [
      'auto, the service host set but no token mounted',
      'auto',
      { KUBERNETES_SERVICE_HOST: '10.0.0.1', HOME: '/home/me' },
      [],
      'sandbox',
    ],
    [
      'auto, a token file but no service host',
      'auto',
      { HOME: '/home/me' },
      [SERVICE_ACCOUNT_TOKEN, HOME_CONFIG],
      'kubeconfig',
    ],
    ['auto, KUBECONFIG set', 'auto', { KUBECONFIG: '/etc/kube.yaml', HOME: '/home/me' }, [], 'kubeconfig'],
    ['auto, KUBECONFIG empty and no home config', 'auto', { KUBECONFIG: '', HOME: '/home/me' }, [], 'sandbox'],
    ['auto, ~/.kube/config exists', 'auto', { HOME: '/home/me' }, [HOME_CONFIG], 'kubeconfig'],
    ['auto, nothing configured', 'auto', { HOME: '/home/me' }, [], 'sandbox'],
    ['auto, no home directory', 'auto', {}, [HOME_CONFIG], 'sandbox'],
  ])('when %s, then the source is as expected', (_case, choice, env, files, expected) => {
    expect(resolveClusterSource(choice, env, (file) => files.includes(file))).toBe(expected);
  });
});

describe('kubeconfigFiles', () => {
  it.each<[string, string | undefined, Record<string, string>, string[]]>([
    ['a path is given', '/a.yaml', { KUBECONFIG: '/b.yaml' }, ['/a.yaml']],
    ['the path lists several files', `/a.yaml${path.delimiter}${path.delimiter}/b.yaml`, {}, ['/a.yaml', '/b.yaml']],
    ['only KUBECONFIG is set', undefined, { KUBECONFIG: '/b.yaml' }, ['/b.yaml']],
    ['nothing is set', undefined, { HOME: '/home/me' }, [HOME_CONFIG]],
    ['nothing is set and there is no home', undefined, {}, []],
  ])('when %s, then those files are read', (_case, given, env, expected) => {
    expect(kubeconfigFiles(given, env)).toEqual(expected);
  });
});

describe('connectToCluster', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-kubeconfig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const full = path.join(dir, name);
    writeFileSync(full, text);
    return full;
  };

  it('when the kubeconfig names a cluster and a token, then the connection uses them', async () => {
    const kubeconfig = file(
      'one.yaml',
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://kube.example:6443', insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: fake-test-token}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`,
    );
    const connection = await connectToCluster('kubeconfig', kubeconfig);
    try {
      expect(connection.source).toBe('kubeconfig');
      expect(connection.describe()).toBe('https://kube.example:6443 (kubeconfig)');
      expect(await connection.authHeaders()).toEqual({ Authorization: 'Bearer fake-test-token' });
    } finally {
      connection.close();
    }
  });

  it('when several files are listed, then they are merged and the first current context wins', async () => {
    const first = file('first.yaml', 'current-context: remote\nclusters: []\nusers: []\ncontexts: []\n');
    const second = file(
      'second.yaml',
      `clusters: [{name: c, cluster: {server: 'https://127.0.0.1:8443', insecure-skip-tls-verify: true}}]
users: [{name: u, user: {}}]
contexts: [{name: remote, context: {cluster: c, user: u}}, {name: other, context: {cluster: c, user: u}}]
current-context: other
`,
    );
    const connection = await connectToCluster('kubeconfig', `${first}${path.delimiter}${second}`);
    try {
      expect(connection.server.href).toBe('https://127.0.0.1:8443/');
    } finally {
      connection.close();
    }
  });

  it('when the kubeconfig is not valid YAML, then the error names the file and line but quotes none of it', async () => {
    const broken = file('broken.yaml', 'users:\n  - name: u\n    user: {token: secret-token-text\n  bad: [\n');
    const failure = connectToCluster('kubeconfig', broken);
    await expect(failure).rejects.toThrow(`kubeconfig ${broken} could not be read: not valid YAML`);
    await expect(failure).rejects.not.toThrow(/secret-token-text/);
  });

  it('when the kubeconfig file is missing, then the error names it', async () => {
    const missing = path.join(dir, 'missing.yaml');
    await expect(connectToCluster('kubeconfig', missing)).rejects.toThrow(
      `kubeconfig ${missing} could not be read: ENOENT`,
    );
  });

  it('when the current context names no cluster, then the error says so', async () => {
    const empty = file('empty-context.yaml', 'clusters: []\nusers: []\ncontexts: []\ncurrent-context: nowhere\n');
    await expect(connectToCluster('kubeconfig', empty)).rejects.toThrow(
      'the current context "nowhere" names no cluster',
    );
  });

  it('when the cluster is plain http without insecure-skip-tls-verify, then the error says how to allow it', async () => {
    const plain = file(
      'plain.yaml',
      `clusters: [{name: proxy, cluster: {server: 'http://127.0.0.1:8001'}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: proxy, user: u}}]
current-context: c
`,
    );
    await expect(connectToCluster('kubeconfig', plain)).rejects.toThrow(
      'cluster "proxy" is plain http://127.0.0.1:8001; set insecure-skip-tls-verify: true to allow it',
    );
  });

  it('when in-cluster is asked for outside a pod, then the error says what is missing', async () => {
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    delete process.env.KUBERNETES_SERVICE_HOST;
    delete process.env.KUBERNETES_SERVICE_PORT;
    try {
      await expect(connectToCluster('in-cluster')).rejects.toThrow(
        /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/,
      );
    } finally {
      if (saved.host !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved.host;
      if (saved.port !== undefined) process.env.KUBERNETES_SERVICE_PORT = saved.port;
    }
  });
});

describe('inClusterAccess', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-serviceaccount-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const files = { token: path.join(dir, 'token'), ca: path.join(dir, 'ca.crt') };
  const CA = '-----BEGIN CERTIFICATE-----\nY2x1c3Rlci1jYQ==\n-----END CERTIFICATE-----\n';
  writeFileSync(files.ca, CA);
  writeFileSync(files.token, 'projected-token-1\n');
  const pod = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

  it.each([
    ['an IPv4 address', '10.96.0.1', '443', 'https://10.96.0.1:443'],
    ['an IPv6 address', 'fd00:10:96::1', '443', 'https://[fd00:10:96::1]:443'],
    ['a name, on port 6443', 'kubernetes.default.svc', '6443', 'https://kubernetes.default.svc:6443'],
  ])('when the service host is %s, then the server is https on it', async (_case, host, port, server) => {
    const access = await inClusterAccess({ KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port }, files);
    expect(access.server).toBe(server);
    expect(new URL(access.server).hostname).toBe(host.includes(':') ? `[${host}]` : host);
  });

  it('when in a pod, then the mounted CA is trusted and the mounted token is re-read as it rotates', async () => {
    const access = await inClusterAccess(pod, files);
    expect(String(access.ca)).toBe(CA);
    expect(access.insecureSkipTlsVerify).toBeFalsy();
    expect(await access.credentials()).toEqual({ Authorization: 'Bearer projected-token-1' });
    writeFileSync(files.token, 'projected-token-2');
    expect(await access.credentials()).toEqual({ Authorization: 'Bearer projected-token-2' });
  });

  it.each([
    ['the port is not set', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, {}, /KUBERNETES_SERVICE_PORT are not set/],
    ['no token is mounted', pod, { token: path.join(dir, 'absent') }, /no service-account token at .*absent/],
    ['no CA is mounted', pod, { ca: path.join(dir, 'absent.crt') }, /the cluster CA .*absent\.crt could not be read/],
  ])('when %s, then the error says what is missing', async (_case, env, changed, error) => {
    await expect(inClusterAccess(env, { ...files, ...changed })).rejects.toThrow(error);
  });
});
