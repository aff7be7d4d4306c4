import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1Deployment,
  V1NetworkPolicy,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
} from '@kubernetes/client-node';
import { findObject, objectsOfKind, renderChart, type KubeObject } from './helm.js';

interface Request {
  apiGroup: string;
  /** `resource` or `resource/subresource`, as RBAC names them. */
  resource: string;
  verb: string;
}

/** RBAC's own matching, without wildcards (the chart must not use any): a rule names the group, resource and verb. */
function allows(rules: readonly V1PolicyRule[], request: Request): boolean {
  return rules.some(
    (rule) =>
      (rule.apiGroups ?? []).includes(request.apiGroup) &&
      (rule.resources ?? []).includes(request.resource) &&
      rule.verbs.includes(request.verb) &&
      (rule.resourceNames ?? []).length === 0,
  );
}

describe('chart RBAC', () => {
  let objects: KubeObject[];
  let clusterRules: V1PolicyRule[];
  let namespaceRules: V1PolicyRule[];

  beforeAll(async () => {
    objects = await renderChart();
    clusterRules = findObject<V1ClusterRole>(objects, 'ClusterRole', 'kapi-apiserver').rules ?? [];
    namespaceRules = findObject<V1Role>(objects, 'Role', 'kapi-apiserver').rules ?? [];
  });

  test('when rendered, then no rule of any Role or ClusterRole uses a wildcard', () => {
    const roles = [...objectsOfKind<V1ClusterRole>(objects, 'ClusterRole'), ...objectsOfKind<V1Role>(objects, 'Role')];
    expect(roles.length).toBeGreaterThanOrEqual(2);
    for (const role of roles) {
      for (const rule of role.rules ?? []) {
        const names = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs, ...(rule.resourceNames ?? [])];
        expect(names.filter((name) => name.includes('*'))).toEqual([]);
        expect(rule.nonResourceURLs).toBeUndefined();
      }
    }
  });

  test.each<Request>([
    { apiGroup: '', resource: 'nodes', verb: 'list' },
    { apiGroup: '', resource: 'nodes', verb: 'watch' },
    { apiGroup: '', resource: 'pods', verb: 'watch' },
    { apiGroup: '', resource: 'namespaces', verb: 'list' },
    // the workspace label of namespaces (system-workspace; a deleted workspace's namespaces leave it)
    { apiGroup: '', resource: 'namespaces', verb: 'patch' },
    // projects made, moved and deleted through the tenant API (after a review of the caller on the workspace)
    { apiGroup: '', resource: 'namespaces', verb: 'create' },
    { apiGroup: '', resource: 'namespaces', verb: 'delete' },
    // workspace memberships, and workspaces realized in RBAC (RoleBindings in their namespaces)
    ...['list', 'watch', 'create', 'delete'].map((verb) => ({
      apiGroup: 'iam.kapi.io',
      resource: 'workspacerolebindings',
      verb,
    })),
    { apiGroup: 'rbac.authorization.k8s.io', resource: 'rolebindings', verb: 'create' },
    { apiGroup: 'rbac.authorization.k8s.io', resource: 'rolebindings', verb: 'update' },
    ...['get', 'create', 'patch', 'delete'].map((verb) => ({
      apiGroup: 'tenant.kapi.io',
      resource: 'workspacetemplates',
      verb,
    })),
    { apiGroup: '', resource: 'pods/log', verb: 'get' },
    { apiGroup: '', resource: 'users', verb: 'impersonate' },
    { apiGroup: '', resource: 'groups', verb: 'impersonate' },
    { apiGroup: 'authentication.k8s.io', resource: 'uids', verb: 'impersonate' },
    { apiGroup: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'create' },
    { apiGroup: 'iam.kapi.io', resource: 'users', verb: 'watch' },
    // a directory user's first login creates the User (auto); a password change patches spec.password
    { apiGroup: 'iam.kapi.io', resource: 'users', verb: 'create' },
    { apiGroup: 'iam.kapi.io', resource: 'users', verb: 'patch' },
    // the users' administration (after a review of the caller): a deleted user goes with its bindings
    { apiGroup: 'iam.kapi.io', resource: 'users', verb: 'delete' },
    { apiGroup: 'iam.kapi.io', resource: 'globalrolebindings', verb: 'create' },
    { apiGroup: 'iam.kapi.io', resource: 'globalrolebindings', verb: 'delete' },
    { apiGroup: 'rbac.authorization.k8s.io', resource: 'rolebindings', verb: 'delete' },
    { apiGroup: 'iam.kapi.io', resource: 'globalroles', verb: 'create' },
    { apiGroup: 'iam.kapi.io', resource: 'globalroles', verb: 'patch' },
    { apiGroup: 'iam.kapi.io', resource: 'globalroles', verb: 'delete' },
    { apiGroup: 'iam.kapi.io', resource: 'loginhistories', verb: 'create' },
    { apiGroup: 'iam.kapi.io', resource: 'loginhistories', verb: 'update' },
    { apiGroup: 'iam.kapi.io', resource: 'loginhistories', verb: 'delete' },
    { apiGroup: 'iam.kapi.io', resource: 'users/status', verb: 'patch' },
    { apiGroup: 'iam.kapi.io', resource: 'users/status', verb: 'update' },
    { apiGroup: 'iam.kapi.io', resource: 'loginsessions', verb: 'create' },
    { apiGroup: 'iam.kapi.io', resource: 'loginsessions', verb: 'deletecollection' },
    { apiGroup: 'iam.kapi.io', resource: 'coderedemptions', verb: 'create' },
    { apiGroup: 'iam.kapi.io', resource: 'coderedemptions', verb: 'delete' },
    // the platform's roles realized in RBAC (ClusterRoles and their bindings; escalate and bind, since a realized
    // role may hold more than kapi's own rules)
    ...['create', 'update', 'delete', 'escalate', 'bind'].flatMap((verb) =>
      ['clusterroles', 'clusterrolebindings'].map((resource) => ({
        apiGroup: 'rbac.authorization.k8s.io',
        resource,
        verb,
      })),
    ),
    { apiGroup: 'iam.kapi.io', resource: 'globalroles', verb: 'watch' },
    { apiGroup: 'iam.kapi.io', resource: 'globalrolebindings', verb: 'watch' },
    // the listings' on-demand caches: list and watch of every listed kind but secrets
    ...[
      ['', ['services', 'configmaps', 'serviceaccounts', 'persistentvolumeclaims', 'persistentvolumes', 'events']],
      ['apps', ['deployments', 'statefulsets', 'daemonsets', 'replicasets']],
      ['batch', ['jobs', 'cronjobs']],
      ['networking.k8s.io', ['ingresses', 'networkpolicies']],
      ['storage.k8s.io', ['storageclasses']],
      ['rbac.authorization.k8s.io', ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']],
      ['apiextensions.k8s.io', ['customresourcedefinitions']],
    ].flatMap(([apiGroup, resources]) =>
      (resources as string[]).flatMap((resource) =>
        ['list', 'watch'].map((verb) => ({ apiGroup: apiGroup as string, resource, verb })),
      ),
    ),
  ])('when the server needs to $verb $resource cluster-wide, then the ClusterRole allows it', (request) => {
    expect(allows(clusterRules, request)).toBe(true);
  });

  test.each<Request>([
    { apiGroup: '', resource: 'secrets', verb: 'get' },
    { apiGroup: '', resource: 'secrets', verb: 'list' },
    { apiGroup: '', resource: 'serviceaccounts', verb: 'impersonate' },
    { apiGroup: '', resource: 'pods', verb: 'create' },
    { apiGroup: '', resource: 'pods/exec', verb: 'create' },
    { apiGroup: '', resource: 'nodes', verb: 'update' },
    { apiGroup: 'iam.kapi.io', resource: 'users', verb: 'update' },
    // platform roles are created, patched and deleted through kapi's API; nothing else is written
    { apiGroup: 'iam.kapi.io', resource: 'globalroles', verb: 'update' },
    { apiGroup: 'iam.kapi.io', resource: 'globalrolebindings', verb: 'update' },
    { apiGroup: 'installer.kapi.io', resource: 'clusterconfigurations', verb: 'get' },
    // the listings read through their watches only: no get, no writes
    { apiGroup: 'apps', resource: 'deployments', verb: 'get' },
    { apiGroup: 'apps', resource: 'deployments', verb: 'update' },
    { apiGroup: '', resource: 'configmaps', verb: 'get' },
    { apiGroup: 'rbac.authorization.k8s.io', resource: 'roles', verb: 'bind' },
    { apiGroup: 'rbac.authorization.k8s.io', resource: 'roles', verb: 'escalate' },
    { apiGroup: 'iam.kapi.io', resource: 'workspacerolebindings', verb: 'update' },
  ])('when asked whether the ClusterRole allows $verb $resource, then it does not', (request) => {
    expect(allows(clusterRules, request)).toBe(false);
  });

  test('when rendered, then no cluster-wide rule of any ClusterRole mentions secrets or ServiceAccount impersonation', () => {
    const roles = objectsOfKind<V1ClusterRole>(objects, 'ClusterRole');
    // the platform's cluster role templates are what cluster roles are made of, given by an admin who holds them: only
    // the one managing project resources (KubeSphere's menu of Secrets among them) grants Secrets
    const template = (role: V1ClusterRole) => role.metadata?.labels?.['iam.kapi.io/role-template'] === 'true';
    expect(
      roles.filter((role) => template(role) && role.rules?.some((rule) => rule.resources?.includes('secrets'))),
    ).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ name: 'role-template-manage-project-resources' }) })]);
    for (const role of roles.filter((role) => !template(role))) {
      for (const rule of role.rules ?? []) {
        expect(rule.resources ?? []).not.toContain('secrets');
        if (rule.verbs.includes('impersonate')) expect(rule.resources ?? []).not.toContain('serviceaccounts');
      }
    }
  });

  test.each<Request>([
    { apiGroup: '', resource: 'secrets', verb: 'get' },
    { apiGroup: '', resource: 'secrets', verb: 'watch' },
    { apiGroup: 'installer.kapi.io', resource: 'clusterconfigurations', verb: 'watch' },
    { apiGroup: 'installer.kapi.io', resource: 'clusterconfigurations/status', verb: 'update' },
    { apiGroup: 'installer.kapi.io', resource: 'clusterconfigurations/status', verb: 'patch' },
    // the users' password Secrets, written when a password is set and deleted with the user
    { apiGroup: '', resource: 'secrets', verb: 'create' },
    { apiGroup: '', resource: 'secrets', verb: 'update' },
    { apiGroup: '', resource: 'secrets', verb: 'delete' },
  ])('when the server needs to $verb $resource in its namespace, then the namespaced Role allows it', (request) => {
    expect(allows(namespaceRules, request)).toBe(true);
  });

  test('when the kubectl toolbox is on (the default), then kapi makes, replaces and opens pods in its namespace only, and is told where kubectl reaches it', async () => {
    for (const verb of ['get', 'create', 'delete'])
      expect(allows(namespaceRules, { apiGroup: '', resource: 'pods', verb })).toBe(true);
    expect(allows(namespaceRules, { apiGroup: '', resource: 'pods/exec', verb: 'create' })).toBe(true);
    // a WebSocket exec is a get before Kubernetes 1.30
    expect(allows(namespaceRules, { apiGroup: '', resource: 'pods/exec', verb: 'get' })).toBe(true);
    expect(allows(namespaceRules, { apiGroup: '', resource: 'pods', verb: 'update' })).toBe(false);
    expect(allows(clusterRules, { apiGroup: '', resource: 'pods/exec', verb: 'create' })).toBe(false);
    expect(allows(clusterRules, { apiGroup: '', resource: 'pods', verb: 'create' })).toBe(false);
    const env = (rendered: KubeObject[]) =>
      Object.fromEntries(
        (
          findObject<V1Deployment>(rendered, 'Deployment', 'kapi-apiserver').spec!.template.spec!.containers[0]!.env ??
          []
        ).map((variable) => [variable.name, variable.value ?? variable.valueFrom?.fieldRef?.fieldPath]),
      );
    expect(env(objects)).toMatchObject({
      KAPI_KUBECTL_IMAGE: expect.stringMatching(/\S+:\S+/),
      KAPI_KUBECTL_TOOLBOX_URL: 'https://kapi-apiserver.kapi-system.svc:443',
      POD_IP: 'status.podIP',
    });
    const off = await renderChart(['--set', 'kubectlToolbox.enabled=false']);
    const offRules = findObject<V1Role>(off, 'Role', 'kapi-apiserver').rules ?? [];
    expect(offRules.some((rule) => rule.resources?.some((resource) => resource.startsWith('pods')))).toBe(false);
    expect(env(off)).not.toHaveProperty('KAPI_KUBECTL_IMAGE');
    // the users' shells reach kapi's HTTPS port and DNS only, and nothing reaches them
    const policy = findObject<V1NetworkPolicy>(objects, 'NetworkPolicy', 'kapi-kubectl-toolbox');
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'kapi-kubectl' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [
        {
          to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'kapi-apiserver', 'app.kubernetes.io/instance': expect.any(String) } } }],
          ports: [{ protocol: 'TCP', port: 9443 }],
        },
        {
          to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
      ],
    });
    expect(objectsOfKind(off, 'NetworkPolicy')).toEqual([]);
  });

  test.each<Request>([
    { apiGroup: '', resource: 'secrets', verb: 'deletecollection' },
    { apiGroup: '', resource: 'secrets', verb: 'patch' },
    { apiGroup: 'installer.kapi.io', resource: 'clusterconfigurations', verb: 'update' },
  ])('when asked whether the namespaced Role allows $verb $resource, then it does not', (request) => {
    expect(allows(namespaceRules, request)).toBe(false);
  });

  test('when rendered, then the Role and its binding live in the release namespace and bind only the ServiceAccount', () => {
    const binding = findObject<V1RoleBinding>(objects, 'RoleBinding', 'kapi-apiserver');
    expect(findObject<V1Role>(objects, 'Role', 'kapi-apiserver').metadata!.namespace).toBe('kapi-system');
    expect(binding.metadata!.namespace).toBe('kapi-system');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kapi-apiserver' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'kapi-apiserver', namespace: 'kapi-system' }]);
  });

  test('when rendered, then the ServiceAccount is bound cluster-wide only to its own ClusterRole, never to cluster-admin', () => {
    const bindings = objectsOfKind<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding');
    const ofServiceAccount = bindings.filter((binding) =>
      (binding.subjects ?? []).some((subject) => subject.kind === 'ServiceAccount' && subject.name === 'kapi-apiserver'),
    );
    expect(ofServiceAccount.map((binding) => binding.roleRef)).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kapi-apiserver' },
    ]);
    expect(ofServiceAccount[0]!.subjects).toEqual([{ kind: 'ServiceAccount', name: 'kapi-apiserver', namespace: 'kapi-system' }]);
  });

  test('when admin.clusterAdmin is on (the default), then only the kapi user "admin" is bound to cluster-admin', () => {
    const toClusterAdmin = objectsOfKind<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding').filter(
      (binding) => binding.roleRef.name === 'cluster-admin',
    );
    expect(toClusterAdmin).toHaveLength(1);
    expect(toClusterAdmin[0]!.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'admin' }]);
  });

  test('when admin.clusterAdmin=false, then nothing is bound to cluster-admin', async () => {
    const rendered = await renderChart(['--set', 'admin.clusterAdmin=false']);
    const bindings = objectsOfKind<V1ClusterRoleBinding>(rendered, 'ClusterRoleBinding');
    expect(bindings.map((binding) => binding.roleRef.name)).toEqual(['kapi-apiserver']);
  });

  test('when rbac.impersonateUserExtras names keys, then exactly those userextras are impersonable', async () => {
    const rendered = await renderChart(['--set', 'rbac.impersonateUserExtras={scopes,tenant}']);
    const rules = findObject<V1ClusterRole>(rendered, 'ClusterRole', 'kapi-apiserver').rules ?? [];
    const request = (resource: string): Request => ({ apiGroup: 'authentication.k8s.io', resource, verb: 'impersonate' });
    expect(allows(rules, request('userextras/scopes'))).toBe(true);
    expect(allows(rules, request('userextras/tenant'))).toBe(true);
    expect(allows(rules, request('userextras/other'))).toBe(false);
    expect(allows(clusterRules, request('userextras/scopes'))).toBe(false);
  });
});
