/**
 * The pure parts of the image lookup: image references as runtimes read them, a pull secret's entry for one registry
 * (never another's), registries' challenges, manifests and indexes, tag pages.
 */
import { describe, expect, it } from '@jest/globals';
import { parseChallenge } from '../../src/registry/challenge.js';
import { mayUsePlainHttp, parseImageReference } from '../../src/registry/image-reference.js';
import { manifestStep } from '../../src/registry/manifests.js';
import { pullSecretCredentials } from '../../src/registry/pull-secret.js';
import { nextPage } from '../../src/registry/registry-client.js';
import { tagPage, tagPageQuery } from '../../src/apis/resources/v1alpha3/images.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('parseImageReference', () => {
  it.each([
    ['nginx', { registry: 'index.docker.io', repository: 'library/nginx', tag: 'latest' }],
    ['nginx:1.25', { registry: 'index.docker.io', repository: 'library/nginx', tag: '1.25' }],
    ['docker.io/bitnami/redis:7', { registry: 'index.docker.io', repository: 'bitnami/redis', tag: '7' }],
    [
      'registry-1.docker.io/library/busybox',
      { registry: 'index.docker.io', repository: 'library/busybox', tag: 'latest' },
    ],
    [
      'kubesphere/ks-apiserver:v3.4.1',
      { registry: 'index.docker.io', repository: 'kubesphere/ks-apiserver', tag: 'v3.4.1' },
    ],
    [
      'quay.io/prometheus/node-exporter:v1.7.0',
      { registry: 'quay.io', repository: 'prometheus/node-exporter', tag: 'v1.7.0' },
    ],
    ['harbor.local:8443/team/app:2.0', { registry: 'harbor.local:8443', repository: 'team/app', tag: '2.0' }],
    ['localhost/app', { registry: 'localhost', repository: 'app', tag: 'latest' }],
    ['127.0.0.1:5000/a/b/c', { registry: '127.0.0.1:5000', repository: 'a/b/c', tag: 'latest' }],
    [`ghcr.io/org/tool@${DIGEST}`, { registry: 'ghcr.io', repository: 'org/tool', digest: DIGEST }],
    [`ghcr.io/org/tool:1.0@${DIGEST}`, { registry: 'ghcr.io', repository: 'org/tool', digest: DIGEST }],
  ])('%s', (text, expected) => {
    expect(parseImageReference(text)).toEqual(expected);
  });

  it.each([
    ['', 'no image named'],
    ['Nginx', '"Nginx" is not a repository name'],
    ['nginx:', '"" is not a valid tag'],
    ['nginx:-bad', '"-bad" is not a valid tag'],
    ['nginx@sha256:1234', '"sha256:1234" is not a sha256 digest'],
    ['host.io/', 'a repository name has 2 to 255 characters'],
    ['a', 'a repository name has 2 to 255 characters'],
    ['bad..host.io/app', '"bad..host.io" is not a registry host'],
    ['quay.io/a//b', 'is not a repository name'],
  ])('%j is refused: %s', (text, error) => {
    const parsed = parseImageReference(text);
    expect((parsed as { error?: string }).error).toContain(error);
  });

  it.each([
    ['127.0.0.1:5000', true],
    ['localhost:5000', true],
    ['registry.local', true],
    ['10.1.2.3', true],
    ['172.20.0.1:443', true],
    ['192.168.1.10:5000', true],
    ['[::1]:5000', true],
    ['172.32.0.1', false],
    ['quay.io', false],
    ['index.docker.io', false],
  ])('plain HTTP may be tried for %s: %s', (host, expected) => {
    expect(mayUsePlainHttp(host)).toBe(expected);
  });
});

const secret = (type: string, key: string, content: unknown) => ({
  type,
  data: { [key]: Buffer.from(JSON.stringify(content)).toString('base64') },
});

describe('pullSecretCredentials', () => {
  const auths = {
    auths: {
      'https://index.docker.io/v1/': { auth: Buffer.from('hub-user:hub-pass').toString('base64') },
      'harbor.example:8443': { username: 'robot', password: 'harbor-pass' },
      'http://plain.example': { username: 'p', password: 'q' },
    },
  };
  const json = secret('kubernetes.io/dockerconfigjson', '.dockerconfigjson', auths);

  it('when the secret has an entry for the image’s registry, then only that one is used', () => {
    expect(pullSecretCredentials(json, 's', 'index.docker.io')).toEqual({
      credentials: { username: 'hub-user', password: 'hub-pass' },
      plainHttp: false,
    });
    expect(pullSecretCredentials(json, 's', 'harbor.example:8443')).toEqual({
      credentials: { username: 'robot', password: 'harbor-pass' },
      plainHttp: false,
    });
    expect(pullSecretCredentials(json, 's', 'plain.example')).toEqual({
      credentials: { username: 'p', password: 'q' },
      plainHttp: true,
    });
  });

  it('when it has none for that registry, then no credentials (never another registry’s)', () => {
    expect(pullSecretCredentials(json, 's', 'quay.io')).toEqual({ plainHttp: false });
    expect(pullSecretCredentials(json, 's', 'harbor.example')).toEqual({ plainHttp: false });
  });

  it('when it is a legacy .dockercfg, then its map is read alike', () => {
    const cfg = secret('kubernetes.io/dockercfg', '.dockercfg', { 'quay.io': { username: 'u', password: 'p' } });
    expect(pullSecretCredentials(cfg, 's', 'quay.io')).toEqual({
      credentials: { username: 'u', password: 'p' },
      plainHttp: false,
    });
  });

  it('when it is no pull secret, then why, without its content', () => {
    expect(pullSecretCredentials({ type: 'Opaque', data: { password: 'c2VjcmV0' } }, 'db', 'quay.io')).toEqual({
      error: 'secret "db" is of type Opaque, not an image pull secret',
    });
    expect(pullSecretCredentials({ type: 'kubernetes.io/dockerconfigjson', data: {} }, 's', 'quay.io')).toEqual({
      error: 'secret "s" has no .dockerconfigjson',
    });
    const broken = { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'bm90IGpzb24=' } };
    expect(pullSecretCredentials(broken, 's', 'quay.io')).toEqual({
      error: 'secret "s": .dockerconfigjson is not JSON',
    });
    expect(
      pullSecretCredentials(secret('kubernetes.io/dockerconfigjson', '.dockerconfigjson', {}), 's', 'q.io'),
    ).toEqual({ error: 'secret "s" holds no registry entries' });
  });
});

describe('parseChallenge', () => {
  it.each([
    [
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io"',
      { scheme: 'bearer', params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io' } },
    ],
    [
      'Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:user/image:pull"',
      {
        scheme: 'bearer',
        params: { realm: 'https://ghcr.io/token', service: 'ghcr.io', scope: 'repository:user/image:pull' },
      },
    ],
    ['Basic realm="Registry Realm"', { scheme: 'basic', params: { realm: 'Registry Realm' } }],
    ['basic realm=plain, charset="UTF-8"', { scheme: 'basic', params: { realm: 'plain', charset: 'UTF-8' } }],
  ])('%s', (header, expected) => {
    expect(parseChallenge(header)).toEqual(expected);
  });

  it('when it names another scheme or none, then undefined', () => {
    expect(parseChallenge('Negotiate abc')).toBeUndefined();
    expect(parseChallenge(undefined)).toBeUndefined();
  });
});

describe('manifestStep', () => {
  const config = { config: { digest: DIGEST, size: 10 } };
  it('reads a Docker v2 or OCI manifest’s config blob', () => {
    expect(manifestStep('application/vnd.docker.distribution.manifest.v2+json', JSON.stringify(config))).toEqual(
      config,
    );
    expect(manifestStep(undefined, JSON.stringify({ schemaVersion: 2, ...config }))).toEqual(config);
  });

  it('picks an index’s linux/amd64 child (a child without a platform serves every one)', () => {
    const child = (architecture: string, digest: string) => ({
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      digest,
      platform: { os: 'linux', architecture },
    });
    const index = { manifests: [child('arm64', `sha256:${'b'.repeat(64)}`), child('amd64', DIGEST)] };
    expect(manifestStep('application/vnd.oci.image.index.v1+json', JSON.stringify(index))).toEqual({
      child: { digest: DIGEST, mediaType: 'application/vnd.oci.image.manifest.v1+json' },
    });
    expect(manifestStep(undefined, JSON.stringify({ manifests: [{ digest: DIGEST }] }))).toEqual({
      child: { digest: DIGEST, mediaType: 'application/vnd.oci.image.manifest.v1+json' },
    });
  });

  it('refuses schema 1, a body that is not JSON, and a config without a sha256 digest', () => {
    expect(manifestStep(undefined, JSON.stringify({ schemaVersion: 1, fsLayers: [] }))).toHaveProperty('error');
    expect(manifestStep(undefined, '<html>')).toEqual({ error: 'the registry answered a manifest that is not JSON' });
    expect(manifestStep(undefined, JSON.stringify({ config: { digest: 'md5:x' } }))).toHaveProperty('error');
  });
});

describe('tag pages', () => {
  it('follows a Link to the next page of the same repository only', () => {
    expect(nextPage('</v2/team/app/tags/list?n=5&last=v04>; rel="next"', 'team/app')).toBe('tags/list?n=5&last=v04');
    expect(nextPage('<https://elsewhere.example/v2/other/tags/list?n=5>; rel="next"', 'team/app')).toBeUndefined();
    expect(nextPage(undefined, 'team/app')).toBeUndefined();
  });

  it('pages as KubeSphere does: reverse lexical order unless ascending (the registry’s), -1 for all', () => {
    const tags = ['1.0', '2.0', '1.5', 'latest'];
    expect(tagPage(tags, { page: 1, limit: -1, ascending: false })).toEqual({
      tags: ['latest', '2.0', '1.5', '1.0'],
      total: 4,
    });
    expect(tagPage(tags, { page: 2, limit: 3, ascending: false })).toEqual({ tags: ['1.0'], total: 4 });
    expect(tagPage(tags, { page: 1, limit: 2, ascending: true })).toEqual({ tags: ['1.0', '2.0'], total: 4 });
    expect(tagPage(tags, { page: 9, limit: 2, ascending: false })).toEqual({ tags: [], total: 4 });
  });

  it('reads page, limit and ascending, refusing what is not a number or a boolean', () => {
    expect(tagPageQuery({})).toEqual({ page: 1, limit: -1, ascending: false });
    expect(tagPageQuery({ page: '2', limit: '10', ascending: 'true' })).toEqual({
      page: 2,
      limit: 10,
      ascending: true,
    });
    expect(tagPageQuery({ page: '0' })).toHaveProperty('error');
    expect(tagPageQuery({ limit: 'ten' })).toHaveProperty('error');
    expect(tagPageQuery({ limit: '0' })).toHaveProperty('error');
    expect(tagPageQuery({ ascending: 'yes' })).toHaveProperty('error');
  });
});
