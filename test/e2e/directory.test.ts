/**
 * Directory accounts end to end (SPEC §14), against a real OpenLDAP (slapd on loopback, ldaps:// with its generated
 * CA) and kapi on the sandbox or the cluster KUBECONFIG names: a directory user logs in with the password grant, the
 * User appears linked to its upstream identity, the real kubectl works through kapi with RBAC granted to a directory
 * group (and loses it when the directory takes the user out of the group), a lookup provider refuses an unlinked user,
 * an injection attempt matches nobody, and a directory that is down answers 503 without counting a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDirectory, type Directory } from '../../src/sandbox/directory/directory.js';
import { Kubectl } from './forwarding-kubectl.js';
import { RUN_LABEL, deleteIgnoringMissing, startE2E, waitFor, type E2E, patchUserStatus } from './harness.js';
import { ConfigurationUnderTest } from './identity-config.js';
import { KapiCaller, DEFAULT_CLIENT, type OAuthErrorBody } from './identity-http.js';
import { assertTarget } from './target.js';
import type { TokenPair } from './client.js';

const USERS = '/apis/iam.kapi.io/v1beta1/users';
const DIRECTORY_PASSWORD = 'e2e-Directory-Passw0rd';
const PROBE_PASSWORD = 'e2e-Probe-Passw0rd-directory';

let e2e: E2E;
let directory: Directory;
let config: ConfigurationUnderTest;
let kubectl: Kubectl;
const caller = new KapiCaller();
/** The provider's name: run-scoped, so the Users it creates on a shared cluster are this run's. */
let provider: string;
let dana: string;
let danaDN: string;
let erinDN: string;
let readersDN: string;
let readers: string;

function ldapProvider(mappingMethod: 'auto' | 'lookup') {
  return {
    name: provider,
    type: 'LDAP',
    mappingMethod,
    ldap: { ...directory.providerSettings({ bindPassword: 'ldap-bind', ca: 'ldap-ca' }), timeout: '2s' },
  };
}

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

/** The same letters in Unicode's full-width forms (NFKC maps them back). */
function toFullWidth(text: string): string {
  return text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
}

function passwordGrant(username: string, password: string) {
  return caller.token<TokenPair & OAuthErrorBody>(e2e.kapiUrl, {
    grant_type: 'password',
    username,
    password,
    client_id: DEFAULT_CLIENT.id,
    client_secret: DEFAULT_CLIENT.secret,
  });
}

interface UserObject {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { email?: string; password?: string };
  status?: { failedLogins?: unknown[]; state?: string };
}

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  directory = await startDirectory();
  provider = e2e.runId;
  dana = e2e.name('dana');
  readers = e2e.name('readers');
  danaDN = await directory.addUser({ uid: dana, password: DIRECTORY_PASSWORD, mail: `${dana}@corp.e2e.test` });
  erinDN = await directory.addUser({ uid: e2e.name('erin'), password: DIRECTORY_PASSWORD });
  readersDN = await directory.addGroup(readers, [danaDN]);
  await secret('ldap-bind', { password: directory.servicePassword });
  await secret('ldap-ca', { 'ca.crt': directory.slapd.caPem });
  caller.remember('password', DIRECTORY_PASSWORD, PROBE_PASSWORD, directory.servicePassword);

  const probe = await e2e.createUser('directory-probe', PROBE_PASSWORD);
  config = new ConfigurationUnderTest(e2e.admin, e2e.configuration, caller, {
    username: probe,
    password: PROBE_PASSWORD,
  });
  await config.load();
  await config.apply({ identityProviders: [ldapProvider('auto')] }, [e2e.kapiUrl]);

  // RBAC for the directory group: read ConfigMaps in this run's namespace
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await e2e.admin.request({
    method: 'POST',
    path: `${rbac}/namespaces/${e2e.runId}/roles`,
    body: {
      metadata: { name: 'directory-readers' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    },
  });
  await e2e.admin.request({
    method: 'POST',
    path: `${rbac}/namespaces/${e2e.runId}/rolebindings`,
    body: {
      metadata: { name: 'directory-readers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'directory-readers' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: readers }],
    },
  });
  await e2e.admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${e2e.runId}/configmaps`,
    body: { metadata: { name: 'directory-visible' }, data: { hello: 'directory' } },
  });
  kubectl = Kubectl.create(e2e.kapiHttpsUrl, e2e.caFile);
}, 120_000);

afterAll(async () => {
  kubectl?.cleanup();
  if (e2e && provider) {
    const linked = await e2e.admin
      .request<{ items: UserObject[] }>({
        path: USERS,
        query: { labelSelector: `iam.kapi.io/identity-provider=${provider}` },
      })
      .catch(() => ({ items: [] }));
    for (const user of linked.items) {
      await deleteIgnoringMissing(e2e.admin, `${USERS}/${user.metadata.name}`);
      await deleteIgnoringMissing(e2e.admin, `/apis/iam.kapi.io/v1beta1/loginhistories/${user.metadata.name}`);
      await deleteIgnoringMissing(
        e2e.admin,
        `/apis/iam.kapi.io/v1alpha2/globalrolebindings/${user.metadata.name}-platform-regular`,
      );
    }
  }
  await config?.restore([e2e.kapiUrl]).catch(() => undefined);
  await directory?.stop();
  await e2e?.stop();
}, 120_000);

describe('directory logins', () => {
  let tokens: TokenPair;

  it('when a directory user logs in with the password grant, then a User linked to the directory entry appears', async () => {
    const answer = await passwordGrant(dana, DIRECTORY_PASSWORD);
    expect(answer.status).toBe(200);
    tokens = answer.body;
    caller.rememberTokens(tokens);
    const user = await e2e.admin.request<UserObject>({ path: `${USERS}/${dana}` });
    expect(user.metadata.labels).toMatchObject({ 'iam.kapi.io/identity-provider': provider });
    expect(user.metadata.annotations).toMatchObject({ 'iam.kapi.io/upstream-user-id': danaDN });
    expect(user.spec.password).toBeUndefined();
    expect(user.spec.email).toBe(`${dana}@corp.e2e.test`);
    // a new user with no role is platform-regular (SPEC §17): its binding is there before the login is answered
    const binding = await e2e.admin.request<{
      metadata: { labels: Record<string, string> };
      roleRef: { name: string };
    }>({
      path: `/apis/iam.kapi.io/v1alpha2/globalrolebindings/${dana}-platform-regular`,
    });
    expect(binding.roleRef.name).toBe('platform-regular');
    expect(binding.metadata.labels).toMatchObject({ 'iam.kapi.io/user-ref': dana });
  });

  it('when the directory user runs kubectl through kapi, then the directory group’s RoleBinding applies', async () => {
    const got = await kubectl.run(['get', 'configmaps', '-n', e2e.runId, '-o', 'name'], tokens.access_token);
    expect(got.stderr).toBe('');
    expect(got.stdout).toContain('configmap/directory-visible');
    const canList = await kubectl.run(['auth', 'can-i', 'list', 'configmaps', '-n', e2e.runId], tokens.access_token);
    expect(canList.stdout.trim()).toBe('yes');
    const elsewhere = await kubectl.run(['get', 'configmaps', '-n', 'default'], tokens.access_token);
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain(`User "${dana}" cannot list resource "configmaps"`);
  });

  it('when the directory takes the user out of the group, then the next refresh takes the rights away', async () => {
    // groupOfNames needs a member: the group keeps erin
    await directory.addMember(readersDN, erinDN);
    await directory.removeMember(readersDN, danaDN);
    const refreshed = await caller.refresh(e2e.kapiUrl, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const denied = await kubectl.run(['get', 'configmaps', '-n', e2e.runId], refreshed.body.access_token);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/forbidden/i);
    await directory.addMember(readersDN, danaDN);
    tokens = refreshed.body;
  });

  it.each([
    ['a wildcard', () => '*'],
    ['a filter injection', () => `${dana})(|(uid=*`],
    ['a prefix wildcard', () => `${dana.slice(0, 6)}*`],
    ['a NUL', () => `${dana}\u0000`],
  ])('when the login name is %s, then it matches nobody', async (_case, login) => {
    const answer = await passwordGrant(login(), DIRECTORY_PASSWORD);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'invalid_grant', error_description: 'invalid username or password' });
  });

  it('when wrong passwords come under variants of the name the directory matches, then they count on the one User', async () => {
    // slapd's uid matching ignores case, width and surrounding spaces: every variant is dana to the directory
    const variants = [` ${dana}`, `${dana.toUpperCase()}  `, toFullWidth(dana)];
    for (const variant of variants) {
      const answer = await passwordGrant(variant, 'a-wrong-password');
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('invalid_grant');
    }
    const user = await e2e.admin.request<UserObject>({ path: `${USERS}/${dana}` });
    expect(user.status?.failedLogins ?? []).toHaveLength(variants.length);
    // login records are written in batches: wait until kapi answers them, rather than for a time
    const failures = async () => {
      const records = await caller.get<{ items: Array<{ result: string }> }>(
        `${e2e.kapiUrl}/kapis/iam.kapi.io/v1beta1/users/${dana}/loginrecords`,
        tokens.access_token,
      );
      expect(records.status).toBe(200);
      return records.body.items.filter((r) => r.result === 'failure').length;
    };
    await waitFor(async () => (await failures()) >= variants.length);
    expect(await failures()).toBeGreaterThanOrEqual(variants.length);
  });

  it('when the User is locked, then a variant of its name gets 429 with the right password and with a wrong one', async () => {
    const lock = {
      state: 'AuthLimitExceeded',
      lockedUntil: new Date(Date.now() + 600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    await patchUserStatus(e2e.admin, dana, lock);
    try {
      await waitFor(async () => (await passwordGrant(dana, DIRECTORY_PASSWORD)).status === 429);
      for (const password of [DIRECTORY_PASSWORD, 'a-wrong-password']) {
        const answer = await passwordGrant(` ${dana.toUpperCase()}`, password);
        expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 429, error: 'invalid_grant' });
      }
    } finally {
      await patchUserStatus(e2e.admin, dana, { state: 'Active', lockedUntil: null, failedLogins: null });
    }
    await waitFor(async () => (await passwordGrant(dana, DIRECTORY_PASSWORD)).status === 200);
  });

  it('when the provider is lookup, then an unlinked directory user is refused until an administrator links a User', async () => {
    await config.apply({ identityProviders: [ldapProvider('lookup')] }, [e2e.kapiUrl]);
    const erin = e2e.name('erin');
    const refused = await passwordGrant(erin, DIRECTORY_PASSWORD);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    await e2e.admin
      .request({ path: `${USERS}/${erin}` })
      .then(() => {
        throw new Error('lookup created a User');
      })
      .catch((error: { code?: number }) => expect(error.code).toBe(404));

    await e2e.admin.request({
      method: 'POST',
      path: USERS,
      body: {
        apiVersion: 'iam.kapi.io/v1beta1',
        kind: 'User',
        metadata: {
          name: erin,
          labels: { 'iam.kapi.io/identity-provider': provider, [RUN_LABEL]: e2e.runId },
          annotations: { 'iam.kapi.io/upstream-user-id': erinDN },
        },
        spec: {},
      },
    });
    // the users cache may take a moment to see the new User
    await waitFor(async () => (await passwordGrant(erin, DIRECTORY_PASSWORD)).status === 200);
    await config.apply({ identityProviders: [ldapProvider('auto')] }, [e2e.kapiUrl]);
  });

  it('when the directory is down, then logins answer 503 RFC 6749 and no failure is counted', async () => {
    await directory.stop();
    for (let i = 0; i < 12; i++) {
      const answer = await passwordGrant(dana, i % 2 ? 'a-wrong-password' : DIRECTORY_PASSWORD);
      expect(answer.status).toBe(503);
      expect(answer.body.error).toBe('temporarily_unavailable');
    }
    const user = await e2e.admin.request<UserObject>({ path: `${USERS}/${dana}` });
    expect(user.status?.failedLogins ?? []).toEqual([]);
    expect(user.status?.state ?? 'Active').toBe('Active');
    // the refresh cannot ask the directory either: 503, and the session stands
    expect((await caller.refresh(e2e.kapiUrl, tokens.refresh_token)).status).toBe(503);
    expect(caller.errorAnswersInspected).toBeGreaterThan(0);
  });
});
