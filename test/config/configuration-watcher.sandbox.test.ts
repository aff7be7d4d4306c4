import path from 'node:path';
import { ConfigurationWatcher } from '../../src/config/configuration-watcher.js';
import { KubeApiError, KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../src/kube/connection.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { capturingLogger, eventually } from './fakes.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- objects are plain JSON */

/**
 * The watcher with its real Reflectors against the sandbox API (CRDs loaded from crds/): kapi's own service account
 * watches and writes status, the admin changes the objects as an operator would.
 */
const NS = 'kapi-system';
const COLLECTION = `/apis/installer.kapi.io/v1alpha1/namespaces/${NS}/clusterconfigurations`;
const OBJECT = `${COLLECTION}/kapi`;
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;

describe('ConfigurationWatcher against the sandbox', () => {
  let sandbox: Sandbox;
  let connections: KubeConnection[] = [];
  let admin: KubeClient;
  let watcher: ConfigurationWatcher | undefined;
  let logged: ReturnType<typeof capturingLogger>;

  async function clientFor(token: string): Promise<KubeClient> {
    const connection = connectionFor(tokenAccess(sandbox.url, token), 'sandbox');
    connections.push(connection);
    return new KubeClient(connection);
  }

  async function ignoreNotFound(request: Promise<unknown>): Promise<void> {
    await request.catch((error: unknown) => {
      if (!(error instanceof KubeApiError && error.code === 404)) throw error;
    });
  }

  async function patch(pathname: string, body: unknown): Promise<any> {
    return admin.request({ method: 'PATCH', path: pathname, body, contentType: 'application/merge-patch+json' });
  }

  async function replaceConfiguration(authentication: unknown): Promise<void> {
    await ignoreNotFound(admin.request({ method: 'DELETE', path: OBJECT }));
    await admin.request({
      method: 'POST',
      path: COLLECTION,
      body: {
        apiVersion: 'installer.kapi.io/v1alpha1',
        kind: 'ClusterConfiguration',
        metadata: { name: 'kapi', namespace: NS },
        spec: { authentication },
      },
    });
  }

  /**
   * Polls the stored object until its condition of `type` has `status`; returns that condition. No deadline of its
   * own: the test's timeout is the only limit (a busy machine is slow, not wrong).
   */
  async function conditionBecomes(type: string, status: string): Promise<any> {
    for (;;) {
      const object = await admin.request<any>({ path: OBJECT });
      const found = (object.status?.conditions ?? []).find((c: any) => c.type === type);
      if (found?.status === status) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ nodes: 1, podsPerNode: 0, crdDir: path.resolve(process.cwd(), 'crds') });
    admin = await clientFor(sandbox.adminToken);
  });

  afterAll(async () => {
    for (const connection of connections) connection.close();
    connections = [];
    await sandbox?.stop();
  });

  beforeEach(async () => {
    await replaceConfiguration({ oauth: { clients: [{ name: 'kapi', secret: 'first-s3cret' }] } });
    logged = capturingLogger();
    watcher = new ConfigurationWatcher({
      client: await clientFor(sandbox.serviceAccountToken),
      logger: logged.logger,
      namespace: NS,
      name: 'kapi',
    });
    watcher.start();
    await eventually(() => watcher!.readiness.notReadyReason() === undefined);
  });

  afterEach(async () => {
    await watcher?.stop();
    watcher = undefined;
    for (const secret of ['first-s3cret', 'second-s3cret', 'ref-s3cret-1', 'ref-s3cret-2']) {
      expect(JSON.stringify(logged.lines)).not.toContain(secret);
    }
  });

  it('when the configuration is valid, then it applies and Valid/Ready are written to its status', async () => {
    expect(watcher!.current().clients).toEqual([
      {
        name: 'kapi',
        secret: 'first-s3cret',
        public: false,
        grantTypes: ['password', 'refresh_token'],
        redirectURIs: [],
      },
    ]);
    expect(await conditionBecomes('Valid', 'True')).toEqual(
      expect.objectContaining({ status: 'True', reason: 'Applied', observedGeneration: 1 }),
    );
  });

  it('when the client secret changes, then the new snapshot applies', async () => {
    await patch(OBJECT, {
      spec: { authentication: { oauth: { clients: [{ name: 'kapi', secret: 'second-s3cret' }] } } },
    });
    await eventually(() => watcher!.current().clients[0]?.secret === 'second-s3cret');
  });

  it('when an invalid change is made, then the last good configuration stays and Valid turns False with the reason', async () => {
    const good = watcher!.current();
    await patch(OBJECT, { spec: { authentication: { accessTokenMaxAge: '0s' } } });
    await eventually(() => logged.lines.some((l) => l.reason?.includes('accessTokenMaxAge')));
    expect(watcher!.current()).toBe(good);
    const valid = await conditionBecomes('Valid', 'False');
    expect(valid).toEqual(
      expect.objectContaining({ status: 'False', reason: 'InvalidConfiguration', observedGeneration: 2 }),
    );
    expect(valid.message).toContain('spec.authentication.accessTokenMaxAge: "0s" must be longer than zero');
  });

  it('when the configuration is deleted, then the defaults apply', async () => {
    await admin.request({ method: 'DELETE', path: OBJECT });
    await eventually(() => watcher!.current().clients[0]?.secret === 'kapi');
    expect(watcher!.current().clients.map((c) => c.name)).toEqual(['kapi']);
    expect(logged.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toContain(
      'ClusterConfiguration kapi-system/kapi not found: using the defaults (client "kapi")',
    );
  });

  it('when a client uses secretRef, then the value comes from the Secret and a Secret change applies', async () => {
    const encode = (text: string) => Buffer.from(text).toString('base64');
    await ignoreNotFound(admin.request({ method: 'DELETE', path: `${SECRETS}/oauth-clients` }));
    await admin.request({
      method: 'POST',
      path: SECRETS,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'oauth-clients', namespace: NS },
        data: { kapi: encode('ref-s3cret-1') },
      },
    });
    await patch(OBJECT, {
      spec: {
        authentication: { oauth: { clients: [{ name: 'kapi', secretRef: { name: 'oauth-clients', key: 'kapi' } }] } },
      },
    });
    await eventually(() => watcher!.current().clients[0]?.secret === 'ref-s3cret-1');

    await patch(`${SECRETS}/oauth-clients`, { data: { kapi: encode('ref-s3cret-2') } });
    await eventually(() => watcher!.current().clients[0]?.secret === 'ref-s3cret-2');
  });
});
