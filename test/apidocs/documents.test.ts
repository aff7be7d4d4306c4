import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import {
  CRD_DOCUMENT_FILE,
  PLATFORM_DOCUMENT_FILE,
  crdDocument,
  documentText,
  platformDocument,
  platformOperations,
} from '../../src/apidocs/documents.js';
import { API_DOCS_PATHS } from '../../src/apidocs/routes.js';
import type { CustomResourceDefinition } from '../../src/openapi/crd-document.js';
import { startE2E, type E2E } from '../e2e/harness.js';
import { ContractChecker } from './contract.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const committed = (file: string) => readFileSync(file, 'utf8');
const crds = readdirSync('crds')
  .filter((file) => file.endsWith('.yaml'))
  .map((file) => parseYaml(readFileSync(join('crds', file), 'utf8')) as CustomResourceDefinition);

describe('the committed documents', () => {
  test('when the operations are gathered, then no two share an operationId (generated clients name methods by it)', () => {
    const ids = platformOperations.map((operation) => operation.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  test.each([
    [PLATFORM_DOCUMENT_FILE, () => platformDocument()],
    [CRD_DOCUMENT_FILE, () => crdDocument()],
  ])(
    'when %s is generated from the code now, then it equals the committed copy (else: make api-docs)',
    (file, build) => {
      expect(documentText(build())).toBe(committed(file));
    },
  );

  test.each([PLATFORM_DOCUMENT_FILE, CRD_DOCUMENT_FILE])(
    'when %s is read by an OpenAPI validator, then it is a valid OpenAPI 3.0 document',
    async (file) => {
      const api = (await SwaggerParser.validate(JSON.parse(committed(file)) as never)) as Json;
      expect(api['openapi']).toMatch(/^3\.0\./);
    },
  );

  test('when the validator reads a broken document, then it refuses it', async () => {
    const broken = JSON.parse(committed(PLATFORM_DOCUMENT_FILE)) as Json;
    delete broken['paths']['/oauth/token']['post']['responses'];
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  test('when the platform document is read, then it has every operation the routes mount, and nothing else', () => {
    const document = JSON.parse(committed(PLATFORM_DOCUMENT_FILE)) as Json;
    const documented = Object.entries(document['paths'] as Json).flatMap(([path, item]) =>
      Object.keys(item as Json).map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual(platformOperations.map((op) => `${op.method} ${op.path}`).sort());
    expect(document['components']['securitySchemes']['BearerToken']).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  test('when the node listing is documented, then every parameter has its type, default and allowed values', () => {
    const document = JSON.parse(committed(PLATFORM_DOCUMENT_FILE)) as Json;
    const parameters = Object.fromEntries(
      (document['paths']['/kapis/resources.kapi.io/v1alpha3/nodes']['get']['parameters'] as Json[]).map((p) => [
        p['name'],
        p['schema'],
      ]),
    );
    expect(parameters).toMatchObject({
      page: { type: 'integer', minimum: 1, default: 1 },
      limit: { type: 'integer', minimum: -1 },
      sortBy: { type: 'string', enum: ['creationTimestamp', 'createTime', 'name'], default: 'creationTimestamp' },
      ascending: { type: 'boolean', default: false },
      status: { type: 'string', enum: ['running', 'warning', 'unschedulable'] },
      names: { type: 'array', items: { type: 'string' } },
      labelSelector: { type: 'string' },
      label: { type: 'string' },
      name: { type: 'string' },
      uid: { type: 'string' },
    });
  });
});

describe('the CRD document and crds/', () => {
  const document = JSON.parse(committed(CRD_DOCUMENT_FILE)) as Json;

  test.each(
    crds.flatMap((crd) =>
      crd.spec.versions.map((version) => [`${crd.spec.names.kind} ${version.name}`, crd, version] as const),
    ),
  )(
    'when %s is read, then its schema and every REST path kube-apiserver serves for it are there',
    (_name, crd, version) => {
      const { group, names, scope } = crd.spec;
      const schemaName = `${group.split('.').reverse().join('.')}.${version.name}.${names.kind}`;
      const schema = document['components']['schemas'][schemaName] as Json;
      const source = version.schema!.openAPIV3Schema as Json;
      for (const property of Object.keys(source['properties'] as Json).filter((p) => p !== 'metadata')) {
        if (property === 'apiVersion' || property === 'kind') continue;
        expect(schema['properties'][property]).toEqual(source['properties'][property]);
      }
      expect(schema['required']).toEqual(source['required']);
      expect(schema['x-kubernetes-group-version-kind']).toEqual([{ group, version: version.name, kind: names.kind }]);

      const base = `/apis/${group}/${version.name}${scope === 'Namespaced' ? '/namespaces/{namespace}' : ''}`;
      const actions = (path: string) =>
        Object.values((document['paths'][path] ?? {}) as Json)
          .map((op) => (op as Json)['x-kubernetes-action'])
          .filter(Boolean)
          .sort();
      expect(actions(`${base}/${names.plural}`)).toEqual(['deletecollection', 'list', 'post']);
      expect(actions(`${base}/${names.plural}/{name}`)).toEqual(['delete', 'get', 'patch', 'put']);
      expect(actions(`${base}/${names.plural}/{name}/status`)).toEqual(
        version.subresources?.status ? ['get', 'patch', 'put'] : [],
      );
      const watchBase = base.replace(`/${version.name}`, `/${version.name}/watch`);
      expect(actions(`${watchBase}/${names.plural}`)).toEqual(['watchlist']);
      expect(actions(`${watchBase}/${names.plural}/{name}`)).toEqual(['watch']);
    },
  );
});

describe('the served documents', () => {
  let e2e: E2E;
  beforeAll(async () => {
    e2e = await startE2E();
  }, 60_000);
  afterAll(async () => {
    await e2e?.stop();
  });

  test.each([
    [API_DOCS_PATHS.platform, PLATFORM_DOCUMENT_FILE],
    [API_DOCS_PATHS.crds, CRD_DOCUMENT_FILE],
  ])('when %s is fetched without a token, then it is the committed %s', async (path, file) => {
    const res = await request(e2e.kapiUrl).get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text).toBe(committed(file));
  });

  test('when the page is fetched without a token, then it loads Swagger UI from kapi itself', async () => {
    const res = await request(e2e.kapiUrl).get(API_DOCS_PATHS.page);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("connect-src 'self'");
    const scripts = [...res.text.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(3);
    for (const script of scripts) {
      expect(script.startsWith('/api-docs/')).toBe(true);
      expect((await request(e2e.kapiUrl).get(script)).status).toBe(200);
    }
    expect((await request(e2e.kapiUrl).get('/api-docs/swagger-ui/index.html')).status).toBe(401);
  });

  test('when custom resources are read through kapi, then the answers match the CRD document', async () => {
    const checker = await ContractChecker.load(CRD_DOCUMENT_FILE);
    const user = await e2e.createUser('crd-reader', 'Crd-reader-pw-1');
    await e2e.grant(user, [
      { apiGroups: ['iam.kapi.io', 'installer.kapi.io'], resources: ['*'], verbs: ['get', 'list'] },
    ]);
    const login = await request(e2e.kapiUrl).post('/oauth/token').type('form').send({
      grant_type: 'password',
      username: user,
      password: 'Crd-reader-pw-1',
      client_id: 'kapi',
      client_secret: 'kapi',
    });
    const token = (login.body as { access_token: string }).access_token;
    const { namespace, name } = e2e.configuration;
    for (const url of [
      '/apis/iam.kapi.io/v1beta1/users',
      `/apis/iam.kapi.io/v1beta1/users/${user}`,
      '/apis/iam.kapi.io/v1beta1/loginsessions',
      `/apis/installer.kapi.io/v1alpha1/namespaces/${namespace}/clusterconfigurations`,
      `/apis/installer.kapi.io/v1alpha1/namespaces/${namespace}/clusterconfigurations/${name}`,
      '/apis/installer.kapi.io/v1alpha1/clusterconfigurations',
    ]) {
      const res = await request(e2e.kapiUrl).get(url).set('Authorization', `Bearer ${token}`);
      expect([url, res.status]).toEqual([url, 200]);
      const answer = { status: res.status, headers: res.headers as Record<string, string>, text: res.text };
      expect(checker.problems('get', url, answer)).toEqual([]);
    }
  });
});
