/**
 * The console's image lookup (the workload form's image field) on the sandbox and on real kube-apiservers, against the
 * real CNCF distribution registry: with a project's pull secret, read as the caller, an image's config (its ports)
 * and a repository's tags are answered as KubeSphere answers them; a tag the registry lacks is 404, refused
 * credentials and bad input are 400, a caller without the lookup right or the secret's is 403 — each a Status that
 * never carries the secret's password.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getJson, login } from './client.js';
import { RUN_LABEL, startE2E, type E2E } from './harness.js';
import { assertTarget } from './target.js';
import { startRegistry, type TestRegistry } from '../support/registry.js';

const PASSWORD = 'e2e-Images-password-1';
const LOOKUP = { apiGroups: ['resources.kapi.io'], resources: ['imageconfig', 'repositorytags'], verbs: ['get'] };
let e2e: E2E;
let registry: TestRegistry;
let operatorToken: string;
let blindToken: string;
let strangerToken: string;

async function pullSecret(name: string, type: string, key: string, content: unknown): Promise<void> {
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${e2e.runId}/secrets`,
    body: {
      metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
      type,
      data: { [key]: Buffer.from(JSON.stringify(content)).toString('base64') },
    },
  });
}

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  registry = await startRegistry();
  await registry.pushImage('team/web', '1.0', {
    architecture: 'amd64',
    os: 'linux',
    created: '2026-11-01T10:00:00Z',
    config: { ExposedPorts: { '80/tcp': {}, '8443/tcp': {} }, Env: ['MODE=e2e'] },
    rootfs: { type: 'layers', diff_ids: [] },
  });
  for (const tag of ['1.1', '1.2', '2.0']) await registry.pushImage('team/web', tag, { os: 'linux', config: {} });
  const auths = { [registry.host]: { username: registry.username, password: registry.password } };
  await pullSecret('registry-pull', 'kubernetes.io/dockerconfigjson', '.dockerconfigjson', { auths });
  await pullSecret('registry-wrong', 'kubernetes.io/dockerconfigjson', '.dockerconfigjson', {
    auths: { [registry.host]: { username: registry.username, password: 'e2e-not-the-password' } },
  });
  await pullSecret('other-registry', 'kubernetes.io/dockerconfigjson', '.dockerconfigjson', {
    auths: { 'quay.io': { username: 'u', password: 'e2e-quay-password' } },
  });
  await pullSecret('not-a-pull-secret', 'Opaque', 'password', 'e2e-opaque');

  const operator = await e2e.createUser('images-operator', PASSWORD);
  await e2e.grant(operator, [LOOKUP, { apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
  operatorToken = (await login(e2e.kapiUrl, operator, PASSWORD)).access_token;
  const blind = await e2e.createUser('images-blind', PASSWORD);
  await e2e.grant(blind, [LOOKUP]);
  blindToken = (await login(e2e.kapiUrl, blind, PASSWORD)).access_token;
  const stranger = await e2e.createUser('images-stranger', PASSWORD);
  strangerToken = (await login(e2e.kapiUrl, stranger, PASSWORD)).access_token;
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await e2e?.stop();
});

interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
}

const lookup = <T = Status>(what: 'imageconfig' | 'repositorytags', query: string, token = operatorToken) =>
  getJson<T>(`${e2e.kapiUrl}/kapis/resources.kapi.io/v1alpha3/namespaces/${e2e.runId}/${what}?${query}`, token);

describe('when a project member looks an image up with the project’s pull secret', () => {
  it('then its config is answered, as the console reads it (its exposed ports)', async () => {
    const answer = await lookup<{ config: { ExposedPorts: Record<string, unknown>; Env: string[] }; created: string }>(
      'imageconfig',
      `image=${registry.host}/team/web:1.0&secret=registry-pull`,
    );
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.config.ExposedPorts)).toEqual(['80/tcp', '8443/tcp']);
    expect(answer.body.config.Env).toEqual(['MODE=e2e']);
    expect(answer.body.created).toBe('2026-11-01T10:00:00Z');
  });

  it('then the repository’s tags come newest-looking first, paged', async () => {
    const all = await lookup<{ registry: string; repository: string; tags: string[]; total: number }>(
      'repositorytags',
      `repository=${registry.host}/team/web&secret=registry-pull`,
    );
    expect(all).toEqual({
      status: 200,
      body: { registry: registry.host, repository: 'team/web', tags: ['2.0', '1.2', '1.1', '1.0'], total: 4 },
    });
    const second = await lookup<{ tags: string[]; total: number }>(
      'repositorytags',
      `repository=${registry.host}/team/web&secret=registry-pull&page=2&limit=3`,
    );
    expect(second.body).toMatchObject({ tags: ['1.0'], total: 4 });
  });
});

describe('when the lookup cannot be answered', () => {
  it('then a tag the registry lacks is 404, naming the registry’s code', async () => {
    const answer = await lookup('imageconfig', `image=${registry.host}/team/web:9.9&secret=registry-pull`);
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    expect(answer.body.message).toContain('MANIFEST_UNKNOWN');
  });

  it('then refused or missing credentials are 400, not 401, and no password is in the answer', async () => {
    const wrong = await lookup('imageconfig', `image=${registry.host}/team/web:1.0&secret=registry-wrong`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain(`${registry.host} refused`);
    expect(JSON.stringify(wrong.body)).not.toContain('e2e-not-the-password');
    // a secret with no entry for this registry gives none of its credentials: the lookup goes anonymous
    const other = await lookup('imageconfig', `image=${registry.host}/team/web:1.0&secret=other-registry`);
    expect(other.body).toMatchObject({ code: 400, message: `${registry.host} needs credentials: name a pull secret` });
    expect(JSON.stringify(other.body)).not.toContain('e2e-quay-password');
  });

  it('then bad input is 400: no image, a malformed one, a secret that is no pull secret, bad paging', async () => {
    expect((await lookup('imageconfig', '')).body).toMatchObject({ code: 400, message: 'image is required' });
    expect((await lookup('imageconfig', 'image=Bad:Image:x')).status).toBe(400);
    const opaque = await lookup('imageconfig', `image=${registry.host}/team/web:1.0&secret=not-a-pull-secret`);
    expect(opaque.body).toMatchObject({
      code: 400,
      message: 'secret "not-a-pull-secret" is of type Opaque, not an image pull secret',
    });
    expect(JSON.stringify(opaque.body)).not.toContain('e2e-opaque');
    expect((await lookup('repositorytags', `repository=${registry.host}/team/web:1.0`)).status).toBe(400);
    expect((await lookup('repositorytags', `repository=${registry.host}/team/web&limit=0`)).status).toBe(400);
  });

  it('then a secret that is not there is 404', async () => {
    const answer = await lookup('imageconfig', `image=${registry.host}/team/web:1.0&secret=no-such-secret`);
    expect(answer.body).toMatchObject({ code: 404, reason: 'NotFound', message: 'secrets "no-such-secret" not found' });
  });
});

describe('when the caller lacks a right', () => {
  it('then without the lookup right it is 403 before any registry is asked', async () => {
    const answer = await lookup('imageconfig', `image=${registry.host}/team/web:1.0`, strangerToken);
    expect(answer.body).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(answer.body.message).toContain('imageconfig');
  });

  it('then one who may not read the secret cannot use it: 403 from kube-apiserver, naming the secret', async () => {
    const answer = await lookup('imageconfig', `image=${registry.host}/team/web:1.0&secret=registry-pull`, blindToken);
    expect(answer.body).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(answer.body.message).toContain('registry-pull');
    // without a secret the same caller gets the registry's own answer
    const anonymous = await lookup('imageconfig', `image=${registry.host}/team/web:1.0`, blindToken);
    expect(anonymous.body).toMatchObject({ code: 400 });
  });
});
