import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { generate } from 'selfsigned';
import { stringify } from 'yaml';
import { KubeClient } from '../../src/kube/client.js';
import { kubeconfigFileAccess } from '../../src/kube/cluster-source.js';
import { connectionFor, type ClusterAccess } from '../../src/kube/connection.js';
import { parseKubeconfig, readKubeconfigs, type Kubeconfig } from '../../src/kube/kubeconfig.js';
import { kubeconfigAccess, type PluginAccess } from '../../src/kube/kubeconfig-access.js';
import { selectContext } from '../../src/kube/kubeconfig-context.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kapi-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string | Buffer) => {
  const full = path.join(dir, name);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text, { mode: 0o600 });
  return full;
};
const kubeconfigText = (cluster: object, user?: object, extra: object = {}) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: user ? [{ name: 'u', user }] : [],
    contexts: [{ name: 'ctx', context: { cluster: 'c', ...(user ? { user: 'u' } : {}) } }],
    'current-context': 'ctx',
    ...extra,
  });
const config = (cluster: object, user?: object): Kubeconfig => parseKubeconfig(kubeconfigText(cluster, user), dir);
const noPlugins: PluginAccess = () => Promise.reject(new Error('no plugin expected'));
const accessOf = (cluster: object, user?: object) => kubeconfigAccess(selectContext(config(cluster, user)), noPlugins);

const PEM = (label: string) =>
  `-----BEGIN CERTIFICATE-----\n${Buffer.from(label).toString('base64')}\n-----END CERTIFICATE-----\n`;
const b64 = (text: string) => Buffer.from(text).toString('base64');
const HTTPS = { server: 'https://kube.example:6443' };

describe('parseKubeconfig and readKubeconfigs', () => {
  it.each([
    [
      'the YAML is broken',
      'users:\n  - name: u\n    user: {token: secret-token-text\n  bad: [\n',
      /^not valid YAML \(line \d+\)$/,
    ],
    ['a key is repeated', 'current-context: a\ncurrent-context: secret-token-text\n', /^not valid YAML \(line 2\)$/],
    ['the document is a list', '- secret-token-text\n', /^not a kubeconfig \(the document is not a mapping\)$/],
    ['clusters is not a list', 'clusters: {secret-token-text: 1}\n', /^clusters is not a list$/],
    ['an entry has no name', 'users: [{user: {token: secret-token-text}}]\n', /^users\[0\]\.name is missing$/],
    ['a cluster has no body', 'clusters: [{name: c}]\n', /^clusters\[0\]\.cluster is missing$/],
    ['current-context is a list', 'current-context: [secret-token-text]\n', /^current-context is not a string$/],
  ])('when %s, then the error says what is wrong and quotes none of the file', (_case, text, error) => {
    let message = '';
    try {
      parseKubeconfig(text, dir);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(error);
    expect(message).not.toContain('secret-token-text');
  });

  it('when the file is empty, then it is an empty kubeconfig, as kubectl reads it', () => {
    expect(parseKubeconfig('', dir)).toEqual({
      currentContext: undefined,
      clusters: new Map(),
      users: new Map(),
      contexts: new Map(),
    });
  });

  it('when paths are relative, then they are resolved against the kubeconfig’s directory; a bare exec command is not', () => {
    const parsed = parseKubeconfig(
      stringify({
        clusters: [{ name: 'c', cluster: { server: 'https://k', 'certificate-authority': 'pki/ca.crt' } }],
        users: [
          {
            name: 'u',
            user: { 'client-certificate': 'u.crt', 'client-key': '/abs/u.key', tokenFile: '../token' },
          },
          { name: 'relative-plugin', user: { exec: { command: './bin/plugin' } } },
          { name: 'path-plugin', user: { exec: { command: 'aws', args: ['eks', 'get-token'] } } },
        ],
      }),
      '/etc/kube',
    );
    expect(parsed.clusters.get('c')).toMatchObject({ 'certificate-authority': '/etc/kube/pki/ca.crt' });
    expect(parsed.users.get('u')).toMatchObject({
      'client-certificate': '/etc/kube/u.crt',
      'client-key': '/abs/u.key',
      tokenFile: '/etc/token',
    });
    expect(parsed.users.get('relative-plugin')).toMatchObject({ exec: { command: '/etc/kube/bin/plugin' } });
    expect(parsed.users.get('path-plugin')).toMatchObject({ exec: { command: 'aws', args: ['eks', 'get-token'] } });
  });

  it('when several files are merged, then the first to define a name or the current context wins', () => {
    const first = write(
      'merge/first.yaml',
      stringify({
        clusters: [{ name: 'shared', cluster: { server: 'https://first', 'certificate-authority': 'ca.crt' } }],
        users: [{ name: 'shared', user: { token: 'first' } }],
        contexts: [],
      }),
    );
    const second = write(
      'merge/sub/second.yaml',
      stringify({
        clusters: [
          { name: 'shared', cluster: { server: 'https://second' } },
          { name: 'only-second', cluster: { server: 'https://only-second', 'certificate-authority': 'ca.crt' } },
        ],
        users: [{ name: 'shared', user: { token: 'second' } }],
        contexts: [{ name: 'ctx', context: { cluster: 'shared', user: 'shared' } }],
        'current-context': 'ctx',
      }),
    );
    const third = write('merge/third.yaml', stringify({ 'current-context': 'other' }));
    const merged = readKubeconfigs([first, second, third]);
    expect(merged.currentContext).toBe('ctx');
    expect(merged.clusters.get('shared')).toEqual({
      server: 'https://first',
      'certificate-authority': path.join(dir, 'merge/ca.crt'),
    });
    expect(merged.clusters.get('only-second')).toMatchObject({
      'certificate-authority': path.join(dir, 'merge/sub/ca.crt'),
    });
    expect(merged.users.get('shared')).toEqual({ token: 'first' });
  });

  it('when one of the files cannot be read, then the error names that file', () => {
    const good = write('good.yaml', kubeconfigText(HTTPS));
    const missing = path.join(dir, 'missing.yaml');
    expect(() => readKubeconfigs([good, missing])).toThrow(`kubeconfig ${missing} could not be read: ENOENT`);
  });

  it('when no file is given, then the error says there is nothing to read', () => {
    expect(() => readKubeconfigs([])).toThrow('kubeconfig: no file given');
  });
});

describe('selectContext', () => {
  const merged = (text: object): Kubeconfig => parseKubeconfig(stringify(text), dir);
  const withContext = (context: object, extra: object = {}) =>
    merged({
      clusters: [{ name: 'c', cluster: HTTPS }],
      users: [{ name: 'u', user: { token: 'secret-token-text' } }],
      contexts: [{ name: 'ctx', context }],
      'current-context': 'ctx',
      ...extra,
    });

  it.each<[string, Kubeconfig, string | undefined, RegExp]>([
    ['no current context is set', merged({ clusters: [], contexts: [] }), undefined, /no current-context is set/],
    [
      'the current context is not defined',
      merged({ 'current-context': 'nowhere' }),
      undefined,
      /the current context "nowhere" names no cluster \(there is no context "nowhere"\)/,
    ],
    [
      'the chosen context is not defined',
      withContext({ cluster: 'c' }),
      'other',
      /the context "other" names no cluster/,
    ],
    [
      'the context names an undefined cluster',
      withContext({ cluster: 'gone', user: 'u' }),
      undefined,
      /names no cluster \(cluster "gone" is not defined\)/,
    ],
    [
      'the context names an undefined user',
      withContext({ cluster: 'c', user: 'gone' }),
      undefined,
      /names user "gone", which is not defined/,
    ],
    ['the cluster has no server', config({}), undefined, /cluster "c" has no server/],
    ['the server is not a URL', config({ server: 'kube.example:6443' }), undefined, /server is neither an https/],
    [
      'the server is plain http without insecure-skip-tls-verify',
      config({ server: 'http://127.0.0.1:8001' }),
      undefined,
      /cluster "c" is plain http:\/\/127\.0\.0\.1:8001; set insecure-skip-tls-verify: true to allow it/,
    ],
    [
      'insecure-skip-tls-verify is not a boolean',
      config({ ...HTTPS, 'insecure-skip-tls-verify': 'yes' }),
      undefined,
      /insecure-skip-tls-verify is not true or false/,
    ],
    ['a proxy is configured', config({ ...HTTPS, 'proxy-url': 'http://p:3128' }), undefined, /proxy-url/],
    [
      'the user impersonates someone',
      config(HTTPS, { token: 't', as: 'admin', 'as-groups': ['system:masters'] }),
      undefined,
      /user "u" sets as, as-groups; kapi impersonates its callers itself/,
    ],
    [
      'the user has a certificate but no key',
      config(HTTPS, { 'client-certificate-data': b64(PEM('c')) }),
      undefined,
      /user "u" has a client certificate without a key/,
    ],
    [
      'the user has a token and a password',
      config(HTTPS, { token: 'secret-token-text', username: 'admin', password: 'secret-token-text' }),
      undefined,
      /user "u" sets both a token and a username\/password/,
    ],
    [
      'the token is not a string',
      config(HTTPS, { token: ['secret-token-text'] }),
      undefined,
      /user "u": token is not a string/,
    ],
  ])('when %s, then the error says so', (_case, kubeconfig, chosen, error) => {
    let message = '';
    try {
      selectContext(kubeconfig, chosen);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(error);
    expect(message).not.toContain('secret-token-text');
  });

  it('when a context is chosen, then it wins over the current context', () => {
    const kubeconfig = merged({
      clusters: [
        { name: 'a', cluster: { server: 'https://a' } },
        { name: 'b', cluster: { server: 'https://b' } },
      ],
      contexts: [
        { name: 'a', context: { cluster: 'a' } },
        { name: 'b', context: { cluster: 'b' } },
      ],
      'current-context': 'a',
    });
    expect(selectContext(kubeconfig).cluster.server.href).toBe('https://a/');
    expect(selectContext(kubeconfig, 'b').cluster.server.href).toBe('https://b/');
  });
});

describe('kubeconfigAccess', () => {
  const credentialsOf = async (user?: object) => (await accessOf(HTTPS, user)).credentials();

  it.each<[string, object | undefined, Record<string, string>]>([
    ['a token', { token: 'fake-token' }, { Authorization: 'Bearer fake-token' }],
    ['a username and password', { username: 'admin', password: 'p:w' }, { Authorization: `Basic ${b64('admin:p:w')}` }],
    ['no credentials', {}, {}],
  ])('when the user has %s, then those are kapi’s credentials', async (_case, user, expected) => {
    expect(await credentialsOf(user)).toEqual(expected);
  });

  it('when the context names no user, then requests carry no credentials', async () => {
    expect(await credentialsOf(undefined)).toEqual({});
  });

  it('when the CA and client certificate are given as data, then the access carries their PEM', async () => {
    const access = await accessOf(
      { ...HTTPS, 'certificate-authority-data': b64(PEM('ca')), 'tls-server-name': 'kubernetes' },
      { 'client-certificate-data': b64(PEM('crt')), 'client-key-data': b64(PEM('key')) },
    );
    expect(access).toMatchObject({
      server: 'https://kube.example:6443/',
      insecureSkipTlsVerify: false,
      tlsServerName: 'kubernetes',
    });
    expect([access.ca, access.cert, access.key].map(String)).toEqual([PEM('ca'), PEM('crt'), PEM('key')]);
  });

  it('when both a CA file and CA data are given, then the data wins, as in client-go', async () => {
    write('data-wins/ca.crt', PEM('from-file'));
    const access = await accessOf(
      { ...HTTPS, 'certificate-authority': 'data-wins/ca.crt', 'certificate-authority-data': b64(PEM('from-data')) },
      {},
    );
    expect(String(access.ca)).toBe(PEM('from-data'));
  });

  it('when insecure-skip-tls-verify is set, then the server may be plain http', async () => {
    const access = await accessOf({ server: 'http://127.0.0.1:8001', 'insecure-skip-tls-verify': true }, {});
    expect(access).toMatchObject({ server: 'http://127.0.0.1:8001/', insecureSkipTlsVerify: true });
  });

  it.each([
    [
      'CA data is not PEM',
      { ...HTTPS, 'certificate-authority-data': b64('secret-token-text') },
      /certificate-authority-data is not base64-encoded PEM/,
    ],
    [
      'the CA file is missing',
      { ...HTTPS, 'certificate-authority': 'absent.crt' },
      /certificate-authority \/.*absent\.crt could not be read: ENOENT/,
    ],
    [
      'the CA file is not PEM',
      { ...HTTPS, 'certificate-authority': write('not-pem.crt', 'secret-token-text') },
      /not-pem\.crt is not PEM/,
    ],
  ])('when %s, then the error says so without quoting it', async (_case, cluster, error) => {
    const failure = accessOf(cluster, {});
    await expect(failure).rejects.toThrow(error);
    await expect(failure).rejects.not.toThrow(/secret-token-text/);
  });

  it('when the user has a token file, then it is read trimmed, re-read after rotation, and kept if the file goes away', async () => {
    const tokenFile = write('rotating/token', 'first-token\n');
    const access = await accessOf(HTTPS, { tokenFile: 'rotating/token', token: 'ignored' });
    expect(await access.credentials()).toEqual({ Authorization: 'Bearer first-token' });
    writeFileSync(tokenFile, 'second-token');
    expect(await access.credentials()).toEqual({ Authorization: 'Bearer second-token' });
    rmSync(tokenFile);
    expect(await access.credentials()).toEqual({ Authorization: 'Bearer second-token' });
  });

  it('when the token file is missing at start, then the error names it', async () => {
    await expect(accessOf(HTTPS, { tokenFile: '/nonexistent/token' })).rejects.toThrow(
      'kubeconfig: user "u": tokenFile /nonexistent/token could not be read: ENOENT',
    );
  });
});

describe('a connection from a kubeconfig, over mutual TLS', () => {
  let server: https.Server;
  let port: number;

  beforeAll(async () => {
    const ca = await generate([{ name: 'commonName', value: 'test-cluster-ca' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true },
      ],
    });
    const signed = (cn: string, extensions: NonNullable<Parameters<typeof generate>[1]>['extensions']) =>
      generate([{ name: 'commonName', value: cn }], {
        keyType: 'ec',
        algorithm: 'sha256',
        ca: { key: ca.private, cert: ca.cert },
        extensions,
      });
    // valid for a name only, not for 127.0.0.1: the connection works only with tls-server-name
    const serving = await signed('kube-apiserver', [
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'kubernetes.default.svc' }] },
    ]);
    const client = await signed('kapi-client', [{ name: 'extKeyUsage', clientAuth: true }]);
    write('mtls/pki/ca.crt', ca.cert);
    write('mtls/pki/kapi.crt', client.cert);
    write('mtls/pki/kapi.key', client.private);
    server = https.createServer(
      { key: serving.private, cert: serving.cert, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ clientCn: peer.subject?.CN, authorization: req.headers.authorization ?? null }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const connect = async (cluster: object) => {
    const file = write(
      'mtls/kubeconfig.yaml',
      kubeconfigText(
        { server: `https://127.0.0.1:${port}`, 'certificate-authority': 'pki/ca.crt', ...cluster },
        { 'client-certificate': 'pki/kapi.crt', 'client-key': 'pki/kapi.key' },
      ),
    );
    return connectionFor(await kubeconfigFileAccess([file]), 'kubeconfig');
  };

  it('when the CA and client certificate are relative files and tls-server-name is set, then kube-apiserver sees kapi’s certificate', async () => {
    const connection = await connect({ 'tls-server-name': 'kubernetes.default.svc' });
    try {
      const answer = await new KubeClient(connection).request({ path: '/api/v1/nodes', timeoutMs: 5_000 });
      expect(answer).toEqual({ clientCn: 'kapi-client', authorization: null });
    } finally {
      connection.close();
    }
  });

  it('when tls-server-name is not set, then the server’s name does not match and nothing is sent', async () => {
    const connection = await connect({});
    try {
      await expect(new KubeClient(connection).request({ path: '/api/v1/nodes', timeoutMs: 5_000 })).rejects.toThrow(
        /IP: 127\.0\.0\.1 is not in the cert's list/,
      );
    } finally {
      connection.close();
    }
  });
});

describe('users with an exec plugin (client-node fallback)', () => {
  // `process.execPath` is the Node running the tests (npm scripts put Node 24 first): the plugin runs on it.
  const plugin = write(
    'plugin/credential.mjs',
    `const [mode] = process.argv.slice(2);
if (mode === 'fail') { process.stderr.write('login required: run aws sso login\\n'); process.exit(1); }
if (mode === 'garbage') { process.stdout.write('token=secret-token-text'); process.exit(0); }
process.stdout.write(JSON.stringify({
  apiVersion: 'client.authentication.k8s.io/v1',
  kind: 'ExecCredential',
  status: { token: process.env.PLUGIN_TOKEN },
}));
`,
  );
  const execUser = (mode: string) => ({
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: [plugin, mode],
      env: [{ name: 'PLUGIN_TOKEN', value: 'plugin-issued-token' }],
      interactiveMode: 'Never',
    },
  });

  it('when the user runs an exec plugin, then kapi’s credentials are the token it prints', async () => {
    const file = write('plugin/ok.yaml', kubeconfigText(HTTPS, execUser('ok')));
    const access = await kubeconfigFileAccess([file]);
    expect(access.server).toBe('https://kube.example:6443/');
    expect(await access.credentials()).toEqual({ Authorization: 'Bearer plugin-issued-token' });
  });

  it('when the plugin fails, then start-up fails with the plugin’s own message', async () => {
    const file = write('plugin/fail.yaml', kubeconfigText(HTTPS, execUser('fail')));
    await expect(kubeconfigFileAccess([file])).rejects.toThrow(
      'kubeconfig: user "u": the credentials plugin failed: login required: run aws sso login',
    );
  });

  it('when the plugin prints something that is not an ExecCredential, then the error does not quote it', async () => {
    const file = write('plugin/garbage.yaml', kubeconfigText(HTTPS, execUser('garbage')));
    const failure = kubeconfigFileAccess([file]);
    await expect(failure).rejects.toThrow('the credentials plugin failed: its output is not an ExecCredential');
    await expect(failure).rejects.not.toThrow(/secret-token-text/);
  });

  it('when the user needs no plugin, then the plugin path (and client-node) is never loaded', async () => {
    const file = write('plugin/token.yaml', kubeconfigText(HTTPS, { token: 't' }));
    const pluginAccess = jest.fn<PluginAccess>();
    await kubeconfigFileAccess([file], undefined, pluginAccess);
    expect(pluginAccess).not.toHaveBeenCalled();
    const withPlugin = write('plugin/exec.yaml', kubeconfigText(HTTPS, execUser('ok')));
    const stub: ClusterAccess = { server: 'https://stub', credentials: () => Promise.resolve({}) };
    pluginAccess.mockResolvedValue(stub);
    expect(await kubeconfigFileAccess([withPlugin], undefined, pluginAccess)).toBe(stub);
    expect(pluginAccess).toHaveBeenCalledTimes(1);
  });
});

describe('client-node at runtime', () => {
  // Importing it costs ~85 MiB of RSS (SPEC §11 allows 256 MiB in all): only the plugin path may load it.
  it('when src is scanned, then only kubeconfig-plugin.ts imports @kubernetes/client-node as a value', () => {
    const src = fileURLToPath(new URL('../../src', import.meta.url));
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    const importers = files.filter((file) => {
      const text = readFileSync(path.join(src, file), 'utf8');
      const statements = text.matchAll(
        /\b(import|export)\s+(type\s+)?[^;'"]*?from\s+['"]@kubernetes\/client-node['"]/g,
      );
      const valueImport = [...statements].some((match) => !match[2]);
      return valueImport || /import\(\s*['"]@kubernetes\/client-node['"]\s*\)/.test(text);
    });
    expect(files.length).toBeGreaterThan(20);
    expect(importers).toEqual([path.join('kube', 'kubeconfig-plugin.ts')]);
  });
});
