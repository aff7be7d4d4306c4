/**
 * The tenant model holds when the cluster is written directly (SPEC §18; issue 36's five findings and the
 * workspace-name oracle), on the sandbox and on real kube-apiservers 1.32 (the guard with CEL's authorizer) and 1.26
 * (v1alpha1: kapi and system:masters only). Each attack is tried through kapi's own route, through kapi's forwarding
 * (the attacker's kapi token on /api and /apis), and straight to kube-apiserver as the attacker (impersonated by the
 * test's admin: kube-apiserver's RBAC and admission see the attacker; test/e2e/token-pass-through.test.ts sends a kapi
 * token itself where a kit trusts kapi as an issuer); afterwards kube-apiserver's own authorizer (a
 * SubjectAccessReview) shows nothing was gained.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeRequest } from '../../src/kube/client.js';
import { bindGlobalRole, deleteIgnoringMissing, kubeAllows, startE2E, waitFor, type E2E } from './harness.js';
import { KapiCaller } from './identity-http.js';
import { assertTarget } from './target.js';

const PASSWORD = 'e2e-Guard-Passw0rd';
const TENANT3 = '/kapis/tenant.kapi.io/v1alpha3';
const TENANT2 = '/kapis/tenant.kapi.io/v1alpha2';
const IAM = '/kapis/iam.kapi.io/v1alpha2';
const TEMPLATES = '/apis/tenant.kapi.io/v1alpha2/workspacetemplates';
const WRBS = '/apis/iam.kapi.io/v1alpha2/workspacerolebindings';
const USERS = '/apis/iam.kapi.io/v1beta1/users';
let e2e: E2E;
const tokens: Record<string, string> = {};
const users: Record<string, string> = {};
const made: string[] = [];
const namespaces: string[] = [];
const caller = new KapiCaller();
let wsA: string;
let wsB: string;
let wsD: string;
let wsF: string;
let aDev: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = { status: number; body: any };

/** A request to kapi with `who`'s kapi token (its routes, or /api and /apis forwarded as `who`). */
async function send(method: string, path: string, who: string, body?: unknown, contentType?: string): Promise<Answer> {
  const res = await fetch(`${e2e.kapiUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${tokens[who]}`,
      ...(body === undefined ? {} : { 'Content-Type': contentType ?? 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The same request straight to kube-apiserver, as `who` (kube-apiserver's RBAC and admission see `who`). */
async function straight(method: string, path: string, who: string, body?: unknown, contentType?: string) {
  const request: KubeRequest = {
    method,
    path,
    headers: { 'Impersonate-User': users[who] as string, 'Impersonate-Group': 'system:authenticated' },
    ...(body !== undefined && { body }),
    ...(contentType && { contentType }),
  };
  return e2e.admin.request(request).then(
    (answer) => ({ status: 200, body: answer }) as Answer,
    (error: { code?: number; status?: unknown; message?: string }) =>
      ({ status: error.code ?? 0, body: error.status ?? { message: error.message } }) as Answer,
  );
}

const MERGE = 'application/merge-patch+json';
const nsPath = (ns: string) => `/api/v1/namespaces/${ns}`;
const may = (who: string, attributes: Parameters<typeof kubeAllows>[2]) =>
  kubeAllows(e2e.admin, users[who] as string, attributes);
/** What a project admin can do that an operator or outsider cannot: delete the project's RoleBindings. */
const adminOf = (namespace: string) => ({
  verb: 'delete',
  group: 'rbac.authorization.k8s.io',
  resource: 'rolebindings',
  namespace,
});
const readSecretsIn = (namespace: string) => ({ verb: 'list', resource: 'secrets', namespace });

/** Whether the cluster's admission policies ask its authorizer (v1, v1beta1); on v1alpha1 only kapi may. */
async function guardHasAuthorizer(): Promise<boolean> {
  for (const version of ['v1', 'v1beta1']) {
    const served = await e2e.admin
      .request<{ resources: { name: string }[] }>({ path: `/apis/admissionregistration.k8s.io/${version}` })
      .then(
        (list) => list.resources.some((resource) => resource.name === 'validatingadmissionpolicies'),
        () => false,
      );
    if (served) return true;
  }
  return false;
}

/** A refusal of kapi's or kube-apiserver's: a 403 Status, never a 5xx. */
function refused(answer: Answer, words?: string): void {
  expect(answer.status).toBe(403);
  expect(answer.body).toMatchObject({ kind: 'Status', code: 403 });
  if (words) expect(String(answer.body.message)).toContain(words);
}

const template = (name: string, manager: string) => ({
  apiVersion: 'tenant.kapi.io/v1alpha2',
  kind: 'WorkspaceTemplate',
  metadata: { name },
  spec: { template: { spec: { manager } } },
});

beforeAll(async () => {
  e2e = await startE2E();
  assertTarget(e2e.target);
  for (const who of ['root', 'alice', 'bob', 'carol', 'dan', 'eve', 'frank'])
    users[who] = await e2e.createUser(`g-${who}`, PASSWORD);
  made.push(await bindGlobalRole(e2e.admin, users.root as string, 'platform-admin'));
  await waitFor(() => may('root', { verb: 'delete', resource: 'namespaces' }));
  for (const who of Object.keys(users))
    tokens[who] = (await caller.login(e2e.kapiUrl, users[who] as string, PASSWORD)).access_token;
  await waitFor(async () => (await send('GET', `${IAM}/users/${users.frank}`, 'root')).status === 200);
  wsA = e2e.name('g-ws-a');
  wsB = e2e.name('g-ws-b');
  wsD = e2e.name('g-ws-d');
  wsF = e2e.name('g-ws-f');
  aDev = e2e.name('g-a-dev');
  namespaces.push(aDev);
  // alice manages ws-a, carol ws-b, dan ws-d, frank ws-f
  for (const [ws, who] of [
    [wsA, 'alice'],
    [wsB, 'carol'],
    [wsD, 'dan'],
    [wsF, 'frank'],
  ] as const)
    expect(
      (await send('POST', `${TENANT3}/workspacetemplates`, 'root', template(ws, users[who] as string))).status,
    ).toBe(201);
  await waitFor(() =>
    may('alice', {
      verb: 'create',
      group: 'tenant.kapi.io',
      resource: 'workspacetemplates',
      subresource: 'namespaces',
      name: wsA,
    }),
  );
  // alice's project a-dev; bob its operator, dan its admin
  const created = await send('POST', `${TENANT2}/workspaces/${wsA}/namespaces`, 'alice', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: aDev },
  });
  expect(created.status).toBe(201);
  const members = await send('POST', `${IAM}/namespaces/${aDev}/members`, 'alice', [
    { username: users.bob, roleRef: 'operator' },
    { username: users.dan, roleRef: 'admin' },
  ]);
  expect(members.status).toBe(200);
  await waitFor(() => may('dan', adminOf(aDev)));
  await waitFor(() => may('bob', { verb: 'create', resource: 'pods', namespace: aDev }));
  await waitFor(() =>
    may('dan', {
      verb: 'update',
      group: 'tenant.kapi.io',
      resource: 'workspacetemplates',
      subresource: 'namespaces',
      name: wsD,
    }),
  );
}, 120_000);

afterAll(async () => {
  for (const ws of [wsA, wsB, wsD, wsF]) if (ws) await deleteIgnoringMissing(e2e.admin, `${TEMPLATES}/${ws}`);
  for (const ns of namespaces) await deleteIgnoringMissing(e2e.admin, nsPath(ns));
  for (const path of made) await deleteIgnoringMissing(e2e.admin, path);
  await e2e?.stop();
}, 60_000);

describe('the tenant guard: kapi’s grants follow no field an attacker can write', () => {
  it('(1) when a workspace admin looks for users to invite, then kapi answers names and e-mails only, and no path reads a User whole or a password hash', async () => {
    // kapi's route: the invite picker, what the console calls
    const picker = await send('GET', `${IAM}/users?name=${e2e.runId}`, 'alice');
    expect(picker.status).toBe(200);
    expect(picker.body.items.length).toBeGreaterThan(0);
    for (const item of picker.body.items) {
      expect(Object.keys(item.spec ?? {}).filter((key) => key !== 'email')).toEqual([]);
      expect(item.status).toBeUndefined();
      expect(JSON.stringify(item)).not.toMatch(/\$2[aby]\$/);
    }
    // forwarded, and straight to kube-apiserver: the User objects are not hers to read, at either version, nor watch
    for (const path of [USERS, '/apis/iam.kapi.io/v1alpha2/users', `${USERS}?watch=1&timeoutSeconds=1`]) {
      refused(await send('GET', path, 'alice'));
      refused(await straight('GET', path, 'alice'));
    }
    // nor the password Secrets
    refused(await send('GET', `/api/v1/namespaces/${e2e.configuration.namespace}/secrets`, 'alice'));
    // and no User holds a hash for anyone who may read Users
    const all = await e2e.admin.request<{ items: { metadata: { name: string }; spec?: { password?: string } }[] }>({
      path: USERS,
    });
    expect(all.items.filter((user) => user.spec?.password !== undefined).map((user) => user.metadata.name)).toEqual([]);
    expect(await may('alice', { verb: 'list', group: 'iam.kapi.io', resource: 'users' })).toBe(false);
    expect(await may('alice', readSecretsIn(e2e.configuration.namespace))).toBe(false);
  });

  it('(2) when a project operator, or its admin, names himself the project’s pending creator, then every path refuses it and no admin grant follows', async () => {
    const pending = { metadata: { annotations: { 'tenant.kapi.io/creator-pending': users.bob } } };
    // kapi's route: the operator may not edit the project at all; the admin may not touch kapi's annotation
    refused(await send('PATCH', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'bob', pending, MERGE));
    expect((await send('PATCH', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'dan', pending, MERGE)).status).toBe(
      400,
    );
    // forwarded and straight: the operator has no right on the Namespace itself any more
    refused(await send('PATCH', nsPath(aDev), 'bob', pending, MERGE));
    refused(await straight('PATCH', nsPath(aDev), 'bob', pending, MERGE));
    // the project's admin may edit the Namespace, but not kapi's annotation: the guard refuses it, naming the rule
    refused(
      await send(
        'PATCH',
        nsPath(aDev),
        'dan',
        { metadata: { annotations: { 'tenant.kapi.io/creator-pending': users.eve } } },
        MERGE,
      ),
      'project-creator',
    );
    refused(
      await straight(
        'PATCH',
        nsPath(aDev),
        'dan',
        { metadata: { annotations: { 'tenant.kapi.io/creator-pending': users.eve } } },
        MERGE,
      ),
      'project-creator',
    );
    // and it stops only that: an edit of the project's own labels passes
    expect((await send('PATCH', nsPath(aDev), 'dan', { metadata: { labels: { team: 'ops' } } }, MERGE)).status).toBe(
      200,
    );
    const ns = await e2e.admin.request<{ metadata: { annotations?: Record<string, string> } }>({ path: nsPath(aDev) });
    expect(ns.metadata.annotations?.['tenant.kapi.io/creator-pending']).toBeUndefined();
    expect(await may('bob', adminOf(aDev))).toBe(false);
    expect(await may('eve', adminOf(aDev))).toBe(false);
    expect(await may('bob', { verb: 'update', resource: 'namespaces', name: aDev, namespace: aDev })).toBe(false);
  });

  it('(3a) when a project’s operator or admin relabels it into another workspace, then every path refuses it and the workspaces’ grants stay', async () => {
    const move = { metadata: { labels: { 'kapi.io/workspace': wsB } } };
    refused(await send('PATCH', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'bob', move, MERGE));
    refused(await send('PATCH', nsPath(aDev), 'bob', move, MERGE));
    refused(await straight('PATCH', nsPath(aDev), 'bob', move, MERGE));
    // its admin (no right in either workspace): kapi's route and the guard refuse
    refused(await send('PATCH', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'dan', move, MERGE));
    refused(await send('PATCH', nsPath(aDev), 'dan', move, MERGE));
    refused(await straight('PATCH', nsPath(aDev), 'dan', move, MERGE));
    // or out of any workspace
    refused(
      await straight('PATCH', nsPath(aDev), 'dan', { metadata: { labels: { 'kapi.io/workspace': null } } }, MERGE),
    );
    const ns = await e2e.admin.request<{ metadata: { labels: Record<string, string> } }>({ path: nsPath(aDev) });
    expect(ns.metadata.labels['kapi.io/workspace']).toBe(wsA);
    expect(await may('alice', adminOf(aDev))).toBe(true);
    expect(await may('carol', readSecretsIn(aDev))).toBe(false);
  });

  it('(3c) when a project’s admin sends the label or kapi’s annotations with a write of the Namespace’s status, then kube-apiserver refuses it as for the object', async () => {
    const current = await e2e.admin.request<{ metadata: Record<string, unknown> }>({ path: nsPath(aDev) });
    const withLabel = (labels: Record<string, string>, annotations: Record<string, string> = {}) => ({
      ...current,
      metadata: {
        ...current.metadata,
        labels: { ...(current.metadata.labels as object), ...labels },
        annotations: { ...(current.metadata.annotations as object), ...annotations },
      },
    });
    refused(await send('PUT', `${nsPath(aDev)}/status`, 'dan', withLabel({ 'kapi.io/workspace': wsD })), 'project-');
    refused(
      await straight('PUT', `${nsPath(aDev)}/status`, 'dan', withLabel({ 'kapi.io/workspace': wsD })),
      'project-',
    );
    refused(
      await straight(
        'PUT',
        `${nsPath(aDev)}/status`,
        'dan',
        withLabel({}, { 'tenant.kapi.io/creator-pending': users.dan as string }),
      ),
      'project-creator',
    );
    const ns = await e2e.admin.request<{ metadata: { labels: Record<string, string> } }>({ path: nsPath(aDev) });
    expect(ns.metadata.labels['kapi.io/workspace']).toBe(wsA);
  });

  it('(3d) when a workspace is deleted straight to kube-apiserver and another user makes one of the same name, then its old projects are not the new one’s', async () => {
    const old = e2e.name('g-ws-old');
    const oldProject = e2e.name('g-old-prod');
    namespaces.push(oldProject);
    expect(
      (await send('POST', `${TENANT3}/workspacetemplates`, 'root', template(old, users.dan as string))).status,
    ).toBe(201);
    await waitFor(() =>
      may('dan', {
        verb: 'create',
        group: 'tenant.kapi.io',
        resource: 'workspacetemplates',
        subresource: 'namespaces',
        name: old,
      }),
    );
    expect(
      (await send('POST', `${TENANT2}/workspaces/${old}/namespaces`, 'dan', { metadata: { name: oldProject } })).status,
    ).toBe(201);
    // dan (its manager) deletes it with kubectl: the project keeps the label
    expect((await straight('DELETE', `${TEMPLATES}/${old}`, 'dan')).status).toBe(200);
    // eve, who may make workspaces, makes one of that name, managed by herself
    made.push(await bindGlobalRole(e2e.admin, users.eve as string, 'platform-self-provisioner'));
    await waitFor(() => may('eve', { verb: 'create', group: 'tenant.kapi.io', resource: 'workspacetemplates' }));
    expect((await straight('POST', TEMPLATES, 'eve', template(old, users.eve as string))).status).toBe(200);
    made.push(`${TEMPLATES}/${old}`);
    await waitFor(() =>
      may('eve', { verb: 'get', group: 'tenant.kapi.io', resource: 'workspacetemplates', name: old }),
    );
    // the project leaves the name (its stamp is the deleted workspace's), and eve gets nothing in it
    await waitFor(async () => {
      const ns = await e2e.admin.request<{ metadata: { labels?: Record<string, string> } }>({
        path: nsPath(oldProject),
      });
      return ns.metadata.labels?.['kapi.io/workspace'] === undefined;
    });
    expect(await may('eve', readSecretsIn(oldProject))).toBe(false);
    expect(await may('eve', adminOf(oldProject))).toBe(false);
  });

  it('(3b) when the admin of one workspace moves a project he only administers into it, then kapi’s route, forwarding and kube-apiserver refuse: a move needs the admin of both', async () => {
    const move = { metadata: { labels: { 'kapi.io/workspace': wsD } } };
    refused(await send('PATCH', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'dan', move, MERGE), wsA);
    refused(await send('PATCH', nsPath(aDev), 'dan', move, MERGE), 'project-leaves-workspace');
    refused(await straight('PATCH', nsPath(aDev), 'dan', move, MERGE), 'project-leaves-workspace');
    expect(await may('alice', adminOf(aDev))).toBe(true);
    // the admin of both (the platform's root) moves it, through kapi and straight, and back: ws-a's grant in the
    // project goes, ws-d's comes, and back again
    const realized = (ws: string) =>
      e2e.admin
        .request({
          path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${aDev}/rolebindings/kapi:workspace:${ws}:admin`,
        })
        .then(
          () => true,
          () => false,
        );
    const moved = await send('PATCH', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'root', move, MERGE);
    expect(moved.status).toBe(200);
    await waitFor(async () => !(await realized(wsA)) && (await realized(wsD)));
    const back = await straight(
      'PATCH',
      nsPath(aDev),
      'root',
      { metadata: { labels: { 'kapi.io/workspace': wsA } } },
      MERGE,
    );
    if (await guardHasAuthorizer()) expect(back.status).toBe(200);
    else {
      // v1alpha1 (1.26, 1.27): no authorizer in admission, so only kapi moves projects: through its route
      refused(back, 'use kapi');
      const viaKapi = await send(
        'PATCH',
        `${TENANT2}/workspaces/${wsD}/namespaces/${aDev}`,
        'root',
        {
          metadata: { labels: { 'kapi.io/workspace': wsA } },
        },
        MERGE,
      );
      expect(viaKapi.status).toBe(200);
    }
    await waitFor(async () => (await realized(wsA)) && !(await realized(wsD)));
  });

  it('(4) when the user who manages a workspace is deleted, through kapi or straight to kube-apiserver, then no later user of that name inherits it', async () => {
    const frank = users.frank as string;
    // straight to kube-apiserver: the User waits for kapi's cleanup (the finalizer kapi put on it), which takes the
    // manager off and lets the name go once no realized grant names it
    await waitFor(async () =>
      (
        (await e2e.admin.request<{ metadata: { finalizers?: string[] } }>({ path: `${USERS}/${frank}` })).metadata
          .finalizers ?? []
      ).includes('finalizers.kapi.io/users'),
    );
    await e2e.admin.request({ method: 'DELETE', path: `${USERS}/${frank}` });
    await waitFor(async () =>
      e2e.admin.request({ path: `${USERS}/${frank}` }).then(
        () => false,
        (error: { code?: number }) => error.code === 404,
      ),
    );
    const ws = await e2e.admin.request<{ spec: { template: { spec: { manager?: string } } } }>({
      path: `${TEMPLATES}/${wsF}`,
    });
    expect(ws.spec.template.spec.manager).toBeUndefined();
    // a new frank gets nothing of ws-f
    const again = await e2e.admin.request<{ metadata: { uid: string } }>({
      method: 'POST',
      path: USERS,
      body: {
        apiVersion: 'iam.kapi.io/v1beta1',
        kind: 'User',
        metadata: { name: frank },
        spec: { email: `${frank}@e2e.kapi.test` },
      },
    });
    made.push(`${USERS}/${frank}`);
    expect(again.metadata.uid).toBeDefined();
    await waitFor(async () => (await send('GET', `${IAM}/users/${frank}`, 'root')).status === 200);
    expect(
      await may('frank', { verb: 'get', group: 'tenant.kapi.io', resource: 'workspacetemplates', name: wsF }),
    ).toBe(false);
    // through kapi: carol manages ws-b; deleting her clears it in the same request
    const deleted = await send('DELETE', `${IAM}/users/${users.carol}`, 'root');
    expect(deleted.status).toBe(200);
    const wsb = await e2e.admin.request<{ spec: { template: { spec: { manager?: string } } } }>({
      path: `${TEMPLATES}/${wsB}`,
    });
    expect(wsb.spec.template.spec.manager).toBeUndefined();
    await expect(e2e.admin.request({ path: `${USERS}/${users.carol}` })).rejects.toMatchObject({ code: 404 });
    await waitFor(
      async () =>
        !(await may('carol', readSecretsIn(aDev))) &&
        !(await may('carol', { verb: 'get', group: 'tenant.kapi.io', resource: 'workspacetemplates', name: wsB })),
    );
  });

  it('(5) when a workspace admin names another user its manager, then kapi’s route, forwarding and kube-apiserver refuse without bind, even for a user that does not exist yet', async () => {
    const edit = { spec: { template: { spec: { manager: users.eve } } } };
    refused(await send('PATCH', `${TENANT3}/workspacetemplates/${wsA}`, 'alice', edit, MERGE));
    refused(await send('PATCH', `${TEMPLATES}/${wsA}`, 'alice', edit, MERGE), 'workspace-manager');
    refused(await straight('PATCH', `${TEMPLATES}/${wsA}`, 'alice', edit, MERGE), 'workspace-manager');
    const ghost = { spec: { template: { spec: { manager: e2e.name('nobody-yet') } } } };
    refused(await send('PATCH', `${TEMPLATES}/${wsA}`, 'alice', ghost, MERGE), 'workspace-manager');
    // nor may she make a membership of her own hand (only kapi's members API, which checks the escalation rule)
    const binding = {
      apiVersion: 'iam.kapi.io/v1alpha2',
      kind: 'WorkspaceRoleBinding',
      metadata: { name: `${users.eve}-${wsA}-admin`, labels: { 'kapi.io/workspace': wsA } },
      roleRef: { apiGroup: 'iam.kapi.io', kind: 'WorkspaceRole', name: `${wsA}-admin` },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: users.eve }],
    };
    refused(await send('POST', WRBS, 'alice', binding));
    refused(await straight('POST', WRBS, 'alice', binding));
    const ws = await e2e.admin.request<{ spec: { template: { spec: { manager?: string } } } }>({
      path: `${TEMPLATES}/${wsA}`,
    });
    expect(ws.spec.template.spec.manager).toBe(users.alice);
    expect(await may('eve', { verb: 'get', group: 'tenant.kapi.io', resource: 'workspacetemplates', name: wsA })).toBe(
      false,
    );
    expect(await may('eve', readSecretsIn(aDev))).toBe(false);
  });

  it('when an outsider asks for a workspace’s projects, then 403 whether the workspace exists or not: no name oracle', async () => {
    const existing = await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces`, 'eve');
    const missing = await send('GET', `${TENANT2}/workspaces/${e2e.name('no-such-ws')}/namespaces`, 'eve');
    refused(existing);
    refused(missing);
    expect(missing.body.reason).toBe(existing.body.reason);
    // a project of a workspace, named under it: 403 for the outsider either way too
    refused(await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces/${aDev}`, 'eve'));
    refused(await send('GET', `${TENANT2}/workspaces/${e2e.name('no-such-ws')}/namespaces/${aDev}`, 'eve'));
    // a member still gets 404 for a workspace that does not exist, and its projects for one that does
    expect((await send('GET', `${TENANT2}/workspaces/${wsA}/namespaces`, 'alice')).status).toBe(200);
  });
});

describe('a role change cut short', () => {
  it('when a replica is stopped between writing a demoted member’s new binding and deleting the old one, then the controller deletes the old one: no admin grant is left', async () => {
    const bob = users.bob as string;
    expect(
      (
        await send('POST', `${IAM}/workspaces/${wsA}/workspacemembers`, 'alice', [
          { username: bob, roleRef: `${wsA}-admin` },
        ])
      ).status,
    ).toBe(200);
    // bob, also the project's operator, is its admin through the workspace role
    await waitFor(() => may('bob', adminOf(aDev)));
    // a replica whose role changes stop after the new binding, as if killed there
    let reached!: () => void;
    const stopped = new Promise<void>((resolve) => (reached = resolve));
    const replica = await e2e.startReplica({
      memberWriteHooks: { afterNewBinding: () => (reached(), new Promise<void>(() => undefined)) },
    });
    let answered = false;
    const demotion = fetch(`http://127.0.0.1:${replica.httpPort}${IAM}/workspaces/${wsA}/workspacemembers/${bob}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${tokens.alice}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: bob, roleRef: `${wsA}-viewer` }),
    }).then(
      () => (answered = true),
      () => undefined,
    );
    // the replica stops there (had it answered, the change was not cut: the case fails)
    await Promise.race([stopped, demotion.then(() => Promise.reject(new Error('the demotion was answered')))]);
    await replica.stop(0);
    await demotion;
    // the replica never got to delete the admin binding: the leader's controller did (superseded by the viewer one)
    expect(answered).toBe(false);
    await waitFor(
      async () => (await e2e.admin.request({ path: `${WRBS}/${bob}-${wsA}-admin` }).catch(() => 'gone')) === 'gone',
    );
    await waitFor(async () => !(await may('bob', adminOf(aDev))));
    expect(
      (await e2e.admin.request<{ metadata: { name: string } }>({ path: `${WRBS}/${bob}-${wsA}-viewer` })).metadata.name,
    ).toBe(`${bob}-${wsA}-viewer`);
    expect(await may('bob', { verb: 'list', resource: 'pods', namespace: aDev })).toBe(true);
  });
});
