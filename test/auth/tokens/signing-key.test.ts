/**
 * The key set read and watched from a real Secret in the sandbox Kubernetes API: loads, follows every change without
 * a restart, keeps the last good set when the Secret turns bad, and never logs key material.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { SecretSigningKey } from '../../../src/auth/tokens/signing-key.js';
import { KubeClient } from '../../../src/kube/client.js';
import { connectionFor, tokenAccess, type KubeConnection } from '../../../src/kube/connection.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { capturingLogger } from '../fakes.js';

const NAMESPACE = 'kapi-system';
const SECRETS = `/api/v1/namespaces/${NAMESPACE}/secrets`;
const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64');

let sandbox: Sandbox;
let admin: KubeClient;
const connections: KubeConnection[] = [];
let secretCount = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ nodes: 1, podsPerNode: 1, crdDir: '/nonexistent' });
  admin = client(sandbox.adminToken);
});

afterAll(async () => {
  for (const connection of connections) connection.close();
  await sandbox.stop();
});

function client(token: string): KubeClient {
  const connection = connectionFor(tokenAccess(sandbox.url, token), 'sandbox');
  connections.push(connection);
  return new KubeClient(connection);
}

function newSecretName(): string {
  return `jwt-${++secretCount}`;
}

async function putSecret(name: string, data: Record<string, string>, create = false): Promise<void> {
  await admin.request({
    method: create ? 'POST' : 'PUT',
    path: create ? SECRETS : `${SECRETS}/${name}`,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NAMESPACE }, type: 'Opaque', data },
  });
}

function watcher(name: string, options: { allowGenerated?: boolean; namespace?: string } = {}) {
  const { logger, lines } = capturingLogger();
  const keys = new SecretSigningKey({
    client: client(sandbox.serviceAccountToken),
    logger,
    secret: { namespace: options.namespace ?? NAMESPACE, name },
    allowGenerated: options.allowGenerated ?? false,
    startTimeoutMs: 3_000,
  });
  return { keys, lines };
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const hmac = randomBytes(48);
const ecPem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

test('when the Secret holds a key, then it is loaded and readiness passes, with no key material in the log', async () => {
  const name = newSecretName();
  await putSecret(name, { key: b64(hmac) }, true);
  const { keys, lines } = watcher(name);
  expect(keys.readiness.notReadyReason()).toBeDefined();
  await keys.start();
  try {
    expect(keys.keys()?.active.kid).toBe('key');
    expect(keys.readiness).toMatchObject({ name: 'signing-key' });
    expect(keys.readiness.notReadyReason()).toBeUndefined();
    expect(lines.join('\n')).not.toContain(b64(hmac));
  } finally {
    await keys.stop();
  }
});

test('when a key is added, made active and the old one removed, then each step applies without a restart', async () => {
  const name = newSecretName();
  await putSecret(name, { 'old.key': b64(hmac) }, true);
  const { keys, lines } = watcher(name);
  await keys.start();
  try {
    const first = keys.keys();
    expect(first?.active.kid).toBe('old');

    await putSecret(name, { 'old.key': b64(hmac), 'new.pem': b64(ecPem), active: b64('old') });
    await until(() => keys.keys()?.byKid.has('new') === true);
    expect(keys.keys()?.active.kid).toBe('old');

    await putSecret(name, { 'old.key': b64(hmac), 'new.pem': b64(ecPem), active: b64('new') });
    await until(() => keys.keys()?.active.kid === 'new');
    expect(keys.keys()?.active.algorithm).toBe('ES256');
    expect([...keys.keys()!.byKid.keys()].sort()).toEqual(['new', 'old']);

    await putSecret(name, { 'new.pem': b64(ecPem), active: b64('new') });
    await until(() => keys.keys()?.byKid.has('old') === false);
    const log = lines.join('\n');
    expect(log).toContain('token signing keys changed');
    expect(log).not.toContain(b64(hmac));
    expect(log).not.toContain(b64(ecPem));
    expect(log).not.toContain('PRIVATE KEY');
  } finally {
    await keys.stop();
  }
});

test('when the Secret turns invalid or is deleted, then the last good keys stay in use and the log says why', async () => {
  const name = newSecretName();
  await putSecret(name, { 'a.key': b64(hmac) }, true);
  const { keys, lines } = watcher(name);
  await keys.start();
  try {
    const good = keys.keys();
    await putSecret(name, { 'a.key': b64(hmac), active: b64('missing') });
    await until(() => lines.some((line) => line.includes('the last good keys stay in use')));
    expect(keys.keys()).toBe(good);
    expect(lines.join('\n')).toMatch(/names kid \\"missing\\", not in the set/);

    await admin.request({ method: 'DELETE', path: `${SECRETS}/${name}` });
    await until(() => lines.some((line) => line.includes(`Secret ${NAMESPACE}/${name} not found`)));
    expect(keys.keys()).toBe(good);
    expect(keys.readiness.notReadyReason()).toBeUndefined();
  } finally {
    await keys.stop();
  }
});

test('when the Secret is missing outside the sandbox, then readiness says so until it is created', async () => {
  const name = newSecretName();
  const { keys } = watcher(name);
  await keys.start();
  try {
    expect(keys.keys()).toBeUndefined();
    expect(keys.readiness.notReadyReason()).toMatch(/not found/);
    await putSecret(name, { key: b64(hmac) }, true);
    await until(() => keys.keys() !== undefined);
    expect(keys.readiness.notReadyReason()).toBeUndefined();
  } finally {
    await keys.stop();
  }
});

test('when the Secret is missing in the sandbox, then a random key is generated with a warning', async () => {
  const { keys, lines } = watcher(newSecretName(), { allowGenerated: true });
  await keys.start();
  try {
    expect(keys.keys()?.active.algorithm).toBe('HS256');
    expect(lines.some((line) => line.includes('"level":"warn"') && line.includes('generated in memory'))).toBe(true);
  } finally {
    await keys.stop();
  }
});

test('when kapi may not read Secrets there, then there is no key and readiness names the refusal', async () => {
  const { keys } = watcher('kapi-apiserver-jwt', { namespace: 'default' });
  await keys.start();
  try {
    expect(keys.keys()).toBeUndefined();
    expect(keys.readiness.notReadyReason()).toMatch(/403|forbidden/i);
  } finally {
    await keys.stop();
  }
});
