/**
 * The registry client against the real CNCF distribution registry (Debian's docker-registry, plain HTTP on loopback,
 * htpasswd): an image's config read with the pull secret's credentials, a multi-platform index's linux/amd64 variant,
 * an image by digest, tags across pages; the registry's refusals, a missing tag and a registry that is not there, each
 * a failure that says so, never the credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { parseImageReference, type ImageReference } from '../../src/registry/image-reference.js';
import { RegistryClient } from '../../src/registry/registry-client.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';

let registry: TestRegistry;
let client: RegistryClient;
let amd64: string;
const WEB = {
  architecture: 'amd64',
  os: 'linux',
  created: '2026-11-01T10:00:00Z',
  config: { ExposedPorts: { '80/tcp': {}, '443/tcp': {} }, Env: ['PATH=/usr/bin'], Cmd: ['serve'] },
  rootfs: { type: 'layers', diff_ids: [] },
  history: [{ created: '2026-11-01T10:00:00Z', created_by: 'e2e' }],
  unknown_field: 'dropped',
};

beforeAll(async () => {
  registry = await startRegistry();
  client = new RegistryClient({ timeoutMs: 5_000 });
  await registry.pushImage('team/web', '1.0', WEB);
  amd64 = await registry.pushImage('team/multi', 'amd64-only', {
    ...WEB,
    config: { ExposedPorts: { '8080/tcp': {} } },
  });
  const arm64 = await registry.pushImage('team/multi', 'arm64-only', { ...WEB, architecture: 'arm64', config: {} });
  await registry.pushIndex('team/multi', '2.0', [
    { digest: arm64, size: registry.manifestSize(arm64), os: 'linux', architecture: 'arm64' },
    { digest: amd64, size: registry.manifestSize(amd64), os: 'linux', architecture: 'amd64' },
  ]);
  await registry.pushIndex('team/multi', 'arm-only', [
    { digest: arm64, size: registry.manifestSize(arm64), os: 'linux', architecture: 'arm64' },
  ]);
  for (let i = 0; i < 12; i++) await registry.pushImage('team/tags', `v${String(i).padStart(2, '0')}`, WEB);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await registry?.stop();
});

const image = (text: string) => parseImageReference(text) as ImageReference;
const credentials = () => ({ credentials: { username: registry.username, password: registry.password } });

describe('RegistryClient.imageConfig', () => {
  it('when the pull secret’s credentials are right, then the config blob’s fields are answered (unknown ones dropped)', async () => {
    const config = await client.imageConfig(image(`${registry.host}/team/web:1.0`), credentials());
    expect(config).toEqual({
      architecture: 'amd64',
      os: 'linux',
      created: WEB.created,
      config: WEB.config,
      rootfs: WEB.rootfs,
      history: WEB.history,
    });
  });

  it('when the image is a multi-platform index, then its linux/amd64 variant is read', async () => {
    const config = await client.imageConfig(image(`${registry.host}/team/multi:2.0`), credentials());
    expect(config).toMatchObject({ config: { ExposedPorts: { '8080/tcp': {} } } });
  });

  it('when the image is named by digest, then that manifest is read', async () => {
    const config = await client.imageConfig(image(`${registry.host}/team/multi@${amd64}`), credentials());
    expect(config).toMatchObject({ config: { ExposedPorts: { '8080/tcp': {} } } });
  });

  it('when an index has no linux/amd64 variant, then it says so', async () => {
    expect(await client.imageConfig(image(`${registry.host}/team/multi:arm-only`), credentials())).toEqual({
      failure: 'invalid',
      message: `image team/multi:arm-only: the image has no linux/amd64 variant`,
    });
  });

  it('when the tag or the repository is not there, then not-found, with the registry’s code', async () => {
    const tag = await client.imageConfig(image(`${registry.host}/team/web:9.9`), credentials());
    expect(tag).toMatchObject({ failure: 'not-found' });
    expect((tag as { message: string }).message).toContain('MANIFEST_UNKNOWN');
    const repository = await client.imageConfig(image(`${registry.host}/team/none:1.0`), credentials());
    expect(repository).toMatchObject({ failure: 'not-found' });
  });

  it('when the credentials are wrong or missing, then unauthorized, and the password is in no message', async () => {
    const wrong = await client.imageConfig(image(`${registry.host}/team/web:1.0`), {
      credentials: { username: registry.username, password: 'not-the-password' },
    });
    expect(wrong).toMatchObject({ failure: 'unauthorized' });
    expect(JSON.stringify(wrong)).not.toContain('not-the-password');
    expect(await client.imageConfig(image(`${registry.host}/team/web:1.0`), {})).toEqual({
      failure: 'unauthorized',
      message: `${registry.host} needs credentials: name a pull secret`,
    });
  });

  it('when nothing listens where the image names a registry, then unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await client.imageConfig(image(`127.0.0.1:${port}/team/web:1.0`), {})).toMatchObject({
      failure: 'unreachable',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('when the host is no registry, then invalid; when it does not answer in time, then timeout', async () => {
    const quiet: Server = createServer((req, res) => {
      if (req.url === '/v2/') res.writeHead(404).end('no registry here');
      // anything else is never answered
    });
    await new Promise<void>((resolve) => quiet.listen(0, '127.0.0.1', resolve));
    const port = (quiet.address() as { port: number }).port;
    try {
      expect(await client.imageConfig(image(`127.0.0.1:${port}/team/web:1.0`), {})).toEqual({
        failure: 'invalid',
        message: `127.0.0.1:${port} is not a container registry (it answered 404 to /v2/)`,
      });
      const slow = new RegistryClient({ timeoutMs: 300 });
      quiet.removeAllListeners('request');
      quiet.on('request', () => undefined);
      expect(await slow.imageConfig(image(`127.0.0.1:${port}/team/web:1.0`), {})).toEqual({
        failure: 'timeout',
        message: `127.0.0.1:${port} did not answer in time`,
      });
      await slow.close();
    } finally {
      quiet.closeAllConnections();
      await new Promise((resolve) => quiet.close(resolve));
    }
  });
});

describe('RegistryClient.tags', () => {
  it('when a repository has tags, then all are answered (distribution 2.8 answers them in one page)', async () => {
    const tags = await client.tags(registry.host, 'team/tags', credentials());
    expect((tags as string[]).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `v${String(i).padStart(2, '0')}`));
  });

  it('when the repository is not there, then not-found', async () => {
    expect(await client.tags(registry.host, 'team/none', credentials())).toMatchObject({ failure: 'not-found' });
  });
});

describe('RegistryClient with a registry that asks for Bearer tokens', () => {
  let tokenRegistry: TestRegistry;
  beforeAll(async () => {
    tokenRegistry = await startRegistry({ auth: 'token' });
    await tokenRegistry.pushImage('team/api', '3.1', WEB);
  }, 60_000);
  afterAll(async () => tokenRegistry?.stop());

  it('when the credentials are right, then a pull token for the repository is asked of the realm, and the config read', async () => {
    const config = await client.imageConfig(
      parseImageReference(`${tokenRegistry.host}/team/api:3.1`) as ImageReference,
      {
        credentials: { username: tokenRegistry.username, password: tokenRegistry.password },
      },
    );
    expect(config).toMatchObject({ config: WEB.config });
    expect(tokenRegistry.tokenScopes).toEqual(['repository:team/api:pull']);
    const tags = await client.tags(tokenRegistry.host, 'team/api', {
      credentials: { username: tokenRegistry.username, password: tokenRegistry.password },
    });
    expect(tags).toEqual(['3.1']);
  });

  it('when the token service refuses the credentials, then unauthorized', async () => {
    expect(
      await client.imageConfig(parseImageReference(`${tokenRegistry.host}/team/api:3.1`) as ImageReference, {
        credentials: { username: tokenRegistry.username, password: 'wrong' },
      }),
    ).toEqual({ failure: 'unauthorized', message: `${tokenRegistry.host}'s token service refused the credentials` });
  });
});
