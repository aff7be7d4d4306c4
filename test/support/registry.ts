import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcrypt';
import { startOnFreePort } from '../../src/sandbox/monitoring/prometheus.js';

/**
 * The CNCF distribution registry (Debian's `docker-registry`, what Docker Hub and Harbor run) on loopback, plain
 * HTTP, with htpasswd (Basic) authentication, for the image lookup's tests; images are pushed through its own
 * Registry API v2, as `docker push` does.
 */
export interface TestRegistry {
  /** `127.0.0.1:<port>`, as an image names it. */
  readonly host: string;
  readonly username: string;
  readonly password: string;
  /** Pushes an image with `config` as its config blob; its manifest's digest. */
  pushImage(repository: string, tag: string, config: Record<string, unknown>): Promise<string>;
  /** Pushes a multi-platform index of pushed manifests (digest, platform); its digest. */
  pushIndex(
    repository: string,
    tag: string,
    children: { digest: string; size: number; os: string; architecture: string }[],
  ): Promise<string>;
  /** The size of a pushed manifest, for an index. */
  manifestSize(digest: string): number;
  stop(): Promise<void>;
}

const MANIFEST_V2 = 'application/vnd.docker.distribution.manifest.v2+json';
const CONFIG_V1 = 'application/vnd.docker.container.image.v1+json';
const LIST_V2 = 'application/vnd.docker.distribution.manifest.list.v2+json';
const LAYER = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

const digestOf = (body: Buffer) => `sha256:${createHash('sha256').update(body).digest('hex')}`;

export function registryBinary(): string {
  const path = process.env.KAPI_DOCKER_REGISTRY ?? '/usr/bin/docker-registry';
  if (!existsSync(path))
    throw new Error(
      `${path} is missing: run \`make system-deps\` (apt-get install docker-registry) or set KAPI_DOCKER_REGISTRY`,
    );
  return path;
}

export async function startRegistry(): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-registry-'));
  const username = 'e2e-puller';
  const password = 'e2e-Registry-passw0rd';
  writeFileSync(join(dir, 'htpasswd'), `${username}:${bcrypt.hashSync(password, 5)}\n`);
  const config = (port: number) =>
    [
      'version: 0.1',
      'log: { level: error, accesslog: { disabled: true } }',
      `storage: { filesystem: { rootdirectory: ${join(dir, 'data')} } }`,
      `http: { addr: "127.0.0.1:${port}", secret: e2e-registry-secret }`,
      `auth: { htpasswd: { realm: kapi-e2e, path: ${join(dir, 'htpasswd')} } }`,
    ].join('\n');
  let running;
  try {
    running = await startOnFreePort(
      'docker-registry',
      registryBinary(),
      (port) => {
        writeFileSync(join(dir, `config-${port}.yml`), config(port));
        return ['serve', join(dir, `config-${port}.yml`)];
      },
      async (port) => (await fetch(`http://127.0.0.1:${port}/v2/`)).status === 401,
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const host = `127.0.0.1:${running.port}`;
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const sizes = new Map<string, number>();

  async function pushBlob(repository: string, body: Buffer): Promise<string> {
    const digest = digestOf(body);
    const start = await fetch(`http://${host}/v2/${repository}/blobs/uploads/`, {
      method: 'POST',
      headers: { authorization },
    });
    if (start.status !== 202) throw new Error(`blob upload refused: ${start.status} ${await start.text()}`);
    const location = new URL(start.headers.get('location') as string, `http://${host}`);
    location.searchParams.set('digest', digest);
    const put = await fetch(location, {
      method: 'PUT',
      headers: { authorization, 'content-type': 'application/octet-stream' },
      body,
    });
    if (put.status !== 201) throw new Error(`blob upload failed: ${put.status} ${await put.text()}`);
    return digest;
  }

  async function pushManifest(repository: string, tag: string, mediaType: string, manifest: unknown) {
    const body = Buffer.from(JSON.stringify(manifest));
    const put = await fetch(`http://${host}/v2/${repository}/manifests/${tag}`, {
      method: 'PUT',
      headers: { authorization, 'content-type': mediaType },
      body,
    });
    if (put.status !== 201) throw new Error(`manifest push failed: ${put.status} ${await put.text()}`);
    const digest = digestOf(body);
    sizes.set(digest, body.length);
    return digest;
  }

  return {
    host,
    username,
    password,
    async pushImage(repository, tag, config) {
      const configBody = Buffer.from(JSON.stringify(config));
      const layerBody = Buffer.from(`layer of ${repository}:${tag}`);
      const [configDigest, layerDigest] = [
        await pushBlob(repository, configBody),
        await pushBlob(repository, layerBody),
      ];
      return pushManifest(repository, tag, MANIFEST_V2, {
        schemaVersion: 2,
        mediaType: MANIFEST_V2,
        config: { mediaType: CONFIG_V1, size: configBody.length, digest: configDigest },
        layers: [{ mediaType: LAYER, size: layerBody.length, digest: layerDigest }],
      });
    },
    async pushIndex(repository, tag, children) {
      return pushManifest(repository, tag, LIST_V2, {
        schemaVersion: 2,
        mediaType: LIST_V2,
        manifests: children.map((child) => ({
          mediaType: MANIFEST_V2,
          size: child.size,
          digest: child.digest,
          platform: { os: child.os, architecture: child.architecture },
        })),
      });
    },
    manifestSize: (digest) => sizes.get(digest) as number,
    async stop() {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
