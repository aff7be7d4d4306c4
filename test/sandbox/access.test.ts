import http from 'node:http';
import type { Sandbox } from '../../src/sandbox/index.js';
import {
  KAPI_SERVICE_ACCOUNT,
  decide,
  defaultRules,
  denialMessage,
  type AccessAttributes,
} from '../../src/sandbox/policy.js';
import type { SandboxUser } from '../../src/sandbox/identity.js';
import { call, testSandbox, type Json } from './helpers.js';

describe('policy decisions (pure)', () => {
  const rules = defaultRules();
  const sa: SandboxUser = {
    username: KAPI_SERVICE_ACCOUNT,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:kapi-system', 'system:authenticated'],
  };
  const alice: SandboxUser = { username: 'alice', groups: ['system:authenticated'] };
  const master: SandboxUser = { username: 'root', groups: ['system:masters'] };
  const admin: SandboxUser = { username: 'admin', groups: [] };
  const cases: [string, SandboxUser, AccessAttributes, boolean][] = [
    [
      'system:masters may do anything',
      master,
      { verb: 'delete', apiGroup: 'apps', resource: 'deployments', namespace: 'x' },
      true,
    ],
    ['system:masters may reach any path', master, { verb: 'post', path: '/anything' }, true],
    [
      'the admin user may do anything',
      admin,
      { verb: 'create', apiGroup: '', resource: 'secrets', namespace: 'demo' },
      true,
    ],
    ['the service account may list nodes', sa, { verb: 'list', apiGroup: '', resource: 'nodes' }, true],
    [
      'the service account may not delete nodes',
      sa,
      { verb: 'delete', apiGroup: '', resource: 'nodes', name: 'node-1' },
      false,
    ],
    [
      'the service account may read secrets in kapi-system',
      sa,
      { verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'kapi-system', name: 'k' },
      true,
    ],
    [
      'the service account may not read secrets elsewhere',
      sa,
      { verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'default', name: 'k' },
      false,
    ],
    [
      'the service account may not list secrets cluster-wide',
      sa,
      { verb: 'list', apiGroup: '', resource: 'secrets' },
      false,
    ],
    [
      'the service account may patch users/status',
      sa,
      { verb: 'patch', apiGroup: 'iam.kapi.io', resource: 'users', subresource: 'status', name: 'bob' },
      true,
    ],
    [
      'the service account may patch users (a password change)',
      sa,
      { verb: 'patch', apiGroup: 'iam.kapi.io', resource: 'users', name: 'bob' },
      true,
    ],
    [
      'the service account may delete users (the users administration, after its review of the caller)',
      sa,
      { verb: 'delete', apiGroup: 'iam.kapi.io', resource: 'users', name: 'bob' },
      true,
    ],
    [
      'the service account may not update users (it patches what it changes)',
      sa,
      { verb: 'update', apiGroup: 'iam.kapi.io', resource: 'users', name: 'bob' },
      false,
    ],
    [
      'the service account may create loginsessions',
      sa,
      { verb: 'create', apiGroup: 'iam.kapi.io', resource: 'loginsessions' },
      true,
    ],
    [
      'the service account may watch clusterconfigurations',
      sa,
      { verb: 'watch', apiGroup: 'installer.kapi.io', resource: 'clusterconfigurations', namespace: 'kapi-system' },
      true,
    ],
    [
      'the service account may impersonate users',
      sa,
      { verb: 'impersonate', apiGroup: '', resource: 'users', name: 'alice' },
      true,
    ],
    [
      'the service account may impersonate extras',
      sa,
      {
        verb: 'impersonate',
        apiGroup: 'authentication.k8s.io',
        resource: 'userextras',
        subresource: 'scopes',
        name: 'x',
      },
      true,
    ],
    [
      'the service account may not impersonate service accounts',
      sa,
      { verb: 'impersonate', apiGroup: '', resource: 'serviceaccounts', namespace: 'x', name: 'y' },
      false,
    ],
    [
      'the service account may create subjectaccessreviews',
      sa,
      { verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
      true,
    ],
    ['an authenticated user may read discovery', alice, { verb: 'get', path: '/apis/iam.kapi.io/v1beta1' }, true],
    ['an authenticated user may read /version', alice, { verb: 'get', path: '/version' }, true],
    ['an authenticated user may not post to discovery', alice, { verb: 'post', path: '/api' }, false],
    [
      'an authenticated user may ask who they are',
      alice,
      { verb: 'create', apiGroup: 'authentication.k8s.io', resource: 'selfsubjectreviews' },
      true,
    ],
    ['an authenticated user may not list nodes', alice, { verb: 'list', apiGroup: '', resource: 'nodes' }, false],
    ['an unrelated path is denied', alice, { verb: 'get', path: '/metrics' }, false],
  ];
  test.each(cases)('when %s, then the decision is right', (_name, user, attributes, allowed) => {
    expect(decide(rules, user, attributes).allowed).toBe(allowed);
  });

  test('when a rule names resourceNames or namespaces, then requests outside them do not match', () => {
    const narrow = [
      {
        users: ['bob'],
        verbs: ['get'],
        apiGroups: [''],
        resources: ['configmaps'],
        namespaces: ['demo'],
        resourceNames: ['cfg'],
      },
    ];
    const bob = { username: 'bob', groups: [] };
    expect(
      decide(narrow, bob, { verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'demo', name: 'cfg' })
        .allowed,
    ).toBe(true);
    expect(
      decide(narrow, bob, { verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'demo', name: 'other' })
        .allowed,
    ).toBe(false);
    expect(
      decide(narrow, bob, { verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'default', name: 'cfg' })
        .allowed,
    ).toBe(false);
    expect(decide(narrow, bob, { verb: 'list', apiGroup: '', resource: 'configmaps', namespace: 'demo' }).allowed).toBe(
      false,
    );
  });

  test("when a request is denied, then the message reads like kube-apiserver's", () => {
    expect(denialMessage('x', { verb: 'list', apiGroup: '', resource: 'nodes' })).toBe(
      'User "x" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    expect(
      denialMessage('x', {
        verb: 'get',
        apiGroup: '',
        resource: 'pods',
        subresource: 'log',
        namespace: 'demo',
        name: 'p',
      }),
    ).toBe('User "x" cannot get resource "pods/log" in API group "" in the namespace "demo"');
    expect(denialMessage('x', { verb: 'get', path: '/metrics' })).toBe('User "x" cannot get path "/metrics"');
  });
});

describe('over HTTP', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await testSandbox();
  });
  afterAll(() => sandbox.stop());
  afterEach(() => sandbox.policy.reset());

  test('when no credentials are sent, then the caller is system:anonymous: 403 for the API, /version and /healthz answered', async () => {
    const res = await call(sandbox, 'GET', '/api/v1/nodes', { token: null });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      'nodes is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    expect((await call(sandbox, 'GET', '/version', { token: null })).status).toBe(200);
    expect((await call(sandbox, 'GET', '/healthz', { token: null })).status).toBe(200);
    expect((await call(sandbox, 'GET', '/apis', { token: null })).status).toBe(403);
  });

  test('when an unknown token is sent, then the answer is a 401 Status', async () => {
    for (const token of ['not-a-token']) {
      const res = await call(sandbox, 'GET', '/api/v1/nodes', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    }
  });

  test("when a user lacks a right, then the answer is 403 with kube's message and details", async () => {
    const token = sandbox.tokenFor('alice');
    const list = await call(sandbox, 'GET', '/api/v1/nodes', { token });
    expect(list.status).toBe(403);
    expect(list.body).toMatchObject({
      reason: 'Forbidden',
      message: 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
      details: { kind: 'nodes' },
      code: 403,
    });
    const get = await call(sandbox, 'GET', '/apis/iam.kapi.io/v1beta1/users/bob', { token });
    expect(get.body).toMatchObject({
      message:
        'users.iam.kapi.io "bob" is forbidden: User "alice" cannot get resource "users" in API group "iam.kapi.io" at the cluster scope',
      details: { name: 'bob', group: 'iam.kapi.io', kind: 'users' },
    });
    const logs = await call(sandbox, 'GET', '/api/v1/namespaces/demo/pods/p/log', { token });
    expect(logs.body).toMatchObject({
      message:
        'pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "demo"',
    });
  });

  test('when a rule is allowed at runtime, then it takes effect at once and reset removes it', async () => {
    const token = sandbox.tokenFor('bob', ['readers']);
    expect((await call(sandbox, 'GET', '/api/v1/nodes', { token })).status).toBe(403);
    sandbox.policy.allow({ groups: ['readers'], verbs: ['list'], apiGroups: [''], resources: ['nodes'] });
    expect((await call(sandbox, 'GET', '/api/v1/nodes', { token })).status).toBe(200);
    sandbox.policy.reset();
    expect((await call(sandbox, 'GET', '/api/v1/nodes', { token })).status).toBe(403);
    expect(() => sandbox.policy.allow({ verbs: ['get'], resources: ['pods'] })).toThrow(/users or groups/);
  });

  test('when the service account impersonates a user with groups, then the request runs as that user, and the audit shows both', async () => {
    sandbox.policy.allow({ groups: ['team-a'], verbs: ['list'], apiGroups: [''], resources: ['namespaces'] });
    const res = await fetch(`${sandbox.url}/api/v1/namespaces`, {
      headers: {
        Authorization: `Bearer ${sandbox.serviceAccountToken}`,
        'Impersonate-User': 'carol',
        'Impersonate-Group': 'team-a',
      },
    });
    expect(res.status).toBe(200);
    const denied = await fetch(`${sandbox.url}/api/v1/nodes`, {
      headers: {
        Authorization: `Bearer ${sandbox.serviceAccountToken}`,
        'Impersonate-User': 'carol',
        'Impersonate-Group': 'team-a',
      },
    });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { message: string }).message).toMatch(/User "carol" cannot list resource "nodes"/);
    const entry = sandbox.audit.findLast((e) => e.path === '/api/v1/namespaces');
    expect(entry).toMatchObject({
      user: 'carol',
      groups: ['team-a', 'system:authenticated'],
      impersonatedBy: KAPI_SERVICE_ACCOUNT,
      verb: 'list',
      code: 200,
    });
  });

  test('when repeated Impersonate-Group header lines are sent, then each is a group', async () => {
    // fetch folds repeated headers into one line; node:http sends one line per array entry, as Go clients do.
    const body = await new Promise<Json>((resolve, reject) => {
      const req = http.request(
        `${sandbox.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
        {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${sandbox.serviceAccountToken}`,
            'Content-Type': 'application/json',
            'Impersonate-User': 'dave',
            'Impersonate-Group': ['g1', 'g2'],
            'Impersonate-Extra-Scopes': 'view',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode, ...JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
    });
    expect(body.status).toEqual({
      userInfo: { username: 'dave', groups: ['g1', 'g2', 'system:authenticated'], extra: { scopes: ['view'] } },
    });
  });

  test('when a caller without impersonate rights impersonates, then it is 403 like kube', async () => {
    const res = await call(sandbox, 'GET', '/api/v1/nodes', {
      token: sandbox.tokenFor('mallory'),
      headers: { 'Impersonate-User': 'admin' },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      message:
        'users "admin" is forbidden: User "mallory" cannot impersonate resource "users" in API group "" at the cluster scope',
    });
    const groupOnly = await call(sandbox, 'GET', '/api/v1/nodes', {
      token: sandbox.serviceAccountToken,
      headers: { 'Impersonate-Group': 'x' },
    });
    expect(groupOnly.status).toBe(400);
  });

  test('when a SubjectAccessReview is posted, then the policy answers for the named user and groups', async () => {
    const sar = (user: string, groups: string[], resourceAttributes: Record<string, string>) =>
      call<Json>(sandbox, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        token: sandbox.serviceAccountToken,
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user, groups, resourceAttributes },
        },
      });
    const allowed = await sar('admin', [], { verb: 'list', resource: 'nodes' });
    expect(allowed.status).toBe(201);
    expect(allowed.body).toMatchObject({
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      status: { allowed: true },
    });
    expect(allowed.body.spec.user).toBe('admin');
    const denied = await sar('erin', ['system:authenticated'], { verb: 'list', resource: 'nodes' });
    expect(denied.body.status).toEqual({ allowed: false });
    const invalid = await call<Json>(sandbox, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      token: sandbox.serviceAccountToken,
      body: { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toMatch(/at least one of user or group must be specified/);
    const noRight = await call(sandbox, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      token: sandbox.tokenFor('frank'),
      body: { spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } } },
    });
    expect(noRight.status).toBe(403);
  });

  test('when a user asks about themself (SelfSubjectAccessReview, SelfSubjectRulesReview), then the policy answers for them', async () => {
    const token = sandbox.tokenFor('gina', ['devs']);
    sandbox.policy.allow({
      groups: ['devs'],
      verbs: ['get', 'list'],
      apiGroups: [''],
      resources: ['pods'],
      namespaces: ['demo'],
    });
    const ssar = (namespace: string) =>
      call<Json>(sandbox, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        token,
        body: { spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace } } },
      });
    expect((await ssar('demo')).body.status.allowed).toBe(true);
    expect((await ssar('default')).body.status.allowed).toBe(false);
    const rules = await call<Json>(sandbox, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      token,
      body: { spec: { namespace: 'demo' } },
    });
    expect(rules.body.status.resourceRules).toContainEqual({
      verbs: ['get', 'list'],
      apiGroups: [''],
      resources: ['pods'],
    });
    expect(rules.body.status.incomplete).toBe(false);
  });

  test('when every request is made, then the audit records user, groups, verb, path and code, and keeps about 1000', async () => {
    await call(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/none');
    const last = sandbox.audit[sandbox.audit.length - 1]!;
    expect(last).toMatchObject({
      user: 'sandbox-admin',
      groups: ['system:masters', 'system:authenticated'],
      verb: 'get',
      path: '/api/v1/namespaces/default/configmaps/none',
      code: 404,
    });
    await call(sandbox, 'GET', '/api', { token: null });
    expect(sandbox.audit[sandbox.audit.length - 1]).toMatchObject({ user: 'system:anonymous', code: 403 });
    await Promise.all(Array.from({ length: 1100 }, () => call(sandbox, 'GET', '/version')));
    expect(sandbox.audit.length).toBe(1000);
    expect(JSON.stringify(sandbox.audit)).not.toContain(sandbox.adminToken);
  });

  test('when a request carries an Audit-ID, then kube’s audit event and answer use it; otherwise each gets a new one', async () => {
    const given = await call(sandbox, 'GET', '/version', { headers: { 'Audit-ID': 'proxy-chosen-id' } });
    expect(given.headers.get('audit-id')).toBe('proxy-chosen-id');
    expect(sandbox.audit.at(-1)).toMatchObject({ auditId: 'proxy-chosen-id', path: '/version' });
    const fresh = await call(sandbox, 'GET', '/version');
    expect(fresh.headers.get('audit-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(sandbox.audit.at(-1)!.auditId).toBe(fresh.headers.get('audit-id'));
  });
});
