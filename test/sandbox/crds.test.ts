import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, openWatch, readEvents, testSandbox, type Json } from './helpers.js';

function widgetCrd(scope: 'Namespaced' | 'Cluster' = 'Namespaced', status = true) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.kapi.io' },
    spec: {
      group: 'example.kapi.io',
      scope,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          ...(status ? { subresources: { status: {} } } : {}),
          selectableFields: [{ jsonPath: '.spec.color' }],
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.stop());

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const widgets = '/apis/example.kapi.io/v1/namespaces/default/widgets';

describe('custom resource definitions', () => {
  beforeAll(async () => {
    const res = await call<Json>(sandbox, 'POST', crdPath, { body: widgetCrd() });
    expect(res.status).toBe(201);
  });

  test('when a CRD is created, then it is Established and its group appears in discovery', async () => {
    const crd = await call<Json>(sandbox, 'GET', `${crdPath}/widgets.example.kapi.io`);
    expect(crd.body.status.conditions.map((c: Json) => `${c.type}=${c.status}`)).toEqual([
      'NamesAccepted=True',
      'Established=True',
    ]);
    expect(crd.body.status.acceptedNames).toMatchObject({ kind: 'Widget', listKind: 'WidgetList', plural: 'widgets' });
    const groups = await call<Json>(sandbox, 'GET', '/apis');
    expect(groups.body.groups.map((g: Json) => g.name)).toContain('example.kapi.io');
    const resources = await call<Json>(sandbox, 'GET', '/apis/example.kapi.io/v1');
    expect(resources.body.resources.map((r: Json) => r.name)).toEqual(['widgets', 'widgets/status']);
    expect(resources.body.resources[0]).toMatchObject({ kind: 'Widget', namespaced: true, shortNames: ['wd'] });
  });

  test('when a custom resource is created, then it has generation 1, no status, and CR lists carry kind per item', async () => {
    const res = await call<Json>(sandbox, 'POST', widgets, {
      body: {
        apiVersion: 'example.kapi.io/v1',
        kind: 'Widget',
        metadata: { name: 'w1' },
        spec: { color: 'red' },
        status: { ready: true },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ apiVersion: 'example.kapi.io/v1', kind: 'Widget', metadata: { generation: 1 } });
    expect(res.body.status).toBeUndefined();
    const list = await call<Json>(sandbox, 'GET', widgets);
    expect(list.body).toMatchObject({ kind: 'WidgetList', apiVersion: 'example.kapi.io/v1' });
    expect(list.body.items[0]).toMatchObject({ kind: 'Widget', apiVersion: 'example.kapi.io/v1' });
  });

  test('when the main resource is updated, then status changes are ignored and spec changes bump generation', async () => {
    await call(sandbox, 'POST', widgets, { body: { metadata: { name: 'w2' }, spec: { color: 'blue' } } });
    await call(sandbox, 'PUT', `${widgets}/w2/status`, {
      body: { metadata: { name: 'w2' }, status: { phase: 'Ready' } },
    });
    const res = await call<Json>(sandbox, 'PATCH', `${widgets}/w2`, {
      body: { spec: { color: 'green' }, status: { phase: 'Broken' } },
      contentType: 'application/merge-patch+json',
    });
    expect(res.body.spec.color).toBe('green');
    expect(res.body.status).toEqual({ phase: 'Ready' });
    expect(res.body.metadata.generation).toBe(2);
  });

  test('when the status subresource is written, then only status changes and generation stays', async () => {
    await call(sandbox, 'POST', widgets, {
      body: { metadata: { name: 'w3', labels: { a: 'b' } }, spec: { color: 'red' } },
    });
    const res = await call<Json>(sandbox, 'PATCH', `${widgets}/w3/status`, {
      body: { spec: { color: 'black' }, metadata: { labels: { a: 'c' } }, status: { phase: 'Ready' } },
      contentType: 'application/merge-patch+json',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      spec: { color: 'red' },
      metadata: { labels: { a: 'b' }, generation: 1 },
      status: { phase: 'Ready' },
    });
  });

  test('when a CRD declares selectable fields, then field selectors on them work and others are 400', async () => {
    const red = await call<Json>(sandbox, 'GET', `${widgets}?fieldSelector=spec.color%3Dred`);
    expect(red.body.items.map((i: Json) => i.metadata.name).sort()).toEqual(['w1', 'w3']);
    expect((await call(sandbox, 'GET', `${widgets}?fieldSelector=spec.size%3D1`)).status).toBe(400);
  });

  test('when a custom resource is missing or invalid, then the errors name its group', async () => {
    const missing = await call<Json>(sandbox, 'GET', `${widgets}/nope`);
    expect(missing.body).toMatchObject({
      message: 'widgets.example.kapi.io "nope" not found',
      details: { group: 'example.kapi.io', kind: 'widgets' },
    });
    const invalid = await call<Json>(sandbox, 'POST', widgets, { body: { metadata: { name: 'UPPER' } } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toMatch(/^Widget.example.kapi.io "UPPER" is invalid/);
  });

  test('when a CRD is invalid, then create is 422', async () => {
    const bad = widgetCrd();
    bad.metadata.name = 'wrong.example.kapi.io';
    const res = await call<Json>(sandbox, 'POST', crdPath, { body: bad });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/must be spec.names.plural\+"."\+spec.group/);
  });

  test('when a CRD of a Kubernetes group has no approval annotation, then 422 as kube-apiserver answers; with one, 201', async () => {
    const crd = (group: string, annotations?: Record<string, string>) => ({
      ...widgetCrd(),
      metadata: { name: `widgets.${group}`, ...(annotations && { annotations }) },
      spec: { ...widgetCrd().spec, group },
    });
    for (const group of ['snapshot.storage.k8s.io', 'k8s.io', 'x.kubernetes.io']) {
      const refused = await call<Json>(sandbox, 'POST', crdPath, { body: crd(group) });
      expect(refused.status).toBe(422);
      expect(refused.body.message).toContain(
        'protected groups must have approval annotation "api-approved.kubernetes.io"',
      );
    }
    const approved = crd('app.k8s.io', {
      'api-approved.kubernetes.io': 'https://github.com/kubernetes-sigs/application/pull/2',
    });
    expect((await call<Json>(sandbox, 'POST', crdPath, { body: approved })).status).toBe(201);
    expect((await call<Json>(sandbox, 'DELETE', `${crdPath}/widgets.app.k8s.io`)).status).toBe(200);
    // a group that only ends like one is not protected
    expect((await call<Json>(sandbox, 'POST', crdPath, { body: crd('notk8s.io') })).status).toBe(201);
    expect((await call<Json>(sandbox, 'DELETE', `${crdPath}/widgets.notk8s.io`)).status).toBe(200);
  });

  test('when a CRD is deleted, then its resources are deleted (watchers see DELETED), its watches end and its paths are 404', async () => {
    const crd = { ...widgetCrd('Cluster', false), metadata: { name: 'gadgets.example.kapi.io' } };
    crd.spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', shortNames: [] };
    expect((await call(sandbox, 'POST', crdPath, { body: crd })).status).toBe(201);
    const gadgets = '/apis/example.kapi.io/v1/gadgets';
    await call(sandbox, 'POST', gadgets, { body: { metadata: { name: 'g1' }, spec: {} } });
    const rv = (await call<Json>(sandbox, 'GET', gadgets)).body.metadata.resourceVersion;
    const { res, abort } = await openWatch(sandbox, `${gadgets}?watch=1&resourceVersion=${rv}`);
    const pending = readEvents(res, 2, 2000);
    const deleted = await call<Json>(sandbox, 'DELETE', `${crdPath}/gadgets.example.kapi.io`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.kind).toBe('CustomResourceDefinition');
    const events = await pending;
    abort.abort();
    expect(events.map((e) => e.type)).toEqual(['DELETED']);
    expect((await call(sandbox, 'GET', gadgets)).status).toBe(404);
  });
});

describe('CRD directory', () => {
  test('when crdDir holds YAML files with several documents, then every CRD in them is registered at start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-crds-'));
    try {
      const yaml = (name: string, kind: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${name}s.example.kapi.io
spec:
  group: example.kapi.io
  scope: Cluster
  names: {plural: ${name}s, singular: ${name}, kind: ${kind}}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object}}
`;
      await writeFile(join(dir, 'two.yaml'), `${yaml('apple', 'Apple')}---\n${yaml('pear', 'Pear')}`);
      await writeFile(join(dir, 'notes.txt'), 'not yaml');
      const loaded = await testSandbox({ crdDir: dir, seed: false });
      try {
        const crds = await call<Json>(loaded, 'GET', crdPath);
        expect(crds.body.items.map((i: Json) => i.metadata.name)).toEqual([
          'apples.example.kapi.io',
          'pears.example.kapi.io',
        ]);
        expect((await call(loaded, 'GET', '/apis/example.kapi.io/v1alpha1/pears')).status).toBe(200);
      } finally {
        await loaded.stop();
      }
      await writeFile(join(dir, 'broken.yaml'), 'kind: CustomResourceDefinition\nmetadata: {name: nope}\nspec: {}\n');
      await expect(testSandbox({ crdDir: dir, seed: false })).rejects.toThrow(/broken.yaml/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
