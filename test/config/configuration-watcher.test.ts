import { DEFAULT_AUTH_SETTINGS, type AuthSettings } from '../../src/config/cluster-configuration.js';
import { ConfigurationWatcher } from '../../src/config/configuration-watcher.js';
import type { LdapProviderSettings } from '../../src/config/identity-providers/index.js';
import { KubeApiError, type KubeRequest } from '../../src/kube/client.js';
import {
  FakeClient,
  FakeWatches,
  capturingLogger,
  eventually,
  notFound,
  settle,
  type FakeCollection,
} from './fakes.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- objects are plain JSON */

const SECRET_VALUES = ['inline-s3cret', 'ref-s3cret-1', 'ref-s3cret-2', 'bind-s3cret-1', 'bind-s3cret-2'];

function clients(...list: any[]) {
  return { oauth: { clients: list } };
}

function secretObject(name: string, data: Record<string, string>) {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  return { metadata: { name, namespace: 'kapi-system', resourceVersion: '1' }, data: encoded };
}

/** A watcher over fake collections, with a fake API server that applies status patches and echoes them as events. */
function harness(options: { crdMissing?: boolean; secretSyncTimeoutMs?: number } = {}) {
  const reloads: string[] = [];
  const watches = new FakeWatches();
  const { logger, lines } = capturingLogger();
  let rv = 10;
  let stored: any;
  let patchFailure: (() => Error) | undefined;
  const client = new FakeClient(async (req: KubeRequest) => {
    if (req.method === 'PATCH') {
      if (patchFailure) throw patchFailure();
      const body = req.body as any;
      if (body.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        throw new KubeApiError(409, undefined, 'the object has been modified');
      }
      stored = {
        ...stored,
        metadata: { ...stored.metadata, resourceVersion: String(++rv) },
        status: { ...stored.status, ...body.status },
      };
      configs.put(stored);
      return stored;
    }
    if (options.crdMissing) throw notFound();
    return { items: [] };
  });
  const watcher = new ConfigurationWatcher({
    client: client.asKubeClient(),
    logger,
    namespace: 'kapi-system',
    name: 'kapi',
    watch: watches.watch,
    secretSyncTimeoutMs: options.secretSyncTimeoutMs,
    onReload: (result) => reloads.push(result),
  });
  const configs = watches.find('metadata.name=kapi', '/clusterconfigurations') as FakeCollection<any>;
  const changes: AuthSettings[] = [];
  watcher.onChange((settings) => changes.push(settings));

  const h = {
    watcher,
    reloads,
    watches,
    configs,
    client,
    lines,
    changes,
    get stored() {
      return stored;
    },
    failPatches(make: (() => Error) | undefined) {
      patchFailure = make;
    },
    /** The object as the API server would hold it after a spec change (generation bumped). */
    object(authentication: unknown, generation: number): any {
      stored = {
        apiVersion: 'installer.kapi.io/v1alpha1',
        kind: 'ClusterConfiguration',
        metadata: { name: 'kapi', namespace: 'kapi-system', uid: 'uid-1', generation, resourceVersion: String(++rv) },
        spec: { authentication },
        status: stored?.status ?? {},
      };
      return stored;
    },
    put(authentication: unknown, generation: number) {
      configs.put(h.object(authentication, generation));
    },
    secrets(name: string): FakeCollection<any> | undefined {
      return watches.find(`metadata.name=${name}`, '/api/v1/namespaces/kapi-system/secrets');
    },
    conditions(): Record<string, any> {
      return Object.fromEntries((stored?.status?.conditions ?? []).map((c: any) => [c.type, c]));
    },
    warnings(): string[] {
      return lines.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.message);
    },
  };
  return h;
}

type Harness = ReturnType<typeof harness>;
let running: Harness | undefined;

async function started(options?: Parameters<typeof harness>[0]): Promise<Harness> {
  running = harness(options);
  running.watcher.start();
  await settle();
  return running;
}

afterEach(async () => {
  if (running) {
    const text = JSON.stringify(running.lines) + JSON.stringify(running.client.patches);
    for (const secret of SECRET_VALUES) expect(text).not.toContain(secret);
    await running.watcher.stop();
    running = undefined;
  }
});

describe('ConfigurationWatcher', () => {
  it('when it has not synced yet, then it refuses every client and says what it waits for', async () => {
    const h = await started();
    expect(h.watcher.current().clients).toEqual([]);
    expect(h.watcher.readiness.notReadyReason()).toContain('waiting for ClusterConfiguration kapi-system/kapi');
    expect(h.configs.started).toBe(true);
    expect(h.configs.options.listPath).toBe(
      '/apis/installer.kapi.io/v1alpha1/namespaces/kapi-system/clusterconfigurations',
    );
  });

  it('when the object is valid at the first sync, then its settings apply, it is ready and Valid/Ready are True', async () => {
    const h = await started();
    h.configs.sync([h.object({ accessTokenMaxAge: '1h', ...clients({ name: 'kapi', secret: 'inline-s3cret' }) }, 1)]);
    await settle();
    expect(h.watcher.current().accessTokenMaxAgeSeconds).toBe(3600);
    expect(h.watcher.current().clients).toEqual([
      {
        name: 'kapi',
        secret: 'inline-s3cret',
        public: false,
        grantTypes: ['password', 'refresh_token'],
        redirectURIs: [],
      },
    ]);
    expect(Object.isFrozen(h.watcher.current())).toBe(true);
    expect(h.watcher.readiness.notReadyReason()).toBeUndefined();
    expect(h.conditions().Valid).toEqual(
      expect.objectContaining({ status: 'True', reason: 'Applied', observedGeneration: 1 }),
    );
    expect(h.conditions().Ready).toEqual(
      expect.objectContaining({ status: 'True', message: 'generation 1 is in effect' }),
    );
    const patch = h.client.patches[0]!;
    expect(patch.path).toBe(
      '/apis/installer.kapi.io/v1alpha1/namespaces/kapi-system/clusterconfigurations/kapi/status',
    );
    expect(patch.contentType).toBe('application/merge-patch+json');
    expect(h.warnings()).toEqual([]);
  });

  it('when the object changes, then the new snapshot is published before the event loop turns', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'kapi', secret: 'inline-s3cret' }), 1)]);
    await settle();
    const before = h.watcher.current();
    expect(before.multipleLogin).toBe(true);
    let loopTurned = false;
    setImmediate(() => (loopTurned = true));
    h.put({ multipleLogin: false, ...clients({ name: 'console', secret: 'inline-s3cret' }) }, 2);
    await Promise.resolve(); // one microtask
    await Promise.resolve();
    // no timer or I/O has run yet: the change is in effect by the order of events, whatever the machine's load
    expect(loopTurned).toBe(false);
    expect(h.watcher.current()).not.toBe(before);
    expect(h.watcher.current().clients.map((c) => c.name)).toEqual(['console']);
    expect(h.watcher.current().multipleLogin).toBe(false);
    expect(before.clients.map((c) => c.name)).toEqual(['kapi']); // old snapshots are never changed
    expect(h.changes.at(-1)).toBe(h.watcher.current());
  });

  it('when the object is applied, refused, repeated and deleted, then each new outcome is reported once', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'kapi', secret: 'inline-s3cret' }), 1)]);
    await settle();
    h.put({ accessTokenMaxAge: 'forever', ...clients({ name: 'kapi', secret: 'inline-s3cret' }) }, 2);
    await settle();
    // the same refusal again (a status write echoed back) is no new outcome
    h.put({ accessTokenMaxAge: 'forever', ...clients({ name: 'kapi', secret: 'inline-s3cret' }) }, 2);
    await settle();
    h.put(clients({ name: 'kapi', secret: 'inline-s3cret' }), 3);
    await settle();
    h.configs.remove(h.stored);
    await settle();
    expect(h.reloads).toEqual(['applied', 'invalid', 'applied', 'defaults']);
  });

  it('when the object becomes invalid, then the last good settings stay, one warning says why and Valid turns False', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'kapi', secret: 'inline-s3cret' }), 1)]);
    await settle();
    const good = h.watcher.current();
    const patchesBefore = h.client.patches.length;

    h.put({ accessTokenMaxAge: 'forever', ...clients({ name: 'kapi', secret: 'inline-s3cret' }) }, 2);
    await settle();
    expect(h.watcher.current()).toBe(good);
    expect(h.watcher.readiness.notReadyReason()).toBeUndefined();
    const warning = h.lines.find((l) => l.message.includes('keeping the last good configuration'));
    expect(warning).toEqual(
      expect.objectContaining({
        level: 'warn',
        generation: 2,
        reason: expect.stringContaining('accessTokenMaxAge: "forever"'),
      }),
    );
    expect(h.conditions().Valid).toEqual(
      expect.objectContaining({ status: 'False', reason: 'InvalidConfiguration', observedGeneration: 2 }),
    );
    expect(h.conditions().Valid.message).toContain('spec.authentication.accessTokenMaxAge');
    expect(h.conditions().Ready).toEqual(expect.objectContaining({ status: 'False', reason: 'InvalidConfiguration' }));
    // our own status write came back as a MODIFIED event: no second write, no second warning
    expect(h.client.patches.length).toBe(patchesBefore + 1);

    h.configs.put(h.stored); // a resync delivers the same object again
    await settle();
    expect(h.client.patches.length).toBe(patchesBefore + 1);
    expect(h.warnings()).toHaveLength(1);

    h.put(clients({ name: 'kapi', secret: 'inline-s3cret' }, { name: 'b', secret: 'inline-s3cret' }), 3);
    await settle();
    expect(h.watcher.current().clients.map((c) => c.name)).toEqual(['kapi', 'b']);
    expect(h.conditions().Valid.status).toBe('True');
  });

  it('when the object is missing, then the defaults apply with one warning, however many events follow', async () => {
    const h = await started();
    h.configs.sync([]);
    await settle();
    expect(h.watcher.current()).toEqual(DEFAULT_AUTH_SETTINGS);
    expect(h.watcher.readiness.notReadyReason()).toBeUndefined();
    h.configs.put({ metadata: { name: 'other', namespace: 'kapi-system' } });
    h.configs.remove({ metadata: { name: 'other', namespace: 'kapi-system' } });
    await settle();
    expect(h.warnings()).toEqual([
      'ClusterConfiguration kapi-system/kapi not found: using the defaults (client "kapi")',
    ]);
    expect(h.client.patches).toEqual([]);
  });

  it('when the object is deleted, then the defaults apply again', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'console', secret: 'inline-s3cret' }), 1)]);
    await settle();
    h.configs.remove(h.stored);
    await settle();
    expect(h.watcher.current()).toEqual(DEFAULT_AUTH_SETTINGS);
    expect(h.changes.at(-1)).toEqual(DEFAULT_AUTH_SETTINGS);
    expect(h.warnings()).toEqual([
      'ClusterConfiguration kapi-system/kapi not found: using the defaults (client "kapi")',
    ]);
  });

  it('when the CRD is not installed (404 on list), then the defaults apply and it is ready without a sync', async () => {
    const h = await started({ crdMissing: true });
    await eventually(() => h.watcher.readiness.notReadyReason() === undefined);
    expect(h.configs.synced).toBe(false);
    expect(h.watcher.current()).toEqual(DEFAULT_AUTH_SETTINGS);
    expect(h.warnings()).toEqual([
      'the ClusterConfiguration CRD is not installed: using the defaults (client "kapi") until kapi-system/kapi exists',
    ]);
    // the CRD arrives later: the reflector syncs and the object applies
    h.configs.sync([h.object(clients({ name: 'late', secret: 'inline-s3cret' }), 1)]);
    await settle();
    expect(h.watcher.current().clients.map((c) => c.name)).toEqual(['late']);
  });

  it('when it starts with an invalid object, then it refuses every client and stays unready until the object is fixed', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'kapi' }), 1)]);
    await settle();
    expect(h.watcher.current().clients).toEqual([]);
    expect(h.watcher.readiness.notReadyReason()).toContain('is invalid and no earlier configuration is loaded');
    expect(h.lines.find((l) => l.level === 'error')?.reason).toContain('one of secret or secretRef is required');
    expect(h.conditions().Valid.status).toBe('False');

    h.put(clients({ name: 'kapi', secret: 'inline-s3cret' }), 2);
    await settle();
    expect(h.watcher.readiness.notReadyReason()).toBeUndefined();
    expect(h.watcher.current().clients).toHaveLength(1);
  });

  it('when a client uses secretRef, then its Secret is watched by name and its value (and each change) applies', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'kapi', secretRef: { name: 'oauth', key: 'kapi' } }), 1)]);
    await settle();
    const secrets = h.secrets('oauth')!;
    expect(secrets.started).toBe(true);
    // the Secret has not loaded yet: nothing is judged, nothing is written
    expect(h.watcher.readiness.notReadyReason()).toContain('waiting for Secret "oauth"');
    expect(h.client.patches).toEqual([]);

    secrets.sync([secretObject('oauth', { kapi: 'ref-s3cret-1' })]);
    await settle();
    expect(h.watcher.current().clients[0]!.secret).toBe('ref-s3cret-1');
    expect(h.watcher.readiness.notReadyReason()).toBeUndefined();

    secrets.put(secretObject('oauth', { kapi: 'ref-s3cret-2' }));
    await settle();
    expect(h.watcher.current().clients[0]!.secret).toBe('ref-s3cret-2');
    expect(h.conditions().Valid.status).toBe('True');

    secrets.remove(secretObject('oauth', {}));
    await settle();
    expect(h.watcher.current().clients[0]!.secret).toBe('ref-s3cret-2');
    expect(h.conditions().Valid.message).toContain('secretRef: Secret "oauth" not found');

    h.put(clients({ name: 'kapi', secret: 'inline-s3cret' }), 2);
    await settle();
    expect(secrets.stopped).toBe(true);
    expect(secrets.handlerCount).toBe(0);
  });

  it('when identity providers change, then they apply like the clients: their Secrets watched, an invalid one refused with the last good kept', async () => {
    const ldap = (overrides: Record<string, unknown> = {}) => ({
      name: 'corp',
      type: 'LDAP',
      mappingMethod: 'auto',
      ldap: {
        url: 'ldaps://ldap.example.com',
        bindDN: 'cn=kapi,dc=example,dc=com',
        bindPasswordSecretRef: { name: 'ldap-bind', key: 'password' },
        userSearch: { baseDN: 'ou=people,dc=example,dc=com' },
        ...overrides,
      },
    });
    const h = await started();
    h.configs.sync([
      h.object({ ...clients({ name: 'kapi', secret: 'inline-s3cret' }), identityProviders: [ldap()] }, 1),
    ]);
    await settle();
    h.secrets('ldap-bind')!.sync([secretObject('ldap-bind', { password: 'bind-s3cret-1' })]);
    await eventually(() => h.watcher.current().identityProviders.length === 1);
    expect((h.watcher.current().identityProviders[0] as LdapProviderSettings).ldap.bindPassword).toBe('bind-s3cret-1');
    expect(h.lines.find((l) => l.message === 'configuration applied')?.identityProviders).toEqual([
      'corp (LDAP, auto)',
    ]);

    // the Secret changes: the new password applies without any change to the object
    h.secrets('ldap-bind')!.put(secretObject('ldap-bind', { password: 'bind-s3cret-2' }));
    await eventually(
      () =>
        (h.watcher.current().identityProviders[0] as LdapProviderSettings | undefined)?.ldap.bindPassword ===
        'bind-s3cret-2',
    );
    const good = h.watcher.current();

    // an invalid provider is refused with the rest: the last good snapshot stays, Valid says why
    h.put({ ...clients({ name: 'kapi', secret: 'inline-s3cret' }), identityProviders: [ldap({ url: 'ldap://h' })] }, 2);
    await settle();
    expect(h.watcher.current()).toBe(good);
    expect(h.conditions().Valid).toEqual(
      expect.objectContaining({
        status: 'False',
        message: expect.stringContaining('ldap:// sends passwords unencrypted'),
      }),
    );

    // removing the provider applies at once and stops watching its Secret
    h.put(clients({ name: 'kapi', secret: 'inline-s3cret' }), 3);
    await settle();
    expect(h.watcher.current().identityProviders).toEqual([]);
    expect(h.secrets('ldap-bind')!.stopped).toBe(true);
  });

  it('when a referenced Secret cannot be read, then after the timeout the object is invalid and says why', async () => {
    const h = await started({ secretSyncTimeoutMs: 50 });
    h.configs.sync([h.object(clients({ name: 'kapi', secretRef: { name: 'locked', key: 'k' } }), 1)]);
    await settle();
    h.secrets('locked')!.notSyncedReason = 'not synced yet (last error: HTTP 403: secrets is forbidden)';
    await eventually(() => h.conditions().Valid?.status === 'False');
    expect(h.conditions().Valid.message).toBe(
      'secretRef: Secret "locked" could not be read: not synced yet (last error: HTTP 403: secrets is forbidden)',
    );
    expect(h.watcher.readiness.notReadyReason()).toContain('could not be read');
  });

  it('when a status write fails with 500, then it is retried; with 403, it is logged once and not retried', async () => {
    const h = await started();
    h.failPatches(() => new KubeApiError(500, undefined, 'etcd unavailable'));
    h.configs.sync([h.object(clients({ name: 'kapi', secret: 'inline-s3cret' }), 1)]);
    await settle();
    expect(h.client.patches).toHaveLength(1);
    h.failPatches(undefined);
    await eventually(() => h.conditions().Valid?.status === 'True');
    expect(h.client.patches).toHaveLength(2);

    h.failPatches(() => new KubeApiError(403, undefined, 'forbidden: clusterconfigurations/status'));
    h.put(clients({ name: 'kapi', secret: 'inline-s3cret' }), 2);
    await settle();
    h.configs.put(h.stored);
    await settle();
    const failures = h.lines.filter((l) => l.message === 'writing status conditions failed' && l.level === 'warn');
    expect(failures).toEqual([
      expect.objectContaining({ code: 500, retrying: true }),
      expect.objectContaining({ code: 403, retrying: false, error: 'forbidden: clusterconfigurations/status' }),
    ]);
    const patches = h.client.patches.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(h.client.patches.length).toBe(patches);
  });

  it('when a status write conflicts (409), then it is written again without a warning', async () => {
    const h = await started();
    let conflicts = 1;
    h.failPatches(() => {
      if (conflicts-- <= 0) throw new Error('unreachable');
      return new KubeApiError(409, undefined, 'the object has been modified');
    });
    h.configs.sync([h.object(clients({ name: 'kapi', secret: 'inline-s3cret' }), 1)]);
    await settle();
    h.failPatches(undefined);
    await eventually(() => h.conditions().Valid?.status === 'True');
    expect(h.client.patches).toHaveLength(2);
    expect(h.warnings()).toEqual([]);
  });

  it('when many events arrive in one tick, then they are evaluated once', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'kapi', secret: 'inline-s3cret' }), 1)]);
    for (let generation = 2; generation <= 20; generation++) {
      h.put(clients({ name: `c${generation}`, secret: 'inline-s3cret' }), generation);
    }
    await settle();
    expect(h.changes.map((s) => s.clients[0]!.name)).toEqual(['c20']);
    expect(h.client.patches).toHaveLength(1);
  });

  it('when stopped, then its collections stop and it reports not ready', async () => {
    const h = await started();
    h.configs.sync([h.object(clients({ name: 'kapi', secretRef: { name: 'oauth', key: 'kapi' } }), 1)]);
    await settle();
    await h.watcher.stop();
    expect(h.configs.stopped).toBe(true);
    expect(h.secrets('oauth')!.stopped).toBe(true);
    expect(h.watcher.readiness.notReadyReason()).toBe('stopped');
  });
});
