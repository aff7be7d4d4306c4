import http from 'node:http';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, configMap, testSandbox, type Json } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.stop());

const cms = '/api/v1/namespaces/default/configmaps';

describe('create and get', () => {
  test('when an object is created, then it gets uid, creationTimestamp and a numeric resourceVersion, and reads back', async () => {
    const created = await call<Json>(sandbox, 'POST', cms, { body: configMap('create-get') });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', data: { a: '1' } });
    expect(created.body.metadata).toMatchObject({ name: 'create-get', namespace: 'default' });
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(created.body.metadata.resourceVersion)).toBeGreaterThan(0);
    const got = await call<Json>(sandbox, 'GET', `${cms}/create-get`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
  });

  test('when a project’s pages read its LimitRanges and Endpoints, then both are served as kube-apiserver serves them', async () => {
    for (const [resource, kind, body] of [
      ['limitranges', 'LimitRange', { spec: { limits: [{ type: 'Container', default: { cpu: '500m' } }] } }],
      ['endpoints', 'Endpoints', { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] }],
    ] as const) {
      const path = `/api/v1/namespaces/default/${resource}`;
      expect((await call<Json>(sandbox, 'GET', path)).body).toMatchObject({ kind: `${kind}List`, items: [] });
      const created = await call<Json>(sandbox, 'POST', path, { body: { metadata: { name: 'page-reads' }, ...body } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ kind, apiVersion: 'v1', ...body });
      expect((await call<Json>(sandbox, 'GET', path)).body.items).toHaveLength(1);
      expect((await call<Json>(sandbox, 'DELETE', `${path}/page-reads`)).status).toBe(200);
    }
    const discovery = await call<Json>(sandbox, 'GET', '/api/v1');
    const served = discovery.body.resources.map((r: Json) => r.name);
    expect(served).toEqual(expect.arrayContaining(['limitranges', 'endpoints']));
  });

  test('when a name is taken, then create is 409 AlreadyExists with kube details', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('taken') });
    const again = await call(sandbox, 'POST', cms, { body: configMap('taken') });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "taken" already exists',
      reason: 'AlreadyExists',
      details: { name: 'taken', kind: 'configmaps' },
      code: 409,
    });
  });

  test('when generateName is given, then the server appends five characters', async () => {
    const created = await call<Json>(sandbox, 'POST', cms, { body: { metadata: { generateName: 'gen-' }, data: {} } });
    expect(created.status).toBe(201);
    expect(created.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  test('when the namespace does not exist, then create is 404 for the namespace', async () => {
    const res = await call(sandbox, 'POST', '/api/v1/namespaces/missing/configmaps', { body: configMap('x') });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      reason: 'NotFound',
      message: 'namespaces "missing" not found',
      details: { name: 'missing', kind: 'namespaces' },
    });
  });

  test('when a name is not a DNS subdomain, then create is 422 Invalid naming the field', async () => {
    const res = await call<Json>(sandbox, 'POST', cms, { body: configMap('Bad_Name') });
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe('Invalid');
    expect(res.body.message).toMatch(
      /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    expect(res.body.details).toMatchObject({
      name: 'Bad_Name',
      kind: 'ConfigMap',
      causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }],
    });
  });

  test('when neither name nor generateName is given, then create is 422 Required', async () => {
    const res = await call<Json>(sandbox, 'POST', cms, { body: { data: {} } });
    expect(res.status).toBe(422);
    expect(res.body.details.causes[0]).toMatchObject({ reason: 'FieldValueRequired', field: 'metadata.name' });
  });

  test('when the body is not JSON or names another kind or namespace, then create is 400', async () => {
    expect((await call(sandbox, 'POST', cms, { body: '{nope' })).status).toBe(400);
    expect((await call(sandbox, 'POST', cms, { body: { kind: 'Secret', metadata: { name: 'k' } } })).status).toBe(400);
    const wrongNs = await call<Json>(sandbox, 'POST', cms, { body: { metadata: { name: 'n', namespace: 'demo' } } });
    expect(wrongNs.status).toBe(400);
    expect(wrongNs.body.message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });

  test('when an object or a resource type is unknown, then the answer is a 404 Status', async () => {
    const res = await call(sandbox, 'GET', `${cms}/nope`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      message: 'configmaps "nope" not found',
      details: { name: 'nope', kind: 'configmaps' },
    });
    const unknown = await call(sandbox, 'GET', '/api/v1/widgets');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ message: 'the server could not find the requested resource' });
  });

  test('when a pod is created, then kube defaults apply and its status starts Pending with a QoS class', async () => {
    const pod = {
      metadata: { name: 'defaults' },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { cpu: '100m' } } }] },
      status: { phase: 'Running' },
    };
    const res = await call<Json>(sandbox, 'POST', '/api/v1/namespaces/default/pods', { body: pod });
    expect(res.status).toBe(201);
    expect(res.body.status).toEqual({ phase: 'Pending', qosClass: 'Burstable' });
    expect(res.body.spec).toMatchObject({
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      serviceAccountName: 'default',
    });
    expect(res.body.metadata.generation).toBe(1);
    const noContainers = await call<Json>(sandbox, 'POST', '/api/v1/namespaces/default/pods', {
      body: { metadata: { name: 'empty' }, spec: {} },
    });
    expect(noContainers.status).toBe(422);
    expect(noContainers.body.details.causes[0]).toMatchObject({
      field: 'spec.containers',
      reason: 'FieldValueRequired',
    });
  });

  test('when a secret has stringData, then it is stored base64-encoded in data', async () => {
    const res = await call<Json>(sandbox, 'POST', '/api/v1/namespaces/default/secrets', {
      body: { metadata: { name: 'string-data' }, stringData: { user: 'alice' } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'Opaque', data: { user: Buffer.from('alice').toString('base64') } });
    expect(res.body.stringData).toBeUndefined();
  });
});

describe('update', () => {
  test('when the resourceVersion is stale, then PUT is 409 Conflict; when current, it succeeds with a new one', async () => {
    const created = await call<Json>(sandbox, 'POST', cms, { body: configMap('put-me') });
    const rv = created.body.metadata.resourceVersion;
    const ok = await call<Json>(sandbox, 'PUT', `${cms}/put-me`, { body: { ...created.body, data: { a: '2' } } });
    expect(ok.status).toBe(200);
    expect(Number(ok.body.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
    expect(ok.body.metadata.uid).toBe(created.body.metadata.uid);
    const stale = await call<Json>(sandbox, 'PUT', `${cms}/put-me`, { body: { ...created.body, data: { a: '3' } } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on configmaps "put-me": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  test('when PUT carries no resourceVersion, then the update is unconditional', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('unconditional') });
    const res = await call<Json>(sandbox, 'PUT', `${cms}/unconditional`, {
      body: configMap('unconditional', { b: '1' }),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ b: '1' });
  });

  test('when an update changes nothing, then the resourceVersion stays', async () => {
    const created = await call<Json>(sandbox, 'POST', cms, { body: configMap('noop') });
    const res = await call<Json>(sandbox, 'PUT', `${cms}/noop`, { body: created.body });
    expect(res.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
  });

  test('when the URL and body names differ or the object is missing, then PUT is 400 or 404', async () => {
    expect((await call(sandbox, 'PUT', `${cms}/one`, { body: configMap('two') })).status).toBe(400);
    expect((await call(sandbox, 'PUT', `${cms}/ghost`, { body: configMap('ghost') })).status).toBe(404);
  });

  test('when a pod spec changes, then generation increments; a status write does not touch the spec', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    await call(sandbox, 'POST', pods, {
      body: { metadata: { name: 'gen' }, spec: { containers: [{ name: 'a', image: 'busybox:1' }] } },
    });
    const patched = await call<Json>(sandbox, 'PATCH', `${pods}/gen`, {
      body: { spec: { activeDeadlineSeconds: 60 } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.body.metadata.generation).toBe(2);
    const status = await call<Json>(sandbox, 'PATCH', `${pods}/gen/status`, {
      body: { spec: { activeDeadlineSeconds: 5 }, metadata: { labels: { x: 'y' } }, status: { phase: 'Running' } },
      contentType: 'application/merge-patch+json',
    });
    expect(status.status).toBe(200);
    expect(status.body.status.phase).toBe('Running');
    expect(status.body.spec.activeDeadlineSeconds).toBe(60);
    expect(status.body.metadata.labels).toBeUndefined();
    expect(status.body.metadata.generation).toBe(2);
    const mainIgnoresStatus = await call<Json>(sandbox, 'PATCH', `${pods}/gen`, {
      body: { status: { phase: 'Failed' } },
      contentType: 'application/merge-patch+json',
    });
    expect(mainIgnoresStatus.body.status.phase).toBe('Running');
  });
});

describe('patch', () => {
  test('when a merge patch is sent, then fields merge and null removes', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('merge', { a: '1', b: '2' }) });
    const res = await call<Json>(sandbox, 'PATCH', `${cms}/merge`, {
      body: { data: { b: null, c: '3' }, metadata: { labels: { team: 'x' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ a: '1', c: '3' });
    expect(res.body.metadata.labels).toEqual({ team: 'x' });
  });

  test('when a strategic merge patch is sent, then it applies as a merge patch without its directives', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('smp', { a: '1' }) });
    const res = await call<Json>(sandbox, 'PATCH', `${cms}/smp`, {
      body: { data: { b: '2' }, $retainKeys: ['data'], metadata: { $setElementOrder: 'x' } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ a: '1', b: '2' });
    expect(res.body.$retainKeys).toBeUndefined();
  });

  test('when a JSON patch is sent, then its operations apply in order, and a failed test is 422', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('jsonpatch', { a: '1' }) });
    const ok = await call<Json>(sandbox, 'PATCH', `${cms}/jsonpatch`, {
      body: [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'add', path: '/data/b', value: '2' },
        { op: 'remove', path: '/data/a' },
        { op: 'add', path: '/metadata/labels', value: { 'x/y': 'z' } },
      ],
      contentType: 'application/json-patch+json',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ b: '2' });
    expect(ok.body.metadata.labels).toEqual({ 'x/y': 'z' });
    const failed = await call<Json>(sandbox, 'PATCH', `${cms}/jsonpatch`, {
      body: [{ op: 'test', path: '/data/b', value: 'other' }],
      contentType: 'application/json-patch+json',
    });
    expect(failed.status).toBe(422);
  });

  test('when a patch names a stale resourceVersion, then it is 409; an unknown patch type is 415', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('patch-rv') });
    const stale = await call(sandbox, 'PATCH', `${cms}/patch-rv`, {
      body: { metadata: { resourceVersion: '1' }, data: { a: '9' } },
      contentType: 'application/merge-patch+json',
    });
    expect(stale.status).toBe(409);
    const unsupported = await call(sandbox, 'PATCH', `${cms}/patch-rv`, {
      body: { data: {} },
      contentType: 'application/json',
    });
    expect(unsupported.status).toBe(415);
    expect(unsupported.body).toMatchObject({ reason: 'UnsupportedMediaType' });
  });

  test('when the object is missing, then patch is 404', async () => {
    const res = await call(sandbox, 'PATCH', `${cms}/nobody`, {
      body: {},
      contentType: 'application/merge-patch+json',
    });
    expect(res.status).toBe(404);
  });
});

describe('delete', () => {
  test('when a configmap is deleted, then the answer is a success Status with its uid and it is gone', async () => {
    const created = await call<Json>(sandbox, 'POST', cms, { body: configMap('delete-me') });
    const res = await call<Json>(sandbox, 'DELETE', `${cms}/delete-me`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'delete-me', kind: 'configmaps', uid: created.body.metadata.uid },
    });
    expect((await call(sandbox, 'GET', `${cms}/delete-me`)).status).toBe(404);
    expect((await call(sandbox, 'DELETE', `${cms}/delete-me`)).status).toBe(404);
  });

  test('when a pod is deleted, then the deleted object is returned', async () => {
    await call(sandbox, 'POST', '/api/v1/namespaces/default/pods', {
      body: { metadata: { name: 'bye' }, spec: { containers: [{ name: 'a', image: 'b' }] } },
    });
    const res = await call<Json>(sandbox, 'DELETE', '/api/v1/namespaces/default/pods/bye');
    expect(res.body).toMatchObject({ kind: 'Pod', metadata: { name: 'bye' } });
  });

  test('when a precondition does not hold, then delete is 409', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('precondition') });
    const res = await call<Json>(sandbox, 'DELETE', `${cms}/precondition`, {
      body: { preconditions: { uid: 'other' } },
    });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/Precondition failed: UID in precondition: other/);
  });

  test('when an object has finalizers, then delete marks it and removing the last finalizer deletes it', async () => {
    await call(sandbox, 'POST', cms, { body: { metadata: { name: 'final', finalizers: ['example.com/hold'] } } });
    const marked = await call<Json>(sandbox, 'DELETE', `${cms}/final`);
    expect(marked.status).toBe(200);
    expect(marked.body.metadata.deletionTimestamp).toBeDefined();
    expect((await call(sandbox, 'GET', `${cms}/final`)).status).toBe(200);
    await call(sandbox, 'PATCH', `${cms}/final`, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    expect((await call(sandbox, 'GET', `${cms}/final`)).status).toBe(404);
  });

  test('when deletecollection has a label selector, then only matching objects go', async () => {
    await call(sandbox, 'POST', cms, { body: configMap('dc-1', {}, { batch: 'dc' }) });
    await call(sandbox, 'POST', cms, { body: configMap('dc-2', {}, { batch: 'dc' }) });
    await call(sandbox, 'POST', cms, { body: configMap('dc-3', {}, { batch: 'keep' }) });
    const res = await call<Json>(sandbox, 'DELETE', `${cms}?labelSelector=batch%3Ddc`);
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: Json) => i.metadata.name).sort()).toEqual(['dc-1', 'dc-2']);
    expect((await call(sandbox, 'GET', `${cms}/dc-3`)).status).toBe(200);
  });

  test('when a namespace is deleted, then it answers Terminating and its contents go with it', async () => {
    expect((await call(sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' } } })).status).toBe(
      201,
    );
    const sa = await call(sandbox, 'GET', '/api/v1/namespaces/doomed/serviceaccounts/default');
    expect(sa.status).toBe(200);
    await call(sandbox, 'POST', '/api/v1/namespaces/doomed/configmaps', { body: configMap('inside') });
    const res = await call<Json>(sandbox, 'DELETE', '/api/v1/namespaces/doomed');
    expect(res.body).toMatchObject({ kind: 'Namespace', status: { phase: 'Terminating' } });
    expect((await call(sandbox, 'GET', '/api/v1/namespaces/doomed/configmaps/inside')).status).toBe(404);
    expect((await call(sandbox, 'GET', '/api/v1/namespaces/doomed')).status).toBe(404);
    const protectedNs = await call<Json>(sandbox, 'DELETE', '/api/v1/namespaces/kube-system');
    expect(protectedNs.status).toBe(403);
  });

  test('when a namespace name is not a DNS label, then create is 422', async () => {
    const res = await call<Json>(sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'has.dot' } } });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/RFC 1123 label/);
  });
});

describe('methods and scope', () => {
  test('when a method does not fit the path, then the answer is 405 or 404 like kube', async () => {
    expect((await call(sandbox, 'POST', `${cms}/named`, { body: configMap('named') })).status).toBe(405);
    expect((await call(sandbox, 'PUT', cms, { body: configMap('x') })).status).toBe(405);
    expect((await call(sandbox, 'POST', '/api/v1/configmaps', { body: configMap('x') })).status).toBe(405);
    expect((await call(sandbox, 'GET', '/api/v1/namespaces/default/nodes')).status).toBe(404);
  });

  test('when a request body exceeds 3 MiB, then it is 413', async () => {
    const res = await call(sandbox, 'POST', cms, { body: configMap('huge', { a: 'x'.repeat(3 * 1024 * 1024 + 10) }) });
    expect(res.status).toBe(413);
  });

  test('when a chunked request body exceeds 3 MiB, then it is the same 413 Status, readable before the connection closes', async () => {
    const body = Buffer.from(JSON.stringify(configMap('huge-chunked', { a: 'x'.repeat(4 * 1024 * 1024) })));
    const answer = await new Promise<{ status: number; body: Json }>((resolve, reject) => {
      const req = http.request(`${sandbox.url}${cms}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${sandbox.adminToken}`, 'Content-Type': 'application/json' },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Json }));
      });
      req.on('error', reject);
      for (let at = 0; at < body.length; at += 65536) req.write(body.subarray(at, at + 65536));
      req.end();
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
  });
});
