import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Deployment, V1Secret } from '@kubernetes/client-node';
import bcrypt from 'bcrypt';
import { keySetFromSecretData } from '../../src/auth/tokens/key-set.js';
import { startFakeKubeApi } from './fake-kube-api.js';
import { findObject, objectsOfKind, RELEASE, NAMESPACE, renderChart, setValues, type KubeObject } from './helm.js';

interface User extends KubeObject {
  spec: { email: string; password?: string; groups?: string[] };
}

const decode = (value: string | undefined): Buffer => Buffer.from(value ?? '', 'base64');
const signingKey = (objects: KubeObject[]) => decode(findObject<V1Secret>(objects, 'Secret', 'kapi-apiserver-jwt').data?.key);
const adminPassword = (objects: KubeObject[]) =>
  decode(findObject<V1Secret>(objects, 'Secret', 'kapi-admin').data?.password).toString('utf8');
/** The admin's hash, from its password Secret (the User holds none). */
const adminHash = (objects: KubeObject[]) =>
  decode(findObject<V1Secret>(objects, 'Secret', 'password-admin').data?.bcrypt).toString('utf8');

/** The set as kapi-apiserver would load it from the Secret. */
function loadedKeys(data: Record<string, string>) {
  const result = keySetFromSecretData(data, 'chart');
  if ('problems' in result) throw new Error(result.problems.join('; '));
  return { active: result.keys.active.kid, algorithm: result.keys.active.algorithm, kids: [...result.keys.byKid.keys()].sort() };
}

describe('chart secrets at the first install', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await renderChart();
  });

  test('when installed, then the signing key Secret holds 48 random bytes and survives helm uninstall', () => {
    const secret = findObject<V1Secret>(objects, 'Secret', 'kapi-apiserver-jwt');
    expect(secret.metadata!.namespace).toBe('kapi-system');
    expect(signingKey(objects)).toHaveLength(48);
    expect(secret.metadata!.annotations).toMatchObject({ 'helm.sh/resource-policy': 'keep' });
  });

  test('when installed, then kapi-admin holds a random password, password-admin a bcrypt hash of exactly it, and the User none', async () => {
    const password = adminPassword(objects);
    expect(password).toMatch(/^[A-Za-z0-9]{24}$/);
    const user = findObject<User>(objects, 'User', 'admin');
    expect(user.apiVersion).toBe('iam.kapi.io/v1beta1');
    expect(user.metadata.namespace).toBeUndefined();
    expect(user.spec.email).toBe('admin@kapi.io');
    expect(user.spec).not.toHaveProperty('password');
    const stored = findObject<V1Secret>(objects, 'Secret', 'password-admin');
    expect(stored.metadata!.namespace).toBe('kapi-system');
    expect(stored.type).toBe('iam.kapi.io/password');
    expect(stored.metadata!.labels).toMatchObject({ 'iam.kapi.io/password': 'bcrypt' });
    expect(stored.metadata!.annotations).toMatchObject({ 'iam.kapi.io/user': 'admin' });
    const hash = adminHash(objects);
    expect(hash).toMatch(/^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/);
    expect(hash).not.toContain(password);
    await expect(bcrypt.compare(password, hash)).resolves.toBe(true);
    await expect(bcrypt.compare(`${password}x`, hash)).resolves.toBe(false);
    expect(findObject<V1Secret>(objects, 'Secret', 'kapi-admin').metadata!.annotations).toMatchObject({
      'helm.sh/resource-policy': 'keep',
    });
  });

  test('when two installs are rendered, then their signing keys and admin passwords differ', async () => {
    const other = await renderChart();
    expect(signingKey(other).equals(signingKey(objects))).toBe(false);
    expect(adminPassword(other)).not.toBe(adminPassword(objects));
  });

  test('when admin.email and admin.groups are set, then the admin User carries them', async () => {
    const rendered = await renderChart(setValues({ 'admin.email': 'ops@example.com', 'admin.groups': '{platform-admins}' }));
    expect(findObject<User>(rendered, 'User', 'admin').spec).toMatchObject({ email: 'ops@example.com', groups: ['platform-admins'] });
  });

  test('when generateSecrets=false, then no Secret and no User are rendered, and the Deployment still names the key', async () => {
    const rendered = await renderChart(setValues({ generateSecrets: false }));
    expect(objectsOfKind(rendered, 'Secret')).toEqual([]);
    expect(objectsOfKind(rendered, 'User')).toEqual([]);
    const container = findObject<V1Deployment>(rendered, 'Deployment', 'kapi-apiserver').spec!.template.spec!.containers[0]!;
    expect(container.env).toContainEqual({ name: 'KAPI_SIGNING_KEY_SECRET', value: 'kapi-system/kapi-apiserver-jwt' });
  });

  test.each([
    { algorithm: 'ES256', header: 'EC PRIVATE KEY' },
    { algorithm: 'RS256', header: 'RSA PRIVATE KEY' },
  ])('when signingKey.algorithm=$algorithm, then the Secret holds one such key, active, that kapi loads', async ({ algorithm, header }) => {
    const rendered = await renderChart(setValues({ 'signingKey.algorithm': algorithm }));
    const data = findObject<V1Secret>(rendered, 'Secret', 'kapi-apiserver-jwt').data!;
    const kid = decode(data.active).toString('utf8');
    expect(kid).toMatch(new RegExp(`^${algorithm.toLowerCase()}-\\d{14}$`));
    expect(Object.keys(data).sort()).toEqual(['active', `${kid}.pem`]);
    expect(decode(data[`${kid}.pem`]).toString('utf8')).toContain(`BEGIN ${header}`);
    expect(loadedKeys(data)).toEqual({ active: kid, algorithm, kids: [kid] });
  });

  test('when oidc.issuerURL is set, then the Deployment passes it as KAPI_ISSUER_URL', async () => {
    const rendered = await renderChart(setValues({ 'oidc.issuerURL': 'https://kapi.example.com' }));
    const container = findObject<V1Deployment>(rendered, 'Deployment', 'kapi-apiserver').spec!.template.spec!.containers[0]!;
    expect(container.env).toContainEqual({ name: 'KAPI_ISSUER_URL', value: 'https://kapi.example.com' });
  });

  test('when admin.create=false, then there is no admin User or password, but the signing key (and the webhook’s certificate) are still made', async () => {
    const rendered = await renderChart(setValues({ 'admin.create': false }));
    expect(objectsOfKind(rendered, 'User')).toEqual([]);
    expect(objectsOfKind<V1Secret>(rendered, 'Secret').map((secret) => secret.metadata!.name).sort()).toEqual([
      'kapi-apiserver-jwt',
      'kapi-apiserver-webhook-tls',
    ]);
  });
});

/**
 * An upgrade: `helm template --dry-run=server` runs the chart's `lookup`s against a cluster that already holds the
 * objects of an earlier install (owned by the release, as Helm requires to take them over).
 */
describe('chart secrets on upgrade', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kapi-chart-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function owned<T extends KubeObject>(object: T): T {
    const metadata = {
      ...object.metadata,
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': NAMESPACE },
    };
    return { ...object, metadata };
  }
  const keySecret = (key: Buffer) =>
    owned({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kapi-apiserver-jwt', namespace: NAMESPACE }, data: { key: key.toString('base64') } });
  const passwordSecret = (password: string) =>
    owned({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kapi-admin', namespace: NAMESPACE },
      data: { password: Buffer.from(password).toString('base64') },
    });
  /** The admin User; `hash`: as a chart older than the password Secrets left it, its hash in the object. */
  const adminUser = (hash?: string) =>
    owned({
      apiVersion: 'iam.kapi.io/v1beta1',
      kind: 'User',
      metadata: { name: 'admin', uid: 'admin-uid' },
      spec: { email: 'admin@kapi.io', ...(hash && { password: hash }) },
    });
  const hashSecret = (hash: string) =>
    owned({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'password-admin', namespace: NAMESPACE },
      data: { bcrypt: Buffer.from(hash).toString('base64') },
    });

  async function upgradeAgainst(existing: KubeObject[]): Promise<KubeObject[]> {
    const api = await startFakeKubeApi(existing, dir);
    try {
      return await renderChart(['--dry-run=server', '--disable-openapi-validation', '--kubeconfig', api.kubeconfig]);
    } finally {
      await api.close();
    }
  }

  test('when the key, the admin Secret, its password Secret and the User exist, then all are reused and a changed password is not reset', async () => {
    const key = randomBytes(48);
    const changedPasswordHash = await bcrypt.hash('the-password-the-admin-chose', 4);
    const rendered = await upgradeAgainst([
      keySecret(key),
      passwordSecret('initial-password'),
      hashSecret(changedPasswordHash),
      adminUser(),
    ]);
    expect(signingKey(rendered).equals(key)).toBe(true);
    expect(adminPassword(rendered)).toBe('initial-password');
    expect(adminHash(rendered)).toBe(changedPasswordHash);
    // bound to that User
    expect(findObject<V1Secret>(rendered, 'Secret', 'password-admin').metadata!.annotations).toMatchObject({
      'iam.kapi.io/user-uid': 'admin-uid',
    });
  });

  test('when a chart older than the password Secrets left the hash in the User, then that hash moves to password-admin and out of the User', async () => {
    const changedPasswordHash = await bcrypt.hash('the-password-the-admin-chose', 4);
    const rendered = await upgradeAgainst([passwordSecret('initial-password'), adminUser(changedPasswordHash)]);
    expect(adminHash(rendered)).toBe(changedPasswordHash);
    expect(findObject<User>(rendered, 'User', 'admin').spec).not.toHaveProperty('password');
  });

  test('when the key set was rotated with kubectl, then an upgrade keeps every entry exactly as it is', async () => {
    const data = {
      key: randomBytes(48).toString('base64'),
      'next.key': randomBytes(48).toString('base64'),
      active: Buffer.from('next').toString('base64'),
    };
    const rendered = await upgradeAgainst([{ ...keySecret(randomBytes(48)), data }]);
    expect(findObject<V1Secret>(rendered, 'Secret', 'kapi-apiserver-jwt').data).toEqual(data);
  });

  test('when an upgrade comes between rotation steps 1 and 2 (a new key, no active), then the Secret is kept as it is', async () => {
    const data = {
      key: randomBytes(48).toString('base64'),
      '20261125.key': randomBytes(48).toString('base64'),
    };
    const rendered = await upgradeAgainst([{ ...keySecret(randomBytes(48)), data }]);
    expect(findObject<V1Secret>(rendered, 'Secret', 'kapi-apiserver-jwt').data).toEqual(data);
  });

  test('when signingKey.algorithm changes on upgrade, then a new key of it is added and active, the old one kept', async () => {
    const key = randomBytes(48);
    const api = await startFakeKubeApi([keySecret(key)], dir);
    let rendered: KubeObject[];
    try {
      rendered = await renderChart([
        '--dry-run=server',
        '--disable-openapi-validation',
        '--kubeconfig',
        api.kubeconfig,
        ...setValues({ 'signingKey.algorithm': 'ES256' }),
      ]);
    } finally {
      await api.close();
    }
    const data = findObject<V1Secret>(rendered, 'Secret', 'kapi-apiserver-jwt').data!;
    expect(decode(data.key).equals(key)).toBe(true);
    const kid = decode(data.active).toString('utf8');
    expect(loadedKeys(data)).toEqual({ active: kid, algorithm: 'ES256', kids: ['key', kid].sort() });
  });

  test('when the admin Secret exists but the User was deleted, then the new User gets a hash of the kept password', async () => {
    const rendered = await upgradeAgainst([passwordSecret('initial-password')]);
    expect(adminPassword(rendered)).toBe('initial-password');
    await expect(bcrypt.compare('initial-password', adminHash(rendered))).resolves.toBe(true);
  });

  test('when the admin Secret was deleted but the User is left, then a new password is made and the User follows it', async () => {
    const oldHash = await bcrypt.hash('forgotten-password', 4);
    const rendered = await upgradeAgainst([adminUser(oldHash)]);
    const password = adminPassword(rendered);
    expect(password).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(adminHash(rendered)).not.toBe(oldHash);
    await expect(bcrypt.compare(password, adminHash(rendered))).resolves.toBe(true);
  });
});
