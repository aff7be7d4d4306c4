import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcrypt';
import jwt from 'jsonwebtoken';
import { generate } from 'selfsigned';
import { startOnFreePort } from '../../src/sandbox/monitoring/prometheus.js';

/**
 * The CNCF distribution registry (Debian's `docker-registry`, what Docker Hub and Harbor run) on loopback, plain
 * HTTP, for the image lookup's tests; images are pushed through its own Registry API v2, as `docker push` does. Its
 * authentication is htpasswd (Basic), `none` (a public registry), or `token`: Bearer tokens, as Docker Hub, Harbor and GHCR ask for them, from a
 * token service of the test's (the registry verifies each token's signature, audience and grants itself).
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
  /** The scopes the token service was asked for, in order (token mode). */
  readonly tokenScopes: string[];
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

const SERVICE = 'kapi-e2e-registry';
const ISSUER = 'kapi-e2e-token-service';

/**
 * A token service as the registry's token auth specifies it: `GET ?service=&scope=repository:<name>:pull,push` with
 * Basic credentials; a JWT (RS256, its certificate in `x5c`) granting the scope's actions, or 401.
 */
async function startTokenService(username: string, password: string, scopes: string[]) {
  const { private: key, cert } = await generate([{ name: 'commonName', value: ISSUER }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
  });
  const der = new X509Certificate(cert).raw.toString('base64');
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://token');
    if (req.headers.authorization !== expected) return void res.writeHead(401).end('{"details":"wrong credentials"}');
    const scope = url.searchParams.get('scope') ?? '';
    scopes.push(scope);
    const [type, name, actions] = scope.split(':');
    const token = jwt.sign(
      { access: type && name && actions ? [{ type, name, actions: actions.split(',') }] : [] },
      key,
      {
        algorithm: 'RS256',
        issuer: ISSUER,
        audience: url.searchParams.get('service') ?? '',
        subject: username,
        expiresIn: 300,
        jwtid: createHash('sha256').update(`${Date.now()}${Math.random()}`).digest('hex').slice(0, 16),
        header: { alg: 'RS256', x5c: [der] } as jwt.JwtHeader,
      },
    );
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, cert, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/token` };
}

export async function startRegistry(options: { auth?: 'htpasswd' | 'token' | 'none' } = {}): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-registry-'));
  const username = 'e2e-puller';
  const password = 'e2e-Registry-passw0rd';
  const tokenScopes: string[] = [];
  let auth = '';
  let tokens: Awaited<ReturnType<typeof startTokenService>> | undefined;
  if (options.auth === 'token') {
    tokens = await startTokenService(username, password, tokenScopes);
    writeFileSync(join(dir, 'token-ca.pem'), tokens.cert);
    auth = `auth: { token: { realm: "${tokens.url}", service: ${SERVICE}, issuer: ${ISSUER}, rootcertbundle: ${join(dir, 'token-ca.pem')} } }`;
  } else if (options.auth !== 'none') {
    writeFileSync(join(dir, 'htpasswd'), `${username}:${bcrypt.hashSync(password, 5)}\n`);
    auth = `auth: { htpasswd: { realm: kapi-e2e, path: ${join(dir, 'htpasswd')} } }`;
  }
  const config = (port: number) =>
    [
      'version: 0.1',
      'log: { level: error, accesslog: { disabled: true } }',
      `storage: { filesystem: { rootdirectory: ${join(dir, 'data')} } }`,
      `http: { addr: "127.0.0.1:${port}", secret: e2e-registry-secret }`,
      auth,
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
      async (port) => [200, 401].includes((await fetch(`http://127.0.0.1:${port}/v2/`)).status),
    );
  } catch (error) {
    tokens?.server.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const host = `127.0.0.1:${running.port}`;
  const basic = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  /** What a push is authorized with: the Basic credentials, or a token for pushing to the repository. */
  async function authorizationFor(repository: string): Promise<string> {
    if (!tokens) return basic;
    const url = `${tokens.url}?service=${SERVICE}&scope=repository:${repository}:pull,push`;
    const { token } = (await (await fetch(url, { headers: { authorization: basic } })).json()) as { token: string };
    tokenScopes.pop(); // the tests' own pushes are not what they look at
    return `Bearer ${token}`;
  }
  const sizes = new Map<string, number>();

  async function pushBlob(repository: string, body: Buffer): Promise<string> {
    const authorization = await authorizationFor(repository);
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
    const authorization = await authorizationFor(repository);
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
    tokenScopes,
    async stop() {
      await running.stop();
      if (tokens) await new Promise((resolve) => tokens.server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
