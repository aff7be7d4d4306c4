/**
 * What KubeSphere 3.4's console reads before and at every page load (SPEC §16), on the sandbox and on a real
 * kube-apiserver: /kapis/version (KubeSphere's API level, kube-apiserver's version, kapi's own), the identity
 * providers and the modules its login page reads without a token, the GPU kinds with one, 404 for unknown routes of
 * the group, and the kapi-config ConfigMap every signed-in user may read.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CONSOLE_CONFIG_YAML } from '../../src/sandbox/identity-seed.js';
import { packageRoot, packageVersion } from '../../src/apidocs/documents.js';
import { startE2E, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget, itOnSandbox } from './target.js';

const CONFIG = '/kapis/config.kapi.io/v1alpha2';
const PASSWORD = 'e2e-Bootstrap-Passw0rd';
let e2e: E2E;
let token: string;
const caller = new KapiCaller();

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  const user = await e2e.createUser('console-user', PASSWORD);
  token = (await caller.login(e2e.kapiUrl, user, PASSWORD)).access_token;
});

afterAll(async () => {
  await e2e?.stop();
});

describe('the console’s bootstrap routes', () => {
  it('then /kapis/version answers without a token: KubeSphere 3.4’s API level, kube-apiserver’s version, kapi’s own', async () => {
    const version = await caller.get<Record<string, unknown>>(`${e2e.kapiUrl}/kapis/version`);
    expect(version.status).toBe(200);
    const kube = await e2e.admin.request<{ gitVersion: string }>({ path: '/version' });
    expect(version.body).toMatchObject({
      gitVersion: 'v3.4.1',
      gitMajor: '3',
      gitMinor: '4',
      kubernetes: { gitVersion: kube.gitVersion },
      kapi: { version: packageVersion(packageRoot()) },
    });
  });

  it('then configz answers without a token, every module kapi does not serve an explicit false', async () => {
    const configz = await caller.get<Record<string, boolean>>(`${e2e.kapiUrl}${CONFIG}/configs/configz`);
    expect(configz.status).toBe(200);
    expect(configz.body).toMatchObject({ kubernetes: true, multicluster: false, monitoring: false, openpitrix: false });
    expect(Object.values(configz.body).every((value) => typeof value === 'boolean')).toBe(true);
  });

  it('then configs/oauth answers without a token with the providers’ names and types, no setting or secret', async () => {
    const oauth = await caller.get<{ identityProviders: unknown[] }>(`${e2e.kapiUrl}${CONFIG}/configs/oauth`);
    expect(oauth.status).toBe(200);
    expect(Array.isArray(oauth.body.identityProviders)).toBe(true);
    expect(oauth.text).not.toMatch(/secret|password|bindPassword/i);
  });

  it('then the GPU kinds need a token (401 Status without), and are an empty list', async () => {
    const gpu = `${e2e.kapiUrl}${CONFIG}/configs/gpu/kinds`;
    expect((await caller.get(gpu)).body).toMatchObject({ kind: 'Status', code: 401 });
    const kinds = await caller.get(gpu, token);
    expect([kinds.status, kinds.body]).toEqual([200, []]);
  });

  it('then an unknown route of the group is a 404 Status, and without a token a 401 Status', async () => {
    const unknown = `${e2e.kapiUrl}${CONFIG}/configs/nothing-here`;
    expect((await caller.get(unknown, token)).body).toMatchObject({ kind: 'Status', code: 404 });
    expect((await caller.get(unknown)).body).toMatchObject({ kind: 'Status', code: 401 });
  });

  itOnSandbox('the chart installed (the sandbox seeds what it installs)')(
    'then the kapi-config ConfigMap is readable by any signed-in user through kapi, and holds clusterRole only',
    async () => {
      const answer = await caller.get<{ data: Record<string, string> }>(
        `${e2e.kapiUrl}/api/v1/namespaces/kapi-system/configmaps/kapi-config`,
        token,
      );
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual({ 'kapi.yaml': CONSOLE_CONFIG_YAML });
      expect(answer.body.data['kapi.yaml']).toMatch(/clusterRole:\s*\w+/);
    },
  );
});
