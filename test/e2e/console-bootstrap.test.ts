/**
 * What KubeSphere 3.4's console reads before and at every page load (SPEC §16), on the sandbox and on a real
 * kube-apiserver: /kapis/version (KubeSphere's API level, kube-apiserver's version, kapi's own), the identity
 * providers and the modules its login page reads without a token, the GPU kinds with one, 404 for unknown routes of
 * the group, and the kapi-config ConfigMap every signed-in user may read.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CONSOLE_CONFIG_YAML } from '../../src/sandbox/identity-seed.js';
import { packageRoot, packageVersion } from '../../src/apidocs/documents.js';
import { bindGlobalRole, deleteIgnoringMissing, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget, itOnSandbox } from './target.js';

const CONFIG = '/kapis/config.kapi.io/v1alpha2';
const PASSWORD = 'e2e-Bootstrap-Passw0rd';
let e2e: E2E;
let token: string;
let user: string;
let lister: string;
let listerToken: string;
const caller = new KapiCaller();

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  user = await e2e.createUser('console-user', PASSWORD);
  token = (await caller.login(e2e.kapiUrl, user, PASSWORD)).access_token;
  lister = await e2e.createUser('workspace-lister', PASSWORD);
  await e2e.grant(lister, [{ apiGroups: ['tenant.kapi.io'], resources: ['workspacetemplates'], verbs: ['list'] }]);
  listerToken = (await caller.login(e2e.kapiUrl, lister, PASSWORD)).access_token;
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

  it('then configz answers without a token: logging and events on, every module kapi does not serve an explicit false', async () => {
    const configz = await caller.get<Record<string, boolean>>(`${e2e.kapiUrl}${CONFIG}/configs/configz`);
    expect(configz.status).toBe(200);
    expect(configz.body).toMatchObject({
      kubernetes: true,
      logging: true,
      events: true,
      auditing: false,
      multicluster: false,
      monitoring: false,
      openpitrix: false,
    });
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

describe('the reads of every page load: the user, its menus, its workspaces', () => {
  const IAM = '/kapis/iam.kapi.io/v1alpha2';
  const TENANT = '/kapis/tenant.kapi.io/v1alpha3';

  it('then users read themselves in KubeSphere’s shape (no hash), with no platform role until one is bound', async () => {
    const me = await caller.get<{
      apiVersion: string;
      metadata: { name: string; annotations?: Record<string, string> };
    }>(`${e2e.kapiUrl}${IAM}/users/${user}`, token);
    expect(me.status).toBe(200);
    expect(me.body.apiVersion).toBe('iam.kapi.io/v1alpha2');
    expect(me.body.metadata.name).toBe(user);
    expect(me.body.metadata.annotations?.['iam.kapi.io/globalrole']).toBeUndefined();
    expect(me.text).not.toMatch(/\$2[aby]\$/);
    expect((await caller.get(`${e2e.kapiUrl}${IAM}/users/${user}/globalroles`, token)).body).toEqual([]);
    expect((await caller.get(`${e2e.kapiUrl}${IAM}/clustermembers/${user}/clusterroles`, token)).body).toEqual([]);
  });

  it('then another user’s reads are 403 Status, and every read 401 without a token', async () => {
    for (const path of [`users/${lister}`, `users/${lister}/globalroles`, `clustermembers/${lister}/clusterroles`]) {
      expect((await caller.get(`${e2e.kapiUrl}${IAM}/${path}`, token)).body).toMatchObject({
        kind: 'Status',
        code: 403,
      });
      expect((await caller.get(`${e2e.kapiUrl}${IAM}/${path}`)).body).toMatchObject({ kind: 'Status', code: 401 });
    }
  });

  it('then a platform role bound to the user shows in its user and its menus’ templates', async () => {
    const binding = await bindGlobalRole(e2e.admin, user, 'platform-self-provisioner');
    try {
      await waitFor(async () => {
        const templates = await caller.get<{ metadata: { name: string; annotations: Record<string, string> } }[]>(
          `${e2e.kapiUrl}${IAM}/users/${user}/globalroles`,
          token,
        );
        return templates.body.length === 1 && templates.body[0]!.metadata.name === 'role-template-create-workspaces';
      });
      const me = await caller.get<{ metadata: { annotations?: Record<string, string> } }>(
        `${e2e.kapiUrl}${IAM}/users/${user}`,
        token,
      );
      expect(me.body.metadata.annotations?.['iam.kapi.io/globalrole']).toBe('platform-self-provisioner');
    } finally {
      await deleteIgnoringMissing(e2e.admin, binding);
    }
  });

  it('then the workspace list is everyone’s to ask, filtered: all for one who may list them, none for a stranger', async () => {
    type Page = { items: { metadata: { name: string } }[]; totalItems: number };
    await waitFor(
      async () =>
        (await caller.get<Page>(`${e2e.kapiUrl}${TENANT}/workspacetemplates?limit=10`, listerToken)).body.items?.some(
          (ws) => ws.metadata.name === 'system-workspace',
        ) ?? false,
    );
    const mine = await caller.get<Page>(`${e2e.kapiUrl}${TENANT}/workspacetemplates?limit=10`, token);
    expect([mine.status, mine.body.totalItems]).toEqual([200, 0]);
    const v1alpha2 = await caller.get<Page>(`${e2e.kapiUrl}/kapis/tenant.kapi.io/v1alpha2/workspaces`, listerToken);
    expect(v1alpha2.body.items.map((ws) => ws.metadata.name)).toContain('system-workspace');
    const detail = `${e2e.kapiUrl}${TENANT}/workspacetemplates/system-workspace`;
    expect((await caller.get(detail, listerToken)).body).toMatchObject({ kind: 'Status', code: 403 });
  });

  it('then the system namespaces are in system-workspace', async () => {
    await waitFor(async () => {
      const namespace = await e2e.admin.request<{ metadata: { labels?: Record<string, string> } }>({
        path: '/api/v1/namespaces/kube-system',
      });
      return namespace.metadata.labels?.['kapi.io/workspace'] === 'system-workspace';
    });
  });
});
