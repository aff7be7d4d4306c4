import type { SandboxUser } from '../../src/sandbox/identity.js';
import type { AccessAttributes } from '../../src/sandbox/policy.js';
import { RbacAuthorizer } from '../../src/sandbox/rbac-authorizer.js';
import { RbacIndex, type RbacObjects } from '../../src/sandbox/rbac-index.js';
import { rbacRuleAllows, type RbacPolicyRule } from '../../src/sandbox/rbac-rules.js';
import { rbacTypes } from '../../src/sandbox/rbac-types.js';
import { ResourceRegistry, type ResourceType } from '../../src/sandbox/resource-types.js';
import { ObjectStore } from '../../src/sandbox/store.js';

const RBAC = 'rbac.authorization.k8s.io';

describe('RBAC rule matching (pure, as kube RuleAllows)', () => {
  const cases: [string, RbacPolicyRule, AccessAttributes, boolean][] = [
    [
      'the verb, group and resource are listed',
      { verbs: ['list'], apiGroups: [''], resources: ['nodes'] },
      { verb: 'list', apiGroup: '', resource: 'nodes' },
      true,
    ],
    [
      'another verb is asked',
      { verbs: ['list'], apiGroups: [''], resources: ['nodes'] },
      { verb: 'delete', apiGroup: '', resource: 'nodes', name: 'n' },
      false,
    ],
    [
      'the verb is "*"',
      { verbs: ['*'], apiGroups: [''], resources: ['nodes'] },
      { verb: 'deletecollection', apiGroup: '', resource: 'nodes' },
      true,
    ],
    [
      'another API group is asked',
      { verbs: ['get'], apiGroups: [''], resources: ['deployments'] },
      { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'x', name: 'd' },
      false,
    ],
    [
      'the API group is "*"',
      { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] },
      { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'x', name: 'd' },
      true,
    ],
    [
      'a rule has no apiGroups',
      { verbs: ['get'], resources: ['pods'] },
      { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'x', name: 'p' },
      false,
    ],
    [
      'a subresource is asked and only the resource is listed',
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      { verb: 'get', apiGroup: '', resource: 'pods', subresource: 'log', namespace: 'x', name: 'p' },
      false,
    ],
    [
      'the subresource is listed as "pods/log"',
      { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
      { verb: 'get', apiGroup: '', resource: 'pods', subresource: 'log', namespace: 'x', name: 'p' },
      true,
    ],
    [
      '"pods/log" is listed and the pod itself is asked',
      { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] },
      { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'x', name: 'p' },
      false,
    ],
    [
      '"*/scale" is listed and a deployment scale is asked',
      { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      { verb: 'update', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'x', name: 'd' },
      true,
    ],
    [
      '"*/scale" is listed and the deployment itself is asked',
      { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      { verb: 'update', apiGroup: 'apps', resource: 'deployments', namespace: 'x', name: 'd' },
      false,
    ],
    [
      '"pods/*" is listed (not an RBAC pattern) and pods/log is asked',
      { verbs: ['get'], apiGroups: [''], resources: ['pods/*'] },
      { verb: 'get', apiGroup: '', resource: 'pods', subresource: 'log', namespace: 'x', name: 'p' },
      false,
    ],
    [
      'resources is "*" and a subresource is asked',
      { verbs: ['get'], apiGroups: [''], resources: ['*'] },
      { verb: 'get', apiGroup: '', resource: 'pods', subresource: 'log', namespace: 'x', name: 'p' },
      true,
    ],
    [
      'resourceNames lists the object asked',
      { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['k'] },
      { verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'x', name: 'k' },
      true,
    ],
    [
      'resourceNames does not list the object asked',
      { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['k'] },
      { verb: 'get', apiGroup: '', resource: 'secrets', namespace: 'x', name: 'other' },
      false,
    ],
    [
      'resourceNames is set and a list (no name) is asked',
      { verbs: ['list'], apiGroups: [''], resources: ['secrets'], resourceNames: ['k'] },
      { verb: 'list', apiGroup: '', resource: 'secrets', namespace: 'x' },
      false,
    ],
    [
      'a non-resource URL is listed exactly',
      { verbs: ['get'], nonResourceURLs: ['/metrics'] },
      { verb: 'get', path: '/metrics' },
      true,
    ],
    [
      'a non-resource URL prefix ends in "*"',
      { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
      { verb: 'get', path: '/logs/kube-apiserver.log' },
      true,
    ],
    [
      'a non-resource URL is listed without "*" and a longer path is asked',
      { verbs: ['get'], nonResourceURLs: ['/logs'] },
      { verb: 'get', path: '/logs/x' },
      false,
    ],
    [
      'a non-resource rule is asked about a resource',
      { verbs: ['*'], nonResourceURLs: ['*'] },
      { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'x', name: 'p' },
      false,
    ],
    [
      'a resource rule is asked about a path',
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verb: 'get', path: '/healthz' },
      false,
    ],
  ];
  test.each(cases)('when %s, then the rule decides right', (_name, rule, attributes, allowed) => {
    expect(rbacRuleAllows(rule, attributes)).toBe(allowed);
  });
});

describe('the compiled RBAC index (pure)', () => {
  const readNodes = { verbs: ['get', 'list'], apiGroups: [''], resources: ['nodes'] };
  const readPods = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
  const objects: RbacObjects = {
    clusterRoles: [
      { metadata: { name: 'node-reader' }, rules: [readNodes] },
      { metadata: { name: 'pod-reader' }, rules: [readPods] },
      { metadata: { name: 'metrics' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }] },
    ],
    roles: [{ metadata: { name: 'pods', namespace: 'a' }, rules: [readPods] }],
    clusterRoleBindings: [
      {
        metadata: { name: 'nodes-to-alice' },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'node-reader' },
        subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }],
      },
      {
        metadata: { name: 'metrics-to-ops' },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'metrics' },
        subjects: [{ apiGroup: RBAC, kind: 'Group', name: 'ops' }],
      },
      {
        metadata: { name: 'dangling' },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'gone' },
        subjects: [{ apiGroup: RBAC, kind: 'User', name: 'carol' }],
      },
    ],
    roleBindings: [
      {
        metadata: { name: 'pods-to-bob', namespace: 'a' },
        roleRef: { apiGroup: RBAC, kind: 'Role', name: 'pods' },
        subjects: [{ apiGroup: RBAC, kind: 'User', name: 'bob' }],
      },
      {
        metadata: { name: 'metrics-in-a', namespace: 'a' },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'metrics' },
        subjects: [{ apiGroup: RBAC, kind: 'User', name: 'bob' }],
      },
      {
        // A ServiceAccount subject without a namespace means one in the binding's namespace.
        metadata: { name: 'pods-to-sa', namespace: 'a' },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'pod-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'robot' }],
      },
    ],
  };
  const index = RbacIndex.compile(objects);
  const user = (username: string, groups: string[] = []): SandboxUser => ({ username, groups });
  const cases: [string, SandboxUser, AccessAttributes, boolean][] = [
    ['a ClusterRoleBinding names the user', user('alice'), { verb: 'list', apiGroup: '', resource: 'nodes' }, true],
    [
      'a ClusterRoleBinding grants in every namespace',
      user('alice'),
      { verb: 'get', apiGroup: '', resource: 'nodes', name: 'n', namespace: 'z' },
      true,
    ],
    ['nothing names the user', user('mallory'), { verb: 'list', apiGroup: '', resource: 'nodes' }, false],
    [
      'a RoleBinding grants in its namespace',
      user('bob'),
      { verb: 'list', apiGroup: '', resource: 'pods', namespace: 'a' },
      true,
    ],
    [
      'a RoleBinding is asked about elsewhere',
      user('bob'),
      { verb: 'list', apiGroup: '', resource: 'pods', namespace: 'b' },
      false,
    ],
    [
      'a RoleBinding is asked about the cluster scope',
      user('bob'),
      { verb: 'list', apiGroup: '', resource: 'pods' },
      false,
    ],
    [
      'a RoleBinding to a ClusterRole with non-resource URLs is asked about a path',
      user('bob'),
      { verb: 'get', path: '/metrics' },
      false,
    ],
    ['a group subject matches one of the groups', user('dan', ['ops']), { verb: 'get', path: '/metrics' }, true],
    [
      'a namespace-less ServiceAccount subject is the binding namespace account',
      user('system:serviceaccount:a:robot'),
      { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'a', name: 'p' },
      true,
    ],
    [
      'the same account name in another namespace asks',
      user('system:serviceaccount:b:robot'),
      { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'a', name: 'p' },
      false,
    ],
    ['a binding refers to a missing role', user('carol'), { verb: 'list', apiGroup: '', resource: 'nodes' }, false],
  ];
  test.each(cases)('when %s, then the decision is right', (_name, subject, attributes, allowed) => {
    expect(index.decide(subject, attributes).allowed).toBe(allowed);
  });

  test("when a binding allows, then the reason names it as kube's RBAC authorizer does", () => {
    expect(index.decide(user('alice'), { verb: 'list', apiGroup: '', resource: 'nodes' }).reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "nodes-to-alice" of ClusterRole "node-reader" to User "alice"',
    );
    expect(
      index.decide(user('system:serviceaccount:a:robot'), {
        verb: 'list',
        apiGroup: '',
        resource: 'pods',
        namespace: 'a',
      }).reason,
    ).toBe('RBAC: allowed by RoleBinding "pods-to-sa/a" of ClusterRole "pod-reader" to ServiceAccount "robot/a"');
  });

  test('when the rules of a user are listed, then bindings of the namespace count and a missing role makes them incomplete', () => {
    expect(index.rulesFor(user('bob'), 'a')).toEqual({
      resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
      incomplete: false,
      evaluationErrors: [],
    });
    expect(index.rulesFor(user('bob'), 'b').resourceRules).toEqual([]);
    expect(index.rulesFor(user('carol'), 'a')).toMatchObject({
      incomplete: true,
      evaluationErrors: ['clusterrole.rbac.authorization.k8s.io "gone" not found'],
    });
  });
});

describe('the store-backed RBAC authorizer', () => {
  function setup() {
    const registry = new ResourceRegistry();
    for (const type of rbacTypes()) registry.register(type);
    const store = new ObjectStore();
    const type = (resource: string) => registry.byGroupResource(RBAC, resource) as ResourceType;
    return { store, type, rbac: new RbacAuthorizer(registry, store) };
  }

  test('when no RBAC object changes, then decisions reuse one compiled index; a write compiles a new one', () => {
    const { store, type, rbac } = setup();
    const alice = { username: 'alice', groups: [] };
    const listNodes: AccessAttributes = { verb: 'list', apiGroup: '', resource: 'nodes' };
    const first = rbac.index;
    expect(rbac.decide(alice, listNodes).allowed).toBe(false);
    expect(rbac.index).toBe(first);

    store.create(type('clusterroles'), {
      metadata: { name: 'r', uid: 'u1' },
      rules: [{ verbs: ['list'], apiGroups: [''], resources: ['nodes'] }],
    });
    store.create(type('clusterrolebindings'), {
      metadata: { name: 'b', uid: 'u2' },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'r' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }],
    });
    expect(rbac.decide(alice, listNodes).allowed).toBe(true);
    const second = rbac.index;
    expect(second).not.toBe(first);
    expect(rbac.decide(alice, listNodes).allowed).toBe(true);
    expect(rbac.index).toBe(second);

    const binding = store.collection(type('clusterrolebindings')).get('b')!;
    store.remove(type('clusterrolebindings'), binding);
    expect(rbac.decide(alice, listNodes).allowed).toBe(false);
  });
});

describe('aggregated ClusterRoles, as kube’s aggregation controller fills them', () => {
  const RBAC_GROUP = 'rbac.authorization.k8s.io';
  const aggregate = (to: string) => ({
    clusterRoleSelectors: [{ matchLabels: { [`${RBAC_GROUP}/aggregate-to-${to}`]: 'true' } }],
  });
  const index = RbacIndex.compile({
    clusterRoles: [
      // view carries the label that aggregates it into edit, as the bootstrap roles do
      {
        metadata: { name: 'view', labels: { [`${RBAC_GROUP}/aggregate-to-edit`]: 'true' } },
        aggregationRule: aggregate('view'),
        rules: [],
      },
      {
        metadata: { name: 'edit' },
        aggregationRule: aggregate('edit'),
        rules: [{ verbs: ['create'], apiGroups: [''], resources: ['pods'] }],
      },
      {
        metadata: { name: 'monitoring-view', labels: { [`${RBAC_GROUP}/aggregate-to-view`]: 'true' } },
        rules: [{ verbs: ['get'], apiGroups: ['monitoring.kapi.io'], resources: ['pods'] }],
      },
      {
        metadata: { name: 'unlabelled' },
        rules: [{ verbs: ['get'], apiGroups: ['secret.example'], resources: ['*'] }],
      },
    ],
    roles: [],
    clusterRoleBindings: [],
    roleBindings: [
      {
        metadata: { name: 'viewer', namespace: 'a' },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: RBAC_GROUP, kind: 'User', name: 'vera' }],
      },
      {
        metadata: { name: 'editor', namespace: 'a' },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'edit' },
        subjects: [{ apiGroup: RBAC_GROUP, kind: 'User', name: 'ed' }],
      },
    ],
  });
  const metrics = { verb: 'get', apiGroup: 'monitoring.kapi.io', resource: 'pods', namespace: 'a' };

  test('when a ClusterRole is labelled aggregate-to-view, then view grants its rules, and edit through view', () => {
    expect(index.decide({ username: 'vera', groups: [] }, metrics).allowed).toBe(true);
    expect(index.decide({ username: 'ed', groups: [] }, metrics).allowed).toBe(true);
    // edit keeps its own rules; nothing unlabelled is picked; the grant stays in the binding's namespace
    expect(
      index.decide({ username: 'ed', groups: [] }, { verb: 'create', apiGroup: '', resource: 'pods', namespace: 'a' })
        .allowed,
    ).toBe(true);
    expect(index.decide({ username: 'vera', groups: [] }, { ...metrics, apiGroup: 'secret.example' }).allowed).toBe(
      false,
    );
    expect(index.decide({ username: 'vera', groups: [] }, { ...metrics, namespace: 'b' }).allowed).toBe(false);
  });
});
