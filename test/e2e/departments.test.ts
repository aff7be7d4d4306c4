/**
 * A workspace's departments (KubeSphere's Groups, SPEC §18) on the sandbox and on real kube-apiservers: the
 * workspace's admin makes a department and a sub-department, gives the department a workspace role and a project role,
 * and puts bob in it; bob then sees the workspace and reads the project's pods at kube-apiserver, as the RBAC group
 * `kapi:department:<name>` kapi asserts for him, and loses both when taken out or when the department is deleted. The
 * console's member lists (`ingroup`, `notingroup`) follow. Nobody claims a department otherwise: a User whose
 * `spec.groups` names its group gets nothing, and one allowed to write GroupBindings but not to administer the
 * workspace's departments is refused by the tenant guard.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { RUN_LABEL, deleteIgnoringMissing, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Departments-Passw0rd';
const IAM = '/kapis/iam.kapi.io/v1alpha2';
const TEMPLATES = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
let e2e: E2E;
let workspace: string;
let project: string;
let alice: string;
let aliceToken: string;
let bob: string;
let bobToken: string;
let carolToken: string;
let mallory: string;
let malloryToken: string;
let dev: string;
let sub: string;
const caller = new KapiCaller();

async function send(method: string, path: string, token: string, body?: unknown, contentType = 'application/json') {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': contentType }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
}

const department = (generateName: string, parent?: string) => ({
  apiVersion: 'iam.kapi.io/v1alpha2',
  kind: 'Group',
  metadata: {
    generateName,
    annotations: { 'kapi.io/alias-name': `${generateName} team`, 'kapi.io/workspace-role': `${workspace}-viewer` },
    labels: { 'kapi.io/workspace': 'ignored', ...(parent && { 'iam.kapi.io/group-parent': parent }) },
  },
});
const podsOf = (token: string) => send('GET', `/api/v1/namespaces/${project}/pods`, token);
const workspacesOf = async (token: string) =>
  ((await send('GET', '/kapis/tenant.kapi.io/v1alpha3/workspacetemplates', token)).body?.items ?? []).map(
    (item: { metadata: { name: string } }) => item.metadata.name,
  );

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  alice = await e2e.createUser('dep-alice', PASSWORD);
  bob = await e2e.createUser('dep-bob', PASSWORD);
  mallory = await e2e.createUser('dep-mallory', PASSWORD);
  workspace = e2e.name('dep-ws');
  await e2e.admin.request({
    method: 'POST',
    path: TEMPLATES,
    body: {
      apiVersion: 'tenant.kapi.io/v1alpha2',
      kind: 'WorkspaceTemplate',
      metadata: { name: workspace, labels: { [RUN_LABEL]: e2e.runId } },
      spec: { template: { spec: { manager: alice } } },
    },
  });
  project = e2e.name('dep-proj');
  await e2e.admin.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: project, labels: { [RUN_LABEL]: e2e.runId, 'kapi.io/workspace': workspace } } },
  });
  // one allowed to write departments and their users anywhere, but no admin of the workspace's departments
  await e2e.grant(mallory, [
    { apiGroups: ['iam.kapi.io'], resources: ['groups', 'groupbindings'], verbs: ['create', 'update', 'get', 'list'] },
  ]);
  // alice administers the workspace once kapi's controller has realized it
  await waitFor(async () => {
    const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        spec: {
          user: alice,
          groups: ['system:authenticated'],
          resourceAttributes: {
            verb: 'update',
            group: 'tenant.kapi.io',
            resource: 'workspacetemplates',
            subresource: 'groups',
            name: workspace,
          },
        },
      },
    });
    return review.status.allowed === true;
  });
  aliceToken = (await caller.login(e2e.kapiUrl, alice, PASSWORD)).access_token;
  bobToken = (await caller.login(e2e.kapiUrl, bob, PASSWORD)).access_token;
  malloryToken = (await caller.login(e2e.kapiUrl, mallory, PASSWORD)).access_token;
}, 120_000);

afterAll(async () => {
  await deleteIgnoringMissing(e2e.admin, `${TEMPLATES}/${workspace}`).catch(() => undefined);
  await deleteIgnoringMissing(e2e.admin, `/api/v1/namespaces/${project}`).catch(() => undefined);
  for (const name of [dev, sub].filter(Boolean))
    await deleteIgnoringMissing(e2e.admin, `/apis/iam.kapi.io/v1alpha2/groups/${name}`).catch(() => undefined);
  await e2e?.stop();
});

describe('a workspace admin’s departments', () => {
  it('then alice makes a department and a sub-department; its display name is unique and required', async () => {
    const made = await send('POST', `${IAM}/workspaces/${workspace}/groups`, aliceToken, department('dev'));
    expect(made.status).toBe(200);
    dev = made.body.metadata.name;
    expect(dev).toMatch(/^dev[a-z0-9]{5}$/);
    expect(made.body.metadata).toMatchObject({
      generateName: 'dev',
      labels: { 'kapi.io/workspace': workspace },
      annotations: { 'kapi.io/alias-name': 'dev team', 'kapi.io/creator': alice },
    });
    const child = await send('POST', `${IAM}/workspaces/${workspace}/groups`, aliceToken, department('dev-ops', dev));
    sub = child.body.metadata.name;
    expect(child.body.metadata.labels['iam.kapi.io/group-parent']).toBe(dev);
    // the console names `root` as the parent of a top department: no such department, so no parent
    const top = await send('POST', `${IAM}/workspaces/${workspace}/groups`, aliceToken, department('qa', 'root'));
    expect(top.body.metadata.labels).not.toHaveProperty('iam.kapi.io/group-parent');
    await send('DELETE', `${IAM}/workspaces/${workspace}/groups/${top.body.metadata.name}`, aliceToken);
    expect((await send('POST', `${IAM}/workspaces/${workspace}/groups`, aliceToken, department('dev'))).status).toBe(
      409,
    );
    const nameless = await send('POST', `${IAM}/workspaces/${workspace}/groups`, aliceToken, { kind: 'Group' });
    expect(nameless.body).toMatchObject({ kind: 'Status', code: 400 });
    await waitFor(async () => {
      const listed = await send('GET', `${IAM}/workspaces/${workspace}/groups`, aliceToken);
      return listed.body.totalItems === 2;
    });
    expect((await send('GET', `${IAM}/workspaces/${workspace}/groups`, bobToken)).status).toBe(403);
  });

  it('then alice gives dev the workspace viewer role and the project viewer role', async () => {
    const role = await send('POST', `${IAM}/workspaces/${workspace}/workspacerolebindings`, aliceToken, [
      {
        subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: dev }],
        roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: `${workspace}-viewer` },
      },
    ]);
    expect(role.status).toBe(200);
    expect(role.body[0].subjects).toEqual([
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `kapi:department:${dev}` },
    ]);
    const projectRole = await send('POST', `${IAM}/namespaces/${project}/rolebindings`, aliceToken, [
      {
        subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: dev }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'viewer' },
      },
    ]);
    expect(projectRole.status).toBe(200);
    await waitFor(async () => {
      const listed = await send(
        'GET',
        `${IAM}/workspaces/${workspace}/rolebindings?labelSelector=iam.kapi.io/group-ref=${dev}`,
        aliceToken,
      );
      return listed.status === 200 && listed.body.length === 1;
    });
    const wrbs = await send(
      'GET',
      `${IAM}/workspaces/${workspace}/workspacerolebindings?labelSelector=iam.kapi.io/group-ref=${dev}`,
      aliceToken,
    );
    expect(wrbs.body.totalItems).toBe(1);
  });

  it('then bob, put in dev, sees the workspace and reads the project’s pods; the member lists show him in it', async () => {
    expect((await podsOf(bobToken)).status).toBe(403);
    const put = await send('POST', `${IAM}/workspaces/${workspace}/groupbindings`, aliceToken, [
      { userName: bob, groupName: dev },
    ]);
    expect(put.status).toBe(200);
    expect(put.body[0]).toMatchObject({ groupRef: { name: dev }, users: [bob] });
    await waitFor(async () => (await podsOf(bobToken)).status === 200);
    await waitFor(async () => (await workspacesOf(bobToken)).includes(workspace));
    const inDev = await send('GET', `${IAM}/users?ingroup=${dev}`, aliceToken);
    expect(inDev.body.items.map((u: { metadata: { name: string } }) => u.metadata.name)).toEqual([bob]);
    // his departments of the workspace, where the console reads them
    expect(inDev.body.items[0].spec.groups).toEqual([dev]);
    const notInDev = await send('GET', `${IAM}/users?notingroup=${dev}&name=dep-`, aliceToken);
    const others = notInDev.body.items.map((u: { metadata: { name: string } }) => u.metadata.name);
    expect(others).toEqual(expect.arrayContaining([alice, mallory]));
    expect(others).not.toContain(bob);
    // putting him in again keeps the one binding
    const again = await send('POST', `${IAM}/workspaces/${workspace}/groupbindings`, aliceToken, [
      { userName: bob, groupName: dev },
    ]);
    expect(again.body[0].metadata.name).toBe(put.body[0].metadata.name);
  });

  it('then taken out of dev, bob reads the project’s pods no more', async () => {
    const found = await send(
      'GET',
      `${IAM}/workspaces/${workspace}/groupbindings?labelSelector=iam.kapi.io/group-ref=${dev},iam.kapi.io/user-ref=${bob}`,
      aliceToken,
    );
    expect(found.body.totalItems).toBe(1);
    const removed = await send(
      'DELETE',
      `${IAM}/workspaces/${workspace}/groupbindings/${found.body.items[0].metadata.name}`,
      aliceToken,
    );
    expect(removed.body).toMatchObject({ kind: 'Status', status: 'Success' });
    await waitFor(async () => (await podsOf(bobToken)).status === 403);
  });
});

describe('the console’s live department tree', () => {
  /** The console's watch of the workspace's departments, as the holder of `token`. */
  function watchDepartments(token: string) {
    const seen = { events: [] as string[], refused: undefined as number | undefined };
    const url = `${e2e.kapiUrl.replace(/^http/, 'ws')}/apis/iam.kapi.io/v1alpha2/watch/groups?labelSelector=kapi.io/workspace=${workspace}`;
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` }, origin: e2e.kapiUrl });
    socket.on('message', (raw) => {
      const event = JSON.parse(raw.toString()) as {
        type: string;
        object: { kind: string; metadata: { name: string } };
      };
      seen.events.push(`${event.type} ${event.object.kind} ${event.object.metadata.name}`);
    });
    socket.on('unexpected-response', (_req, res) => (seen.refused = res.statusCode));
    socket.on('error', () => undefined);
    return { seen, close: () => socket.close() };
  }

  it('then alice sees the departments, one made, changed and deleted; bob is refused', async () => {
    const watch = watchDepartments(aliceToken);
    try {
      await waitFor(async () => watch.seen.events.length >= 2);
      expect(watch.seen.events.sort()).toEqual([`ADDED Group ${dev}`, `ADDED Group ${sub}`].sort());
      const made = await send('POST', `${IAM}/workspaces/${workspace}/groups`, aliceToken, department('watched'));
      const watched = made.body.metadata.name as string;
      await waitFor(async () => watch.seen.events.includes(`ADDED Group ${watched}`));
      await send(
        'PATCH',
        `${IAM}/workspaces/${workspace}/groups/${watched}`,
        aliceToken,
        {
          metadata: { annotations: { 'kapi.io/alias-name': 'Watched' } },
        },
        'application/merge-patch+json',
      );
      await waitFor(async () => watch.seen.events.includes(`MODIFIED Group ${watched}`));
      await send('DELETE', `${IAM}/workspaces/${workspace}/groups/${watched}`, aliceToken);
      await waitFor(async () => watch.seen.events.includes(`DELETED Group ${watched}`));
    } finally {
      watch.close();
    }
    const refused = watchDepartments(bobToken);
    await waitFor(async () => refused.seen.refused !== undefined);
    expect(refused.seen.refused).toBe(403);
  });
});

describe('the edges of a membership', () => {
  it('then two adds at once make one binding, and the console’s edit of the alias keeps the parent', async () => {
    const add = () =>
      send('POST', `${IAM}/workspaces/${workspace}/groupbindings`, aliceToken, [{ userName: mallory, groupName: sub }]);
    const [one, two] = await Promise.all([add(), add()]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const listed = await e2e.admin.request<{ items: unknown[] }>({
      path: '/apis/iam.kapi.io/v1alpha2/groupbindings',
      query: { labelSelector: `iam.kapi.io/group-ref=${sub},iam.kapi.io/user-ref=${mallory}` },
    });
    expect(listed.items).toHaveLength(1);
    await send('DELETE', `${IAM}/workspaces/${workspace}/groupbindings/${one.body[0].metadata.name}`, aliceToken);
    // the console's edit sends the annotations only
    const edited = await send(
      'PATCH',
      `${IAM}/workspaces/${workspace}/groups/${sub}`,
      aliceToken,
      { metadata: { annotations: { 'kapi.io/alias-name': 'Ops' } } },
      'application/merge-patch+json',
    );
    expect(edited.body.metadata.labels).toMatchObject({
      'iam.kapi.io/group-parent': dev,
      'kapi.io/workspace': workspace,
    });
    expect(edited.body.metadata.annotations['kapi.io/alias-name']).toBe('Ops');
  });

  it('then a department holding a role elsewhere (a project moved away) takes no user from one who could not give it', async () => {
    // the cluster's admin gives dev admin in a namespace of no workspace: putting someone in dev now grants it
    const elsewhere = await e2e.createNamespace('dep-elsewhere');
    await e2e.admin.request({
      method: 'POST',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${elsewhere}/rolebindings`,
      body: {
        metadata: { name: 'dev-admin-elsewhere' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kapi:namespace-role:admin' },
        subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `kapi:department:${dev}` }],
      },
    });
    await waitFor(async () => {
      const refused = await send('POST', `${IAM}/workspaces/${workspace}/groupbindings`, aliceToken, [
        { userName: mallory, groupName: dev },
      ]);
      return refused.status === 403 && String(refused.body.message).includes(elsewhere);
    });
    await deleteIgnoringMissing(
      e2e.admin,
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${elsewhere}/rolebindings/dev-admin-elsewhere`,
    );
  });

  it('then a deleted user’s GroupBindings go with it, so a new user of the name is in no department', async () => {
    const temp = await e2e.createUser('dep-temp', PASSWORD);
    await send('POST', `${IAM}/workspaces/${workspace}/groupbindings`, aliceToken, [
      { userName: temp, groupName: dev },
    ]);
    await e2e.admin.request({ method: 'DELETE', path: `/apis/iam.kapi.io/v1beta1/users/${temp}` });
    await waitFor(async () => {
      const left = await e2e.admin.request<{ items: unknown[] }>({
        path: '/apis/iam.kapi.io/v1alpha2/groupbindings',
        query: { labelSelector: `iam.kapi.io/user-ref=${temp}` },
      });
      return left.items.length === 0;
    });
  });
});

describe('when the workspace lets go of a project, or goes', () => {
  const workspaceOf = async (name: string) => {
    await e2e.admin.request({
      method: 'POST',
      path: TEMPLATES,
      body: {
        apiVersion: 'tenant.kapi.io/v1alpha2',
        kind: 'WorkspaceTemplate',
        metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
        spec: { template: { spec: { manager: alice } } },
      },
    });
    await waitFor(async () => (await send('GET', `${IAM}/workspaces/${name}/groups`, aliceToken)).status === 200);
  };

  it('then a project moved to another workspace keeps no project role of the departments it left', async () => {
    const other = e2e.name('dep-ws2');
    await workspaceOf(other);
    const moving = e2e.name('dep-moving');
    expect(
      (
        await send('POST', `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/namespaces`, aliceToken, {
          metadata: { name: moving },
        })
      ).status,
    ).toBe(201);
    await waitFor(async () => {
      const given = await send('POST', `${IAM}/namespaces/${moving}/rolebindings`, aliceToken, [
        { subjects: [{ kind: 'Group', name: dev }], roleRef: { kind: 'Role', name: 'viewer' } },
      ]);
      return given.status === 200;
    });
    const moved = await send(
      'PATCH',
      `/kapis/tenant.kapi.io/v1alpha2/workspaces/${workspace}/namespaces/${moving}`,
      aliceToken,
      { metadata: { labels: { 'kapi.io/workspace': other } } },
      'application/merge-patch+json',
    );
    expect(moved.status).toBe(200);
    const left = await e2e.admin.request<{ items: unknown[] }>({
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${moving}/rolebindings`,
      query: { labelSelector: `iam.kapi.io/group-ref=${dev}` },
    });
    expect(left.items).toEqual([]);
    await deleteIgnoringMissing(e2e.admin, `/api/v1/namespaces/${moving}`);
    await deleteIgnoringMissing(e2e.admin, `${TEMPLATES}/${other}`);
  });

  it('then a deleted workspace’s departments and their members go with it', async () => {
    const gone = e2e.name('dep-ws3');
    await workspaceOf(gone);
    const made = await send('POST', `${IAM}/workspaces/${gone}/groups`, aliceToken, department('short-lived'));
    expect(made.status).toBe(200);
    const name = made.body.metadata.name as string;
    await waitFor(
      async () => (await send('GET', `${IAM}/workspaces/${gone}/groups/${name}`, aliceToken)).status === 200,
    );
    expect(
      (await send('POST', `${IAM}/workspaces/${gone}/groupbindings`, aliceToken, [{ userName: bob, groupName: name }]))
        .status,
    ).toBe(200);
    expect((await send('DELETE', `/kapis/tenant.kapi.io/v1alpha3/workspacetemplates/${gone}`, aliceToken)).status).toBe(
      200,
    );
    for (const path of [
      `/apis/iam.kapi.io/v1alpha2/groups?labelSelector=kapi.io/workspace=${gone}`,
      `/apis/iam.kapi.io/v1alpha2/groupbindings?labelSelector=kapi.io/workspace=${gone}`,
    ])
      expect((await e2e.admin.request<{ items: unknown[] }>({ path })).items).toEqual([]);
  });
});

describe('when anyone else claims a department', () => {
  it('then a User whose spec.groups names the department’s group gets nothing from it', async () => {
    const carol = await e2e.createUser('dep-carol', PASSWORD, { groups: [`kapi:department:${dev}`, 'e2e-other'] });
    carolToken = (await caller.login(e2e.kapiUrl, carol, PASSWORD)).access_token;
    expect((await podsOf(carolToken)).status).toBe(403);
    expect(await workspacesOf(carolToken)).not.toContain(workspace);
  });

  it('then one who may write GroupBindings but not administer the workspace’s departments is refused by the tenant guard', async () => {
    const forged = await send('POST', '/apis/iam.kapi.io/v1alpha2/groupbindings', malloryToken, {
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'GroupBinding',
      metadata: { generateName: 'forged-', labels: { 'kapi.io/workspace': workspace } },
      groupRef: { apiGroup: 'iam.kapi.io', kind: 'Group', name: dev },
      users: [mallory],
    });
    expect(forged.status).toBe(403);
    expect(forged.body.message).toContain('workspacetemplates/groups');
    // the same writes straight to kube-apiserver as mallory: a GroupBinding into dev, a department of her own in the
    // workspace, and one claiming the workspace's uid stamp
    const straight = (path: string, body: unknown) =>
      e2e.admin
        .request({
          method: 'POST',
          path,
          headers: { 'Impersonate-User': mallory, 'Impersonate-Group': 'system:authenticated' },
          body,
        })
        .then(
          () => ({ code: 201, message: '' }),
          (error: { code?: number; message?: string }) => ({ code: error.code, message: String(error.message) }),
        );
    for (const [path, body] of [
      [
        '/apis/iam.kapi.io/v1alpha2/groupbindings',
        {
          apiVersion: 'iam.kapi.io/v1alpha2',
          kind: 'GroupBinding',
          metadata: { generateName: 'straight-', labels: { 'kapi.io/workspace': workspace } },
          groupRef: { apiGroup: 'iam.kapi.io', kind: 'Group', name: dev },
          users: [mallory],
        },
      ],
      [
        '/apis/iam.kapi.io/v1alpha2/groups',
        {
          apiVersion: 'iam.kapi.io/v1alpha2',
          kind: 'Group',
          metadata: { generateName: 'straight-', labels: { 'kapi.io/workspace': workspace } },
        },
      ],
      [
        '/apis/iam.kapi.io/v1alpha2/groups',
        {
          apiVersion: 'iam.kapi.io/v1alpha2',
          kind: 'Group',
          metadata: {
            generateName: 'stamped-',
            annotations: { 'tenant.kapi.io/workspace-uid': `${workspace}/forged` },
          },
        },
      ],
    ] as const) {
      const answer = await straight(path, body);
      expect(answer.code).toBe(403);
      expect(answer.message).toMatch(/workspacetemplates\/groups|tenant\.kapi\.io\/workspace-uid/);
    }
    // nor without the label: that needs the right for every workspace
    const unlabelled = await send('POST', '/apis/iam.kapi.io/v1alpha2/groupbindings', malloryToken, {
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'GroupBinding',
      metadata: { generateName: 'unlabelled-' },
      groupRef: { apiGroup: 'iam.kapi.io', kind: 'Group', name: dev },
      users: [mallory],
    });
    expect(unlabelled.status).toBe(403);
    // nor does the departments API let her in: she administers no department of the workspace
    const viaApi = await send('POST', `${IAM}/workspaces/${workspace}/groupbindings`, malloryToken, [
      { userName: mallory, groupName: dev },
    ]);
    expect(viaApi.status).toBe(403);
  });
});

describe('when a GroupBinding’s workspace is not its department’s', () => {
  it('then kapi honours it for no one', async () => {
    // written by the cluster's admin (the guard lets it), labelled with another workspace than dev's
    const mismatched = await e2e.admin.request<{ metadata: { name: string } }>({
      method: 'POST',
      path: '/apis/iam.kapi.io/v1alpha2/groupbindings',
      body: {
        apiVersion: 'iam.kapi.io/v1alpha2',
        kind: 'GroupBinding',
        metadata: { generateName: 'mismatched-', labels: { 'kapi.io/workspace': e2e.name('dep-other') } },
        groupRef: { apiGroup: 'iam.kapi.io', kind: 'Group', name: dev },
        users: [mallory],
      },
    });
    // a binding made after it takes effect for bob: by then kapi has seen the first, and mallory has nothing
    await send('POST', `${IAM}/workspaces/${workspace}/groupbindings`, aliceToken, [{ userName: bob, groupName: dev }]);
    await waitFor(async () => (await podsOf(bobToken)).status === 200);
    expect((await podsOf(malloryToken)).status).toBe(403);
    await deleteIgnoringMissing(e2e.admin, `/apis/iam.kapi.io/v1alpha2/groupbindings/${mismatched.metadata.name}`);
  });
});

describe('when alice deletes the department', () => {
  it('then its sub-department, its bindings and its roles go, and its members lose what it gave', async () => {
    // bob is in dev again (the case before)
    expect((await podsOf(bobToken)).status).toBe(200);
    const deleted = await send('DELETE', `${IAM}/workspaces/${workspace}/groups/${dev}`, aliceToken);
    expect(deleted.body).toMatchObject({ kind: 'Status', status: 'Success' });
    await waitFor(async () => (await podsOf(bobToken)).status === 403);
    for (const path of [`/apis/iam.kapi.io/v1alpha2/groups/${dev}`, `/apis/iam.kapi.io/v1alpha2/groups/${sub}`])
      expect(await e2e.admin.request({ path }).catch((err: { code?: number }) => err.code)).toBe(404);
    const left = await e2e.admin.request<{ items: unknown[] }>({
      path: '/apis/iam.kapi.io/v1alpha2/workspacerolebindings',
      query: { labelSelector: `iam.kapi.io/group-ref=${dev}` },
    });
    expect(left.items).toEqual([]);
    expect((await send('GET', `${IAM}/workspaces/${workspace}/groups/${dev}`, aliceToken)).status).toBe(404);
  });
});
