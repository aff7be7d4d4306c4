/**
 * What kube-apiserver answers where the sandbox once answered otherwise (found by sending the same requests to the
 * sandbox and to the kits of ../shared/kube): status codes, headers, messages, defaults and field order, asked of the
 * backend directly (and where kapi only passes the answer on, through kapi). On the sandbox and on any cluster, so the
 * sandbox cannot drift back. managedFields are left out of the comparisons: the sandbox does not keep them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { backendRequest, statusOf, type BackendRequest } from './backend.js';
import { login } from './client.js';
import { bearer, rawRequest } from './forwarding-http.js';
import { RUN_LABEL, startE2E, type E2E } from './harness.js';

const PASSWORD = 'e2e-Parity-password-1';
let e2e: E2E;
let ns: string;

const backend = (request: BackendRequest) => backendRequest(e2e.admin, request);

/** A Status as kube-apiserver builds one. */
function failure(code: number, reason: string | undefined, message: string, details?: Record<string, unknown>) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason && { reason }),
    ...(details && { details }),
    code,
  };
}

beforeAll(async () => {
  e2e = await startE2E();
  ns = e2e.runId;
});

afterAll(async () => {
  await e2e?.stop();
});

describe('when a request carries no credentials', () => {
  it('then the caller is system:anonymous: 403 for the API, and /version and /healthz are answered', async () => {
    const nodes = await backend({ path: '/api/v1/nodes', anonymous: true });
    expect(nodes.status).toBe(403);
    expect(statusOf(nodes)).toEqual(
      failure(
        403,
        'Forbidden',
        'nodes is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" at the cluster scope',
        { kind: 'nodes' },
      ),
    );
    expect(nodes.headers['x-content-type-options']).toBe('nosniff');
    expect((await backend({ path: '/version', anonymous: true })).status).toBe(200);
    expect(await backend({ path: '/healthz', anonymous: true })).toMatchObject({ status: 200, body: 'ok' });
  });

  it('then a token kube-apiserver does not know is still a 401', async () => {
    const answer = await backend({ path: '/api/v1/nodes', anonymous: true, headers: { Authorization: 'Bearer nope' } });
    expect(statusOf(answer)).toEqual(failure(401, 'Unauthorized', 'Unauthorized'));
  });
});

describe('when a path is served by no API', () => {
  it('then an unknown group or version is Go’s text 404, directly and through kapi', async () => {
    const direct = await backend({ path: '/apis/nope.example.com/v1/things' });
    expect(direct.status).toBe(404);
    expect(direct.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(direct.headers['x-content-type-options']).toBe('nosniff');
    expect(direct.body).toBe('404 page not found\n');
    const user = await e2e.createUser('parity', PASSWORD);
    // kube-apiserver authorizes before it routes: without this grant the answer is a 403
    await e2e.grant(user, [{ apiGroups: ['nope.example.com'], resources: ['things'], verbs: ['list'] }]);
    const { access_token } = await login(e2e.kapiUrl, user, PASSWORD);
    const through = await rawRequest(e2e.kapiUrl, {
      path: '/apis/nope.example.com/v1/things',
      headers: bearer(access_token),
    });
    expect([through.status, through.headers['content-type'], through.body]).toEqual([
      404,
      'text/plain; charset=utf-8',
      '404 page not found\n',
    ]);
  });

  it('then an unknown resource of a served version is a NotFound Status', async () => {
    const answer = await backend({ path: '/api/v1/foos' });
    expect(statusOf(answer)).toEqual(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
  });
});

describe('when a body cannot be decoded', () => {
  const create = (body: string) => backend({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body });
  const unrecognized = (why: string, summary: string) =>
    failure(
      400,
      'BadRequest',
      `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: ${why} (${summary})`,
    );

  it.each([
    [
      'not JSON',
      '{not json',
      unrecognized("invalid character 'n' looking for beginning of object key string", '{not json'),
    ],
    [
      'cut short, over 30 bytes',
      '{"metadata":{"name":"x"},"data":{"aaaaaaaaaaaaaaaaaa":"b"}',
      unrecognized('unexpected end of JSON input', '{"metadata":{"name":"x"},"data ...'),
    ],
    [
      'text after the object',
      '{"metadata":{"name":"x"}} x',
      unrecognized("invalid character 'x' after top-level value", '{"metadata":{"name":"x"}} x'),
    ],
    ['empty', '', unrecognized('unexpected end of JSON input', '<empty>')],
    [
      'an array',
      '[1]',
      unrecognized(
        'json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
        '5b315d',
      ),
    ],
  ])('then a body %s is kube’s 400, naming the kind and summarizing the body', async (_case, body, expected) => {
    expect(statusOf(await create(body))).toEqual(expected);
  });

  it('then a body of another built-in kind cannot be converted', async () => {
    const answer = await create(JSON.stringify({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 'x' } }));
    expect(statusOf(answer)).toEqual(
      failure(
        400,
        'BadRequest',
        'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion',
      ),
    );
  });

  it('then a custom resource of another kind is invalid on its kind field', async () => {
    const answer = await backend({
      method: 'POST',
      path: '/apis/iam.kapi.io/v1beta1/users',
      body: JSON.stringify({ kind: 'LoginSession', apiVersion: 'iam.kapi.io/v1beta1', metadata: { name: 'x' } }),
    });
    expect(statusOf(answer)).toEqual(
      failure(
        422,
        'Invalid',
        'LoginSession.iam.kapi.io "x" is invalid: kind: Invalid value: "LoginSession": must be User',
        {
          name: 'x',
          group: 'iam.kapi.io',
          kind: 'LoginSession',
          causes: [
            { reason: 'FieldValueInvalid', message: 'Invalid value: "LoginSession": must be User', field: 'kind' },
          ],
        },
      ),
    );
  });

  it('then an unsupported media type is a 415 without details, and a patch of no patch type the bare 415', async () => {
    const text = await backend({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      body: 'x',
      contentType: 'text/plain',
    });
    expect(statusOf(text)).toEqual(
      failure(
        415,
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      ),
    );
    const patch = await backend({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns}/configmaps/any`,
      body: '{}',
      contentType: 'application/json',
    });
    expect(statusOf(patch)).toEqual(failure(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {}));
  });

  it('then a body over 3 MiB is kube’s 413', async () => {
    const answer = await backend({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      body: JSON.stringify({ metadata: { name: 'big' }, data: { k: 'x'.repeat(3.5 * 1024 * 1024) } }),
    });
    expect(statusOf(answer)).toEqual(
      failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'),
    );
  });
});

describe('when query parameters do not parse', () => {
  it('then an integer is refused in Go’s strconv words', async () => {
    for (const query of ['limit=ten', 'timeoutSeconds=x']) {
      const value = query.split('=')[1]!;
      expect(statusOf(await backend({ path: `/api/v1/nodes?${query}` }))).toEqual(
        failure(400, 'BadRequest', `strconv.ParseInt: parsing "${value}": invalid syntax`),
      );
    }
  });

  it('then an unparsable resourceVersion is a 500 where the watch cache serves (a whole list, a watch) and a 400 for a paged list', async () => {
    const why = 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax';
    for (const query of ['resourceVersion=abc', 'watch=1&resourceVersion=abc']) {
      expect(statusOf(await backend({ path: `/api/v1/nodes?${query}` }))).toEqual(failure(500, undefined, why));
    }
    expect(statusOf(await backend({ path: '/api/v1/nodes?limit=1&resourceVersion=abc' }))).toEqual(
      failure(400, 'BadRequest', `invalid resource version: ${why}`),
    );
  });
});

describe('when a review is invalid', () => {
  it('then kube names no kind in its 422 (its review endpoints decode none)', async () => {
    const answer = await backend({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: {} }),
    });
    const why = 'exactly one of nonResourceAttributes or resourceAttributes must be specified';
    expect(statusOf(answer)).toEqual(
      failure(
        422,
        'Invalid',
        `.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": ${why}`,
        {
          group: 'authorization.k8s.io',
          causes: [
            { reason: 'FieldValueInvalid', message: `Invalid value: "null": ${why}`, field: 'spec.resourceAttributes' },
          ],
        },
      ),
    );
  });
});

describe('when pods are created', () => {
  const createPod = (name: string, spec: Record<string, unknown>) =>
    backend({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: JSON.stringify({
        metadata: { name, labels: { [RUN_LABEL]: e2e.runId } },
        spec: { containers: [{ name: 'app', image: 'registry.invalid/e2e' }], ...spec },
      }),
    });

  it('then the Priority admission computes the priority from its class and refuses one given as a number', async () => {
    const given = await createPod('priority-given', { priorityClassName: 'system-node-critical', priority: 5 });
    expect(statusOf(given)).toEqual(
      failure(
        403,
        'Forbidden',
        'pods "priority-given" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 2000001000 from the given PriorityClass name',
        { name: 'priority-given', kind: 'pods' },
      ),
    );
    expect(given.headers['x-content-type-options']).toBeUndefined();
    const unknown = await createPod('priority-unknown', { priorityClassName: 'no-such-class' });
    expect(statusOf(unknown).message).toBe(
      'pods "priority-unknown" is forbidden: no PriorityClass with name no-such-class was found',
    );
    const created = await createPod('priority-computed', { priorityClassName: 'system-cluster-critical' });
    expect(created.status).toBe(201);
    const { spec } = JSON.parse(created.body) as { spec: Record<string, unknown> };
    expect(spec).toMatchObject({ priority: 2_000_000_000, preemptionPolicy: 'PreemptLowerPriority' });
    // DefaultTolerationSeconds: five minutes on a not-ready or unreachable node
    expect(spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
  });

  it('then the log of a pod on no node is an empty 204, and on a node that does not exist a 404', async () => {
    expect((await createPod('unscheduled', {})).status).toBe(201);
    const log = await backend({ path: `/api/v1/namespaces/${ns}/pods/unscheduled/log` });
    expect([log.status, log.body]).toEqual([204, '']);
    const exec = await backend({ path: `/api/v1/namespaces/${ns}/pods/unscheduled/exec?command=ls` });
    expect(statusOf(exec)).toEqual(failure(400, 'BadRequest', 'pod unscheduled does not have a host assigned'));
    const missingNode = e2e.name('no-such-node');
    expect((await createPod('on-missing-node', { nodeName: missingNode })).status).toBe(201);
    const orphan = await backend({ path: `/api/v1/namespaces/${ns}/pods/on-missing-node/log` });
    // kube's connection-info lookup names the missing node as a pod
    expect(statusOf(orphan)).toEqual(
      failure(404, 'NotFound', `pods "${missingNode}" not found`, { name: missingNode, kind: 'pods' }),
    );
  });

  it('then a scheduler’s binding sets the node once, as kube’s BindingREST: its name the URL’s, a Node target, then 409', async () => {
    expect((await createPod('to-bind', {})).status).toBe(201);
    const bind = (body: Record<string, unknown>, query = '') =>
      backend({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/pods/to-bind/binding${query}`,
        body: JSON.stringify(body),
      });
    const node = e2e.name('bound-node');
    expect(statusOf(await bind({ metadata: { name: 'other' }, target: { name: node } })).message).toBe(
      'name in URL does not match name in Binding object',
    );
    // kube-apiserver answers its validation's aggregate as it is: a 500 without a reason
    expect(statusOf(await bind({ metadata: { name: 'to-bind' }, target: { kind: 'Pod' } }))).toEqual(
      failure(
        500,
        undefined,
        '[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]',
      ),
    );
    // a dry run changes nothing
    expect((await bind({ metadata: { name: 'to-bind' }, target: { name: node } }, '?dryRun=All')).status).toBe(201);
    const unbound = JSON.parse((await backend({ path: `/api/v1/namespaces/${ns}/pods/to-bind` })).body) as {
      spec: { nodeName?: string };
    };
    expect(unbound.spec.nodeName).toBeUndefined();
    const bound = await bind({ metadata: { name: 'to-bind' }, target: { kind: 'Node', name: node } });
    expect([bound.status, JSON.parse(bound.body)]).toEqual([
      201,
      { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    ]);
    const pod = JSON.parse((await backend({ path: `/api/v1/namespaces/${ns}/pods/to-bind` })).body) as {
      spec: { nodeName?: string };
      status: { conditions?: { type: string; status: string }[] };
    };
    expect(pod.spec.nodeName).toBe(node);
    expect(pod.status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]),
    );
    expect(statusOf(await bind({ metadata: { name: 'to-bind' }, target: { name: 'another' } }))).toEqual(
      failure(
        409,
        'Conflict',
        `Operation cannot be fulfilled on pods/binding "to-bind": pod to-bind is already assigned to node "${node}"`,
        { name: 'to-bind', kind: 'pods/binding' },
      ),
    );
  });

  it('then bad log options are refused as kube words them', async () => {
    const path = `/api/v1/namespaces/${ns}/pods/unscheduled/log`;
    expect(statusOf(await backend({ path: `${path}?sinceTime=yesterday` }))).toEqual(
      failure(
        400,
        'BadRequest',
        'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
      ),
    );
    const both = await backend({ path: `${path}?sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z` });
    expect(statusOf(both)).toEqual(
      failure(
        422,
        'Invalid',
        'PodLogOptions "unscheduled" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
        {
          name: 'unscheduled',
          kind: 'PodLogOptions',
          causes: [
            {
              reason: 'FieldValueForbidden',
              message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
              field: '[]',
            },
          ],
        },
      ),
    );
  });
});

describe('when a node is created with no status but its name', () => {
  it('then it carries the not-ready taint and the status fields Go always prints', async () => {
    const name = e2e.name(`bare-${randomBytes(2).toString('hex')}`);
    const answer = await backend({
      method: 'POST',
      path: '/api/v1/nodes',
      body: JSON.stringify({ metadata: { name, labels: { [RUN_LABEL]: e2e.runId } } }),
    });
    expect(answer.status).toBe(201);
    const node = JSON.parse(answer.body) as { spec: unknown; status: unknown };
    expect(node.spec).toEqual({ taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
    expect(node.status).toEqual({
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: '',
        osImage: '',
        containerRuntimeVersion: '',
        kubeletVersion: '',
        kubeProxyVersion: '',
        operatingSystem: '',
        architecture: '',
      },
    });
  });
});

describe('when objects are read back', () => {
  const withoutManagedFields = (keys: string[]) => keys.filter((key) => key !== 'managedFields');

  it('then a built-in kind’s fields come in its Go struct’s order, whatever order they were sent in', async () => {
    const answer = await backend({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      body: JSON.stringify({
        data: { k: 'v' },
        metadata: { annotations: { a: '1' }, labels: { [RUN_LABEL]: e2e.runId }, name: 'ordered' },
        immutable: false,
      }),
    });
    expect(answer.status).toBe(201);
    const object = JSON.parse(answer.body) as { metadata: Record<string, unknown> };
    expect(Object.keys(object)).toEqual(['kind', 'apiVersion', 'metadata', 'immutable', 'data']);
    const metaKeys = Object.keys(object.metadata);
    expect(withoutManagedFields(metaKeys)).toEqual([
      'name',
      'namespace',
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'labels',
      'annotations',
    ]);
    if (metaKeys.includes('managedFields')) expect(metaKeys.at(-1)).toBe('managedFields');
  });

  it('then a custom resource prints every key sorted, as Go prints a map', async () => {
    const name = e2e.name('sorted');
    const answer = await backend({
      method: 'POST',
      path: '/apis/iam.kapi.io/v1beta1/users',
      body: JSON.stringify({
        kind: 'User',
        apiVersion: 'iam.kapi.io/v1beta1',
        spec: { password: '$2a$04$abcdefghijklmnopqrstuuJ3wNO4h4PbaWkP0sXTDY2dfkWGhPWpK', email: 'e@x.y', groups: [] },
        metadata: { name, labels: { [RUN_LABEL]: e2e.runId, b: '1', a: '2' } },
      }),
    });
    expect(answer.status).toBe(201);
    await backend({ method: 'DELETE', path: `/apis/iam.kapi.io/v1beta1/users/${name}` });
    const object = JSON.parse(answer.body) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    expect(Object.keys(object)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(withoutManagedFields(Object.keys(object.metadata))).toEqual([
      'creationTimestamp',
      'generation',
      'labels',
      'name',
      'resourceVersion',
      'uid',
    ]);
    expect(Object.keys(object.metadata.labels as object)).toEqual(['a', 'b', RUN_LABEL]);
    expect(Object.keys(object.spec)).toEqual(['email', 'groups', 'password']);
  });

  it('then /version is indented, and names emulation versions only from 1.33', async () => {
    const answer = await backend({ path: '/version' });
    expect(answer.body).toMatch(/^\{\n {2}"major": "1",\n {2}"minor": "\d+",\n/);
    const info = JSON.parse(answer.body) as Record<string, string>;
    expect('emulationMinor' in info).toBe(Number(info.minor) >= 33);
  });
});

describe('when an administrator reads /metrics', () => {
  /** The sum of apiserver_request_total samples whose labels include all of `want`. */
  const requests = async (want: Record<string, string>): Promise<number> => {
    const answer = await backend({ path: '/metrics' });
    expect(answer.status).toBe(200);
    let total = 0;
    for (const line of answer.body.split('\n')) {
      const match = /^apiserver_request_total\{(.*)\} (\S+)$/.exec(line);
      if (!match) continue;
      const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]));
      if (Object.entries(want).every(([name, value]) => labels[name] === value)) total += Number(match[2]);
    }
    return total;
  };

  it('then apiserver_request_total counts each write by verb, group, resource and code, as the bench reads it', async () => {
    const created = { verb: 'POST', group: '', resource: 'configmaps', code: '201' };
    const conflicted = { verb: 'POST', group: '', resource: 'configmaps', code: '409' };
    const before = { created: await requests(created), conflicted: await requests(conflicted) };
    const body = JSON.stringify({ metadata: { name: 'metrics-probe', labels: { [RUN_LABEL]: e2e.runId } } });
    const create = () =>
      backend({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/configmaps`,
        headers: { 'Content-Type': 'application/json' },
        body,
      });
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(409);
    // other clients of a shared cluster may write configmaps meanwhile: at least ours are counted
    expect(await requests(created)).toBeGreaterThanOrEqual(before.created + 1);
    expect(await requests(conflicted)).toBeGreaterThanOrEqual(before.conflicted + 1);
  });
});
