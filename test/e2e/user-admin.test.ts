/**
 * Users administered through kapi (SPEC §17), on the sandbox and on real kube-apiservers: created with a password
 * kapi hashes, given a platform role only by one who holds what it grants, edited, disabled, deleted with their
 * bindings and sessions; every refusal a Kubernetes Status naming its rule, none carrying a password or hash.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  bindGlobalRole,
  deleteIgnoringMissing,
  ensurePlatformObjects,
  rawRequest,
  startE2E,
  waitFor,
  type E2E,
} from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Admin-Passw0rd';
const DAVE_PASSWORD = 'Dave-e2e-Passw0rd';
const KAPIS = '/kapis/iam.kapi.io/v1alpha2';
const IAM = '/apis/iam.kapi.io/v1alpha2';
let e2e: E2E;
let administrator: string;
let adminToken: string;
let manager: string;
let managerToken: string;
let dave: string;
const made: string[] = [];
const caller = new KapiCaller();

interface Answer {
  status: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A call to kapi as `token`'s user; no answer may carry a password or a bcrypt hash. */
async function send(method: string, path: string, token: string, body?: unknown, contentType = 'application/json') {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': contentType }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  for (const secret of [PASSWORD, DAVE_PASSWORD, 'New-Dave-Passw0rd', 'Sh0rt']) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/\$2[aby]\$\d\d\$/);
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined } as Answer;
}

const newUser = (name: string, extra: { role?: string; email?: string; password?: string } = {}) => ({
  apiVersion: 'iam.kapi.io/v1alpha2',
  kind: 'User',
  metadata: {
    name,
    annotations: {
      ...(extra.role ? { 'iam.kapi.io/globalrole': extra.role } : {}),
      'kapi.io/description': 'made by the user-admin suite',
      'iam.kapi.io/uninitialized': 'true',
    },
  },
  spec: { email: extra.email ?? `${name}@example.com`, password: extra.password ?? DAVE_PASSWORD },
});

/** What kube-apiserver itself decides for `user` (a SubjectAccessReview by the cluster's administrator). */
async function kubeAllows(user: string, verb: string, resource: string): Promise<boolean> {
  const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, groups: ['system:authenticated'], resourceAttributes: { verb, resource, group: '' } },
    },
  });
  return review.status.allowed === true;
}

/**
 * Waits until kapi's watch of Users has what kube-apiserver holds now for `name` (logins are answered from it: a
 * password or state changed a moment ago counts once the watch has it). Its resourceVersion or a later one.
 */
async function kapiSees(name: string): Promise<void> {
  const stored = await e2e.admin.request<{ metadata: { resourceVersion: string } }>({
    path: `/apis/iam.kapi.io/v1beta1/users/${name}`,
  });
  const wanted = BigInt(stored.metadata.resourceVersion);
  await waitFor(async () => {
    const seen = (await send('GET', `${KAPIS}/users/${name}`, adminToken)).body?.metadata?.resourceVersion;
    return typeof seen === 'string' && BigInt(seen) >= wanted;
  });
}

async function labelledBindings(user: string): Promise<string[]> {
  const listed = await e2e.admin.request<{ items: { metadata: { name: string } }[] }>({
    path: `${IAM}/globalrolebindings`,
    query: { labelSelector: `iam.kapi.io/user-ref=${user}` },
  });
  return listed.items.map((item) => item.metadata.name);
}

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  await ensurePlatformObjects(e2e.admin);
  administrator = await e2e.createUser('iam-admin', PASSWORD);
  made.push(await bindGlobalRole(e2e.admin, administrator, 'platform-admin'));
  await waitFor(() => kubeAllows(administrator, 'delete', 'namespaces'));
  adminToken = (await caller.login(e2e.kapiUrl, administrator, PASSWORD)).access_token;
  // may administer users and cluster members, and holds nothing else
  manager = await e2e.createUser('user-manager', PASSWORD);
  await e2e.grant(manager, [
    { apiGroups: ['iam.kapi.io'], resources: ['users'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
    { apiGroups: ['iam.kapi.io'], resources: ['clustermembers'], verbs: ['create', 'update', 'delete'] },
  ]);
  managerToken = (await caller.login(e2e.kapiUrl, manager, PASSWORD)).access_token;
  dave = e2e.name('dave');
}, 90_000);

afterAll(async () => {
  for (const name of [dave, e2e?.name('erin'), e2e?.name('frank')]) {
    if (!name) continue;
    await deleteIgnoringMissing(e2e.admin, `/apis/iam.kapi.io/v1beta1/users/${name}`);
    for (const binding of await labelledBindings(name)) {
      await deleteIgnoringMissing(e2e.admin, `${IAM}/globalrolebindings/${binding}`);
    }
  }
  for (const path of made) await deleteIgnoringMissing(e2e.admin, path);
  await e2e?.stop();
});

describe('users administered through kapi', () => {
  it('when a platform administrator creates dave without a role, then 201: platform-regular, the password stored as a bcrypt hash only, and dave can log in', async () => {
    const created = await send('POST', `${KAPIS}/users`, adminToken, newUser(dave));
    expect(created.status).toBe(201);
    expect(created.body.metadata.annotations).toMatchObject({ 'iam.kapi.io/globalrole': 'platform-regular' });
    expect(created.body.metadata.annotations).not.toHaveProperty('iam.kapi.io/uninitialized');
    expect(created.body.spec).not.toHaveProperty('password');
    const stored = await e2e.admin.request<{ metadata: { uid: string }; spec: Record<string, unknown> }>({
      path: `/apis/iam.kapi.io/v1beta1/users/${dave}`,
    });
    expect(stored.spec).not.toHaveProperty('password');
    // the hash is in dave's password Secret, in kapi's namespace, and belongs to this User
    const secret = await e2e.admin.request<{
      data: { bcrypt: string };
      metadata: { annotations: Record<string, string> };
    }>({ path: `/api/v1/namespaces/${e2e.configuration.namespace}/secrets/password-${dave}` });
    expect(Buffer.from(secret.data.bcrypt, 'base64').toString()).toMatch(/^\$2[aby]\$10\$/);
    expect(secret.metadata.annotations).toMatchObject({
      'iam.kapi.io/user': dave,
      'iam.kapi.io/user-uid': stored.metadata.uid,
    });
    expect(await labelledBindings(dave)).toEqual([`${dave}-platform-regular`]);
    const daveToken = (await caller.login(e2e.kapiUrl, dave, DAVE_PASSWORD)).access_token;
    await waitFor(
      async () =>
        (await send('GET', `${KAPIS}/users/${dave}`, daveToken)).body?.metadata?.annotations?.[
          'iam.kapi.io/globalrole'
        ] === 'platform-regular',
    );
  });

  it.each([
    ['the name is taken', () => newUser(dave, { email: `other-${dave}@example.com` }), 409, undefined],
    [
      'the e-mail address is another user’s',
      () => newUser(e2e.name('erin'), { email: `${dave}@example.com` }),
      409,
      undefined,
    ],
    [
      'the e-mail address is invalid',
      () => newUser(e2e.name('erin'), { email: 'erin.example.com' }),
      400,
      'spec.email',
    ],
    ['the password fails the policy', () => newUser(e2e.name('erin'), { password: 'Sh0rt' }), 400, 'spec.password'],
    ['the role does not exist', () => newUser(e2e.name('erin'), { role: 'no-such-role' }), 404, undefined],
  ])('when %s, then creating is refused with a Status', async (_case, body, code, field) => {
    const refused = await send('POST', `${KAPIS}/users`, adminToken, body());
    expect(refused.status).toBe(code);
    expect(refused.body).toMatchObject({ kind: 'Status', status: 'Failure', code });
    if (field) expect(refused.body.details.causes[0].field).toBe(field);
  });

  it('when the name in the path is "." or ".." (sent raw), then editing or deleting it is a 404 Status, nothing else is touched', async () => {
    // fetch and URL would fold these into the users collection before kapi saw them
    for (const name of ['%2E%2E', '%2E', '..']) {
      const path = `${KAPIS}/users/${name}`;
      for (const [method, body] of [
        ['PATCH', { spec: { email: 'x@example.com' } }],
        ['DELETE', undefined],
      ] as const) {
        const answer = await rawRequest(e2e.kapiUrl, method, path, adminToken, body);
        expect([method, name, answer.status, answer.body.kind]).toEqual([method, name, 404, 'Status']);
      }
    }
    expect((await send('GET', `${KAPIS}/users/${administrator}`, adminToken)).status).toBe(200);
  });

  it('when the name in the body is not the URL’s, then 400', async () => {
    const refused = await send('PUT', `${KAPIS}/users/${dave}`, adminToken, newUser(e2e.name('erin')));
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('does not match the name on the URL');
  });

  it('when a user manager without platform-admin’s rights gives platform-admin, then 403 naming a right it lacks; platform-regular (no rights) it may give', async () => {
    const refused = await send(
      'POST',
      `${KAPIS}/users`,
      managerToken,
      newUser(e2e.name('erin'), { role: 'platform-admin' }),
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ kind: 'Status', code: 403 });
    expect(refused.body.message).toContain('cannot give platform role "platform-admin"');
    expect(await labelledBindings(e2e.name('erin'))).toEqual([]);
    const frank = e2e.name('frank');
    expect((await send('POST', `${KAPIS}/users`, managerToken, newUser(frank))).status).toBe(201);
    // kapi answers users from its watch: frank is there once it has seen him
    let stored: Answer['body'];
    await waitFor(async () => {
      const read = await send('GET', `${KAPIS}/users/${frank}`, adminToken);
      stored = read.body;
      return read.status === 200;
    });
    const promoted = {
      ...stored,
      metadata: {
        ...stored.metadata,
        annotations: { ...stored.metadata.annotations, 'iam.kapi.io/globalrole': 'platform-admin' },
      },
    };
    expect((await send('PUT', `${KAPIS}/users/${frank}`, managerToken, promoted)).status).toBe(403);
    expect((await send('DELETE', `${KAPIS}/users/${frank}`, managerToken)).status).toBe(200);
  });

  it('when the administrator makes dave platform-admin with the console’s PUT, then dave’s page shows it and kube-apiserver gives dave its rights', async () => {
    const read = (await send('GET', `${KAPIS}/users/${dave}`, adminToken)).body;
    const edited = {
      ...read,
      metadata: {
        ...read.metadata,
        annotations: { ...read.metadata.annotations, 'iam.kapi.io/globalrole': 'platform-admin' },
      },
      spec: { ...read.spec, lang: 'en' },
    };
    const updated = await send('PUT', `${KAPIS}/users/${dave}`, adminToken, edited);
    expect(updated.status).toBe(200);
    expect(updated.body.metadata.annotations['iam.kapi.io/globalrole']).toBe('platform-admin');
    expect(updated.body.spec.lang).toBe('en');
    expect(await labelledBindings(dave)).toEqual([`${dave}-platform-admin`]);
    await waitFor(() => kubeAllows(dave, 'delete', 'namespaces'));
  });

  it('when the administrator resets dave’s password (v1alpha2) and disables dave, then dave’s session ends at once; enabled, dave logs in with the new password', async () => {
    const session = (await caller.login(e2e.kapiUrl, dave, DAVE_PASSWORD)).access_token;
    const reset = await send('PUT', `${KAPIS}/users/${dave}/password`, adminToken, {
      password: 'New-Dave-Passw0rd',
      rePassword: 'New-Dave-Passw0rd',
    });
    expect(reset.status).toBe(200);
    expect((await send('GET', `${KAPIS}/users/${dave}`, session)).status).toBe(401);
    await kapiSees(dave);
    const fresh = (await caller.login(e2e.kapiUrl, dave, 'New-Dave-Passw0rd')).access_token;
    const disabled = await send(
      'PATCH',
      `${KAPIS}/users/${dave}`,
      adminToken,
      { status: { state: 'Disabled' } },
      'application/merge-patch+json',
    );
    expect(disabled.status).toBe(200);
    expect(disabled.body.status.state).toBe('Disabled');
    expect((await send('GET', `${KAPIS}/users/${dave}`, fresh)).status).toBe(401);
    await kapiSees(dave);
    await expect(caller.login(e2e.kapiUrl, dave, 'New-Dave-Passw0rd')).rejects.toThrow('login of');
    const enabled = await send(
      'PATCH',
      `${KAPIS}/users/${dave}`,
      adminToken,
      { status: { state: 'Active' } },
      'application/merge-patch+json',
    );
    expect(enabled.body.status.state).toBe('Active');
    await kapiSees(dave);
    await caller.login(e2e.kapiUrl, dave, 'New-Dave-Passw0rd');
  });

  it('when dave’s login history is read at v1alpha2, then it lists the logins in KubeSphere’s shape, newest first', async () => {
    const read = () => send('GET', `${KAPIS}/users/${dave}/loginrecords?limit=10&page=1`, adminToken);
    // kapi writes a login's record after answering it (its recorder queues them): the last ones may still be on the way
    await waitFor(async () => (await read()).body.totalItems >= 3);
    const records = await read();
    expect(records.status).toBe(200);
    expect(records.body.totalItems).toBeGreaterThanOrEqual(3);
    expect(records.body.items[0]).toMatchObject({
      kind: 'LoginRecord',
      spec: { type: 'Token', provider: 'local', success: true },
    });
    expect(records.body.items.some((item: { spec: { success: boolean } }) => !item.spec.success)).toBe(true);
  });

  it('when the administrator deletes dave, then the User, its platform role and its session go, and kube-apiserver takes its rights', async () => {
    const session = (await caller.login(e2e.kapiUrl, dave, 'New-Dave-Passw0rd')).access_token;
    const deleted = await send('DELETE', `${KAPIS}/users/${dave}`, adminToken);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: dave } });
    expect(await labelledBindings(dave)).toEqual([]);
    expect((await send('GET', `${KAPIS}/users/${dave}`, session)).status).toBe(401);
    expect((await send('DELETE', `${KAPIS}/users/${dave}`, adminToken)).status).toBe(404);
    // in the same operation: no User left (its finalizer taken off once cleaned up), and no password Secret
    await expect(e2e.admin.request({ path: `/apis/iam.kapi.io/v1beta1/users/${dave}` })).rejects.toMatchObject({
      code: 404,
    });
    await expect(
      e2e.admin.request({ path: `/api/v1/namespaces/${e2e.configuration.namespace}/secrets/password-${dave}` }),
    ).rejects.toMatchObject({ code: 404 });
    await waitFor(async () => !(await kubeAllows(dave, 'delete', 'namespaces')));
  });
});

describe('cluster members administered through kapi', () => {
  const RBAC = '/apis/rbac.authorization.k8s.io/v1';
  let member: string;
  let namespaceReader: string;
  let userLister: string;
  const memberBindings = async (user: string) =>
    (
      await e2e.admin.request<{ items: { metadata: { name: string } }[] }>({
        path: `${RBAC}/clusterrolebindings`,
        query: { labelSelector: `iam.kapi.io/user-ref=${user}` },
      })
    ).items.map((item) => item.metadata.name);

  beforeAll(async () => {
    member = await e2e.createUser('member', PASSWORD);
    // a member must be a user kapi's watch has seen
    await waitFor(async () => (await send('GET', `${KAPIS}/users/${member}`, adminToken)).status === 200);
    namespaceReader = e2e.name('namespace-reader');
    userLister = e2e.name('user-lister');
    for (const [name, rule] of [
      [namespaceReader, { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }],
      [userLister, { apiGroups: ['iam.kapi.io'], resources: ['users'], verbs: ['list'] }],
    ] as const) {
      await e2e.admin.request({
        method: 'POST',
        path: `${RBAC}/clusterroles`,
        body: { metadata: { name }, rules: [rule] },
      });
      made.push(`${RBAC}/clusterroles/${name}`);
    }
    made.push(
      `${RBAC}/clusterrolebindings/${member}-${namespaceReader}`,
      `${RBAC}/clusterrolebindings/${member}-${userLister}`,
    );
  }, 60_000);

  it('when the administrator invites a user with a cluster role, then the membership is a labelled ClusterRoleBinding in effect at kube-apiserver', async () => {
    const invited = await send('POST', `${KAPIS}/clustermembers`, adminToken, [
      { username: member, roleRef: namespaceReader },
    ]);
    expect([invited.status, invited.body]).toEqual([200, [{ username: member, roleRef: namespaceReader }]]);
    expect(await memberBindings(member)).toEqual([`${member}-${namespaceReader}`]);
    // kube-apiserver's authorizer reads bindings from its own watch, which may trail the write by a moment
    await waitFor(() => kubeAllows(member, 'list', 'namespaces'));
  });

  it.each([
    ['the role grants what the caller does not hold', () => [{ username: member, roleRef: namespaceReader }], 403],
    ['the role does not exist', () => [{ username: member, roleRef: 'no-such-cluster-role' }], 404],
    ['the user does not exist', () => [{ username: e2e.name('nobody'), roleRef: userLister }], 404],
    ['an entry has no role', () => [{ username: member }], 400],
  ])('when %s, then inviting is refused with a Status and nothing changes', async (_case, body, code) => {
    const refused = await send('POST', `${KAPIS}/clustermembers`, managerToken, body());
    expect(refused.status).toBe(code);
    expect(refused.body).toMatchObject({ kind: 'Status', code });
    expect(await memberBindings(member)).toEqual([`${member}-${namespaceReader}`]);
  });

  it('when a manager changes the member to a role it holds itself, then the old membership goes', async () => {
    const changed = await send('PUT', `${KAPIS}/clustermembers/${member}`, managerToken, {
      username: member,
      roleRef: userLister,
    });
    expect(changed.status).toBe(200);
    expect(await memberBindings(member)).toEqual([`${member}-${userLister}`]);
    await waitFor(async () => !(await kubeAllows(member, 'list', 'namespaces')));
    const mismatch = await send('PUT', `${KAPIS}/clustermembers/${member}`, managerToken, {
      username: 'other',
      roleRef: userLister,
    });
    expect(mismatch.status).toBe(400);
  });

  it('when the member is removed, then its membership goes, and removing again is 404', async () => {
    expect((await send('DELETE', `${KAPIS}/clustermembers/${member}`, managerToken)).status).toBe(200);
    expect(await memberBindings(member)).toEqual([]);
    expect((await send('DELETE', `${KAPIS}/clustermembers/${member}`, managerToken)).status).toBe(404);
  });
});

describe('platform roles administered through kapi', () => {
  let writer: string;
  let writerToken: string;
  let role: string;
  let holder: string;
  const realized = async (name: string) =>
    e2e.admin
      .request<{ rules: { verbs: string[]; resources?: string[] }[] }>({
        path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/kapi:globalrole:${name}`,
      })
      .catch(() => undefined);

  beforeAll(async () => {
    // may write platform roles, and holds what the view-users template grants, nothing more
    const template = await e2e.admin.request<{
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    }>({
      path: `${IAM}/globalroles/role-template-view-users`,
    });
    writer = await e2e.createUser('role-writer', PASSWORD);
    await e2e.grant(writer, [
      ...template.rules,
      { apiGroups: ['iam.kapi.io'], resources: ['globalroles'], verbs: ['create', 'update', 'delete'] },
    ]);
    writerToken = (await caller.login(e2e.kapiUrl, writer, PASSWORD)).access_token;
    role = e2e.name('user-viewer');
    holder = await e2e.createUser('role-holder', PASSWORD);
    made.push(`${IAM}/globalroles/${role}`, `${IAM}/globalrolebindings/${holder}-${role}`);
  }, 60_000);

  const body = (templates: string[], name = role) => ({
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'GlobalRole',
    metadata: {
      name,
      annotations: { 'iam.kapi.io/aggregation-roles': JSON.stringify(templates), 'kapi.io/description': 'e2e' },
    },
  });

  it('when a role writer makes a role of a template whose rights it holds, then the role has the template’s rules and is realized', async () => {
    const created = await send('POST', `${KAPIS}/globalroles`, writerToken, body(['role-template-view-users']));
    expect(created.status).toBe(201);
    const template = await e2e.admin.request<{ rules: unknown[] }>({
      path: `${IAM}/globalroles/role-template-view-users`,
    });
    expect(created.body.rules).toEqual(template.rules);
    expect(created.body.metadata.annotations['kapi.io/creator']).toBe(writer);
    await waitFor(async () => (await realized(role)) !== undefined);
    expect((await send('POST', `${KAPIS}/globalroles`, writerToken, body(['role-template-view-users']))).status).toBe(
      409,
    );
  });

  it.each([
    ['a template grants what the writer does not hold', () => ['role-template-manage-clusters'], 403],
    ['a template does not exist', () => ['role-template-of-nothing'], 404],
  ])('when %s, then making the role is refused with a Status', async (_case, templates, code) => {
    const refused = await send(
      'POST',
      `${KAPIS}/globalroles`,
      writerToken,
      body(templates(), e2e.name('refused-role')),
    );
    expect(refused.status).toBe(code);
    expect(refused.body).toMatchObject({ kind: 'Status', code });
  });

  it('when one without the right makes a role, then 403', async () => {
    expect((await send('POST', `${KAPIS}/globalroles`, managerToken, body([], e2e.name('refused-role')))).status).toBe(
      403,
    );
  });

  it('when the role’s templates change, then its rules and its realization follow; beyond the writer’s rights it is refused', async () => {
    const widened = await send(
      'PUT',
      `${KAPIS}/globalroles/${role}`,
      writerToken,
      body(['role-template-view-users', 'role-template-view-clusters']),
    );
    expect(widened.status).toBe(403);
    const narrowed = await send(
      'PUT',
      `${KAPIS}/globalroles/${role}`,
      adminToken,
      body(['role-template-view-users', 'role-template-view-clusters']),
    );
    expect(narrowed.status).toBe(200);
    expect(JSON.parse(narrowed.body.metadata.annotations['iam.kapi.io/aggregation-roles'])).toHaveLength(2);
    await waitFor(async () => ((await realized(role))?.rules.length ?? 0) === narrowed.body.rules.length);
    expect((await send('PUT', `${KAPIS}/globalroles/${role}`, adminToken, body([], 'another'))).status).toBe(400);
  });

  it('when the console edits a role’s information (a merge patch), then its description changes and its rules stay', async () => {
    const before = await send('GET', `${KAPIS}/globalroles/${role}`, adminToken);
    // as the console sends it: the whole object read, with its description edited
    const { rules, ...origin } = before.body;
    const edited = { ...origin, metadata: { ...origin.metadata, annotations: { ...origin.metadata.annotations } } };
    edited.metadata.annotations['kapi.io/description'] = 'edited by the console';
    const patched = await send(
      'PATCH',
      `${KAPIS}/globalroles/${role}`,
      adminToken,
      edited,
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(200);
    expect(patched.body.metadata.annotations['kapi.io/description']).toBe('edited by the console');
    expect(patched.body.rules).toEqual(rules);
    const renamed = await send(
      'PATCH',
      `${KAPIS}/globalroles/${role}`,
      adminToken,
      { metadata: { name: 'other' } },
      'application/merge-patch+json',
    );
    expect(renamed.status).toBe(400);
    expect(
      (
        await send(
          'PATCH',
          `${KAPIS}/globalroles/role-template-view-users`,
          adminToken,
          { metadata: {} },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await send(
          'PATCH',
          `${KAPIS}/globalroles/${e2e.name('no-role')}`,
          adminToken,
          { metadata: {} },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(404);
  });

  it('when the role is held, then deleting it is 409; once no one holds it, it goes with its realization', async () => {
    const given = await send('PUT', `${KAPIS}/users/${holder}`, adminToken, {
      metadata: { name: holder, annotations: { 'iam.kapi.io/globalrole': role } },
      spec: { email: `${holder}@e2e.kapi.test` },
    });
    expect(given.status).toBe(200);
    const shows = (wanted: string) => async () =>
      (await send('GET', `${KAPIS}/users/${holder}`, adminToken)).body?.metadata?.annotations?.[
        'iam.kapi.io/globalrole'
      ] === wanted;
    // the holders are kapi's watch of the bindings: once it shows the role given, the deletion is refused
    await waitFor(shows(role));
    expect((await send('DELETE', `${KAPIS}/globalroles/${role}`, adminToken)).status).toBe(409);
    expect(
      (
        await send('PUT', `${KAPIS}/users/${holder}`, adminToken, {
          metadata: { name: holder, annotations: { 'iam.kapi.io/globalrole': 'platform-regular' } },
          spec: { email: `${holder}@e2e.kapi.test` },
        })
      ).status,
    ).toBe(200);
    made.push(`${IAM}/globalrolebindings/${holder}-platform-regular`);
    await waitFor(shows('platform-regular'));
    expect((await send('DELETE', `${KAPIS}/globalroles/${role}`, adminToken)).status).toBe(200);
    await waitFor(async () => (await realized(role)) === undefined);
    expect((await send('DELETE', `${KAPIS}/globalroles/${role}`, adminToken)).status).toBe(404);
  });
});

describe('cluster roles: the platform’s presets and templates listed, and the roles an admin makes written through kapi', () => {
  const RBAC = '/apis/rbac.authorization.k8s.io/v1';
  let writer: string;
  let writerToken: string;
  let role: string;
  let holder: string;
  const body = (templates: string[], name = role) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name,
      annotations: { 'iam.kapi.io/aggregation-roles': JSON.stringify(templates), 'kapi.io/description': 'e2e' },
    },
    rules: [],
  });
  const template = async (name: string) =>
    (
      await e2e.admin.request<{ rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }>({
        path: `${RBAC}/clusterroles/${name}`,
      })
    ).rules;

  beforeAll(async () => {
    // may write cluster roles, and holds what the view-nodes template grants, nothing more
    writer = await e2e.createUser('clusterrole-writer', PASSWORD);
    await e2e.grant(writer, [
      ...(await template('role-template-view-nodes')),
      {
        apiGroups: ['iam.kapi.io'],
        resources: ['clusterroles'],
        verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    writerToken = (await caller.login(e2e.kapiUrl, writer, PASSWORD)).access_token;
    role = e2e.name('node-viewer');
    holder = await e2e.createUser('clusterrole-holder', PASSWORD);
    made.push(`${RBAC}/clusterroles/${role}`);
  }, 60_000);

  it('when the console lists the cluster roles, then it gets the presets (cluster-admin marked by kapi, cluster-viewer), not kapi’s realization roles', async () => {
    const listed = async () =>
      (await send('GET', `${KAPIS}/clusterroles?annotation=kapi.io/creator&sortBy=createTime&limit=-1`, adminToken))
        .body;
    // kapi's controller marks Kubernetes' cluster-admin once it leads
    await waitFor(async () =>
      listed().then((page) =>
        page.items.some((item: { metadata: { name: string } }) => item.metadata.name === 'cluster-admin'),
      ),
    );
    const names = (await listed()).items.map((item: { metadata: { name: string } }) => item.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['cluster-admin', 'cluster-viewer']));
    expect(names.filter((name: string) => name.startsWith('kapi:'))).toEqual([]);
    const admin = await send('GET', `${KAPIS}/clusterroles/cluster-admin`, adminToken);
    expect(JSON.parse(admin.body.metadata.annotations['iam.kapi.io/aggregation-roles'])).toContain(
      'role-template-manage-nodes',
    );
    // its rules are still Kubernetes' own: every right
    expect(admin.body.rules).toContainEqual(
      expect.objectContaining({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }),
    );
    const templates = await send(
      'GET',
      `${KAPIS}/clusterroles?labelSelector=iam.kapi.io/role-template&limit=-1`,
      adminToken,
    );
    expect(templates.body.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(
      expect.arrayContaining([
        'role-template-view-nodes',
        'role-template-manage-volumes',
        'role-template-view-cluster-monitoring',
      ]),
    );
  });

  it('when a writer makes a cluster role of a template whose rights it holds, then the ClusterRole has its rules and kube-apiserver grants them to a member', async () => {
    const created = await send('POST', `${KAPIS}/clusterroles`, writerToken, body(['role-template-view-nodes']));
    expect(created.status).toBe(201);
    expect(created.body.rules).toEqual(await template('role-template-view-nodes'));
    expect(created.body.metadata.annotations['kapi.io/creator']).toBe(writer);
    expect((await send('POST', `${KAPIS}/clusterroles`, writerToken, body(['role-template-view-nodes']))).status).toBe(
      409,
    );
    const member = await send('POST', `${KAPIS}/clustermembers`, adminToken, [{ username: holder, roleRef: role }]);
    expect(member.status).toBeLessThan(300);
    await waitFor(() => kubeAllows(holder, 'list', 'nodes'));
    expect(await kubeAllows(holder, 'list', 'secrets')).toBe(false);
  });

  it.each([
    [
      'a template grants what the writer does not hold',
      () => body(['role-template-manage-nodes'], e2e.name('refused')),
      403,
    ],
    ['a template does not exist', () => body(['role-template-of-nothing'], e2e.name('refused')), 404],
    [
      'rules without templates the writer does not hold',
      () => ({
        ...body([], e2e.name('refused')),
        metadata: { name: e2e.name('refused') },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
      }),
      403,
    ],
    ['the body names no role', () => ({ rules: [] }), 400],
  ])('when %s, then making the cluster role is refused with a Status', async (_case, make, code) => {
    const refused = await send('POST', `${KAPIS}/clusterroles`, writerToken, make());
    expect(refused.status).toBe(code);
    expect(refused.body).toMatchObject({ kind: 'Status', code });
  });

  it('when the console edits the role’s information and permissions, then they change; presets, templates and Kubernetes’ roles are not written', async () => {
    const read = await send('GET', `${KAPIS}/clusterroles/${role}`, writerToken);
    const edited = {
      metadata: { annotations: { ...read.body.metadata.annotations, 'kapi.io/alias-name': 'Node readers' } },
    };
    const patched = await send(
      'PATCH',
      `${KAPIS}/clusterroles/${role}`,
      writerToken,
      edited,
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(200);
    expect(patched.body.metadata.annotations['kapi.io/alias-name']).toBe('Node readers');
    expect(patched.body.rules).toEqual(read.body.rules);
    // Edit Permissions: the whole role with its templates changed (beyond the writer's rights, then by the admin)
    const widened = {
      ...read.body,
      metadata: {
        ...read.body.metadata,
        annotations: {
          ...read.body.metadata.annotations,
          'iam.kapi.io/aggregation-roles': '["role-template-view-nodes","role-template-view-volumes"]',
        },
      },
    };
    expect((await send('PUT', `${KAPIS}/clusterroles/${role}`, writerToken, widened)).status).toBe(403);
    const put = await send('PUT', `${KAPIS}/clusterroles/${role}`, adminToken, widened);
    expect(put.status).toBe(200);
    expect(put.body.rules).toEqual([
      ...(await template('role-template-view-nodes')),
      ...(await template('role-template-view-volumes')),
    ]);
    await waitFor(() => kubeAllows(holder, 'list', 'persistentvolumes'));
    for (const name of [
      'cluster-admin',
      'cluster-viewer',
      'role-template-view-nodes',
      'view',
      'kapi:monitoring-view',
    ]) {
      const refused = await send(
        'PATCH',
        `${KAPIS}/clusterroles/${name}`,
        adminToken,
        { metadata: { annotations: { 'kapi.io/description': 'x' } } },
        'application/merge-patch+json',
      );
      expect([name, refused.status]).toEqual([name, 403]);
    }
    expect((await send('DELETE', `${KAPIS}/clusterroles/${e2e.name('no-role')}`, adminToken)).status).toBe(404);
    expect((await send('GET', `${KAPIS}/clusterroles/${e2e.name('no-role')}`, adminToken)).status).toBe(404);
  });

  it('when the role is held by a member, then deleting it is 409; once no one holds it, it goes', async () => {
    expect((await send('DELETE', `${KAPIS}/clusterroles/${role}`, writerToken)).status).toBe(409);
    expect((await send('DELETE', `${KAPIS}/clustermembers/${holder}`, adminToken)).status).toBe(200);
    const deleted = await send('DELETE', `${KAPIS}/clusterroles/${role}`, writerToken);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ kind: 'Status', status: 'Success' });
    // the detail is read from kapi's watch, which follows
    await waitFor(async () => (await send('GET', `${KAPIS}/clusterroles/${role}`, adminToken)).status === 404);
    expect(await kubeAllows(holder, 'list', 'nodes')).toBe(false);
  });
});

describe('a user deleted straight to kube-apiserver', () => {
  it('when its User is deleted with kapi bypassed, then its login sessions go too (kapi’s user controller)', async () => {
    const gone = await e2e.createUser('gone', PASSWORD);
    // two sign-ins: two sessions kube-apiserver holds
    await caller.login(e2e.kapiUrl, gone, PASSWORD);
    await caller.login(e2e.kapiUrl, gone, PASSWORD);
    const sessionsOf = async () =>
      (
        await e2e.admin.request<{ items: { spec?: { username?: string } }[] }>({
          path: '/apis/iam.kapi.io/v1beta1/loginsessions',
          query: { labelSelector: `iam.kapi.io/username=${gone}` },
        })
      ).items.filter((session) => session.spec?.username === gone);
    expect((await sessionsOf()).length).toBe(2);
    await e2e.admin.request({ method: 'DELETE', path: `/apis/iam.kapi.io/v1beta1/users/${gone}` });
    // the User goes once kapi's controller has taken its traces (its finalizer); its sessions with it
    await waitFor(async () => (await sessionsOf()).length === 0);
    await waitFor(
      async () =>
        (await e2e.admin
          .request({ path: `/apis/iam.kapi.io/v1beta1/users/${gone}` })
          .then(() => false)
          .catch(() => true)) === true,
    );
  });
});
