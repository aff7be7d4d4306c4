import type { Sandbox } from '../../src/sandbox/index.js';
import { KAPI_SERVICE_ACCOUNT } from '../../src/sandbox/policy.js';
import { call, configMap, openWatch, readEvents, testSandbox, type Json } from './helpers.js';

/** Authorization through RBAC objects over HTTP: what a client arranges with kubectl works as on a real cluster. */
const RBAC = 'rbac.authorization.k8s.io';
const BASE = `/apis/${RBAC}/v1`;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.stop());

type Rule = {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
};
type Subject = { kind: string; name: string; namespace?: string; apiGroup?: string };

async function create(path: string, body: unknown): Promise<void> {
  const res = await call(sandbox, 'POST', path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

async function clusterRole(name: string, rules: Rule[]): Promise<void> {
  await create(`${BASE}/clusterroles`, { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
}

async function role(namespace: string, name: string, rules: Rule[]): Promise<void> {
  await create(`${BASE}/namespaces/${namespace}/roles`, { metadata: { name }, rules });
}

async function clusterRoleBinding(name: string, roleName: string, subjects: Subject[]): Promise<void> {
  await create(`${BASE}/clusterrolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: roleName },
    subjects,
  });
}

async function roleBinding(
  namespace: string,
  name: string,
  ref: { kind: 'Role' | 'ClusterRole'; name: string },
  subjects: Subject[],
): Promise<void> {
  await create(`${BASE}/namespaces/${namespace}/rolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: RBAC, ...ref },
    subjects,
  });
}

/** A SubjectAccessReview as kapi posts it (with its service account). */
async function sar(user: string, groups: string[], attributes: Record<string, unknown>): Promise<Json> {
  const key = 'path' in attributes ? 'nonResourceAttributes' : 'resourceAttributes';
  const res = await call<Json>(sandbox, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    token: sandbox.serviceAccountToken,
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, groups, [key]: attributes },
    },
  });
  expect(res.status).toBe(201);
  return res.body.status;
}

const status = async (token: string, path: string, method = 'GET', body?: unknown): Promise<number> =>
  (await call(sandbox, method, path, { token, body })).status;

describe('authorization by RBAC objects', () => {
  test('when a ClusterRoleBinding grants list nodes to a user, then the SAR allows it and so does the request', async () => {
    const token = sandbox.tokenFor('crb-user');
    expect(await status(token, '/api/v1/nodes')).toBe(403);
    expect(await sar('crb-user', [], { verb: 'list', resource: 'nodes' })).toEqual({ allowed: false });

    await clusterRole('crb-node-reader', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['nodes'] }]);
    await clusterRoleBinding('crb-node-reader', 'crb-node-reader', [
      { apiGroup: RBAC, kind: 'User', name: 'crb-user' },
    ]);

    expect(await status(token, '/api/v1/nodes')).toBe(200);
    expect(await status(token, '/api/v1/nodes/node-1')).toBe(200);
    expect(await status(token, '/api/v1/nodes/node-1', 'DELETE')).toBe(403);
    expect(await sar('crb-user', [], { verb: 'list', resource: 'nodes' })).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "crb-node-reader" of ClusterRole "crb-node-reader" to User "crb-user"',
    });
    const self = await call<Json>(sandbox, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      token,
      body: { spec: { resourceAttributes: { verb: 'watch', resource: 'nodes' } } },
    });
    expect(self.body.status.allowed).toBe(true);
  });

  test('when the binding is deleted, then the access is gone with the next request', async () => {
    const token = sandbox.tokenFor('revoked-user');
    await clusterRole('revocable', [{ verbs: ['list'], apiGroups: [''], resources: ['namespaces'] }]);
    await clusterRoleBinding('revocable', 'revocable', [{ kind: 'User', name: 'revoked-user' }]);
    expect(await status(token, '/api/v1/namespaces')).toBe(200);

    const deleted = await call<Json>(sandbox, 'DELETE', `${BASE}/clusterrolebindings/revocable`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'revocable', group: RBAC },
    });
    expect(await status(token, '/api/v1/namespaces')).toBe(403);
    expect((await sar('revoked-user', [], { verb: 'list', resource: 'namespaces' })).allowed).toBe(false);
  });

  test('when a RoleBinding grants a Role, then it applies only in its namespace', async () => {
    const token = sandbox.tokenFor('rb-user');
    await role('demo', 'cm-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] }]);
    await roleBinding('demo', 'cm-reader', { kind: 'Role', name: 'cm-reader' }, [{ kind: 'User', name: 'rb-user' }]);

    expect(await status(token, '/api/v1/namespaces/demo/configmaps')).toBe(200);
    expect(await status(token, '/api/v1/namespaces/default/configmaps')).toBe(403);
    expect(await status(token, '/api/v1/configmaps')).toBe(403);
    expect((await sar('rb-user', [], { verb: 'list', resource: 'configmaps', namespace: 'demo' })).allowed).toBe(true);
    expect((await sar('rb-user', [], { verb: 'list', resource: 'configmaps', namespace: 'default' })).allowed).toBe(
      false,
    );
  });

  test('when a RoleBinding refers to a ClusterRole, then that role applies only in the binding namespace', async () => {
    const token = sandbox.tokenFor('view-user');
    await roleBinding('demo', 'view-user', { kind: 'ClusterRole', name: 'view' }, [
      { kind: 'User', name: 'view-user' },
    ]);
    expect(await status(token, '/api/v1/namespaces/demo/pods')).toBe(200);
    expect(await status(token, '/api/v1/namespaces/kapi-system/pods')).toBe(403);
    // view does not include secrets, as in kube
    expect(await status(token, '/api/v1/namespaces/demo/secrets')).toBe(403);
  });

  test('when a RoleBinding names a Role of another namespace, then it grants nothing and the rules review says why', async () => {
    const token = sandbox.tokenFor('cross-user');
    await role('default', 'elsewhere', [{ verbs: ['list'], apiGroups: [''], resources: ['services'] }]);
    await roleBinding('demo', 'elsewhere', { kind: 'Role', name: 'elsewhere' }, [{ kind: 'User', name: 'cross-user' }]);

    expect(await status(token, '/api/v1/namespaces/demo/services')).toBe(403);
    expect(await status(token, '/api/v1/namespaces/default/services')).toBe(403);
    const rules = await call<Json>(sandbox, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      token,
      body: { spec: { namespace: 'demo' } },
    });
    expect(rules.body.status).toMatchObject({
      incomplete: true,
      evaluationError: 'role.rbac.authorization.k8s.io "elsewhere" not found',
    });
  });

  test('when a Group is the subject, then every member has the access', async () => {
    await clusterRole('ns-lister', [{ verbs: ['list'], apiGroups: [''], resources: ['namespaces'] }]);
    await clusterRoleBinding('ns-lister-auditors', 'ns-lister', [{ kind: 'Group', name: 'auditors' }]);
    expect(await status(sandbox.tokenFor('erin', ['auditors']), '/api/v1/namespaces')).toBe(200);
    expect(await status(sandbox.tokenFor('erin', ['others']), '/api/v1/namespaces')).toBe(403);
    expect((await sar('anyone', ['auditors'], { verb: 'list', resource: 'namespaces' })).allowed).toBe(true);
  });

  test('when a ServiceAccount is the subject, then the account (and no other of that name) has the access', async () => {
    // What the e2e harness arranges for kapi: Secrets of one more namespace for its service account.
    const kapi = sandbox.serviceAccountToken;
    expect(await status(kapi, '/api/v1/namespaces/demo/secrets')).toBe(403);
    await role('demo', 'kapi-secrets', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['secrets'] }]);
    await roleBinding('demo', 'kapi-secrets', { kind: 'Role', name: 'kapi-secrets' }, [
      { kind: 'ServiceAccount', name: 'kapi-apiserver', namespace: 'kapi-system' },
    ]);
    expect(await status(kapi, '/api/v1/namespaces/demo/secrets')).toBe(200);
    expect(await status(kapi, '/api/v1/namespaces/default/secrets')).toBe(403);
    expect(
      (await sar(KAPI_SERVICE_ACCOUNT, [], { verb: 'get', resource: 'secrets', namespace: 'demo', name: 'x' })).allowed,
    ).toBe(true);

    // A namespace-less subject in a RoleBinding is that namespace's account.
    await roleBinding('demo', 'robot-secrets', { kind: 'Role', name: 'kapi-secrets' }, [
      { kind: 'ServiceAccount', name: 'robot' },
    ]);
    const groups = ['system:serviceaccounts', 'system:serviceaccounts:demo'];
    expect(
      await status(sandbox.tokenFor('system:serviceaccount:demo:robot', groups), '/api/v1/namespaces/demo/secrets'),
    ).toBe(200);
    expect(
      await status(sandbox.tokenFor('system:serviceaccount:default:robot', groups), '/api/v1/namespaces/demo/secrets'),
    ).toBe(403);
  });

  test('when a rule names resourceNames, then only those objects are allowed, and no list', async () => {
    const token = sandbox.tokenFor('named-user');
    await call(sandbox, 'POST', '/api/v1/namespaces/demo/configmaps', { body: configMap('open') });
    await call(sandbox, 'POST', '/api/v1/namespaces/demo/configmaps', { body: configMap('closed') });
    await role('demo', 'one-cm', [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['open'] },
    ]);
    await roleBinding('demo', 'one-cm', { kind: 'Role', name: 'one-cm' }, [{ kind: 'User', name: 'named-user' }]);

    expect(await status(token, '/api/v1/namespaces/demo/configmaps/open')).toBe(200);
    expect(await status(token, '/api/v1/namespaces/demo/configmaps/closed')).toBe(403);
    expect(await status(token, '/api/v1/namespaces/demo/configmaps')).toBe(403);
    // A list pinned to the name by a field selector is authorized as that name, as kube does.
    expect(await status(token, '/api/v1/namespaces/demo/configmaps?fieldSelector=metadata.name%3Dopen')).toBe(200);
  });

  test('when a ClusterRoleBinding grants nonResourceURLs, then paths are allowed; a RoleBinding to the same role is not', async () => {
    await clusterRole('metrics-reader', [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/debug/*'] }]);
    await roleBinding('demo', 'metrics-in-demo', { kind: 'ClusterRole', name: 'metrics-reader' }, [
      { kind: 'User', name: 'scraper' },
    ]);
    const token = sandbox.tokenFor('scraper');
    expect(await status(token, '/metrics')).toBe(403);

    await clusterRoleBinding('metrics-reader', 'metrics-reader', [{ kind: 'User', name: 'scraper' }]);
    // Authorized now: /metrics is served; /debug/pprof is no path the sandbox serves, so past authorization a 404.
    expect(await status(token, '/metrics')).toBe(200);
    expect(await status(token, '/debug/pprof')).toBe(404);
    expect(await sar('scraper', [], { verb: 'get', path: '/debug/pprof' })).toMatchObject({ allowed: true });
    expect(await sar('scraper', [], { verb: 'get', path: '/debugging' })).toEqual({ allowed: false });
    expect(await sar('scraper', [], { verb: 'post', path: '/metrics' })).toEqual({ allowed: false });
  });

  test('when sandbox.policy adds a rule, then it still counts beside RBAC', async () => {
    const token = sandbox.tokenFor('policy-user');
    expect(await status(token, '/api/v1/namespaces/demo/services')).toBe(403);
    sandbox.policy.allow({ users: ['policy-user'], verbs: ['list'], apiGroups: [''], resources: ['services'] });
    expect(await status(token, '/api/v1/namespaces/demo/services')).toBe(200);
    sandbox.policy.reset();
    expect(await status(token, '/api/v1/namespaces/demo/services')).toBe(403);
  });
});

describe('the RBAC API', () => {
  test('when discovery is read, then the RBAC group lists its four kinds with scope and verbs', async () => {
    const groups = await call<Json>(sandbox, 'GET', '/apis');
    expect(groups.body.groups.map((g: Json) => g.name)).toContain(RBAC);
    const list = await call<Json>(sandbox, 'GET', BASE);
    expect(list.body).toMatchObject({ kind: 'APIResourceList', groupVersion: `${RBAC}/v1` });
    const byName = Object.fromEntries(list.body.resources.map((r: Json) => [r.name, r]));
    expect(Object.keys(byName).sort()).toEqual(['clusterrolebindings', 'clusterroles', 'rolebindings', 'roles']);
    expect(byName.clusterroles).toMatchObject({ kind: 'ClusterRole', namespaced: false, singularName: 'clusterrole' });
    expect(byName.rolebindings).toMatchObject({ kind: 'RoleBinding', namespaced: true });
    expect(byName.roles.verbs).toEqual(
      expect.arrayContaining(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']),
    );
    expect(byName.roles.shortNames).toBeUndefined();
    const openapi = await call<Json>(sandbox, 'GET', `/openapi/v3/apis/${RBAC}/v1`);
    expect(
      openapi.body.paths[`${BASE}/namespaces/{namespace}/rolebindings/{name}`].put['x-kubernetes-group-version-kind'],
    ).toEqual({
      group: RBAC,
      version: 'v1',
      kind: 'RoleBinding',
    });
  });

  test('when the cluster starts, then cluster-admin, admin, edit and view exist and system:masters is bound to cluster-admin', async () => {
    const roles = await call<Json>(sandbox, 'GET', `${BASE}/clusterroles`);
    expect(roles.body.kind).toBe('ClusterRoleList');
    expect(roles.body.items.map((r: Json) => r.metadata.name)).toEqual(
      expect.arrayContaining(['admin', 'cluster-admin', 'edit', 'view']),
    );
    const binding = await call<Json>(sandbox, 'GET', `${BASE}/clusterrolebindings/cluster-admin`);
    expect(binding.body).toMatchObject({
      kind: 'ClusterRoleBinding',
      roleRef: { kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'Group', name: 'system:masters' }],
    });
  });

  test('when a binding omits API groups, then v1 defaulting fills them; names may hold ":"', async () => {
    await create(`${BASE}/clusterrolebindings`, {
      metadata: { name: 'system:kapi:defaulted' },
      roleRef: { kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', name: 'u' },
        { kind: 'ServiceAccount', name: 'sa', namespace: 'demo' },
      ],
    });
    const got = await call<Json>(sandbox, 'GET', `${BASE}/clusterrolebindings/system:kapi:defaulted`);
    expect(got.body.roleRef).toEqual({ apiGroup: RBAC, kind: 'ClusterRole', name: 'view' });
    expect(got.body.subjects).toEqual([
      { kind: 'User', name: 'u', apiGroup: RBAC },
      { kind: 'ServiceAccount', name: 'sa', namespace: 'demo' },
    ]);
  });

  test("when RBAC objects are invalid, then the answer is kube's 422", async () => {
    const cases: [string, unknown, RegExp][] = [
      [
        `${BASE}/clusterrolebindings`,
        { metadata: { name: 'bad-kind' }, roleRef: { kind: 'Role', name: 'x' }, subjects: [] },
        /roleRef\.kind: Unsupported value: "Role": supported values: "ClusterRole"/,
      ],
      [
        `${BASE}/clusterrolebindings`,
        {
          metadata: { name: 'bad-sa' },
          roleRef: { kind: 'ClusterRole', name: 'view' },
          subjects: [{ kind: 'ServiceAccount', name: 'x' }],
        },
        /subjects\[0\]\.namespace: Required value/,
      ],
      [
        `${BASE}/namespaces/demo/rolebindings`,
        {
          metadata: { name: 'bad-subject' },
          roleRef: { kind: 'Role', name: 'x' },
          subjects: [{ kind: 'Robot', name: 'r' }],
        },
        /subjects\[0\]\.kind: Unsupported value: "Robot"/,
      ],
      [
        `${BASE}/namespaces/demo/roles`,
        { metadata: { name: 'paths' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }] },
        /rules\[0\]\.nonResourceURLs: Invalid value: \["\/metrics"\]: namespaced rules cannot apply to non-resource URLs/,
      ],
      [
        `${BASE}/clusterroles`,
        { metadata: { name: 'no-verbs' }, rules: [{ apiGroups: [''], resources: ['pods'] }] },
        /rules\[0\]\.verbs: Required value: verbs must contain at least one value/,
      ],
      [
        `${BASE}/clusterroles`,
        { metadata: { name: 'a/b' }, rules: [] },
        /metadata\.name: Invalid value: "a\/b": may not contain '\/'/,
      ],
    ];
    for (const [path, body, message] of cases) {
      const res = await call<Json>(sandbox, 'POST', path, { body });
      expect(res.status).toBe(422);
      expect(res.body.reason).toBe('Invalid');
      expect(res.body.message).toMatch(message);
    }
  });

  test('when a binding is updated with another roleRef, then it is refused; subjects may change', async () => {
    await clusterRoleBinding('immutable-ref', 'view', [{ kind: 'User', name: 'a' }]);
    const moved = await call<Json>(sandbox, 'PATCH', `${BASE}/clusterrolebindings/immutable-ref`, {
      body: { roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'edit' } },
      contentType: 'application/merge-patch+json',
    });
    expect(moved.status).toBe(422);
    expect(moved.body.message).toMatch(/roleRef: Invalid value: .*: cannot change roleRef/);
    const resubjected = await call<Json>(sandbox, 'PATCH', `${BASE}/clusterrolebindings/immutable-ref`, {
      body: { subjects: [{ kind: 'User', name: 'b' }] },
      contentType: 'application/merge-patch+json',
    });
    expect(resubjected.status).toBe(200);
    expect(resubjected.body.subjects).toEqual([{ kind: 'User', name: 'b', apiGroup: RBAC }]);
  });

  test('when RoleBindings are watched, then creation and deletion arrive as events, and a namespace delete removes its RBAC objects', async () => {
    await call(sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'rbac-watch' } } });
    const list = await call<Json>(sandbox, 'GET', `${BASE}/rolebindings`);
    const watch = await openWatch(
      sandbox,
      `${BASE}/namespaces/rbac-watch/rolebindings?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`,
    );
    await role('rbac-watch', 'r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await roleBinding('rbac-watch', 'b', { kind: 'Role', name: 'r' }, [{ kind: 'User', name: 'w' }]);
    const token = sandbox.tokenFor('w');
    expect(await status(token, '/api/v1/namespaces/rbac-watch/pods/p')).toBe(404);
    expect((await call(sandbox, 'DELETE', '/api/v1/namespaces/rbac-watch')).status).toBe(200);
    const events = await readEvents(watch.res, 2);
    watch.abort.abort();
    expect(events.map((e) => [e.type, e.object.kind, e.object.metadata.name])).toEqual([
      ['ADDED', 'RoleBinding', 'b'],
      ['DELETED', 'RoleBinding', 'b'],
    ]);
    expect((await call(sandbox, 'GET', `${BASE}/namespaces/rbac-watch/roles/r`)).status).toBe(404);
    expect(await status(token, '/api/v1/namespaces/rbac-watch/pods/p')).toBe(403);
  });
});
