/**
 * Single sign-on through an upstream OpenID Connect provider, end to end, in real headless Chromium: a real certified
 * OpenID provider (oidc-provider) on loopback HTTPS with a CA of its own is configured as an identity provider of type
 * OIDC (client secret and CA from Secrets); a user clicks its button on kapi's login page, signs in on the provider's
 * page, comes back through /oauth/callback/{idp}, and the application gets a code whose tokens work on /kapis and,
 * through RBAC bound to the provider's group, on /api. On the sandbox or the cluster KUBECONFIG names.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { pkce } from '../auth/browser/browser-client.js';
import { startOidcTestProvider, type OidcTestProvider } from '../support/oidc-test-provider.js';
import { startCallbackServer, startChromium, type CallbackServer, type Chromium } from './chromium.js';
import { assertTarget } from './forwarding-target.js';
import { E2E_CONSOLE, RUN_LABEL, deleteIgnoringMissing, startE2E, type E2E } from './harness.js';
import { ConfigurationUnderTest } from './identity-config.js';
import { KapiCaller } from './identity-http.js';

const USERS = '/apis/iam.kapi.io/v1beta1/users';
const UPSTREAM_PASSWORD = 'e2e-Upstream-passw0rd';
const PROBE_PASSWORD = 'e2e-Probe-Passw0rd-upstream';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let e2e: E2E;
let op: OidcTestProvider;
let chromium: Chromium;
let app: CallbackServer;
let config: ConfigurationUnderTest;
/** Run-scoped names: the provider (so the Users it creates are this run's), the upstream user and group. */
let provider: string;
let ursula: string;
let group: string;
const caller = new KapiCaller();
const elsewhere: string[] = [];

async function secret(name: string, data: Record<string, string>): Promise<void> {
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${e2e.runId}/secrets`,
    body: {
      metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
      type: 'Opaque',
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    },
  });
}

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  provider = `${e2e.runId}-sso`;
  ursula = e2e.name('ursula');
  group = e2e.name('sre');
  op = await startOidcTestProvider({ redirectUris: [`${e2e.kapiUrl}/oauth/callback/${provider}`] });
  op.accounts.set(ursula, { password: UPSTREAM_PASSWORD, email: `${ursula}@corp.e2e.test`, groups: [group] });
  await secret('sso-client', { secret: op.clientSecret, 'ca.crt': op.caPem });
  caller.remember('client secret', op.clientSecret);

  const probe = await e2e.createUser('upstream-probe', PROBE_PASSWORD);
  config = new ConfigurationUnderTest(e2e.admin, e2e.configuration, caller, {
    username: probe,
    password: PROBE_PASSWORD,
  });
  await config.load();
  await config.apply(
    {
      identityProviders: [
        {
          name: provider,
          type: 'OIDC',
          mappingMethod: 'auto',
          groupPrefix: 'corp:',
          oidc: {
            issuer: op.issuer,
            clientID: op.clientId,
            clientSecretRef: { name: 'sso-client', key: 'secret' },
            caSecretRef: { name: 'sso-client', key: 'ca.crt' },
            // this provider releases the groups claim for the groups scope (Dex, Okta); Keycloak's mapper needs none
            scopes: ['openid', 'profile', 'email', 'groups'],
            groupsClaim: 'groups',
            displayName: 'Corp SSO',
          },
        },
      ],
    },
    [e2e.kapiUrl],
  );

  // RBAC for the provider's group (as kube-apiserver sees it, prefixed): list nodes and namespaces
  const role = e2e.name('corp-sre');
  await e2e.admin.request({
    method: 'POST',
    path: `${RBAC}/clusterroles`,
    body: {
      metadata: { name: role, labels: { [RUN_LABEL]: e2e.runId } },
      rules: [{ apiGroups: [''], resources: ['nodes', 'namespaces'], verbs: ['get', 'list'] }],
    },
  });
  await e2e.admin.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: {
      metadata: { name: role, labels: { [RUN_LABEL]: e2e.runId } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `corp:${group}` }],
    },
  });

  app = await startCallbackServer();
  // the browser trusts the provider's private CA as an organization's machines would; kapi trusts it through
  // caSecretRef alone
  chromium = await startChromium({ acceptCertificates: true });
  const allowed = [new URL(e2e.kapiUrl).origin, new URL(op.issuer).origin, `http://127.0.0.1:${app.port}`];
  await chromium.context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (allowed.includes(url.origin)) return route.continue();
    elsewhere.push(url.href);
    return route.abort();
  });
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  if (e2e && provider) {
    const linked = await e2e.admin
      .request<{ items: { metadata: { name: string } }[] }>({
        path: USERS,
        query: { labelSelector: `iam.kapi.io/identity-provider=${provider}` },
      })
      .catch(() => ({ items: [] }));
    for (const user of linked.items) await deleteIgnoringMissing(e2e.admin, `${USERS}/${user.metadata.name}`);
    const role = e2e.name('corp-sre');
    await deleteIgnoringMissing(e2e.admin, `${RBAC}/clusterrolebindings/${role}`);
    await deleteIgnoringMissing(e2e.admin, `${RBAC}/clusterroles/${role}`);
  }
  await config?.restore([e2e.kapiUrl]).catch(() => undefined);
  await op?.close();
  await e2e?.stop();
}, 120_000);

const redirectUri = () => `http://127.0.0.1:${app.port}/console/callback`;

function authorizeUrl(challenge: string): string {
  return `${e2e.kapiUrl}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: E2E_CONSOLE.id,
    redirect_uri: redirectUri(),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'openid profile email groups',
    state: 'sso-state',
    nonce: 'sso-nonce',
  }).toString()}`;
}

async function read(path: string, token: string): Promise<number> {
  const res = await fetch(`${e2e.kapiUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

describe('when a user signs in through the organization’s OpenID Connect provider', () => {
  let page: Page;

  it('then a wrong password at the provider keeps them there, and kapi creates no User', async () => {
    page = await chromium.context.newPage();
    await page.goto(authorizeUrl(pkce().challenge));
    await page.getByRole('link', { name: 'Continue with Corp SSO' }).click();
    await page.waitForURL(`${op.issuer}/interaction/**`);
    await page.getByLabel('Upstream login').fill(ursula);
    await page.getByLabel('Upstream password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in upstream' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Invalid login or password.');
    const users = await e2e.admin.request<{ items: unknown[] }>({
      path: USERS,
      query: { labelSelector: `iam.kapi.io/identity-provider=${provider}` },
    });
    expect(users.items).toEqual([]);
  }, 60_000);

  it('then the application gets a code whose tokens carry the provider’s group, and work on /kapis and /api', async () => {
    const { verifier, challenge } = pkce();
    await page.goto(authorizeUrl(challenge));
    expect(new URL(page.url()).pathname).toBe('/oauth/login');
    await page.getByRole('link', { name: 'Continue with Corp SSO' }).click();
    await page.waitForURL(`${op.issuer}/interaction/**`);
    await page.getByLabel('Upstream login').fill(ursula);
    await page.getByLabel('Upstream password').fill(UPSTREAM_PASSWORD);
    await Promise.all([
      page.waitForURL(`${redirectUri()}?**`),
      page.getByRole('button', { name: 'Sign in upstream' }).click(),
    ]);
    const back = app.received.at(-1)!;
    expect(back.params.get('state')).toBe('sso-state');
    const res = await fetch(`${e2e.kapiUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.params.get('code')!,
        redirect_uri: redirectUri(),
        code_verifier: verifier,
        client_id: E2E_CONSOLE.id,
        client_secret: E2E_CONSOLE.secret,
      }),
    });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as { access_token: string; id_token: string };
    caller.rememberTokens({ access_token: tokens.access_token });
    const idToken = JSON.parse(Buffer.from(tokens.id_token.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(idToken).toMatchObject({ aud: E2E_CONSOLE.id, nonce: 'sso-nonce', groups: [`corp:${group}`] });
    expect(await read('/kapis/resources.kapi.io/v1alpha3/nodes?limit=1', tokens.access_token)).toBe(200);
    expect(await read('/api/v1/namespaces', tokens.access_token)).toBe(200);

    const users = await e2e.admin.request<{
      items: { metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> } }[];
    }>({ path: USERS, query: { labelSelector: `iam.kapi.io/identity-provider=${provider}` } });
    expect(users.items).toHaveLength(1);
    expect(users.items[0]!.metadata.annotations['iam.kapi.io/upstream-user-id']).toBe(ursula);
    expect(elsewhere).toEqual([]);
  }, 60_000);

  it('then the next application request in that browser needs no sign-in, here or at the provider', async () => {
    const before = op.logins.length;
    await page.goto(authorizeUrl(pkce().challenge));
    expect(page.url()).toMatch(new RegExp(`^${redirectUri()}\\?code=`));
    expect(op.logins.length).toBe(before);
  }, 60_000);
});
