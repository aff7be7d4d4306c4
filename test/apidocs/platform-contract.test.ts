/**
 * Every platform operation's real answers — successes and each kind of error — held to api/platform.openapi.json
 * by a response-validation library (openapi-backend + Ajv). Most come from a real kapi on the sandbox (or the
 * KUBECONFIG cluster); the answers a healthy cluster cannot give (signing key not loaded, a login lockout within a
 * test's time) come from the same request pipeline (createApp) over in-memory identity stores.
 */
import { appWithoutCluster } from '../support/app-without-cluster.js';
import request from 'supertest';
import type { RequestListener } from 'node:http';
import { PLATFORM_DOCUMENT_FILE } from '../../src/apidocs/documents.js';
import { bindGlobalRole, deleteIgnoringMissing, startE2E, silentLogger, waitFor, type E2E } from '../e2e/harness.js';
import { READ_EVERY_KIND, createKindSamples, kindSamples, type KindSample } from '../e2e/kind-samples.js';
import { installOptionalApis, optionalApiSamples, removeOptionalApis } from '../e2e/optional-apis.js';
import { KIND_OPERATIONS } from '../../src/apis/resources/v1alpha3/listing/listing-operations.js';
import { ResourceListing } from '../../src/apis/resources/v1alpha3/listing/resource-listing.js';
import { ListingCaches } from '../../src/kube/compact/listing-caches.js';
import { KubeClient } from '../../src/kube/client.js';
import { connectionFor, tokenAccess } from '../../src/kube/connection.js';
import { testIdentity } from '../auth/identity-app.js';
import { tokenPolicy } from '../../src/auth/tokens/tokens.js';
import { ContractChecker, type Answer } from './contract.js';
import { LogRequestLimits } from '../../src/apis/logging/v1alpha2/request-limits.js';
import { loggingRoutes } from '../../src/apis/logging/v1alpha2/routes.js';
import { formFields, pkce } from '../auth/browser/browser-client.js';
import { TEST_SETTINGS } from '../auth/fakes.js';
import { E2E_CONSOLE } from '../e2e/harness.js';
import { FakeUpstream, upstreamSettings } from '../auth/providers/fake-upstream.js';
import { IdentityProviders } from '../../src/auth/providers/registry.js';
import { configRoutes } from '../../src/apis/config/v1alpha2/routes.js';
import { iamRoutes } from '../../src/apis/iam/v1alpha2/routes.js';
import { iamOperations } from '../../src/apis/iam/v1alpha2/operations.js';
import { memberOperations } from '../../src/apis/iam/v1alpha2/member-operations.js';
import { departmentOperations } from '../../src/apis/iam/v1alpha2/department-operations.js';
import { departmentRoutes } from '../../src/apis/iam/v1alpha2/department-routes.js';
import { imageOperations } from '../../src/apis/resources/v1alpha3/operations.js';
import { imageRoutes } from '../../src/apis/resources/v1alpha3/image-routes.js';
import { RegistryClient } from '../../src/registry/registry-client.js';
import { startRegistry } from '../support/registry.js';
import { GlobalRoleDirectory } from '../../src/apis/iam/v1alpha2/global-roles.js';
import { terminalOperations } from '../../src/apis/terminal/operations.js';
import { tenantRoutes } from '../../src/apis/tenant/routes.js';
import { tenantOperations } from '../../src/apis/tenant/operations.js';
import { workspaceQuotaOperations } from '../../src/apis/tenant/quota-operations.js';
import { workspaceQuotaRoutes } from '../../src/apis/tenant/quota-routes.js';
import { eventOperations } from '../../src/apis/tenant/events/event-operations.js';
import { eventRoutes, eventsApiSource } from '../../src/apis/tenant/events/event-routes.js';
import { EventIndex } from '../../src/apis/tenant/events/event-index.js';
import type { WatchedNamespaces } from '../../src/kube/namespace-cache.js';
import { componentOperations } from '../../src/apis/resources/v1alpha2/operations.js';
import { componentRoutes } from '../../src/apis/resources/v1alpha2/routes.js';
import { monitoringOperations } from '../../src/apis/monitoring/v1alpha3/operations.js';
import { monitoringRoutes } from '../../src/apis/monitoring/v1alpha3/routes.js';
import { MonitoringRequestLimits } from '../../src/apis/monitoring/v1alpha3/request-limits.js';
import { PrometheusBackend } from '../../src/apis/monitoring/v1alpha3/prometheus.js';
import type { OperationDefinition } from '../../src/openapi/operation.js';

const PASSWORD = 'Contract-pw-1';
const FORM = 'application/x-www-form-urlencoded';
const NODES = '/kapis/resources.kapi.io/v1alpha3/nodes';
const IAM = '/kapis/iam.kapi.io/v1beta1';
const IAM2 = '/kapis/iam.kapi.io/v1alpha2';
const TENANT2 = '/kapis/tenant.kapi.io/v1alpha2';
const TENANT3 = '/kapis/tenant.kapi.io/v1alpha3';
const CONFIG = '/kapis/config.kapi.io/v1alpha2';
const LOGS = ['/kapis/logging.kapi.io/v1alpha2/logs', '/kapis/tenant.kapi.io/v1alpha2/logs'];

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
interface Call {
  method: Method;
  url: string;
  headers?: Record<string, string>;
  form?: Record<string, string> | string;
  json?: unknown;
}

let checker: ContractChecker;
let e2e: E2E;
let reader: string;
let stranger: string;
let nodeName: string;
let samples: KindSample[];
const cleanup: string[] = [];

beforeAll(async () => {
  checker = await ContractChecker.load(PLATFORM_DOCUMENT_FILE);
  e2e = await startE2E();
  reader = await e2e.createUser('contract-reader', PASSWORD);
  stranger = await e2e.createUser('contract-stranger', PASSWORD);
  await e2e.grant(reader, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    ...READ_EVERY_KIND,
    { apiGroups: ['monitoring.kapi.io'], resources: ['*'], verbs: ['get', 'list'] },
    {
      apiGroups: ['iam.kapi.io'],
      resources: ['users/globalroles', 'clustermembers', 'clustermembers/clusterroles', 'clusterroles'],
      verbs: ['get', 'list'],
    },
    { apiGroups: ['resources.kapi.io'], resources: ['users/kubeconfig', 'users/kubectl'], verbs: ['get'] },
    { apiGroups: ['resources.kapi.io'], resources: ['imageconfig', 'repositorytags'], verbs: ['get'] },
    { apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] },
  ]);
  // the optional APIs (volume snapshots, applications) served, as a cluster with them serves them
  await installOptionalApis(e2e.admin);
  samples = [...kindSamples(e2e), ...optionalApiSamples(e2e)];
  cleanup.push(...(await createKindSamples(e2e, samples)));
  const nodes = await e2e.admin.request<{ items: { metadata: { name: string } }[] }>({
    method: 'GET',
    path: '/api/v1/nodes',
  });
  nodeName = nodes.items[0]!.metadata.name;
}, 60_000);

afterAll(async () => {
  for (const path of cleanup) await deleteIgnoringMissing(e2e.admin, path).catch(() => undefined);
  if (e2e) await removeOptionalApis(e2e.admin);
  await e2e?.stop();
});

/** Sends the call, checks the answer against the document, and returns it. */
async function send(target: string | RequestListener, call: Call): Promise<Answer & { json: () => unknown }> {
  let req = request(target)[call.method](call.url);
  for (const [name, value] of Object.entries(call.headers ?? {})) req = req.set(name, value);
  if (call.form !== undefined) {
    req = req.type(FORM).send(typeof call.form === 'string' ? call.form : new URLSearchParams(call.form).toString());
  } else if (call.json !== undefined) req = req.type('application/json').send(JSON.stringify(call.json));
  const res = await req.buffer(true).parse((r, done) => {
    let text = '';
    r.setEncoding('utf8');
    r.on('data', (chunk: string) => (text += chunk));
    r.on('end', () => done(null, text));
  });
  const answer: Answer = { status: res.status, headers: res.headers as Answer['headers'], text: res.body as string };
  expect(checker.problems(call.method, call.url, answer)).toEqual([]);
  return { ...answer, json: () => JSON.parse(answer.text) as unknown };
}

const password = (username: string, extra: Record<string, string> = {}) => ({
  grant_type: 'password',
  username,
  password: PASSWORD,
  client_id: 'kapi',
  client_secret: 'kapi',
  ...extra,
});
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function tokens(username = reader): Promise<{ access_token: string; refresh_token: string }> {
  const res = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/token', form: password(username) });
  expect(res.status).toBe(200);
  return res.json() as { access_token: string; refresh_token: string };
}
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The parameters an ad-hoc route needs to answer 200. */
const ADHOC_QUERIES: Record<string, string> = {
  queryMetrics: '?expr=up',
  queryNamespaceMetrics: '?expr=up',
  listMetricLabelSets: '?metric=up&start=1&end=2',
  listNamespaceMetricLabelSets: '?metric=up&start=1&end=2',
};

/** A monitoring operation's path with every parameter filled (names valid, objects need not exist). */
const monitoringUrl = (operation: OperationDefinition, query = ADHOC_QUERIES[operation.operationId] ?? '') =>
  operation.path
    .replace('{node}', 'n1')
    .replace('{namespace}', 'demo')
    .replace('{workspace}', 'ws1')
    .replace('{kind}', 'deployment')
    .replace('{workload}', 'web')
    .replace('{pod}', 'web-1')
    .replace('{container}', 'app')
    .replace('{claim}', 'data')
    .replace('{storageclass}', 'standard')
    .replace('{component}', 'etcd') + query;

describe('POST /oauth/token', () => {
  test('when a user logs in and refreshes, then both token pairs match the document', async () => {
    const pair = await tokens();
    const refreshed = await send(e2e.kapiUrl, {
      method: 'post',
      url: '/oauth/token',
      form: {
        grant_type: 'refresh_token',
        refresh_token: pair.refresh_token,
        client_id: 'kapi',
        client_secret: 'kapi',
      },
    });
    expect(refreshed.status).toBe(200);
  });

  test.each([
    ['grant_type is missing', { client_id: 'kapi', client_secret: 'kapi' }, 'invalid_request'],
    [
      'the grant type is unknown',
      { grant_type: 'client_credentials', client_id: 'kapi', client_secret: 'kapi' },
      'unsupported_grant_type',
    ],
    ['the password is wrong', { ...password('nobody'), password: 'wrong' }, 'invalid_grant'],
    [
      'a parameter is repeated',
      'grant_type=password&grant_type=password&client_id=kapi&client_secret=kapi',
      'invalid_request',
    ],
    [
      'the refresh token is garbage',
      { grant_type: 'refresh_token', refresh_token: 'x.y.z', client_id: 'kapi', client_secret: 'kapi' },
      'invalid_grant',
    ],
  ])('when %s, then a 400 RFC 6749 error matches the document', async (_case, form, error) => {
    const res = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/token', form });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ error });
  });

  test('when the client secret is wrong (HTTP Basic), then 401 invalid_client with a Basic challenge', async () => {
    const res = await send(e2e.kapiUrl, {
      method: 'post',
      url: '/oauth/token',
      headers: { Authorization: basic('kapi', 'wrong') },
      form: { grant_type: 'password', username: reader, password: PASSWORD },
    });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic /);
  });

  test('when the body is larger than 16 KiB, then 413', async () => {
    const res = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/token', form: `pad=${'x'.repeat(17 * 1024)}` });
    expect(res.status).toBe(413);
  });

  test('when the body is JSON, then 415', async () => {
    const res = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/token', json: password(reader) });
    expect(res.status).toBe(415);
  });
});

describe('POST /oauth/revoke', () => {
  test('when a client revokes a refresh token, then 200 with an empty body, and the token is dead', async () => {
    const pair = await tokens();
    const res = await send(e2e.kapiUrl, {
      method: 'post',
      url: '/oauth/revoke',
      form: { token: pair.refresh_token, client_id: 'kapi', client_secret: 'kapi' },
    });
    expect(res.status).toBe(200);
    const list = await send(e2e.kapiUrl, { method: 'get', url: NODES, headers: bearer(pair.access_token) });
    expect(list.status).toBe(401);
  });

  test.each([
    ['the token is missing', { client_id: 'kapi', client_secret: 'kapi' }, 400],
    ['the client secret is wrong', { token: 'x', client_id: 'kapi', client_secret: 'wrong' }, 401],
    ['the body is too large', `token=${'x'.repeat(17 * 1024)}`, 413],
  ])('when %s, then the error matches the document', async (_case, form, status) => {
    const res = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/revoke', form });
    expect(res.status).toBe(status);
  });

  test('when the body is JSON, then 415', async () => {
    const res = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/revoke', json: { token: 'x' } });
    expect(res.status).toBe(415);
  });
});

describe('GET and POST /oauth/logout', () => {
  test.each(['get', 'post'] as const)(
    'when %s carries a valid access token, then 200 and an empty body',
    async (method) => {
      const pair = await tokens();
      const res = await send(e2e.kapiUrl, { method, url: '/oauth/logout', headers: bearer(pair.access_token) });
      expect(res.status).toBe(200);
    },
  );

  test.each(['get', 'post'] as const)(
    'when %s has no token, then 401 invalid_token with a Bearer challenge',
    async (method) => {
      const res = await send(e2e.kapiUrl, { method, url: '/oauth/logout' });
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ error: 'invalid_token' });
    },
  );
});

describe('GET /kapis/resources.kapi.io/v1alpha3/nodes and /nodes/{name}', () => {
  test.each([
    ['everything', ''],
    ['a page sorted by name', '?limit=1&page=2&sortBy=name&ascending=true'],
    ['filters', '?labelSelector=kubernetes.io/os%3Dlinux&status=running&names=a,b'],
    ['only the count', '?limit=0'],
  ])('when a reader lists %s, then the NodeList matches the document', async (_case, query) => {
    const { access_token } = await tokens();
    const res = await send(e2e.kapiUrl, { method: 'get', url: `${NODES}${query}`, headers: bearer(access_token) });
    expect(res.status).toBe(200);
  });

  test('when a reader reads a node, then the Node matches the document', async () => {
    const { access_token } = await tokens();
    const res = await send(e2e.kapiUrl, { method: 'get', url: `${NODES}/${nodeName}`, headers: bearer(access_token) });
    expect(res.status).toBe(200);
  });

  test.each([
    ['page=0', 'page'],
    ['limit=ten', 'limit'],
    ['sortBy=size', 'sortBy'],
    ['labelSelector=a%20in%20(b', 'labelSelector'],
  ])('when the query has %s, then a 400 Status names the parameter', async (query, parameter) => {
    const { access_token } = await tokens();
    const res = await send(e2e.kapiUrl, { method: 'get', url: `${NODES}?${query}`, headers: bearer(access_token) });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ details: { causes: [{ field: parameter }] } });
  });

  test('when the node does not exist, then 404 Status', async () => {
    const { access_token } = await tokens();
    const res = await send(e2e.kapiUrl, { method: 'get', url: `${NODES}/ghost`, headers: bearer(access_token) });
    expect(res.status).toBe(404);
  });

  test.each([NODES, `${NODES}/any`])('when %s is asked without a token, then 401 Status', async (url) => {
    const res = await send(e2e.kapiUrl, { method: 'get', url });
    expect(res.status).toBe(401);
  });

  test.each([NODES, `${NODES}/any`])('when %s is asked by a user without RBAC rights, then 403 Status', async (url) => {
    const { access_token } = await tokens(stranger);
    const res = await send(e2e.kapiUrl, { method: 'get', url, headers: bearer(access_token) });
    expect(res.status).toBe(403);
  });
});

describe('GET /kapis/resources.kapi.io/v1alpha3/{resources} of every other kind', () => {
  const BASE = '/kapis/resources.kapi.io/v1alpha3';
  /** Each kind's list and read paths, with an object that exists (the run's samples, its namespace, kapi's CRDs). */
  const paths = KIND_OPERATIONS.map(({ definition }) => {
    const builtIn: Record<string, () => string> = {
      namespaces: () => e2e.runId,
      users: () => reader,
      globalroles: () => 'platform-admin',
      workspacetemplates: () => 'system-workspace',
    };
    const sample = () =>
      samples.find((s) => s.resource === definition.resource) ?? {
        name: builtIn[definition.resource]?.() ?? 'users.iam.kapi.io',
        namespace: undefined,
      };
    return {
      resource: definition.resource,
      lists: () =>
        definition.namespaced
          ? [`${BASE}/${definition.resource}`, `${BASE}/namespaces/${e2e.runId}/${definition.resource}`]
          : [`${BASE}/${definition.resource}`],
      read: (name = sample().name) =>
        definition.namespaced
          ? `${BASE}/namespaces/${e2e.runId}/${definition.resource}/${name}`
          : `${BASE}/${definition.resource}/${name}`,
    };
  });

  test.each(paths.map((p) => [p.resource, p] as const))(
    'when a reader lists and reads %s, then the list and the object match the document',
    async (_resource, kind) => {
      const { access_token } = await tokens();
      for (const url of kind.lists()) {
        // the watch brings the run's objects in; until then the list is right, only shorter
        await waitFor(
          async () =>
            (await send(e2e.kapiUrl, { method: 'get', url: `${url}?limit=0`, headers: bearer(access_token) }))
              .status === 200,
        );
        const res = await send(e2e.kapiUrl, {
          method: 'get',
          url: `${url}?limit=5&sortBy=name`,
          headers: bearer(access_token),
        });
        expect(res.status).toBe(200);
        const bad = await send(e2e.kapiUrl, {
          method: 'get',
          url: `${url}?sortBy=size`,
          headers: bearer(access_token),
        });
        expect(bad.status).toBe(400);
        expect((await send(e2e.kapiUrl, { method: 'get', url })).status).toBe(401);
        const { access_token: strangerToken } = await tokens(stranger);
        expect((await send(e2e.kapiUrl, { method: 'get', url, headers: bearer(strangerToken) })).status).toBe(403);
      }
      await waitFor(
        async () =>
          (await send(e2e.kapiUrl, { method: 'get', url: kind.read(), headers: bearer(access_token) })).status === 200,
      );
      expect(
        (await send(e2e.kapiUrl, { method: 'get', url: kind.read('ghost-object'), headers: bearer(access_token) }))
          .status,
      ).toBe(404);
      expect((await send(e2e.kapiUrl, { method: 'get', url: kind.read() })).status).toBe(401);
      const { access_token: strangerToken } = await tokens(stranger);
      expect(
        (await send(e2e.kapiUrl, { method: 'get', url: kind.read(), headers: bearer(strangerToken) })).status,
      ).toBe(403);
    },
    120_000,
  );
});

describe('GET /kapis/{logging,tenant}.kapi.io/v1alpha2/logs', () => {
  // operation=export answers text/plain (its own test suite checks it); the document's 200 body is the JSON shapes.
  test.each(
    LOGS.flatMap((url) =>
      ['operation=query&size=3', 'operation=statistics', 'operation=histogram&interval=1d'].map((q) => [url, q]),
    ),
  )('when a reader asks %s?%s, then the answer matches the document', async (url, query) => {
    const { access_token } = await tokens();
    const res = await send(e2e.kapiUrl, { method: 'get', url: `${url}?${query}`, headers: bearer(access_token) });
    expect(res.status).toBe(200);
  });

  test.each(LOGS)('when %s is given milliseconds, then a 400 Status names start_time', async (url) => {
    const { access_token } = await tokens();
    const res = await send(e2e.kapiUrl, {
      method: 'get',
      url: `${url}?start_time=1700000000000`,
      headers: bearer(access_token),
    });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ details: { causes: [{ field: 'start_time' }] } });
  });

  test.each(LOGS)('when %s is asked without a token, then 401 Status', async (url) => {
    expect((await send(e2e.kapiUrl, { method: 'get', url })).status).toBe(401);
  });

  test.each(LOGS)('when %s names a namespace the user may not read, then 403 Status', async (url) => {
    const { access_token } = await tokens(stranger);
    const res = await send(e2e.kapiUrl, {
      method: 'get',
      url: `${url}?namespaces=default`,
      headers: bearer(access_token),
    });
    expect(res.status).toBe(403);
  });
});

describe.each(['v1beta1', 'v1alpha2'])('PUT /kapis/iam.kapi.io/%s/users/{name}/password', (version) => {
  const base = `/kapis/iam.kapi.io/${version}`;
  let owner: string;
  let administrator: string;
  beforeAll(async () => {
    owner = await e2e.createUser(`contract-password-${version}`, PASSWORD);
    administrator = await e2e.createUser(`contract-pw-admin-${version}`, PASSWORD);
    await e2e.grant(administrator, [{ apiGroups: ['iam.kapi.io'], resources: ['users/password'], verbs: ['update'] }]);
  });
  const put = (name: string, token: string | undefined, json: unknown): Call => ({
    method: 'put',
    url: `${base}/users/${name}/password`,
    headers: token ? bearer(token) : {},
    json,
  });

  test('when users change their own password, then 200 matches the document', async () => {
    const { access_token } = await tokens(owner);
    const res = await send(
      e2e.kapiUrl,
      put(owner, access_token, { currentPassword: PASSWORD, password: 'Contract-pw-2' }),
    );
    expect(res.status).toBe(200);
    // back to the suite's password, by an administrator
    const admin = await tokens(administrator);
    expect((await send(e2e.kapiUrl, put(owner, admin.access_token, { password: PASSWORD }))).status).toBe(200);
  });

  test.each([
    ['the new password is too short', 'self', { currentPassword: PASSWORD, password: 'short' }, 400],
    ['there is no token', 'none', { password: 'Contract-pw-3' }, 401],
    ['another user’s password is asked without the right', 'stranger', { password: 'Contract-pw-3' }, 403],
    ['an administrator names nobody', 'admin-missing', { password: 'Contract-pw-3' }, 404],
  ])('when %s, then the Status matches the document', async (_case, who, json, status) => {
    const token =
      who === 'none'
        ? undefined
        : (await tokens(who === 'self' ? owner : who === 'stranger' ? stranger : administrator)).access_token;
    const name = who === 'admin-missing' ? e2e.name('nobody-here') : owner;
    expect((await send(e2e.kapiUrl, put(name, token, json))).status).toBe(status);
  });

  test('when the body is too large or not JSON, then 413 and 415', async () => {
    const { access_token } = await tokens(owner);
    const large = await send(e2e.kapiUrl, put(owner, access_token, { password: 'x'.repeat(17 * 1024) }));
    expect(large.status).toBe(413);
    const form = await send(e2e.kapiUrl, {
      method: 'put',
      url: `${base}/users/${owner}/password`,
      headers: bearer(access_token),
      form: { password: 'x' },
    });
    expect(form.status).toBe(415);
  });
});

describe('GET /kapis/iam.kapi.io/v1beta1/users/{name}/loginrecords', () => {
  let auditor: string;
  beforeAll(async () => {
    auditor = await e2e.createUser('contract-auditor', PASSWORD);
    await e2e.grant(auditor, [{ apiGroups: ['iam.kapi.io'], resources: ['users/loginrecords'], verbs: ['get'] }]);
  });
  const get = (name: string, token: string | undefined, query = ''): Call => ({
    method: 'get',
    url: `${IAM}/users/${name}/loginrecords${query}`,
    headers: token ? bearer(token) : {},
  });

  test('when users read their own records, then the list matches the document and holds their login', async () => {
    const { access_token } = await tokens(reader);
    const res = await send(e2e.kapiUrl, get(reader, access_token));
    expect(res.status).toBe(200);
    expect((res.json() as { totalItems: number }).totalItems).toBeGreaterThan(0);
  });

  test.each([
    ['limit is 0', 'self', '?limit=0', 400],
    ['there is no token', 'none', '', 401],
    ['another user’s records are asked without the right', 'stranger', '', 403],
    ['an auditor names nobody', 'auditor-missing', '', 404],
  ])('when %s, then the Status matches the document', async (_case, who, query, status) => {
    const token =
      who === 'none'
        ? undefined
        : (await tokens(who === 'self' ? reader : who === 'stranger' ? stranger : auditor)).access_token;
    const name = who === 'auditor-missing' ? e2e.name('nobody-here') : reader;
    expect((await send(e2e.kapiUrl, get(name, token, query))).status).toBe(status);
  });
});

describe('the console’s bootstrap: /kapis/version and config.kapi.io/v1alpha2/configs/*', () => {
  test('when asked without a token, then the version, identity providers and modules answer; the GPU kinds need one', async () => {
    const version = await send(e2e.kapiUrl, { method: 'get', url: '/kapis/version' });
    expect(version.status).toBe(200);
    expect(version.json()).toMatchObject({ gitVersion: 'v3.4.1', gitMajor: '3', gitMinor: '4' });
    expect((await send(e2e.kapiUrl, { method: 'get', url: `${CONFIG}/configs/oauth` })).status).toBe(200);
    expect((await send(e2e.kapiUrl, { method: 'get', url: `${CONFIG}/configs/configz` })).status).toBe(200);
    const gpu = `${CONFIG}/configs/gpu/kinds`;
    expect((await send(e2e.kapiUrl, { method: 'get', url: gpu })).status).toBe(401);
    const withToken = await send(e2e.kapiUrl, {
      method: 'get',
      url: gpu,
      headers: bearer((await tokens()).access_token),
    });
    expect([withToken.status, withToken.json()]).toEqual([200, []]);
  });
});

describe('the console’s reads: iam.kapi.io/v1alpha2 users, role templates, members; tenant.kapi.io workspaces', () => {
  test('when users read themselves, others, members and workspaces, then every answer matches the document', async () => {
    cleanup.push(await bindGlobalRole(e2e.admin, reader, 'platform-regular'));
    const mine = bearer((await tokens()).access_token);
    const theirs = bearer((await tokens(stranger)).access_token);
    const get = (url: string, headers?: Record<string, string>) => send(e2e.kapiUrl, { method: 'get', url, headers });

    // the page load's reads of oneself: the user with its role, its role's templates (waiting for the watch)
    await waitFor(
      async () =>
        ((await get(`${IAM2}/users/${reader}`, mine)).json() as { metadata: { annotations?: Record<string, string> } })
          .metadata.annotations?.['iam.kapi.io/globalrole'] === 'platform-regular',
    );
    const templates = (await get(`${IAM2}/users/${reader}/globalroles`, mine)).json() as {
      metadata: { name: string };
    }[];
    expect(templates.map((t) => t.metadata.name)).toEqual(['role-template-view-app-templates']);
    expect((await get(`${IAM2}/users/${stranger}`, theirs)).status).toBe(200);
    expect((await get(`${IAM2}/users/${stranger}/globalroles`, theirs)).json()).toEqual([]);
    expect((await get(`${IAM2}/clustermembers/${stranger}/clusterroles`, theirs)).json()).toEqual([]);
    // another's: the cluster's RBAC decides; a missing user is a 404 to one who may read users
    expect((await get(`${IAM2}/users/${reader}`, theirs)).status).toBe(403);
    expect((await get(`${IAM2}/users/${reader}/globalroles`, theirs)).status).toBe(403);
    expect((await get(`${IAM2}/clustermembers/${reader}/clusterroles`, theirs)).status).toBe(403);
    expect((await get(`${IAM2}/users/ghost-user`, mine)).status).toBe(404);
    expect((await get(`${IAM2}/users/ghost-user/globalroles`, mine)).status).toBe(404);
    const projectRoles = (user: string) => `namespaces/${e2e.runId}/members/${user}/roles`;
    expect((await get(`${IAM2}/${projectRoles(stranger)}`, theirs)).json()).toEqual([]);
    expect((await get(`${IAM2}/${projectRoles(reader)}`, theirs)).status).toBe(403);
    for (const path of [
      `users/${reader}`,
      `users/${reader}/globalroles`,
      `clustermembers/${reader}/clusterroles`,
      projectRoles(reader),
    ]) {
      expect((await get(`${IAM2}/${path}`)).status).toBe(401);
    }

    // the users list with each one's role; globalrole= keeps a role's holders
    const holders = (await get(`${IAM2}/users?globalrole=platform-regular&limit=-1`, mine)).json() as {
      items: { metadata: { name: string; annotations?: Record<string, string> } }[];
    };
    expect(holders.items.map((u) => u.metadata.name)).toContain(reader);
    expect(holders.items.every((u) => u.metadata.annotations?.['iam.kapi.io/globalrole'] === 'platform-regular')).toBe(
      true,
    );
    // lists: users, members and cluster roles need their list right; the workspace lists answer everyone, filtered
    for (const url of [`${IAM2}/users`, `${IAM2}/clustermembers`, `${IAM2}/clusterroles`]) {
      expect((await get(`${url}?limit=5&sortBy=name`, mine)).status).toBe(200);
      expect((await get(`${url}?sortBy=size`, mine)).status).toBe(400);
      expect((await get(url, theirs)).status).toBe(403);
      expect((await get(url)).status).toBe(401);
    }
    expect((await get(`${IAM2}/clustermembers/${reader}/clusterroles`, mine)).status).toBe(200);
    // a cluster role in detail (the console's cluster role page)
    const clusterRole = await get(`${IAM2}/clusterroles/cluster-admin`, mine);
    expect(clusterRole.status).toBe(200);
    expect(clusterRole.json()).toMatchObject({ kind: 'ClusterRole', metadata: { name: 'cluster-admin' } });
    expect((await get(`${IAM2}/clusterroles/cluster-admin`, theirs)).status).toBe(403);
    expect((await get(`${IAM2}/clusterroles/ghost-role`, mine)).status).toBe(404);
    expect((await get(`${IAM2}/clusterroles/cluster-admin`)).status).toBe(401);
    for (const url of [`${TENANT3}/workspacetemplates`, `${TENANT3}/workspaces`, `${TENANT2}/workspaces`]) {
      await waitFor(async () => ((await get(url, mine)).json() as { totalItems: number }).totalItems > 0);
      expect(((await get(url, theirs)).json() as { totalItems: number }).totalItems).toBe(0);
      expect((await get(`${url}?sortBy=size`, mine)).status).toBe(400);
      expect((await get(url)).status).toBe(401);
    }
    expect((await get(`${TENANT3}/workspacetemplates/system-workspace`, mine)).status).toBe(200);
    expect((await get(`${TENANT3}/workspacetemplates/system-workspace`, theirs)).status).toBe(403);
    expect((await get(`${TENANT3}/workspacetemplates/ghost-workspace`, mine)).status).toBe(404);
    expect((await get(`${TENANT3}/workspacetemplates/system-workspace`)).status).toBe(401);
    // a member's projects (the console's member detail): the reader sees every project, so it may ask
    const memberProjects = (member: string) =>
      `${TENANT2}/workspaces/system-workspace/workspacemembers/${member}/namespaces`;
    expect((await get(memberProjects(reader), mine)).status).toBe(200);
    expect((await get(`${memberProjects(reader)}?sortBy=size`, mine)).status).toBe(400);
    expect((await get(memberProjects(reader), theirs)).status).toBe(403);
    expect((await get(memberProjects('ghost-member'), mine)).status).toBe(404);
    expect((await get(memberProjects(reader))).status).toBe(401);
    // the system components of the cluster overview: the reader may list them (READ_EVERY_KIND), a stranger not
    const components = '/kapis/resources.kapi.io/v1alpha2/components';
    const listed = await get(components, mine);
    expect(listed.status).toBe(200);
    expect((await get(components, theirs)).status).toBe(403);
    expect((await get(components)).status).toBe(401);
    // one of them in detail, as the console's component page reads it
    const first = (listed.json() as { name: string; namespace: string }[])[0];
    expect(first).toBeDefined();
    const detail = await get(`${components}/${first!.name}`, mine);
    expect(detail.status).toBe(200);
    expect(detail.json()).toEqual(first);
    expect((await get(`${components}/${first!.name}`, theirs)).status).toBe(403);
    expect((await get(`${components}/ghost-component`, mine)).status).toBe(404);
    expect((await get(`${components}/${first!.name}`)).status).toBe(401);
    // a container's terminal asked without an upgrade (the console's probe): the checks, then 400
    const terminal = (pod: string, query = '') =>
      `/kapis/terminal.kapi.io/v1alpha2/namespaces/${e2e.runId}/pods/${pod}/exec${query}`;
    const samplePod = samples.find((s) => s.resource === 'pods')!.name;
    expect((await get(terminal(samplePod, '?shell=sh'), mine)).status).toBe(400);
    expect((await get(terminal(samplePod), theirs)).status).toBe(403);
    expect((await get(terminal('ghost-pod'), mine)).status).toBe(404);
    expect((await get(terminal(samplePod))).status).toBe(401);
    // a user's kubeconfig (Toolbox → kubeconfig): one's own, another's with the right (the reader), else 403
    const kubeconfig = (user: string) => `/kapis/resources.kapi.io/v1alpha2/users/${user}/kubeconfig`;
    expect((await get(kubeconfig(stranger), theirs)).status).toBe(200);
    expect((await get(kubeconfig(stranger), mine)).status).toBe(200);
    expect((await get(kubeconfig(reader), theirs)).status).toBe(403);
    expect((await get(kubeconfig('ghost-user'), mine)).status).toBe(404);
    expect((await get(kubeconfig(reader))).status).toBe(401);
    // the user's kubectl pod (Toolbox → kubectl): one's own once it runs (the harness plays its kubelet), never
    // another's, not without the right; none on a kapi serving no toolbox
    const kubectl = (user: string) => `/kapis/resources.kapi.io/v1alpha2/users/${user}/kubectl`;
    const own = get(kubectl(reader), mine);
    await e2e.runPodWhenMade(e2e.configuration.namespace, `kubectl-${reader}`);
    expect((await own).status).toBe(200);
    expect((await get(kubectl(stranger), mine)).status).toBe(403);
    expect((await get(kubectl(stranger), theirs)).status).toBe(403);
    expect((await get(kubectl(reader))).status).toBe(401);
    // a pod of that name kapi did not make (here: one made in its place) is left alone: 409
    const podPath = `/api/v1/namespaces/${e2e.configuration.namespace}/pods/kubectl-${reader}`;
    await e2e.admin.request({ method: 'DELETE', path: podPath, query: { gracePeriodSeconds: 0 } });
    await waitFor(async () => (await e2e.admin.request({ path: podPath }).catch(() => undefined)) === undefined);
    await e2e.admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${e2e.configuration.namespace}/pods`,
      body: {
        metadata: { name: `kubectl-${reader}` },
        spec: { containers: [{ name: 'c', image: 'registry.invalid/x' }] },
      },
    });
    cleanup.push(podPath);
    expect((await get(kubectl(reader), mine)).status).toBe(409);
    const noToolbox = await e2e.startReplica({ withoutToolbox: true });
    const plain = await send(`http://127.0.0.1:${noToolbox.httpPort}`, {
      method: 'get',
      url: kubectl(reader),
      headers: mine,
    });
    expect(plain.status).toBe(404);
    // a project's overview and the cluster's: usage and abnormal workloads (READ_EVERY_KIND), a stranger not
    for (const path of [
      `namespaces/${e2e.runId}/quotas`,
      'quotas',
      `namespaces/${e2e.runId}/abnormalworkloads`,
      'abnormalworkloads',
    ]) {
      const url = `/kapis/resources.kapi.io/v1alpha2/${path}`;
      expect((await get(url, mine)).status).toBe(200);
      expect((await get(url, theirs)).status).toBe(403);
      expect((await get(url)).status).toBe(401);
    }
    for (const path of ['namespaces/Not_A_Label/quotas', 'namespaces/Not_A_Label/abnormalworkloads']) {
      expect((await get(`/kapis/resources.kapi.io/v1alpha2/${path}`, mine)).status).toBe(400);
    }
  }, 120_000);
});

describe('iam.kapi.io/v1alpha2: users administered, platform roles, login records', () => {
  let administrator: string;
  let adminHeaders: Record<string, string>;
  let strangerHeaders: Record<string, string>;
  const user = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'User',
    metadata: { name, annotations: { 'kapi.io/description': 'contract' } },
    spec: { email: `${name}@example.com`, password: 'Contract-New-pw-1', ...extra },
  });
  beforeAll(async () => {
    administrator = await e2e.createUser('contract-user-admin', PASSWORD);
    await e2e.grant(administrator, [
      {
        apiGroups: ['iam.kapi.io'],
        resources: ['users'],
        verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
      },
      { apiGroups: ['iam.kapi.io'], resources: ['users/loginrecords'], verbs: ['get'] },
      { apiGroups: ['iam.kapi.io'], resources: ['globalroles'], verbs: ['get', 'list'] },
      { apiGroups: ['iam.kapi.io'], resources: ['clustermembers'], verbs: ['create', 'update', 'delete'] },
      {
        apiGroups: ['iam.kapi.io'],
        resources: ['globalroles', 'clusterroles'],
        verbs: ['create', 'update', 'patch', 'delete'],
      },
      {
        apiGroups: ['tenant.kapi.io'],
        resources: ['workspacetemplates'],
        verbs: ['create', 'patch', 'delete', 'bind'],
      },
      // who manages workspaces' quotas
      {
        apiGroups: ['tenant.kapi.io'],
        resources: ['workspacetemplates/resourcequotas'],
        verbs: ['get', 'create', 'update', 'delete'],
      },
      { apiGroups: ['monitoring.kapi.io'], resources: ['dashboards', 'clusterdashboards'], verbs: ['create'] },
    ]);
    adminHeaders = bearer((await tokens(administrator)).access_token);
    strangerHeaders = bearer((await tokens(stranger)).access_token);
  });

  test('when an administrator creates, edits, patches and deletes a user, then every answer and refusal matches the document', async () => {
    const name = e2e.name('contract-made');
    cleanup.push(
      `/apis/iam.kapi.io/v1beta1/users/${name}`,
      `/apis/iam.kapi.io/v1alpha2/globalrolebindings/${name}-platform-regular`,
    );
    const call = (method: Method, url: string, headers: Record<string, string>, json?: unknown) =>
      send(e2e.kapiUrl, { method, url, headers, json });
    expect((await call('post', `${IAM2}/users`, adminHeaders, user(name))).status).toBe(201);
    expect((await call('post', `${IAM2}/users`, adminHeaders, user(name))).status).toBe(409);
    expect(
      (await call('post', `${IAM2}/users`, adminHeaders, user(e2e.name('contract-bad'), { email: 'x' }))).status,
    ).toBe(400);
    const unknownRole = user(e2e.name('contract-bad'));
    unknownRole.metadata.annotations = {
      ...unknownRole.metadata.annotations,
      'iam.kapi.io/globalrole': 'no-such-role',
    } as never;
    expect((await call('post', `${IAM2}/users`, adminHeaders, unknownRole)).status).toBe(404);
    expect((await call('post', `${IAM2}/users`, strangerHeaders, user(e2e.name('contract-bad')))).status).toBe(403);
    expect((await call('post', `${IAM2}/users`, {}, user(e2e.name('contract-bad')))).status).toBe(401);
    const large = { ...user(e2e.name('contract-bad')), pad: 'x'.repeat(17 * 1024) };
    expect((await call('post', `${IAM2}/users`, adminHeaders, large)).status).toBe(413);
    const form = await send(e2e.kapiUrl, {
      method: 'post',
      url: `${IAM2}/users`,
      headers: adminHeaders,
      form: { a: 'b' },
    });
    expect(form.status).toBe(415);

    for (const method of ['put', 'patch'] as const) {
      const url = `${IAM2}/users/${name}`;
      const edit = {
        metadata: { name, annotations: { 'kapi.io/description': method } },
        spec: { email: `${name}@example.com` },
      };
      expect((await call(method, url, adminHeaders, edit)).status).toBe(200);
      expect((await call(method, url, adminHeaders, { ...edit, metadata: { name: 'another' } })).status).toBe(400);
      expect(
        (await call(method, url, adminHeaders, { ...edit, spec: { email: `${reader}@e2e.kapi.test` } })).status,
      ).toBe(409);
      expect((await call(method, url, strangerHeaders, edit)).status).toBe(403);
      expect((await call(method, url, {}, edit)).status).toBe(401);
      const ghost = e2e.name('contract-ghost');
      expect((await call(method, `${IAM2}/users/${ghost}`, adminHeaders, { metadata: { name: ghost } })).status).toBe(
        404,
      );
      expect((await call(method, url, adminHeaders, { ...edit, pad: 'x'.repeat(17 * 1024) })).status).toBe(413);
      const notJson = await send(e2e.kapiUrl, { method, url, headers: adminHeaders, form: { a: 'b' } });
      expect(notJson.status).toBe(415);
    }

    expect((await call('delete', `${IAM2}/users/${name}`, strangerHeaders)).status).toBe(403);
    expect((await call('delete', `${IAM2}/users/${name}`, {})).status).toBe(401);
    expect((await call('delete', `${IAM2}/users/${name}`, adminHeaders)).status).toBe(200);
    expect((await call('delete', `${IAM2}/users/${name}`, adminHeaders)).status).toBe(404);
  }, 60_000);

  test('when cluster members are invited, changed and removed, then every answer and refusal matches the document', async () => {
    const role = e2e.name('contract-user-getter');
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    await e2e.admin.request({
      method: 'POST',
      path: `${rbac}/clusterroles`,
      body: { metadata: { name: role }, rules: [{ apiGroups: ['iam.kapi.io'], resources: ['users'], verbs: ['get'] }] },
    });
    cleanup.push(`${rbac}/clusterroles/${role}`, `${rbac}/clusterrolebindings/${stranger}-${role}`);
    const call = (method: Method, url: string, headers: Record<string, string>, json?: unknown) =>
      send(e2e.kapiUrl, { method, url, headers, json });
    const members = `${IAM2}/clustermembers`;
    const one = { username: stranger, roleRef: role };
    expect((await call('post', members, adminHeaders, [one])).status).toBe(200);
    expect((await call('post', members, adminHeaders, [{ username: stranger }])).status).toBe(400);
    expect((await call('post', members, adminHeaders, [{ ...one, roleRef: 'no-such-role' }])).status).toBe(404);
    expect((await call('post', members, strangerHeaders, [one])).status).toBe(403);
    expect((await call('post', members, {}, [one])).status).toBe(401);
    expect((await call('post', members, adminHeaders, [{ ...one, pad: 'x'.repeat(17 * 1024) }])).status).toBe(413);
    expect(
      (await send(e2e.kapiUrl, { method: 'post', url: members, headers: adminHeaders, form: { a: 'b' } })).status,
    ).toBe(415);
    const url = `${members}/${stranger}`;
    expect((await call('put', url, adminHeaders, one)).status).toBe(200);
    expect((await call('put', url, adminHeaders, { ...one, username: reader })).status).toBe(400);
    expect((await call('put', url, adminHeaders, { ...one, roleRef: 'no-such-role' })).status).toBe(404);
    expect((await call('put', url, strangerHeaders, one)).status).toBe(403);
    expect((await call('put', url, {}, one)).status).toBe(401);
    expect((await call('put', url, adminHeaders, { ...one, pad: 'x'.repeat(17 * 1024) })).status).toBe(413);
    expect((await send(e2e.kapiUrl, { method: 'put', url, headers: adminHeaders, form: { a: 'b' } })).status).toBe(415);
    expect((await call('delete', url, strangerHeaders)).status).toBe(403);
    expect((await call('delete', url, {})).status).toBe(401);
    expect((await call('delete', url, adminHeaders)).status).toBe(200);
    expect((await call('delete', url, adminHeaders)).status).toBe(404);
  }, 60_000);

  test.each([
    {
      what: 'platform roles',
      resource: 'globalroles',
      stored: (name: string) => `/apis/iam.kapi.io/v1alpha2/globalroles/${name}`,
      // held by a user (a GlobalRoleBinding): kapi's watch of the bindings shows it held
      hold: async (name: string) => {
        const binding = await bindGlobalRole(e2e.admin, stranger, name);
        const roleOfStranger = async () =>
          (
            (await send(e2e.kapiUrl, { method: 'get', url: `${IAM2}/users/${stranger}`, headers: adminHeaders }).then(
              (answer) => answer.json(),
            )) as { metadata: { annotations?: Record<string, string> } }
          ).metadata.annotations?.['iam.kapi.io/globalrole'];
        await waitFor(async () => (await roleOfStranger()) === name);
        return async () => {
          await deleteIgnoringMissing(e2e.admin, binding);
          await waitFor(async () => (await roleOfStranger()) !== name);
        };
      },
    },
    {
      what: 'cluster roles',
      resource: 'clusterroles',
      stored: (name: string) => `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`,
      // held by a RoleBinding in some namespace (kapi reads the bindings as kube-apiserver has them)
      hold: async (name: string) => {
        const path = `/apis/rbac.authorization.k8s.io/v1/namespaces/${e2e.runId}/rolebindings`;
        await e2e.admin.request({
          method: 'POST',
          path,
          body: {
            metadata: { name },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: stranger }],
          },
        });
        return () => deleteIgnoringMissing(e2e.admin, `${path}/${name}`);
      },
    },
  ])(
    'when $what are made, changed and deleted, then every answer and refusal matches the document',
    async (kind) => {
      const name = e2e.name(`contract-${kind.resource}`);
      cleanup.push(kind.stored(name));
      const call = (method: Method, url: string, headers: Record<string, string>, json?: unknown) =>
        send(e2e.kapiUrl, { method, url, headers, json });
      const role = (templates: string[] = [], roleName = name) => ({
        metadata: { name: roleName, annotations: { 'iam.kapi.io/aggregation-roles': JSON.stringify(templates) } },
      });
      const roles = `${IAM2}/${kind.resource}`;
      expect((await call('post', roles, adminHeaders, role())).status).toBe(201);
      expect((await call('post', roles, adminHeaders, role())).status).toBe(409);
      expect((await call('post', roles, adminHeaders, { metadata: { name: 'Not A Name' } })).status).toBe(400);
      expect((await call('post', roles, adminHeaders, role(['role-template-of-nothing'], e2e.name('x')))).status).toBe(
        404,
      );
      expect((await call('post', roles, strangerHeaders, role([], e2e.name('x')))).status).toBe(403);
      expect((await call('post', roles, {}, role([], e2e.name('x')))).status).toBe(401);
      expect(
        (await call('post', roles, adminHeaders, { ...role([], e2e.name('x')), pad: 'x'.repeat(17 * 1024) })).status,
      ).toBe(413);
      expect(
        (await send(e2e.kapiUrl, { method: 'post', url: roles, headers: adminHeaders, form: { a: 'b' } })).status,
      ).toBe(415);
      const url = `${roles}/${name}`;
      const ghost = `${roles}/${e2e.name('ghost-role')}`;
      expect((await call('put', url, adminHeaders, role())).status).toBe(200);
      expect((await call('put', url, adminHeaders, role([], 'another'))).status).toBe(400);
      expect((await call('put', ghost, adminHeaders, role([], e2e.name('ghost-role')))).status).toBe(404);
      expect((await call('put', url, strangerHeaders, role())).status).toBe(403);
      expect((await call('put', url, {}, role())).status).toBe(401);
      expect((await call('put', url, adminHeaders, { ...role(), pad: 'x'.repeat(17 * 1024) })).status).toBe(413);
      expect((await send(e2e.kapiUrl, { method: 'put', url, headers: adminHeaders, form: { a: 'b' } })).status).toBe(
        415,
      );
      // the console's Edit Information: a merge patch
      const described = { metadata: { annotations: { 'kapi.io/description': 'contract' } } };
      const patched = await call('patch', url, adminHeaders, described);
      expect(patched.status).toBe(200);
      expect(patched.json()).toMatchObject(described);
      expect((await call('patch', url, adminHeaders, { metadata: { name: 'another' } })).status).toBe(400);
      expect((await call('patch', ghost, adminHeaders, described)).status).toBe(404);
      expect((await call('patch', url, strangerHeaders, described)).status).toBe(403);
      expect((await call('patch', url, {}, described)).status).toBe(401);
      expect((await call('patch', url, adminHeaders, { ...described, pad: 'x'.repeat(17 * 1024) })).status).toBe(413);
      expect((await send(e2e.kapiUrl, { method: 'patch', url, headers: adminHeaders, form: { a: 'b' } })).status).toBe(
        415,
      );
      // held: not deleted until no one holds it
      const release = await kind.hold(name);
      expect((await call('delete', url, adminHeaders)).status).toBe(409);
      await release();
      expect((await call('delete', url, strangerHeaders)).status).toBe(403);
      expect((await call('delete', url, {})).status).toBe(401);
      expect((await call('delete', url, adminHeaders)).status).toBe(200);
      expect((await call('delete', url, adminHeaders)).status).toBe(404);
    },
    60_000,
  );

  test('when Grafana dashboards are imported, then every answer and refusal matches the document', async () => {
    const name = e2e.name('contract-dash');
    const grafana = JSON.stringify({
      title: 'Contract',
      panels: [{ type: 'graph', title: 'CPU', targets: [{ expr: 'up' }] }],
    });
    for (const base of [
      `/kapis/monitoring.kapi.io/v1alpha3/namespaces/${e2e.runId}/dashboards`,
      '/kapis/monitoring.kapi.io/v1alpha3/clusterdashboards',
    ]) {
      cleanup.push(
        base.includes('/namespaces/')
          ? `/apis/monitoring.kapi.io/v1alpha2/namespaces/${e2e.runId}/dashboards/${name}`
          : `/apis/monitoring.kapi.io/v1alpha2/clusterdashboards/${name}`,
      );
      const url = `${base}/${name}/template`;
      const call = (headers: Record<string, string>, json: unknown) =>
        send(e2e.kapiUrl, { method: 'post', url, headers, json });
      const created = await call(adminHeaders, { grafanaDashboardContent: grafana, description: 'contract' });
      expect(created.status).toBe(200);
      expect(created.json()).toMatchObject({ metadata: { name }, spec: { title: 'Contract' } });
      expect((await call(adminHeaders, { grafanaDashboardContent: grafana })).status).toBe(409);
      expect((await call(adminHeaders, { grafanaDashboardUrl: 'http://169.254.169.254/' })).status).toBe(400);
      expect((await call(strangerHeaders, { grafanaDashboardContent: grafana })).status).toBe(403);
      expect((await call({}, { grafanaDashboardContent: grafana })).status).toBe(401);
      expect((await call(adminHeaders, { grafanaDashboardContent: 'x'.repeat(3 << 20) })).status).toBe(413);
      expect((await send(e2e.kapiUrl, { method: 'post', url, headers: adminHeaders, form: { a: 'b' } })).status).toBe(
        415,
      );
    }
  }, 60_000);

  test('when workspaces are made, changed and deleted, then every answer and refusal matches the document', async () => {
    const name = e2e.name('contract-ws');
    const templates = '/kapis/tenant.kapi.io/v1alpha3/workspacetemplates';
    cleanup.push(`/apis/tenant.kapi.io/v1alpha2/workspacetemplates/${name}`);
    const call = (method: Method, url: string, headers: Record<string, string>, json?: unknown) =>
      send(e2e.kapiUrl, { method, url, headers, json });
    const ws = (wsName = name, manager?: string) => ({
      metadata: { name: wsName },
      spec: { template: { spec: manager ? { manager } : {} } },
    });
    const large = { ...ws(), pad: 'x'.repeat(17 * 1024) };
    expect((await call('post', templates, adminHeaders, ws())).status).toBe(201);
    expect((await call('post', templates, adminHeaders, ws())).status).toBe(409);
    expect((await call('post', templates, adminHeaders, ws('no.dots'))).status).toBe(400);
    expect((await call('post', templates, adminHeaders, ws(e2e.name('x'), e2e.name('nobody')))).status).toBe(404);
    expect((await call('post', templates, strangerHeaders, ws(e2e.name('x')))).status).toBe(403);
    expect((await call('post', templates, {}, ws(e2e.name('x')))).status).toBe(401);
    expect((await call('post', templates, adminHeaders, large)).status).toBe(413);
    expect(
      (await send(e2e.kapiUrl, { method: 'post', url: templates, headers: adminHeaders, form: { a: 'b' } })).status,
    ).toBe(415);
    const url = `${templates}/${name}`;
    const edit = [{ op: 'add', path: '/metadata/annotations', value: { 'kapi.io/description': 'contract' } }];
    expect((await call('patch', url, adminHeaders, edit)).status).toBe(200);
    expect((await call('patch', url, adminHeaders, [{ op: 'remove', path: '/spec' }])).status).toBe(400);
    expect((await call('patch', `${templates}/${e2e.name('ghost-ws')}`, adminHeaders, edit)).status).toBe(404);
    expect((await call('patch', url, strangerHeaders, edit)).status).toBe(403);
    expect((await call('patch', url, {}, edit)).status).toBe(401);
    expect((await call('patch', url, adminHeaders, large)).status).toBe(413);
    expect((await send(e2e.kapiUrl, { method: 'patch', url, headers: adminHeaders, form: { a: 'b' } })).status).toBe(
      415,
    );
    expect((await call('delete', url, adminHeaders, { propagationPolicy: 'Everything' })).status).toBe(400);
    expect((await call('delete', url, strangerHeaders)).status).toBe(403);
    expect((await call('delete', url, {})).status).toBe(401);
    expect((await call('delete', url, adminHeaders, large)).status).toBe(413);
    expect((await send(e2e.kapiUrl, { method: 'delete', url, headers: adminHeaders, form: { a: 'b' } })).status).toBe(
      415,
    );
    expect((await call('delete', url, adminHeaders)).status).toBe(200);
    expect((await call('delete', url, adminHeaders)).status).toBe(404);
  }, 60_000);

  test('when workspace members, projects and project members are administered, then every answer and refusal matches the document', async () => {
    const root = await e2e.createUser('contract-tenant', PASSWORD);
    const member = await e2e.createUser('contract-member', PASSWORD);
    cleanup.push(await bindGlobalRole(e2e.admin, root, 'platform-admin'));
    await waitFor(async () => {
      const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          spec: { user: root, resourceAttributes: { verb: 'create', resource: 'rolebindings', namespace: 'x' } },
        },
      });
      return review.status.allowed === true;
    });
    const h = bearer((await tokens(root)).access_token);
    const s = strangerHeaders;
    const ws = e2e.name('contract-tws');
    const ns = e2e.name('contract-tns');
    const ghost = e2e.name('ghost');
    cleanup.push(`/apis/tenant.kapi.io/v1alpha2/workspacetemplates/${ws}`, `/api/v1/namespaces/${ns}`);
    const call = (method: Method, url: string, headers: Record<string, string>, json?: unknown) =>
      send(e2e.kapiUrl, { method, url, headers, json });
    const form = (method: Method, url: string) => send(e2e.kapiUrl, { method, url, headers: h, form: { a: 'b' } });
    const pad = 'x'.repeat(17 * 1024);
    const expectAll = async (cases: [Method, string, Record<string, string>, unknown, number][]) => {
      for (const [method, url, headers, json, status] of cases)
        expect([method, url, (await call(method, url, headers, json)).status]).toEqual([method, url, status]);
    };
    const template = { metadata: { name: ws }, spec: { template: { spec: { manager: root } } } };
    expect((await call('post', `${TENANT3}/workspacetemplates`, h, template)).status).toBe(201);
    const WS = `${IAM2}/workspaces/${ws}`;
    await waitFor(async () => (await call('get', `${WS}/workspaceroles`, h)).status === 200);
    await waitFor(async () => (await call('get', `${IAM2}/users/${member}`, h)).status === 200);
    const viewer = [{ username: member, roleRef: `${ws}-viewer` }];
    await expectAll([
      ['get', `${WS}/workspaceroles?annotation=kapi.io/creator`, h, undefined, 200],
      ['get', `${WS}/workspaceroles`, s, undefined, 403],
      ['get', `${IAM2}/workspaces/${ghost}/workspaceroles`, h, undefined, 404],
      ['get', `${WS}/workspaceroles`, {}, undefined, 401],
      ['get', `${WS}/workspaceroles/${ws}-viewer`, h, undefined, 200],
      ['get', `${WS}/workspaceroles/${ws}-viewer`, s, undefined, 403],
      ['get', `${WS}/workspaceroles/${ws}-nope`, h, undefined, 404],
      ['get', `${WS}/workspaceroles/${ws}-viewer`, {}, undefined, 401],
      ['post', `${WS}/workspacemembers`, h, viewer, 200],
      ['post', `${WS}/workspacemembers`, h, [{ username: member }], 400],
      ['post', `${WS}/workspacemembers`, s, viewer, 403],
      ['post', `${WS}/workspacemembers`, h, [{ username: ghost, roleRef: `${ws}-viewer` }], 404],
      ['post', `${WS}/workspacemembers`, h, [{ username: root, roleRef: `${ws}-viewer` }], 409],
      ['post', `${WS}/workspacemembers`, h, [{ ...viewer[0], pad }], 413],
      ['post', `${WS}/workspacemembers`, {}, viewer, 401],
    ]);
    expect((await form('post', `${WS}/workspacemembers`)).status).toBe(415);
    await waitFor(async () => (await call('get', `${WS}/workspacemembers/${member}`, h)).status === 200);
    const regular = { username: member, roleRef: `${ws}-regular` };
    const memberUrl = `${WS}/workspacemembers/${member}`;
    await expectAll([
      ['get', `${WS}/workspacemembers?sortBy=createTime`, h, undefined, 200],
      ['get', `${WS}/workspacemembers?sortBy=size`, h, undefined, 400],
      ['get', `${WS}/workspacemembers`, s, undefined, 403],
      ['get', `${IAM2}/workspaces/${ghost}/workspacemembers`, h, undefined, 404],
      ['get', `${WS}/workspacemembers`, {}, undefined, 401],
      ['get', memberUrl, s, undefined, 403],
      ['get', `${WS}/workspacemembers/${ghost}`, h, undefined, 404],
      ['get', memberUrl, {}, undefined, 401],
      ['put', memberUrl, h, regular, 200],
      ['put', memberUrl, h, { ...regular, username: root }, 400],
      ['put', memberUrl, s, regular, 403],
      ['put', memberUrl, h, { ...regular, roleRef: `${ghost}-viewer` }, 404],
      ['put', `${WS}/workspacemembers/${root}`, h, { username: root, roleRef: `${ws}-viewer` }, 409],
      ['put', memberUrl, h, { ...regular, pad }, 413],
      ['put', memberUrl, {}, regular, 401],
      ['get', `${memberUrl}/workspaceroles`, h, undefined, 200],
      ['get', `${memberUrl}/workspaceroles`, s, undefined, 403],
      ['get', `${memberUrl}/workspaceroles`, {}, undefined, 401],
      ['delete', memberUrl, s, undefined, 403],
      ['delete', `${WS}/workspacemembers/${root}`, h, undefined, 409],
      ['delete', memberUrl, {}, undefined, 401],
      ['delete', memberUrl, h, undefined, 200],
      ['delete', memberUrl, h, undefined, 404],
    ]);
    expect((await form('put', memberUrl)).status).toBe(415);

    const TNS = `${TENANT2}/workspaces/${ws}/namespaces`;
    const project = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } };
    await expectAll([
      ['post', TNS, h, project, 201],
      ['post', TNS, h, project, 409],
      ['post', TNS, h, { metadata: { name: 'Not_A_Label' } }, 400],
      ['post', TNS, s, project, 403],
      ['post', `${TENANT2}/workspaces/${ghost}/namespaces`, h, project, 404],
      ['post', TNS, h, { ...project, pad }, 413],
      ['post', TNS, {}, project, 401],
    ]);
    expect((await form('post', TNS)).status).toBe(415);
    await waitFor(async () => (await call('get', `${TNS}/${ns}`, h)).status === 200);
    const annotate = { metadata: { annotations: { 'kapi.io/description': 'contract' } } };
    const unlabel = { metadata: { labels: { 'kapi.io/workspace': null } } };
    await expectAll([
      ['get', `${TNS}?sortBy=createTime`, h, undefined, 200],
      ['get', `${TNS}?sortBy=size`, h, undefined, 400],
      ['get', `${TENANT2}/workspaces/${ghost}/namespaces`, h, undefined, 404],
      ['get', TNS, {}, undefined, 401],
      ['get', `${TNS}/${ns}`, s, undefined, 403],
      ['get', `${TNS}/${ghost}`, h, undefined, 404],
      ['get', `${TNS}/${ns}`, {}, undefined, 401],
    ]);
    for (const method of ['patch', 'put'] as const) {
      await expectAll([
        [method, `${TNS}/${ns}`, h, annotate, 200],
        [method, `${TNS}/${ns}`, h, unlabel, 400],
        [method, `${TNS}/${ns}`, s, annotate, 403],
        [method, `${TNS}/${ghost}`, h, annotate, 404],
        [method, `${TNS}/${ns}`, h, { ...annotate, pad }, 413],
        [method, `${TNS}/${ns}`, {}, annotate, 401],
      ]);
      expect((await form(method, `${TNS}/${ns}`)).status).toBe(415);
    }

    const NSM = `${IAM2}/namespaces/${ns}`;
    const nsViewer = [{ username: member, roleRef: 'viewer' }];
    await expectAll([
      ['get', `${NSM}/roles?annotation=kapi.io/creator`, h, undefined, 200],
      ['get', `${NSM}/roles`, s, undefined, 403],
      ['get', `${IAM2}/namespaces/${ghost}/roles`, h, undefined, 404],
      ['get', `${NSM}/roles`, {}, undefined, 401],
      ['get', `${NSM}/roles/viewer`, h, undefined, 200],
      ['get', `${NSM}/roles/viewer`, s, undefined, 403],
      ['get', `${NSM}/roles/nope`, h, undefined, 404],
      ['get', `${NSM}/roles/viewer`, {}, undefined, 401],
      ['post', `${NSM}/members`, h, nsViewer, 200],
      ['post', `${NSM}/members`, h, [], 400],
      ['post', `${NSM}/members`, s, nsViewer, 403],
      ['post', `${NSM}/members`, h, [{ username: member, roleRef: 'nope' }], 404],
      ['post', `${NSM}/members`, h, [{ ...nsViewer[0], pad }], 413],
      ['post', `${NSM}/members`, {}, nsViewer, 401],
    ]);
    expect((await form('post', `${NSM}/members`)).status).toBe(415);
    await waitFor(async () => (await call('get', `${NSM}/members/${member}`, h)).status === 200);
    const operator = { username: member, roleRef: 'operator' };
    await expectAll([
      ['get', `${NSM}/members?sortBy=createTime`, h, undefined, 200],
      ['get', `${NSM}/members?sortBy=size`, h, undefined, 400],
      ['get', `${NSM}/members`, s, undefined, 403],
      ['get', `${NSM}/members`, {}, undefined, 401],
      ['get', `${NSM}/members/${member}`, s, undefined, 403],
      ['get', `${NSM}/members/${ghost}`, h, undefined, 404],
      ['get', `${NSM}/members/${member}`, {}, undefined, 401],
      ['put', `${NSM}/members/${member}`, h, operator, 200],
      ['put', `${NSM}/members/${member}`, h, { ...operator, username: root }, 400],
      ['put', `${NSM}/members/${member}`, s, operator, 403],
      ['put', `${NSM}/members/${member}`, h, { ...operator, roleRef: 'nope' }, 404],
      ['put', `${NSM}/members/${member}`, h, { ...operator, pad }, 413],
      ['put', `${NSM}/members/${member}`, {}, operator, 401],
      ['delete', `${NSM}/members/${member}`, s, undefined, 403],
      ['delete', `${NSM}/members/${ghost}`, h, undefined, 404],
      ['delete', `${NSM}/members/${member}`, {}, undefined, 401],
      ['delete', `${NSM}/members/${member}`, h, undefined, 200],
      ['delete', `${TNS}/${ns}`, s, undefined, 403],
      ['delete', `${TNS}/${ghost}`, h, undefined, 404],
      ['delete', `${TNS}/${ns}`, {}, undefined, 401],
      ['delete', `${TNS}/${ns}`, h, undefined, 200],
    ]);
    expect((await form('put', `${NSM}/members/${member}`)).status).toBe(415);
  }, 90_000);

  test('when a workspace’s departments are administered, then every answer and refusal matches the document', async () => {
    const root = await e2e.createUser('contract-dept', PASSWORD);
    const member = await e2e.createUser('contract-dept-m', PASSWORD);
    cleanup.push(await bindGlobalRole(e2e.admin, root, 'platform-admin'));
    await waitFor(async () => {
      const review = await e2e.admin.request<{ status: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          spec: { user: root, resourceAttributes: { verb: 'create', resource: 'rolebindings', namespace: 'x' } },
        },
      });
      return review.status.allowed === true;
    });
    const h = bearer((await tokens(root)).access_token);
    const s = strangerHeaders;
    const ws = e2e.name('contract-dws');
    const ns = e2e.name('contract-dns');
    const ghost = e2e.name('ghost');
    cleanup.push(`/apis/tenant.kapi.io/v1alpha2/workspacetemplates/${ws}`, `/api/v1/namespaces/${ns}`);
    const call = (method: Method, url: string, headers: Record<string, string>, json?: unknown) =>
      send(e2e.kapiUrl, { method, url, headers, json });
    const form = (method: Method, url: string) => send(e2e.kapiUrl, { method, url, headers: h, form: { a: 'b' } });
    const pad = 'x'.repeat(17 * 1024);
    const expectAll = async (cases: [Method, string, Record<string, string>, unknown, number][]) => {
      for (const [method, url, headers, json, status] of cases)
        expect([method, url, (await call(method, url, headers, json)).status]).toEqual([method, url, status]);
    };
    const template = { metadata: { name: ws }, spec: { template: { spec: { manager: root } } } };
    expect((await call('post', `${TENANT3}/workspacetemplates`, h, template)).status).toBe(201);
    const G = `${IAM2}/workspaces/${ws}/groups`;
    await waitFor(async () => (await call('get', G, h)).status === 200);
    const project = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } };
    expect((await call('post', `${TENANT2}/workspaces/${ws}/namespaces`, h, project)).status).toBe(201);
    await waitFor(async () => (await call('get', `${IAM2}/users/${member}`, h)).status === 200);

    const made = await call('post', G, h, { metadata: { generateName: 'dev' } });
    expect(made.status).toBe(200);
    const dev = (made.json() as { metadata: { name: string } }).metadata.name;
    await waitFor(async () => (await call('get', `${G}/${dev}`, h)).status === 200);
    const alias = { metadata: { name: dev, annotations: { 'kapi.io/alias-name': 'Dev' } } };
    await expectAll([
      ['post', G, h, { kind: 'Group' }, 400],
      ['post', G, s, { metadata: { generateName: 'qa' } }, 403],
      ['post', `${IAM2}/workspaces/${ghost}/groups`, h, { metadata: { generateName: 'qa' } }, 404],
      ['post', G, h, { metadata: { generateName: 'dev' } }, 409],
      ['post', G, h, { metadata: { generateName: 'qa' }, pad }, 413],
      ['post', G, {}, { metadata: { generateName: 'qa' } }, 401],
      ['get', `${G}?sortBy=createTime`, h, undefined, 200],
      ['get', `${G}?sortBy=size`, h, undefined, 400],
      ['get', G, s, undefined, 403],
      ['get', `${IAM2}/workspaces/${ghost}/groups`, h, undefined, 404],
      ['get', G, {}, undefined, 401],
      ['get', `${G}/${dev}`, s, undefined, 403],
      ['get', `${G}/${ghost}`, h, undefined, 404],
      ['get', `${G}/${dev}`, {}, undefined, 401],
      ['put', `${G}/${dev}`, h, alias, 200],
      ['put', `${G}/${dev}`, h, { metadata: { name: ghost } }, 400],
      ['put', `${G}/${dev}`, s, alias, 403],
      ['put', `${G}/${ghost}`, h, { metadata: { name: ghost } }, 404],
      ['put', `${G}/${dev}`, h, { metadata: { ...alias.metadata, resourceVersion: '1' } }, 409],
      ['put', `${G}/${dev}`, h, { ...alias, pad }, 413],
      ['put', `${G}/${dev}`, {}, alias, 401],
      ['patch', `${G}/${dev}`, h, { metadata: { annotations: { 'kapi.io/description': 'd' } } }, 200],
      ['patch', `${G}/${dev}`, h, [], 400],
      ['patch', `${G}/${dev}`, s, alias, 403],
      ['patch', `${G}/${ghost}`, h, alias, 404],
      ['patch', `${G}/${dev}`, h, { ...alias, pad }, 413],
      ['patch', `${G}/${dev}`, {}, alias, 401],
    ]);
    for (const [method, url] of [
      ['post', G],
      ['put', `${G}/${dev}`],
      ['patch', `${G}/${dev}`],
    ] as const)
      expect((await form(method, url)).status).toBe(415);

    const M = `${IAM2}/workspaces/${ws}/groupbindings`;
    const entry = [{ userName: member, groupName: dev }];
    const put = await call('post', M, h, entry);
    expect(put.status).toBe(200);
    const membership = (put.json() as { metadata: { name: string } }[])[0]!.metadata.name;
    await waitFor(async () => ((await call('get', M, h)).json() as { totalItems: number }).totalItems === 1);
    await expectAll([
      ['post', M, h, [], 400],
      ['post', M, s, entry, 403],
      ['post', M, h, [{ userName: ghost, groupName: dev }], 404],
      ['post', M, h, [{ ...entry[0], pad }], 413],
      ['post', M, {}, entry, 401],
      ['get', `${M}?labelSelector=iam.kapi.io/group-ref=${dev}`, h, undefined, 200],
      ['get', `${M}?sortBy=size`, h, undefined, 400],
      ['get', M, s, undefined, 403],
      ['get', `${IAM2}/workspaces/${ghost}/groupbindings`, h, undefined, 404],
      ['get', M, {}, undefined, 401],
      ['delete', `${M}/${membership}`, s, undefined, 403],
      ['delete', `${M}/${ghost}`, h, undefined, 404],
      ['delete', `${M}/${membership}`, {}, undefined, 401],
      ['delete', `${M}/${membership}`, h, undefined, 200],
    ]);
    expect((await form('post', M)).status).toBe(415);

    const W = `${IAM2}/workspaces/${ws}/workspacerolebindings`;
    const given = [{ subjects: [{ kind: 'Group', name: dev }], roleRef: { name: `${ws}-viewer` } }];
    const wrb = await call('post', W, h, given);
    expect(wrb.status).toBe(200);
    const wrbName = (wrb.json() as { metadata: { name: string } }[])[0]!.metadata.name;
    await waitFor(async () => ((await call('get', W, h)).json() as { totalItems: number }).totalItems === 1);
    await expectAll([
      ['post', W, h, [{ subjects: [{ kind: 'User', name: member }], roleRef: { name: `${ws}-viewer` } }], 400],
      ['post', W, s, given, 403],
      ['post', W, h, [{ ...given[0], roleRef: { name: `${ws}-nope` } }], 404],
      ['post', W, h, [{ ...given[0], pad }], 413],
      ['post', W, {}, given, 401],
      ['get', `${W}?rolename=${ws}-viewer`, h, undefined, 200],
      ['get', `${W}?sortBy=size`, h, undefined, 400],
      ['get', W, s, undefined, 403],
      ['get', `${IAM2}/workspaces/${ghost}/workspacerolebindings`, h, undefined, 404],
      ['get', W, {}, undefined, 401],
      ['delete', `${W}/${wrbName}`, s, undefined, 403],
      ['delete', `${W}/${ghost}`, h, undefined, 404],
      ['delete', `${W}/${wrbName}`, {}, undefined, 401],
      ['delete', `${W}/${wrbName}`, h, undefined, 200],
    ]);
    expect((await form('post', W)).status).toBe(415);

    const N = `${IAM2}/namespaces/${ns}/rolebindings`;
    const R = `${IAM2}/workspaces/${ws}/rolebindings`;
    const projectRole = [{ subjects: [{ kind: 'Group', name: dev }], roleRef: { kind: 'Role', name: 'viewer' } }];
    const rb = await call('post', N, h, projectRole);
    expect(rb.status).toBe(200);
    const rbName = (rb.json() as { metadata: { name: string } }[])[0]!.metadata.name;
    await waitFor(async () => ((await call('get', R, h)).json() as unknown[]).length === 1);
    await expectAll([
      ['post', N, h, [], 400],
      ['post', N, s, projectRole, 403],
      ['post', N, h, [{ ...projectRole[0], roleRef: { name: 'nope' } }], 404],
      ['post', N, h, [{ ...projectRole[0], pad }], 413],
      ['post', N, {}, projectRole, 401],
      ['get', `${R}?labelSelector=iam.kapi.io/group-ref=${dev}`, h, undefined, 200],
      ['get', `${R}?labelSelector=a!=b`, h, undefined, 400],
      ['get', R, s, undefined, 403],
      ['get', `${IAM2}/workspaces/${ghost}/rolebindings`, h, undefined, 404],
      ['get', R, {}, undefined, 401],
      ['delete', `${N}/${rbName}`, s, undefined, 403],
      ['delete', `${N}/${ghost}`, h, undefined, 404],
      ['delete', `${N}/${rbName}`, {}, undefined, 401],
      ['delete', `${N}/${rbName}`, h, undefined, 200],
      ['delete', `${G}/${dev}`, s, undefined, 403],
      ['delete', `${G}/${ghost}`, h, undefined, 404],
      ['delete', `${G}/${dev}`, {}, undefined, 401],
      ['delete', `${G}/${dev}`, h, undefined, 200],
    ]);
    expect((await form('post', N)).status).toBe(415);
  }, 120_000);

  test('when an image is looked up in its registry, then every answer and refusal matches the document', async () => {
    const registry = await startRegistry({ auth: 'none' });
    try {
      await registry.pushImage('team/app', '1.0', { os: 'linux', config: { ExposedPorts: { '80/tcp': {} } } });
      const readerHeaders = bearer((await tokens(reader)).access_token);
      const base = `/kapis/resources.kapi.io/v1alpha3/namespaces/${e2e.runId}`;
      const image = `${base}/imageconfig?image=${registry.host}/team/app`;
      const tags = `${base}/repositorytags?repository=${registry.host}/team/app`;
      for (const [url, headers, status] of [
        [`${image}:1.0`, readerHeaders, 200],
        [`${base}/imageconfig?image=Bad:Image:x`, readerHeaders, 400],
        [`${image}:1.0`, strangerHeaders, 403],
        [`${image}:9.9`, readerHeaders, 404],
        [`${image}:1.0`, {}, 401],
        [tags, readerHeaders, 200],
        [`${tags}&limit=0`, readerHeaders, 400],
        [tags, strangerHeaders, 403],
        [`${base}/repositorytags?repository=${registry.host}/team/none`, readerHeaders, 404],
        [tags, {}, 401],
      ] as const)
        expect([url, (await send(e2e.kapiUrl, { method: 'get', url, headers })).status]).toEqual([url, status]);
    } finally {
      await registry.stop();
    }
  }, 60_000);

  test('when a workspace’s quota is set, read, changed and lifted, then every answer and refusal matches the document', async () => {
    const ws = e2e.name('contract-qws');
    const ghost = e2e.name('ghost');
    cleanup.push(
      `/apis/tenant.kapi.io/v1alpha2/workspacetemplates/${ws}`,
      `/apis/quota.kapi.io/v1alpha2/resourcequotas/${ws}`,
    );
    const call = (method: Method, url: string, headers: Record<string, string>, json?: unknown) =>
      send(e2e.kapiUrl, { method, url, headers, json });
    const made = await call('post', `${TENANT3}/workspacetemplates`, adminHeaders, { metadata: { name: ws } });
    expect(made.status).toBe(201);
    const Q = `${TENANT2}/workspaces/${ws}/resourcequotas`;
    const quota = { metadata: { name: ws }, spec: { quota: { hard: { 'limits.cpu': '2', pods: '10' } } } };
    await waitFor(async () => (await call('get', `${Q}/${ws}`, adminHeaders)).status === 404);
    const pad = 'x'.repeat(17 * 1024);
    const form = (method: Method, url: string) =>
      send(e2e.kapiUrl, { method, url, headers: adminHeaders, form: { a: 'b' } });
    for (const [method, url, headers, json, status] of [
      ['post', Q, adminHeaders, { metadata: { name: ws }, spec: { quota: { hard: { services: '1' } } } }, 400],
      ['post', Q, strangerHeaders, quota, 403],
      ['post', `${TENANT2}/workspaces/${ghost}/resourcequotas`, adminHeaders, quota, 404],
      ['post', Q, adminHeaders, { ...quota, pad }, 413],
      ['post', Q, {}, quota, 401],
      ['post', Q, adminHeaders, quota, 200],
      ['post', Q, adminHeaders, quota, 409],
      ['get', `${Q}/${ws}`, adminHeaders, undefined, 200],
      ['get', `${Q}/${ws}`, strangerHeaders, undefined, 403],
      ['get', `${Q}/${ghost}`, adminHeaders, undefined, 404],
      ['get', `${Q}/${ws}`, {}, undefined, 401],
      ['put', `${Q}/${ws}`, adminHeaders, { ...quota, metadata: { name: 'other' } }, 400],
      ['put', `${Q}/${ws}`, strangerHeaders, quota, 403],
      ['put', `${Q}/${ghost}`, adminHeaders, { ...quota, metadata: { name: ghost } }, 404],
      ['put', `${Q}/${ws}`, adminHeaders, { ...quota, pad }, 413],
      ['put', `${Q}/${ws}`, {}, quota, 401],
      ['put', `${Q}/${ws}`, adminHeaders, { ...quota, metadata: { name: ws, resourceVersion: '1' } }, 409],
      ['put', `${Q}/${ws}`, adminHeaders, quota, 200],
      ['delete', `${Q}/${ws}`, strangerHeaders, undefined, 403],
      ['delete', `${Q}/${ws}`, {}, undefined, 401],
      ['delete', `${Q}/${ws}`, adminHeaders, undefined, 200],
      ['delete', `${Q}/${ws}`, adminHeaders, undefined, 404],
    ] as [Method, string, Record<string, string>, unknown, number][])
      expect([method, url, (await call(method, url, headers, json)).status]).toEqual([method, url, status]);
    expect((await form('post', Q)).status).toBe(415);
    expect((await form('put', `${Q}/${ws}`)).status).toBe(415);
  }, 60_000);

  test('when the cluster’s events are searched, then every answer and refusal matches the document', async () => {
    const url = '/kapis/tenant.kapi.io/v1alpha2/events';
    for (const [query, headers, status] of [
      ['?operation=statistics', adminHeaders, 200],
      ['?operation=export', adminHeaders, 400],
      ['', {}, 401],
    ] as const)
      expect([query, (await send(e2e.kapiUrl, { method: 'get', url: `${url}${query}`, headers })).status]).toEqual([
        query,
        status,
      ]);
  });

  test('when platform roles and login records are read, then every answer matches the document', async () => {
    const get = (url: string, headers: Record<string, string> = {}) =>
      send(e2e.kapiUrl, { method: 'get', url, headers });
    const roles = await get(`${IAM2}/globalroles?annotation=kapi.io/creator&limit=-1&sortBy=createTime`, adminHeaders);
    expect(roles.status).toBe(200);
    expect((roles.json() as { items: { metadata: { name: string } }[] }).items.map((r) => r.metadata.name)).toContain(
      'platform-admin',
    );
    expect((await get(`${IAM2}/globalroles?sortBy=size`, adminHeaders)).status).toBe(400);
    expect((await get(`${IAM2}/globalroles`, strangerHeaders)).status).toBe(403);
    expect((await get(`${IAM2}/globalroles`)).status).toBe(401);
    expect((await get(`${IAM2}/globalroles/platform-regular`, adminHeaders)).status).toBe(200);
    expect((await get(`${IAM2}/globalroles/no-such-role`, adminHeaders)).status).toBe(404);
    expect((await get(`${IAM2}/globalroles/platform-regular`, strangerHeaders)).status).toBe(403);
    expect((await get(`${IAM2}/globalroles/platform-regular`)).status).toBe(401);

    const records = await get(`${IAM2}/users/${reader}/loginrecords?limit=10&page=1`, adminHeaders);
    expect(records.status).toBe(200);
    expect((records.json() as { totalItems: number }).totalItems).toBeGreaterThan(0);
    expect((await get(`${IAM2}/users/${reader}/loginrecords?page=0`, adminHeaders)).status).toBe(400);
    expect((await get(`${IAM2}/users/${reader}/loginrecords`, strangerHeaders)).status).toBe(403);
    expect((await get(`${IAM2}/users/${e2e.name('nobody-here')}/loginrecords`, adminHeaders)).status).toBe(404);
    expect((await get(`${IAM2}/users/${reader}/loginrecords`)).status).toBe(401);
  });
});

describe('GET /.well-known/jwks.json and /.well-known/openid-configuration', () => {
  test('when the key set is asked for, then the JWKS matches the document', async () => {
    const res = await send(e2e.kapiUrl, { method: 'get', url: '/.well-known/jwks.json' });
    expect(res.status).toBe(200);
    expect(res.json()).toHaveProperty('keys');
  });

  test('when no https issuer is configured, then OpenID discovery is a 404 Status', async () => {
    const res = await send(e2e.kapiUrl, { method: 'get', url: '/.well-known/openid-configuration' });
    expect(res.status).toBe(404);
  });
});

/** A browser for the contract cases: keeps kapi's cookies between calls. */
class ContractBrowser {
  private readonly cookies = new Map<string, string>();

  async call(call: Call): Promise<Answer & { json: () => unknown }> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await send(e2e.kapiUrl, {
      ...call,
      headers: { ...(cookie ? { Cookie: cookie } : {}), ...call.headers },
    });
    for (const line of ([] as string[]).concat(res.headers['set-cookie'] ?? [])) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return res;
  }
}

const CONSOLE_REDIRECT = 'http://127.0.0.1:40123/console/callback';

function authorizeQuery(challenge: string, extra: Record<string, string> = {}): string {
  return new URLSearchParams({
    response_type: 'code',
    client_id: E2E_CONSOLE.id,
    redirect_uri: CONSOLE_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'openid profile',
    state: 'contract',
    ...extra,
  }).toString();
}

/** Authorize, the login page, and the form: the answer of the form post. */
async function browserSignIn(
  browser: ContractBrowser,
  username: string,
  pass: string,
  challenge: string,
  scope?: string,
) {
  const started = await browser.call({
    method: 'get',
    url: `/oauth/authorize?${authorizeQuery(challenge, scope === undefined ? {} : { scope })}`,
  });
  expect(started.status).toBe(303);
  const page = await browser.call({ method: 'get', url: String(started.headers.location) });
  expect(page.status).toBe(200);
  return browser.call({
    method: 'post',
    url: '/oauth/login',
    form: { ...formFields(page.text), username, password: pass, action: 'login' },
  });
}

async function browserTokens(scope?: string): Promise<{ access_token: string }> {
  const { verifier, challenge } = pkce();
  const signedIn = await browserSignIn(new ContractBrowser(), reader, PASSWORD, challenge, scope);
  const code = new URL(String(signedIn.headers.location)).searchParams.get('code')!;
  const res = await send(e2e.kapiUrl, {
    method: 'post',
    url: '/oauth/token',
    form: {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CONSOLE_REDIRECT,
      code_verifier: verifier,
      client_id: E2E_CONSOLE.id,
      client_secret: E2E_CONSOLE.secret,
    },
  });
  expect(res.status).toBe(200);
  return res.json() as { access_token: string };
}

describe('browser sign-in: /oauth/authorize and /oauth/login', () => {
  test('when a browser signs in on the login page, then each step and the code grant match the document', async () => {
    const { verifier, challenge } = pkce();
    const browser = new ContractBrowser();
    const signedIn = await browserSignIn(browser, reader, PASSWORD, challenge);
    expect(signedIn.status).toBe(303);
    const code = new URL(String(signedIn.headers.location)).searchParams.get('code')!;
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CONSOLE_REDIRECT,
      code_verifier: verifier,
      client_id: E2E_CONSOLE.id,
      client_secret: E2E_CONSOLE.secret,
    };
    const tokens = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/token', form });
    expect(tokens.status).toBe(200);
    expect(tokens.json()).toHaveProperty('id_token');
    const replayed = await send(e2e.kapiUrl, { method: 'post', url: '/oauth/token', form });
    expect(replayed.status).toBe(400);
    // signed in now: the next request gets its code at once
    const again = await browser.call({ method: 'get', url: `/oauth/authorize?${authorizeQuery(pkce().challenge)}` });
    expect(String(again.headers.location)).toMatch(/^http:\/\/127\.0\.0\.1:40123\/console\/callback\?code=/);
  });

  test('when the same request is a form post, then it matches the document too', async () => {
    const res = await new ContractBrowser().call({
      method: 'post',
      url: '/oauth/authorize',
      form: authorizeQuery(pkce().challenge),
    });
    expect(res.status).toBe(303);
  });

  test.each(['get', 'post'] as const)(
    'when %s names an unregistered redirect URI, then 400 on a page',
    async (method) => {
      const query = authorizeQuery(pkce().challenge, { redirect_uri: 'https://evil.example/cb' });
      const res = await new ContractBrowser().call(
        method === 'get'
          ? { method, url: `/oauth/authorize?${query}` }
          : { method, url: '/oauth/authorize', form: query },
      );
      expect(res.status).toBe(400);
    },
  );

  test.each([
    ['/oauth/authorize', 'a body over 16 KiB', { form: `pad=${'x'.repeat(17 * 1024)}` }, 413],
    ['/oauth/authorize', 'a JSON body', { json: { client_id: 'x' } }, 415],
    ['/oauth/login', 'a body over 16 KiB', { form: `pad=${'x'.repeat(17 * 1024)}` }, 413],
    ['/oauth/login', 'a JSON body', { json: { username: 'x' } }, 415],
    ['/oauth/login', 'no form token', { form: { request: 'x', username: 'a', password: 'b' } }, 400],
  ])('when %s gets %s, then %s on a page', async (url, _case, body, status) => {
    const res = await new ContractBrowser().call({ method: 'post', url, ...body });
    expect(res.status).toBe(status);
  });

  test('when the login page is opened without a request, then 400', async () => {
    expect((await new ContractBrowser().call({ method: 'get', url: '/oauth/login' })).status).toBe(400);
  });

  test('when the form token does not match the browser, then 403', async () => {
    const browser = new ContractBrowser();
    const started = await browser.call({ method: 'get', url: `/oauth/authorize?${authorizeQuery(pkce().challenge)}` });
    const page = await browser.call({ method: 'get', url: String(started.headers.location) });
    const { request: sealed } = formFields(page.text);
    const res = await browser.call({ method: 'post', url: '/oauth/login', form: { request: sealed, csrf: 'forged' } });
    expect(res.status).toBe(403);
  });

  test('when the password is wrong, then 400 on the login page', async () => {
    const res = await browserSignIn(new ContractBrowser(), stranger, 'wrong-password', pkce().challenge);
    expect(res.status).toBe(400);
  });
});

describe('GET and POST /oauth/userinfo', () => {
  test.each(['get', 'post'] as const)(
    'when %s carries a token of a browser sign-in, then the user info matches',
    async (method) => {
      const { access_token } = await browserTokens();
      const res = await send(e2e.kapiUrl, { method, url: '/oauth/userinfo', headers: bearer(access_token) });
      expect(res.status).toBe(200);
      expect(res.json()).toMatchObject({ sub: reader, preferred_username: reader });
    },
  );

  test.each(['get', 'post'] as const)('when %s carries no token, then 401 invalid_token', async (method) => {
    expect((await send(e2e.kapiUrl, { method, url: '/oauth/userinfo' })).status).toBe(401);
  });

  test.each(['get', 'post'] as const)(
    'when %s carries a token without openid, then 403 insufficient_scope',
    async (method) => {
      const { access_token } = await browserTokens('email');
      const res = await send(e2e.kapiUrl, { method, url: '/oauth/userinfo', headers: bearer(access_token) });
      expect(res.status).toBe(403);
    },
  );
});

describe('monitoring.kapi.io/v1alpha3', () => {
  test('when every route is asked with and without the right, a bad parameter or no token, then each answer matches the document', async () => {
    const { access_token: readerToken } = await tokens(reader);
    const { access_token: strangerToken } = await tokens(stranger);
    for (const operation of monitoringOperations.filter((o) => o.method === 'get')) {
      // no backend is configured here: every metric answers empty (the live Prometheus suite has the values)
      const ok = await send(e2e.kapiUrl, {
        method: 'get',
        url: monitoringUrl(operation),
        headers: bearer(readerToken),
      });
      expect({ operation: operation.operationId, status: ok.status }).toEqual({
        operation: operation.operationId,
        status: 200,
      });
      const answered = ok.json() as { results?: { data?: { result: unknown[] } }[]; data?: unknown };
      // the ad-hoc routes answer one result (or label sets, or metadata), the named ones a list of metrics
      if (answered.results === undefined) expect(answered.data).toBeDefined();
      for (const result of answered.results ?? [])
        if (operation.operationId !== 'getPlatformMetrics') expect(result.data?.result).toEqual([]);
      expect((await send(e2e.kapiUrl, { method: 'get', url: monitoringUrl(operation) })).status).toBe(401);
      const denied = await send(e2e.kapiUrl, {
        method: 'get',
        url: monitoringUrl(operation),
        headers: bearer(strangerToken),
      });
      expect(denied.status).toBe(403);
      if (operation.responses[400]) {
        const bad = await send(e2e.kapiUrl, {
          method: 'get',
          url: monitoringUrl(
            operation,
            operation.path.endsWith('/targets/metadata')
              ? '' // its one parameter is the path's namespace
              : `${ADHOC_QUERIES[operation.operationId] ?? '?'}&start=1700000000&end=1690000000`,
          ).replace(operation.path.endsWith('/targets/metadata') ? '/demo/' : '\u0000', '/-not-a-name-/'),
          headers: bearer(readerToken),
        });
        expect(bad.status).toBe(400);
      }
    }
    const stats = await send(e2e.kapiUrl, {
      method: 'get',
      url: '/kapis/monitoring.kapi.io/v1alpha3/workspaces/ws1?type=statistics',
      headers: bearer(readerToken),
    });
    expect((stats.json() as { results: { metric_name: string }[] }).results.map((r) => r.metric_name)).toEqual([
      'workspace_namespace_count',
      'workspace_devops_project_count',
      'workspace_member_count',
      'workspace_role_count',
    ]);
  });
});

describe('answers a healthy cluster does not give in a test', () => {
  const loginPageSettings = {
    clients: [
      ...TEST_SETTINGS.clients,
      {
        name: E2E_CONSOLE.id,
        secret: E2E_CONSOLE.secret,
        public: false,
        grantTypes: ['authorization_code' as const],
        redirectURIs: [E2E_CONSOLE.redirectUri],
      },
    ],
  };

  /** The login page through the pipeline, with the cookies a browser keeps. */
  async function pipelineSignIn(app: RequestListener, username: string, pass: string) {
    const started = await send(app, { method: 'get', url: `/oauth/authorize?${authorizeQuery(pkce().challenge)}` });
    const page = await send(app, { method: 'get', url: String(started.headers.location) });
    const cookie = ([] as string[]).concat(page.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
    return send(app, {
      method: 'post',
      url: '/oauth/login',
      headers: { Cookie: cookie },
      form: { ...formFields(page.text), username, password: pass },
    });
  }

  /** The server's own pipeline over in-memory identity stores. */
  function pipeline(options: Parameters<typeof testIdentity>[0]): RequestListener {
    const { identity } = testIdentity(options);
    const listing = unreachableListing();
    const listingClient = new KubeClient(connectionFor(tokenAccess('http://127.0.0.1:9', 'x'), 'sandbox'));
    return appWithoutCluster({
      publicRoutes: [identity.oauthRouter],
      authenticate: identity.authenticate,
      guard: identity.guard,
      account: identity.accountRouter,
      listing,
      resourceRoutes: [imageRoutes({ authorizer: identity.authorizer, client: listingClient, registries })],
      platformRoutes: [
        configRoutes(),
        iamRoutes({
          listing,
          roles: new GlobalRoleDirectory(listingClient, silentLogger),
          authorizer: identity.authorizer,
        }),
        departmentRoutes({ listing, authorizer: identity.authorizer, client: listingClient, logger: silentLogger }),
        tenantRoutes({ listing, authorizer: identity.authorizer }),
        workspaceQuotaRoutes({ listing, authorizer: identity.authorizer, client: listingClient, logger: silentLogger }),
        eventRoutes({
          authorizer: identity.authorizer,
          namespaces: { synced: true, list: () => [], get: () => undefined } as unknown as WatchedNamespaces,
          events: eventsApiSource(new EventIndex(listingClient, silentLogger)),
        }),
        componentRoutes({
          listing,
          authorizer: identity.authorizer,
          client: listingClient,
          kapiNamespace: 'kapi-system',
        }),
        monitoringRoutes({
          authorizer: identity.authorizer,
          namespaces: { synced: true, list: () => [], get: () => undefined },
          listing,
          backend: () => undefined,
          prometheus: new PrometheusBackend(),
        }),
      ],
    });
  }

  /** A listing whose caches never sync (its cluster is unreachable): its answers are 503 with Retry-After. */
  function unreachableListing(): ResourceListing {
    const client = new KubeClient(connectionFor(tokenAccess('http://127.0.0.1:9', 'x'), 'sandbox'));
    const caches = new ListingCaches({ client, logger: silentLogger, syncTimeoutMs: 50 });
    unreachable.push(caches);
    return new ResourceListing({ caches, client, namespaces: { synced: true, list: () => [] } });
  }
  const unreachable: ListingCaches[] = [];
  const registries = new RegistryClient({ timeoutMs: 1_000 });
  afterAll(async () => {
    await Promise.all(unreachable.map((caches) => caches.stop()));
    await registries.close();
  });

  test('when the signing key is not loaded, then every operation answers 503 as documented', async () => {
    const app = pipeline({ keys: { keys: () => undefined } });
    const client = { client_id: 'kapi', client_secret: 'kapi-secret' };
    const calls: Call[] = [
      {
        method: 'post',
        url: '/oauth/token',
        form: { grant_type: 'password', username: 'a', password: 'b', ...client },
      },
      { method: 'post', url: '/oauth/revoke', form: { token: 'x', ...client } },
      { method: 'post', url: '/oauth/logout', headers: bearer('x') },
      { method: 'get', url: '/oauth/logout', headers: bearer('x') },
      { method: 'get', url: NODES, headers: bearer('x') },
      { method: 'get', url: `${NODES}/n1`, headers: bearer('x') },
      ...LOGS.map((url): Call => ({ method: 'get', url, headers: bearer('x') })),
      { method: 'get', url: '/.well-known/jwks.json' },
      { method: 'get', url: '/oauth/userinfo', headers: bearer('x') },
      { method: 'post', url: '/oauth/userinfo', headers: bearer('x') },
      { method: 'get', url: `/oauth/authorize?${authorizeQuery(pkce().challenge)}` },
      { method: 'post', url: '/oauth/authorize', form: authorizeQuery(pkce().challenge) },
      { method: 'get', url: '/oauth/login?request=x' },
      { method: 'post', url: '/oauth/login', form: { request: 'x' } },
      ...[IAM, IAM2].flatMap((base): Call[] => [
        { method: 'put', url: `${base}/users/x/password`, headers: bearer('x'), json: { password: 'x' } },
        { method: 'get', url: `${base}/users/x/loginrecords`, headers: bearer('x') },
      ]),
      { method: 'post', url: `${IAM2}/users`, headers: bearer('x'), json: { metadata: { name: 'x' } } },
      { method: 'put', url: `${IAM2}/users/x`, headers: bearer('x'), json: { metadata: { name: 'x' } } },
      { method: 'patch', url: `${IAM2}/users/x`, headers: bearer('x'), json: { spec: {} } },
      { method: 'delete', url: `${IAM2}/users/x`, headers: bearer('x') },
      { method: 'post', url: `${IAM2}/clustermembers`, headers: bearer('x'), json: [] },
      { method: 'put', url: `${IAM2}/clustermembers/x`, headers: bearer('x'), json: {} },
      { method: 'delete', url: `${IAM2}/clustermembers/x`, headers: bearer('x') },
      { method: 'post', url: `${IAM2}/globalroles`, headers: bearer('x'), json: {} },
      { method: 'put', url: `${IAM2}/globalroles/x`, headers: bearer('x'), json: {} },
      { method: 'delete', url: `${IAM2}/globalroles/x`, headers: bearer('x') },
      { method: 'post', url: '/kapis/tenant.kapi.io/v1alpha3/workspacetemplates', headers: bearer('x'), json: {} },
      { method: 'patch', url: '/kapis/tenant.kapi.io/v1alpha3/workspacetemplates/x', headers: bearer('x'), json: {} },
      { method: 'delete', url: '/kapis/tenant.kapi.io/v1alpha3/workspacetemplates/x', headers: bearer('x') },
      { method: 'get', url: `${CONFIG}/configs/gpu/kinds`, headers: bearer('x') },
      ...monitoringOperations.map((operation): Call => ({
        method: operation.method,
        url: monitoringUrl(operation),
        headers: bearer('x'),
        ...(operation.method === 'post' && { json: {} }),
      })),
      ...[
        ...iamOperations,
        ...memberOperations,
        ...tenantOperations,
        ...componentOperations,
        ...terminalOperations,
        ...departmentOperations,
        ...imageOperations,
        ...workspaceQuotaOperations,
        ...eventOperations,
      ].map((operation): Call => ({
        method: operation.method,
        url: operation.path
          .replace('{group}', 'x')
          .replace('{groupbinding}', 'x')
          .replace('{rolebinding}', 'x')
          .replace('{name}', 'x')
          .replace('{workspace}', 'x')
          .replace('{namespace}', 'x')
          .replace('{role}', 'x')
          .replace('{component}', 'x')
          .replace('{member}', 'x')
          .replace('{clusterrole}', 'x')
          .replace('{user}', 'x')
          .replace('{pod}', 'x')
          .replace('{resourcequota}', 'x'),
        headers: bearer('x'),
        ...(['post', 'put', 'patch'].includes(operation.method) && { json: {} }),
      })),
      ...KIND_OPERATIONS.flatMap(({ list, listNamespaced, read }) =>
        [list, listNamespaced, read]
          .filter((operation) => operation !== undefined)
          .map((operation): Call => ({
            method: 'get',
            url: operation.path.replace('{namespace}', 'demo').replace('{name}', 'x'),
            headers: bearer('x'),
          })),
      ),
    ];
    for (const call of calls) expect((await send(app, call)).status).toBe(503);
  });

  test('when a kind’s cache has not read its first list in time, then 503 with Retry-After as documented', async () => {
    const app = appWithoutCluster({
      listing: unreachableListing(),
    });
    const res = await send(app, { method: 'get', url: '/kapis/resources.kapi.io/v1alpha3/configmaps' });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
  });

  test('when kapi has an https issuer URL, then its OpenID metadata matches the document', async () => {
    const app = pipeline({ policy: tokenPolicy('https://kapi.example.com') });
    const res = await send(app, { method: 'get', url: '/.well-known/openid-configuration' });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ issuer: 'https://kapi.example.com' });
  });

  test('when the signing keys are not loaded, then OpenID discovery is a 503 Status', async () => {
    const app = pipeline({ keys: { keys: () => undefined }, policy: tokenPolicy('https://kapi.example.com') });
    expect((await send(app, { method: 'get', url: '/.well-known/openid-configuration' })).status).toBe(503);
  });

  test('when the cluster cannot be asked during a login on the login page, then 503 on a page with Retry-After', async () => {
    const identity = testIdentity({ settings: loginPageSettings });
    identity.users.add('alice', { password: 'alice-pw' });
    const app = pipeline({
      settings: loginPageSettings,
      users: identity.users,
      wrapUsers: (users) => ({
        ...users,
        get: users.get.bind(users),
        updateStatus: users.updateStatus.bind(users),
        find: () => Promise.reject(new Error('cluster down')),
      }),
    });
    const res = await pipelineSignIn(app, 'alice', 'alice-pw');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
  });

  test('when a browser signs in through an upstream provider, then every documented answer of its two endpoints matches', async () => {
    const sso = new FakeUpstream(upstreamSettings('sso', 'auto'));
    const strict = new FakeUpstream(upstreamSettings('strict', 'lookup'));
    const providers = new IdentityProviders(
      () => [sso.settings, strict.settings],
      { OIDC: (settings) => (settings.name === 'sso' ? sso : strict) },
      silentLogger,
    );
    const app = pipeline({ settings: loginPageSettings, providers });
    const started = await send(app, { method: 'get', url: `/oauth/authorize?${authorizeQuery(pkce().challenge)}` });
    const sealed = new URL(String(started.headers.location), 'http://x').searchParams.get('request')!;
    const request = encodeURIComponent(sealed);
    /** Starts at `idp`; the cookie and the state the provider got. */
    const begin = async (provider: FakeUpstream) => {
      const res = await send(app, { method: 'get', url: `/oauth/login/${provider.settings.name}?request=${request}` });
      expect(res.status).toBe(303);
      const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
      return { cookie, state: [...provider.started.keys()].at(-1)! };
    };
    const answer = (idp: string, cookie: string, query: Record<string, string>) =>
      send(app, {
        method: 'get',
        url: `/oauth/callback/${idp}?${new URLSearchParams(query).toString()}`,
        headers: { Cookie: cookie },
      });

    const signedIn = await begin(sso);
    sso.codes.set('c1', { provider: 'sso', userId: 'u1', username: 'ursula', groups: [] });
    expect((await answer('sso', signedIn.cookie, { code: 'c1', state: signedIn.state })).status).toBe(303);
    const forged = await begin(sso);
    expect((await answer('sso', forged.cookie, { code: 'c1', state: 'forged' })).status).toBe(400);
    const refused = await begin(strict);
    strict.codes.set('c2', { provider: 'strict', userId: 'u2', username: 'nobody', groups: [] });
    expect((await answer('strict', refused.cookie, { code: 'c2', state: refused.state })).status).toBe(403);
    const down = await begin(sso);
    sso.down = true;
    expect((await answer('sso', down.cookie, { code: 'c3', state: down.state })).status).toBe(503);
    expect((await send(app, { method: 'get', url: `/oauth/login/sso?request=${request}` })).status).toBe(503);
    sso.down = false;
    expect((await send(app, { method: 'get', url: `/oauth/login/ghost?request=${request}` })).status).toBe(404);
    expect((await send(app, { method: 'get', url: '/oauth/login/sso?request=garbage' })).status).toBe(400);
  });

  test('when a user has failed too often on the login page, then 429 with Retry-After as documented', async () => {
    const settings = { ...loginPageSettings, loginLimit: { maxFailures: 1, windowSeconds: 600 } };
    const identity = testIdentity({ settings });
    identity.users.add('alice', { password: 'alice-pw' });
    const app = pipeline({ users: identity.users, settings });
    expect((await pipelineSignIn(app, 'alice', 'wrong')).status).toBe(400);
    expect((await pipelineSignIn(app, 'alice', 'wrong')).status).toBe(429);
  });

  test('when a user has failed too often, then 429 with Retry-After as documented', async () => {
    const identity = testIdentity({ settings: { loginLimit: { maxFailures: 1, windowSeconds: 600 } } });
    identity.users.add('alice', { password: 'alice-pw' });
    const app = pipeline({ users: identity.users, settings: { loginLimit: { maxFailures: 1, windowSeconds: 600 } } });
    const form = {
      grant_type: 'password',
      username: 'alice',
      password: 'wrong',
      client_id: 'kapi',
      client_secret: 'kapi-secret',
    };
    expect((await send(app, { method: 'post', url: '/oauth/token', form })).status).toBe(400);
    const locked = await send(app, { method: 'post', url: '/oauth/token', form });
    expect(locked.status).toBe(429);
  });

  test.each([IAM, IAM2])(
    'when wrong current passwords reach the limit, then a password change (%s) answers 429 with Retry-After as documented',
    async (base) => {
      const settings = { loginLimit: { maxFailures: 1, windowSeconds: 600 } };
      const identity = testIdentity({ settings });
      identity.users.add('alice', { password: 'alice-Passw0rd' });
      const app = pipeline({ users: identity.users, settings });
      const token = await send(app, {
        method: 'post',
        url: '/oauth/token',
        form: {
          grant_type: 'password',
          username: 'alice',
          password: 'alice-Passw0rd',
          client_id: 'kapi',
          client_secret: 'kapi-secret',
        },
      });
      const access = (token.json() as { access_token: string }).access_token;
      const call: Call = {
        method: 'put',
        url: `${base}/users/alice/password`,
        headers: bearer(access),
        json: { currentPassword: 'wrong', password: 'New-Passw0rd-1' },
      };
      expect((await send(app, call)).status).toBe(400);
      const limited = await send(app, call);
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    },
  );
});

describe('answers a server under load gives', () => {
  test('when a user has as many log requests in flight as allowed, then 429 with Retry-After as documented', async () => {
    const limits = new LogRequestLimits({
      exports: { perProcess: 1, perUser: 1 },
      queries: { perProcess: 1, perUser: 1 },
    });
    // alice's one query place is taken (another request of hers is still being answered)
    limits.admit('query', 'alice');
    const unreachable = () => Promise.reject(new Error('the backend is not reached past the limit'));
    const logging = loggingRoutes({
      backend: {
        name: 'pod-log',
        query: unreachable,
        statistics: unreachable,
        histogram: unreachable,
        export: unreachable,
      },
      authorizer: undefined,
      namespaces: { synced: true, list: () => [], get: () => undefined },
      logger: silentLogger,
      limits,
    });
    const app = appWithoutCluster({
      user: { username: 'alice', groups: ['system:authenticated'] },
      logging,
    });
    for (const url of LOGS) {
      const res = await send(app, { method: 'get', url: `${url}?operation=statistics`, headers: bearer('x') });
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('1');
    }
  });
});

describe('answers a server under load gives, monitoring', () => {
  test('when a user has as many monitoring requests in flight as allowed, then 429 with Retry-After as documented', async () => {
    const limits = new MonitoringRequestLimits(1);
    // alice's one place is taken (another chart of hers is still being answered)
    limits.admit('alice');
    const app = appWithoutCluster({
      user: { username: 'alice', groups: ['system:authenticated'] },
      platformRoutes: [
        monitoringRoutes({
          authorizer: { authorize: async () => ({ allowed: true }) },
          namespaces: { synced: true, list: () => [], get: () => undefined },
          listing: undefined as never,
          backend: () => undefined,
          prometheus: new PrometheusBackend(),
          limits,
        }),
      ],
    });
    for (const operation of monitoringOperations.filter((o) => o.responses[429])) {
      const res = await send(app, { method: 'get', url: monitoringUrl(operation), headers: bearer('x') });
      expect({ operation: operation.operationId, status: res.status }).toEqual({
        operation: operation.operationId,
        status: 429,
      });
      expect(res.headers['retry-after']).toBe('1');
    }
  });
});

describe('the contract itself', () => {
  test('when an answer differs from the document, then the checker reports it', () => {
    const status = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'x',
      reason: 'BadRequest',
      code: 400,
    });
    const asJson = { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' };
    expect(checker.problems('post', '/oauth/token', { status: 400, headers: asJson, text: status })).not.toEqual([]);
    expect(checker.problems('post', '/oauth/token', { status: 418, headers: asJson, text: '{}' })).toEqual([
      'issueToken 418: status not documented',
    ]);
    expect(checker.problems('delete', NODES, { status: 405, headers: asJson, text: status })[0]).toMatch(
      /no operation/,
    );
    const noCacheHeaders = { 'content-type': 'application/json' };
    const body = JSON.stringify({ error: 'invalid_request', error_description: 'x' });
    expect(checker.problems('post', '/oauth/revoke', { status: 400, headers: noCacheHeaders, text: body })).toContain(
      'revokeToken 400: required header Cache-Control is missing',
    );
  });

  test('when a JWKS body is wrong, then the checker reports it (a +json media type is validated too)', () => {
    const headers = { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=60' };
    expect(checker.problems('get', '/.well-known/jwks.json', { status: 200, headers, text: '{"keys":[]}' })).toEqual(
      [],
    );
    expect(
      checker.problems('get', '/.well-known/jwks.json', { status: 200, headers, text: '{"nokeys":1}' }),
    ).not.toEqual([]);
  });

  test('when the suite has run, then every documented operation and status was answered for real', () => {
    expect(checker.unseen()).toEqual([]);
  });
});
