import type { Sandbox } from '../../src/sandbox/index.js';
import { call, testSandbox, type Json } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.stop());

describe('discovery', () => {
  test('when /version is read, then it reports a 1.35 kube-apiserver', async () => {
    const res = await call<Json>(sandbox, 'GET', '/version');
    expect(res.body).toMatchObject({ major: '1', minor: '35', gitVersion: 'v1.35.0', platform: 'linux/amd64' });
  });

  test('when /api and /api/v1 are read, then the core resources list kind, scope, verbs and short names', async () => {
    const api = await call<Json>(sandbox, 'GET', '/api');
    expect(api.body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const v1 = await call<Json>(sandbox, 'GET', '/api/v1');
    expect(v1.body).toMatchObject({ kind: 'APIResourceList', groupVersion: 'v1' });
    const byName = new Map(v1.body.resources.map((r: Json) => [r.name, r]));
    expect(byName.get('nodes')).toMatchObject({
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      verbs: expect.arrayContaining(['get', 'list', 'watch', 'create', 'patch']),
    });
    expect(byName.get('pods')).toMatchObject({ kind: 'Pod', namespaced: true, shortNames: ['po'] });
    expect(byName.get('namespaces')).toMatchObject({ shortNames: ['ns'] });
    expect(byName.get('configmaps')).toMatchObject({ shortNames: ['cm'] });
    expect(byName.get('services')).toMatchObject({ shortNames: ['svc'] });
    expect(byName.get('pods/log')).toMatchObject({ kind: 'Pod', verbs: ['get'] });
    expect(byName.get('pods/exec')).toMatchObject({ kind: 'PodExecOptions', verbs: ['create', 'get'] });
  });

  test('when /apis is read, then the review groups and apiextensions are listed with their preferred versions', async () => {
    const apis = await call<Json>(sandbox, 'GET', '/apis');
    expect(apis.body.kind).toBe('APIGroupList');
    const names = apis.body.groups.map((g: Json) => g.name);
    expect(names).toEqual(
      expect.arrayContaining(['apiextensions.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io']),
    );
    const authz = await call<Json>(sandbox, 'GET', '/apis/authorization.k8s.io');
    expect(authz.body).toMatchObject({
      kind: 'APIGroup',
      name: 'authorization.k8s.io',
      preferredVersion: { groupVersion: 'authorization.k8s.io/v1', version: 'v1' },
    });
    const resources = await call<Json>(sandbox, 'GET', '/apis/authorization.k8s.io/v1');
    expect(resources.body.resources.map((r: Json) => r.name)).toEqual([
      'localsubjectaccessreviews',
      'selfsubjectaccessreviews',
      'selfsubjectrulesreviews',
      'subjectaccessreviews',
    ]);
  });

  test.each([
    [
      '/apis/apps/v1',
      'deployments',
      { kind: 'Deployment', namespaced: true, shortNames: ['deploy'], categories: ['all'] },
    ],
    ['/apis/apps/v1', 'statefulsets', { kind: 'StatefulSet', shortNames: ['sts'], categories: ['all'] }],
    ['/apis/apps/v1', 'daemonsets', { kind: 'DaemonSet', shortNames: ['ds'], categories: ['all'] }],
    ['/apis/apps/v1', 'replicasets', { kind: 'ReplicaSet', shortNames: ['rs'], categories: ['all'] }],
    ['/apis/apps/v1', 'deployments/status', { kind: 'Deployment', verbs: ['get', 'patch', 'update'] }],
    ['/apis/batch/v1', 'jobs', { kind: 'Job', categories: ['all'] }],
    ['/apis/batch/v1', 'cronjobs', { kind: 'CronJob', shortNames: ['cj'], categories: ['all'] }],
    ['/apis/networking.k8s.io/v1', 'ingresses', { kind: 'Ingress', shortNames: ['ing'] }],
    ['/apis/networking.k8s.io/v1', 'networkpolicies', { kind: 'NetworkPolicy', shortNames: ['netpol'] }],
    ['/apis/storage.k8s.io/v1', 'storageclasses', { kind: 'StorageClass', namespaced: false, shortNames: ['sc'] }],
    ['/api/v1', 'persistentvolumeclaims', { kind: 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'] }],
    ['/api/v1', 'persistentvolumes', { kind: 'PersistentVolume', namespaced: false, shortNames: ['pv'] }],
    ['/api/v1', 'events', { kind: 'Event', namespaced: true, shortNames: ['ev'] }],
  ])('when %s is read, then %s is listed as kube-apiserver lists it', async (path, name, expected) => {
    const list = await call<Json>(sandbox, 'GET', path);
    expect(list.body.resources.find((r: Json) => r.name === name)).toMatchObject(expected);
  });

  test('when /apis is read, then the workload, batch, networking and storage groups come in kube’s order', async () => {
    const apis = await call<Json>(sandbox, 'GET', '/apis');
    const names: string[] = apis.body.groups.map((g: Json) => g.name);
    const order = [
      'apps',
      'authorization.k8s.io',
      'batch',
      'networking.k8s.io',
      'rbac.authorization.k8s.io',
      'storage.k8s.io',
      'apiextensions.k8s.io',
    ];
    expect(order.map((group) => names.indexOf(group))).toEqual(
      [...order.map((group) => names.indexOf(group))].sort((a, b) => a - b),
    );
    expect(names).toEqual(expect.arrayContaining(order));
  });

  test('when an unknown group or version is read, then it is a 404 Status', async () => {
    expect((await call(sandbox, 'GET', '/apis/nope.example.com')).status).toBe(404);
    expect((await call(sandbox, 'GET', '/apis/apiextensions.k8s.io/v9')).status).toBe(404);
    expect((await call(sandbox, 'GET', '/api/v2')).status).toBe(404);
  });

  test('when health paths are read with a token, then they answer ok', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await call(sandbox, 'GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toBe('ok');
    }
  });
});

describe('openapi v3', () => {
  test('when /openapi/v3 is read, then every served group version points to its document', async () => {
    const root = await call<Json>(sandbox, 'GET', '/openapi/v3');
    expect(root.body.paths['api/v1'].serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/);
    expect(root.body.paths['apis/apiextensions.k8s.io/v1']).toBeDefined();
  });

  test('when a group version document is read, then PATCH operations name their kind and accept fieldValidation (what kubectl apply checks)', async () => {
    const doc = await call<Json>(sandbox, 'GET', '/openapi/v3/api/v1');
    const patch = doc.body.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: '', version: 'v1', kind: 'ConfigMap' });
    expect(patch.parameters.map((p: Json) => p.name)).toContain('fieldValidation');
    expect(doc.body.paths['/api/v1/nodes/{name}/status'].patch).toBeDefined();
    expect((await call(sandbox, 'GET', '/openapi/v3/apis/nope.io/v1')).status).toBe(404);
  });

  test('when a CRD is registered, then its document carries the CRD schema with its kind', async () => {
    await call(sandbox, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: 'things.example.kapi.io' },
        spec: {
          group: 'example.kapi.io',
          scope: 'Cluster',
          names: { plural: 'things', kind: 'Thing' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } },
            },
          ],
        },
      },
    });
    const doc = await call<Json>(sandbox, 'GET', '/openapi/v3/apis/example.kapi.io/v1');
    expect(doc.body.components.schemas['io.kapi.example.v1.Thing']).toMatchObject({
      type: 'object',
      'x-kubernetes-group-version-kind': [{ group: 'example.kapi.io', version: 'v1', kind: 'Thing' }],
    });
  });
});
