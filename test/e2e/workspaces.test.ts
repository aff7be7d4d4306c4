/**
 * Workspaces as tenants (SPEC §18), on the sandbox and on real kube-apiservers: members and roles, projects, lists per
 * caller, and their realization in RBAC by kapi's controller — each right proved by what kube-apiserver (or kapi, by a
 * SubjectAccessReview) answers after the controller has acted, never by a time.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bindGlobalRole, deleteIgnoringMissing, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Tenant-Passw0rd';
const TENANT3 = '/kapis/tenant.kapi.io/v1alpha3';
const TENANT2 = '/kapis/tenant.kapi.io/v1alpha2';
const IAM = '/kapis/iam.kapi.io/v1alpha2';
const TEMPLATES = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
const WRBS = '/apis/iam.kapi.io/v1alpha2/workspacerolebindings';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
let e2e: E2E;
const tokens: Record<string, string> = {};
const users: Record<string, string> = {};
const made: string[] = [];
const namespaces: string[] = [];
const caller = new KapiCaller();
let wsA: string;
let wsB: string;
let aDev: string;
let bDev: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = { status: number; body: any };

async function send(method: string, path: string, who: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${tokens[who]}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const names = (answer: Answer): string[] =>
  (answer.body?.items ?? []).map((item: { metadata: { name: string } }) => item.metadata.name);

/** What kube-apiserver's own authorizer answers for `user` (its RBAC: what kapi's controller realized). */
async function kubeAllows(user: string, attributes: Record<string, string>): Promise<boolean> {
  const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: { spec: { user, groups: ['system:authenticated'], resourceAttributes: attributes } },
  });
  return review.status.allowed === true;
}

const readPods = (namespace: string) => ({ verb: 'list', resource: 'pods', namespace });
const readWorkspace = (workspace: string) => ({
  verb: 'get',
  group: 'tenant.kapi.io',
  resource: 'workspacetemplates',
  name: workspace,
});

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  for (const who of ['root', 'alice', 'bob', 'carol', 'dan']) users[who] = await e2e.createUser(`t-${who}`, PASSWORD);
  made.push(await bindGlobalRole(e2e.admin, users.root as string, 'platform-admin'));
  await waitFor(() => kubeAllows(users.root as string, { verb: 'delete', resource: 'namespaces' }));
  for (const who of Object.keys(users))
    tokens[who] = (await caller.login(e2e.kapiUrl, users[who] as string, PASSWORD)).access_token;
  // kapi's watch of Users has them all (a manager or member must be a user it knows)
  await waitFor(async () => (await send('GET', `${IAM}/users/${users.dan}`, 'root')).status === 200);
  wsA = e2e.name('ws-a');
  wsB = e2e.name('ws-b');
  aDev = e2e.name('a-dev');
  bDev = e2e.name('b-dev');
  namespaces.push(aDev, bDev);
}, 90_000);

afterAll(async () => {
  for (const ws of [wsA, wsB]) if (ws) await deleteIgnoringMissing(e2e.admin, `${TEMPLATES}/${ws}`);
  for (const ns of namespaces) await deleteIgnoringMissing(e2e.admin, `/api/v1/namespaces/${ns}`);
  for (const path of made) await deleteIgnoringMissing(e2e.admin, path);
  await e2e?.stop();
});

const template = (name: string, manager: string) => ({
  apiVersion: 'tenant.kapi.io/v1alpha2',
  kind: 'WorkspaceTemplate',
  metadata: { name },
  spec: { template: { spec: { manager } } },
});
const project = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, annotations: { 'kapi.io/description': 'e2e project' } },
});

describe('workspaces as tenants, realized in RBAC', () => {
  it('when root creates ws-a managed by alice, then alice (only) lists it, and holds its admin rights once realized', async () => {
    expect(
      (await send('POST', `${TENANT3}/workspacetemplates`, 'root', template(wsA, users.alice as string))).status,
    ).toBe(201);
    expect(
      (await send('POST', `${TENANT3}/workspacetemplates`, 'root', template(wsB, users.root as string))).status,
    ).toBe(201);
    await waitFor(() => kubeAllows(users.alice as string, readWorkspace(wsA)));
    expect(await kubeAllows(users.alice as string, readWorkspace(wsB))).toBe(false);
    expect(names(await send('GET', `${TENANT3}/workspacetemplates`, 'alice'))).toEqual([wsA]);
    expect(names(await send('GET', `${TENANT3}/workspacetemplates`, 'carol'))).toEqual([]);
    const roles = await send('GET', `${IAM}/workspaces/${wsA}/workspaceroles?annotation=kapi.io/creator`, 'alice');
    expect(names(roles).sort()).toEqual(['admin', 'regular', 'self-provisioner', 'viewer'].map((b) => `${wsA}-${b}`));
    const menus = await send('GET', `${IAM}/workspaces/${wsA}/workspacemembers/${users.alice}/workspaceroles`, 'alice');
    expect(names({ status: 200, body: { items: menus.body } })).toContain('role-template-manage-members');
  });

  it('when alice creates project a-dev, then 201 with the workspace label, she is its admin, and kube-apiserver lets her read it', async () => {
    const created = await send('POST', `${TENANT2}/workspaces/${wsA}/namespaces`, 'alice', project(aDev));
    expect(created.status).toBe(201);
    expect(created.body.metadata.labels['kapi.io/workspace']).toBe(wsA);
    expect(created.body.metadata.annotations).not.toHaveProperty('tenant.kapi.io/creator-pending');
    expect(created.body.metadata.annotations['kapi.io/creator']).toBe(users.alice);
    await waitFor(() => kubeAllows(users.alice as string, readPods(aDev)));
    await waitFor(async () =>
      names(await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces`, 'alice')).includes(aDev),
    );
    const members = await send('GET', `${IAM}/namespaces/${aDev}/members`, 'alice');
    expect(members.status).toBe(200);
    expect(members.body.items[0].metadata.annotations['iam.kapi.io/role']).toBe('admin');
    // a name taken (here, by a project of another workspace) is 409, not a second namespace
    expect((await send('POST', `${TENANT2}/workspaces/${wsB}/namespaces`, 'root', project(bDev))).status).toBe(201);
    const taken = await send('POST', `${TENANT2}/workspaces/${wsA}/namespaces`, 'alice', project(bDev));
    expect(taken).toMatchObject({ status: 409, body: { kind: 'Status', code: 409, reason: 'AlreadyExists' } });
    // which workspace holds it is not alice's to learn (a workspace-name oracle)
    expect(taken.body.message).not.toContain(wsB);
  });

  it('when alice invites bob as ws-a-viewer, then bob sees exactly ws-a and a-dev, reads in it, and cannot create', async () => {
    const invited = await send('POST', `${IAM}/workspaces/${wsA}/workspacemembers`, 'alice', [
      { username: users.bob, roleRef: `${wsA}-viewer` },
    ]);
    expect(invited.status).toBe(200);
    await waitFor(() => kubeAllows(users.bob as string, readPods(aDev)));
    expect(names(await send('GET', `${TENANT3}/workspacetemplates`, 'bob'))).toEqual([wsA]);
    expect(names(await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces`, 'bob'))).toEqual([aDev]);
    expect((await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'bob')).status).toBe(200);
    expect(await kubeAllows(users.bob as string, { verb: 'create', resource: 'pods', namespace: aDev })).toBe(false);
    const creating = await send('POST', `${TENANT2}/workspaces/${wsA}/namespaces`, 'bob', project(e2e.name('bob-p')));
    expect(creating).toMatchObject({ status: 403, body: { kind: 'Status', code: 403 } });
    const listed = await send('GET', `${IAM}/workspaces/${wsA}/workspacemembers`, 'bob');
    const roleOf = Object.fromEntries(
      listed.body.items.map((u: { metadata: { name: string; annotations: Record<string, string> } }) => [
        u.metadata.name,
        u.metadata.annotations['iam.kapi.io/workspacerole'],
      ]),
    );
    expect(roleOf).toEqual({ [users.alice as string]: `${wsA}-admin`, [users.bob as string]: `${wsA}-viewer` });
    expect(names(await send('GET', `${TENANT3}/workspacetemplates`, 'carol'))).toEqual([]);
    expect((await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'carol')).status).toBe(403);
  });

  it('when one gives more than it holds or reaches another workspace, then 403; bad member lists are 400 naming the entry, unknown roles 404', async () => {
    // bob (viewer) may not give anything; alice may not give roles of ws-b
    const byViewer = await send('POST', `${IAM}/workspaces/${wsA}/workspacemembers`, 'bob', [
      { username: users.carol, roleRef: `${wsA}-admin` },
    ]);
    expect(byViewer).toMatchObject({ status: 403, body: { kind: 'Status' } });
    const elsewhere = await send('POST', `${IAM}/workspaces/${wsB}/workspacemembers`, 'alice', [
      { username: users.carol, roleRef: `${wsB}-admin` },
    ]);
    expect(elsewhere.status).toBe(403);
    expect(await kubeAllows(users.carol as string, readWorkspace(wsB))).toBe(false);
    const bad = await send('POST', `${IAM}/workspaces/${wsA}/workspacemembers`, 'alice', [
      { username: users.carol, roleRef: `${wsA}-viewer` },
      { username: users.dan },
    ]);
    expect(bad).toMatchObject({
      status: 400,
      body: { kind: 'Status', details: { causes: [{ field: '[1].roleRef' }] } },
    });
    const unknownRole = await send('POST', `${IAM}/workspaces/${wsA}/workspacemembers`, 'alice', [
      { username: users.carol, roleRef: `${wsB}-viewer` },
    ]);
    expect(unknownRole.status).toBe(404);
    expect((await send('GET', `${IAM}/workspaces/${e2e.name('ws-none')}/workspacemembers`, 'root')).status).toBe(404);
    const manager = await send('DELETE', `${IAM}/workspaces/${wsA}/workspacemembers/${users.alice}`, 'alice');
    expect(manager.status).toBe(409);
    // a project of another workspace is not found under this one
    expect((await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces/${bDev}`, 'root')).status).toBe(404);
  });

  it('when a realized RoleBinding is deleted by hand, then the controller puts it back', async () => {
    const path = `${RBAC}/namespaces/${aDev}/rolebindings/${encodeURIComponent(`kapi:workspace:${wsA}:viewer`)}`;
    const before = await e2e.admin.request<{ metadata: { uid: string } }>({ path });
    await e2e.admin.request({ method: 'DELETE', path });
    await waitFor(async () => {
      const again = await e2e.admin.request<{ metadata: { uid: string } }>({ path }).catch(() => undefined);
      return again !== undefined && again.metadata.uid !== before.metadata.uid;
    });
    const restored = await e2e.admin.request<{ subjects: { name: string }[] }>({ path });
    expect(restored.subjects.map((s) => s.name)).toContain(users.bob);
    // kube-apiserver's authorizer reads RoleBindings from its own watch, which may trail the write by a moment
    await waitFor(() => kubeAllows(users.bob as string, readPods(aDev)));
  });

  it('when alice removes bob, then (once the controller has acted) kube-apiserver refuses him, and his lists are empty', async () => {
    const removed = await send('DELETE', `${IAM}/workspaces/${wsA}/workspacemembers/${users.bob}`, 'alice');
    expect(removed.body).toMatchObject({ kind: 'Status', status: 'Success' });
    // the order: the membership is gone, then the realized binding loses bob, then his rights are gone
    const wrbs = await e2e.admin.request<{ items: unknown[] }>({
      path: WRBS,
      query: { labelSelector: `kapi.io/workspace=${wsA},iam.kapi.io/user-ref=${users.bob}` },
    });
    expect(wrbs.items).toEqual([]);
    await waitFor(async () => !(await kubeAllows(users.bob as string, readPods(aDev))));
    const binding = await e2e.admin
      .request<{ subjects: { name: string }[] }>({
        path: `${RBAC}/namespaces/${aDev}/rolebindings/${encodeURIComponent(`kapi:workspace:${wsA}:viewer`)}`,
      })
      .catch(() => undefined);
    expect(binding?.subjects?.map((s) => s.name) ?? []).not.toContain(users.bob);
    await waitFor(async () => names(await send('GET', `${TENANT3}/workspacetemplates`, 'bob')).length === 0);
    expect(names(await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces`, 'bob'))).toEqual([]);
  });

  it('when root moves a-dev to ws-b in one call, then ws-a’s bindings leave it and ws-b’s come', async () => {
    const moved = await send('PATCH', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'root', {
      metadata: { labels: { 'kapi.io/workspace': wsB } },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.metadata.labels['kapi.io/workspace']).toBe(wsB);
    await waitFor(async () => {
      const listed = await e2e.admin.request<{ items: { metadata: { name: string } }[] }>({
        path: `${RBAC}/namespaces/${aDev}/rolebindings`,
        query: { labelSelector: 'iam.kapi.io/realizes=workspace' },
      });
      const realized = listed.items.map((item) => item.metadata.name);
      return realized.includes(`kapi:workspace:${wsB}:admin`) && !realized.some((n) => n.includes(`:${wsA}:`));
    });
    // alice stays the project's admin by her own binding; as ws-a's admin she no longer reaches it
    expect((await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'root')).status).toBe(404);
    expect((await send('GET', `${TENANT2}/workspaces/${wsB}/namespaces/${aDev}`, 'alice')).status).toBe(200);
    const unknown = await send('PATCH', `${TENANT2}/workspaces/${wsB}/namespaces/${aDev}`, 'root', {
      metadata: { labels: { 'kapi.io/workspace': e2e.name('ws-none') } },
    });
    expect(unknown.status).toBe(404);
    // back to ws-a for what follows
    const back = await send('PATCH', `${TENANT2}/workspaces/${wsB}/namespaces/${aDev}`, 'root', {
      metadata: { labels: { 'kapi.io/workspace': wsA } },
    });
    expect(back.status).toBe(200);
  });

  it('when kapi left a change half-done (a project without its creator binding, a membership of a deleted workspace), then the controller completes it', async () => {
    const half = e2e.name('half-p');
    namespaces.push(half);
    // as kapi left it: the tenant guard lets no one else write a pending creator
    await e2e.asKapi.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: {
        metadata: {
          name: half,
          labels: { 'kapi.io/workspace': wsA },
          annotations: { 'kapi.io/creator': users.carol, 'tenant.kapi.io/creator-pending': users.carol },
        },
      },
    });
    const orphan = `${users.dan}-${e2e.name('ws-gone')}-viewer`;
    await e2e.admin.request({
      method: 'POST',
      path: WRBS,
      body: {
        apiVersion: 'iam.kapi.io/v1alpha2',
        kind: 'WorkspaceRoleBinding',
        metadata: { name: orphan, labels: { 'kapi.io/workspace': e2e.name('ws-gone') } },
        roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: `${e2e.name('ws-gone')}-viewer` },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: users.dan }],
      },
    });
    await waitFor(() => kubeAllows(users.carol as string, readPods(half)));
    await waitFor(async () => {
      const ns = await e2e.admin.request<{ metadata: { annotations?: Record<string, string> } }>({
        path: `/api/v1/namespaces/${half}`,
      });
      return ns.metadata.annotations?.['tenant.kapi.io/creator-pending'] === undefined;
    });
    await waitFor(async () => (await e2e.admin.request({ path: `${WRBS}/${orphan}` }).catch(() => 'gone')) === 'gone');
  });

  it('when the console’s member detail asks each member’s projects, then those the member may see; a regular member may not ask, and an unknown member or workspace is 404', async () => {
    const added = await send('POST', `${IAM}/workspaces/${wsA}/workspacemembers`, 'alice', [
      { username: users.dan, roleRef: `${wsA}-regular` },
    ]);
    expect(added.status).toBe(200);
    const invited = await send('POST', `${IAM}/namespaces/${aDev}/members`, 'alice', [
      { username: users.dan, roleRef: 'viewer' },
    ]);
    expect(invited.status).toBe(200);
    await waitFor(() => kubeAllows(users.dan as string, readPods(aDev)));
    const projectsOf = (member: string, who: string) =>
      send('GET', `${TENANT2}/workspaces/${wsA}/workspacemembers/${member}/namespaces?sortBy=createTime&limit=10`, who);
    const all = names(await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces`, 'alice')).sort();
    expect(all.length).toBeGreaterThan(1);
    // the workspace's admin: all of them; a regular member with one project: that one (once kapi's watch has it)
    expect(names(await projectsOf(users.alice as string, 'alice')).sort()).toEqual(all);
    await waitFor(async () => names(await projectsOf(users.dan as string, 'alice')).length > 0);
    expect(names(await projectsOf(users.dan as string, 'alice'))).toEqual([aDev]);
    // a regular member does not see every project: it may not ask another's
    expect((await projectsOf(users.alice as string, 'dan')).status).toBe(403);
    expect((await projectsOf(e2e.name('nobody'), 'alice')).status).toBe(404);
    const noWorkspace = `${TENANT2}/workspaces/${e2e.name('no-ws')}/workspacemembers/${users.alice}/namespaces`;
    expect((await send('GET', noWorkspace, 'root')).status).toBe(404);
  });

  it('when ws-a is deleted, then a-dev stays, out of it, with no binding of ws-a, and its memberships are gone', async () => {
    // dan is a regular member of ws-a (the case above made him one)
    const deleted = await send('DELETE', `${TENANT3}/workspacetemplates/${wsA}`, 'root');
    expect(deleted.status).toBe(200);
    const ns = await e2e.admin.request<{ metadata: { labels?: Record<string, string>; deletionTimestamp?: string } }>({
      path: `/api/v1/namespaces/${aDev}`,
    });
    expect(ns.metadata.deletionTimestamp).toBeUndefined();
    expect(ns.metadata.labels ?? {}).not.toHaveProperty('kapi.io/workspace');
    const wrbs = await e2e.admin.request<{ items: unknown[] }>({
      path: WRBS,
      query: { labelSelector: `kapi.io/workspace=${wsA}` },
    });
    expect(wrbs.items).toEqual([]);
    await waitFor(async () => {
      const listed = await e2e.admin.request<{ items: unknown[] }>({
        path: `${RBAC}/namespaces/${aDev}/rolebindings`,
        query: { labelSelector: 'iam.kapi.io/realizes=workspace' },
      });
      return listed.items.length === 0;
    });
    // the workspace's own ClusterRoleBindings go too (kube-apiserver's authorizer sees it once its watch has)
    await waitFor(async () => !(await kubeAllows(users.alice as string, readWorkspace(wsA))));
  });
});
