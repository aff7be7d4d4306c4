import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import bcrypt from 'bcrypt';
import { parseAllDocuments } from 'yaml';
import { parseDuration } from '../../src/config/duration.js';
import { GRANT_TYPES } from '../../src/config/cluster-configuration.js';
import { MAX_REDIRECT_URIS, MAX_REDIRECT_URI_LENGTH } from '../../src/config/redirect-uri.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- CRDs are read as plain YAML */
const CRD_DIR = path.resolve(process.cwd(), 'crds');
const files = readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'));

function load(file: string): any {
  const docs = parseAllDocuments(readFileSync(path.join(CRD_DIR, file), 'utf8'));
  expect(docs).toHaveLength(1);
  expect(docs[0]!.errors).toEqual([]);
  return docs[0]!.toJS();
}

/** Every way a schema is not structural (apiextensions.k8s.io/v1 rules we rely on), as "path: problem" lines. */
function structuralProblems(schema: any, at: string, problems: string[] = []): string[] {
  const exempt =
    schema['x-kubernetes-int-or-string'] === true || schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (!schema.type && !exempt) problems.push(`${at}: no type`);
  if (schema.type === 'object') {
    const isRootMetadata = at === '.metadata';
    const declared = schema.properties !== undefined || schema.additionalProperties !== undefined || exempt;
    if (!declared && !isRootMetadata) problems.push(`${at}: object without declared properties`);
    if (isRootMetadata && schema.properties) problems.push(`${at}: metadata may only be "type: object"`);
  }
  if (schema.type === 'array' && !schema.items) problems.push(`${at}: array without items`);
  for (const combinator of ['oneOf', 'anyOf', 'allOf']) {
    for (const branch of schema[combinator] ?? []) {
      // inside value validations, kube forbids type, default, description, additionalProperties, nullable
      for (const key of ['type', 'default', 'description', 'additionalProperties', 'nullable']) {
        if (key in branch) problems.push(`${at}.${combinator}: "${key}" is not allowed here`);
      }
      for (const name of branch.required ?? []) {
        if (!schema.properties?.[name]) problems.push(`${at}.${combinator}: requires undeclared "${name}"`);
      }
    }
  }
  for (const name of schema.required ?? []) {
    if (!schema.properties?.[name]) problems.push(`${at}: requires undeclared "${name}"`);
  }
  if (schema['x-kubernetes-list-type'] === 'map') {
    for (const key of schema['x-kubernetes-list-map-keys'] ?? []) {
      if (!schema.items?.required?.includes(key)) problems.push(`${at}: list-map key "${key}" must be required`);
    }
  }
  if (schema.pattern !== undefined) {
    try {
      new RegExp(schema.pattern);
    } catch {
      problems.push(`${at}: pattern does not compile`);
    }
  }
  for (const [name, child] of Object.entries<any>(schema.properties ?? {}))
    structuralProblems(child, `${at}.${name}`, problems);
  if (schema.items) structuralProblems(schema.items, `${at}[]`, problems);
  return problems;
}

/** The schema a printer column's simple JSONPath (`.a.b[?(…)].c`) points at, or undefined. */
function schemaAt(root: any, jsonPath: string): any {
  let node = root;
  for (const segment of jsonPath
    .replace(/\[\?\(.*?\)\]/g, '[]')
    .split('.')
    .slice(1)) {
    const [name, filter] = segment.split('[');
    node = node?.properties?.[name!];
    if (filter !== undefined) node = node?.type === 'array' ? node.items : undefined;
  }
  return node;
}

function schemaOf(crd: any): any {
  return crd.spec.versions[0].schema.openAPIV3Schema;
}

function crdNamed(name: string): any {
  const found = files.map(load).find((crd) => crd.metadata.name === name);
  if (!found) throw new Error(`no CRD ${name}`);
  return found;
}

describe('CRDs in crds/', () => {
  it('when the folder is read, then it holds one file per kind', () => {
    expect(files.sort()).toEqual([
      'iam.kapi.io_coderedemptions.yaml',
      'iam.kapi.io_globalrolebindings.yaml',
      'iam.kapi.io_globalroles.yaml',
      'iam.kapi.io_groupbindings.yaml',
      'iam.kapi.io_groups.yaml',
      'iam.kapi.io_loginhistories.yaml',
      'iam.kapi.io_loginsessions.yaml',
      'iam.kapi.io_users.yaml',
      'iam.kapi.io_workspacerolebindings.yaml',
      'installer.kapi.io_clusterconfigurations.yaml',
      'monitoring.kapi.io_clusterdashboards.yaml',
      'monitoring.kapi.io_dashboards.yaml',
      'quota.kapi.io_resourcequotas.yaml',
      'tenant.kapi.io_workspacetemplates.yaml',
    ]);
  });

  describe.each(files)('%s', (file) => {
    const crd = load(file);

    it('when parsed, then it is an apiextensions.k8s.io/v1 CRD named <plural>.<group> after its file', () => {
      expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(crd.kind).toBe('CustomResourceDefinition');
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${crd.spec.group}`);
      expect(file).toBe(`${crd.spec.group}_${crd.spec.names.plural}.yaml`);
      expect(crd.spec.names).toEqual(
        expect.objectContaining({
          kind: expect.any(String),
          listKind: `${crd.spec.names.kind}List`,
          singular: expect.any(String),
        }),
      );
      expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
    });

    it('when its versions are read, then one is stored, all are served with one schema, a status has its subresource', () => {
      const versions: any[] = crd.spec.versions;
      expect(versions.filter((version) => version.storage)).toHaveLength(1);
      for (const version of versions) {
        expect(version.served).toBe(true);
        // several versions of one schema need no conversion (None): the stored object is every version's
        expect(version.schema).toEqual(versions[0].schema);
        if (schemaOf(crd).properties.status) {
          expect(schemaOf(crd).properties.status.type).toBe('object');
          expect(version.subresources).toEqual(expect.objectContaining({ status: {} }));
        }
      }
    });

    it('when its schema is walked, then it is structural', () => {
      const schema = schemaOf(crd);
      expect(schema.type).toBe('object');
      expect(structuralProblems(schema, '')).toEqual([]);
    });

    it('when its printer columns are read, then each points at a field of the schema and Age comes last', () => {
      const columns: any[] = crd.spec.versions[0].additionalPrinterColumns;
      expect(columns.length).toBeGreaterThan(1);
      for (const column of columns) {
        expect(['string', 'integer', 'number', 'boolean', 'date']).toContain(column.type);
        // metadata is every object's, whatever the schema says of it
        if (column.jsonPath.startsWith('.metadata.')) continue;
        expect({ column: column.name, found: schemaAt(schemaOf(crd), column.jsonPath) !== undefined }).toEqual({
          column: column.name,
          found: true,
        });
      }
      expect(columns.at(-1)).toEqual({ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' });
    });
  });

  it('when the fixed names are checked, then group, version, kind and scope match the team contract', () => {
    const summary = files.map(load).map((crd) => ({
      name: crd.metadata.name,
      kind: crd.spec.names.kind,
      version: crd.spec.versions[0].name,
      scope: crd.spec.scope,
    }));
    expect(summary).toEqual(
      expect.arrayContaining([
        {
          name: 'clusterconfigurations.installer.kapi.io',
          kind: 'ClusterConfiguration',
          version: 'v1alpha1',
          scope: 'Namespaced',
        },
        { name: 'users.iam.kapi.io', kind: 'User', version: 'v1beta1', scope: 'Cluster' },
        { name: 'loginsessions.iam.kapi.io', kind: 'LoginSession', version: 'v1beta1', scope: 'Cluster' },
        { name: 'coderedemptions.iam.kapi.io', kind: 'CodeRedemption', version: 'v1beta1', scope: 'Cluster' },
        // KubeSphere 3.4's kinds, at its version, so its console and clients read them as they are
        { name: 'globalroles.iam.kapi.io', kind: 'GlobalRole', version: 'v1alpha2', scope: 'Cluster' },
        { name: 'globalrolebindings.iam.kapi.io', kind: 'GlobalRoleBinding', version: 'v1alpha2', scope: 'Cluster' },
        {
          name: 'workspacetemplates.tenant.kapi.io',
          kind: 'WorkspaceTemplate',
          version: 'v1alpha2',
          scope: 'Cluster',
        },
        { name: 'dashboards.monitoring.kapi.io', kind: 'Dashboard', version: 'v1alpha2', scope: 'Namespaced' },
        {
          name: 'clusterdashboards.monitoring.kapi.io',
          kind: 'ClusterDashboard',
          version: 'v1alpha2',
          scope: 'Cluster',
        },
      ]),
    );
  });

  it('when the User printer columns are read, then they are Email, Status (.status.state) and Age', () => {
    const columns = crdNamed('users.iam.kapi.io').spec.versions[0].additionalPrinterColumns.filter(
      (c: any) => !c.priority,
    );
    expect(columns.map((c: any) => [c.name, c.jsonPath])).toEqual([
      ['Email', '.spec.email'],
      ['Status', '.status.state'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it('when the LoginSession printer columns are read, then Expires is a string (kubectl shows future dates as <invalid>)', () => {
    const columns = crdNamed('loginsessions.iam.kapi.io').spec.versions[0].additionalPrinterColumns.filter(
      (c: any) => !c.priority,
    );
    expect(columns.map((c: any) => [c.name, c.type])).toEqual([
      ['User', 'string'],
      ['Client', 'string'],
      ['Expires', 'string'],
      ['Age', 'date'],
    ]);
  });

  it('when bcrypt hashes are checked against the User password pattern, then real hashes pass and plain text fails', () => {
    const pattern = new RegExp(schemaOf(crdNamed('users.iam.kapi.io')).properties.spec.properties.password.pattern);
    const hash = bcrypt.hashSync('correct horse', 4);
    for (const prefix of ['$2a$', '$2b$', '$2y$']) expect(pattern.test(prefix + hash.slice(4))).toBe(true);
    expect(pattern.test('$2x$' + hash.slice(4))).toBe(false);
    expect(pattern.test('correct horse')).toBe(false);
    expect(pattern.test(hash + 'x')).toBe(false);
  });

  it('when a duration passes the ClusterConfiguration pattern, then the server reads it too', () => {
    const auth = schemaOf(crdNamed('clusterconfigurations.installer.kapi.io')).properties.spec.properties
      .authentication;
    const pattern = new RegExp(auth.properties.accessTokenMaxAge.pattern);
    for (const text of ['2h', '90m', '1h30m', '1.5h', '600s', '10m0s']) {
      expect(pattern.test(text)).toBe(true);
      expect(parseDuration(text)).toBeGreaterThan(0);
    }
    for (const text of ['-1h', '10', '1d', 'soon', '']) expect(pattern.test(text)).toBe(false);
  });

  it('when a client gives both or neither of secret and secretRef, or is public with one, then a rule refuses it', () => {
    const auth = schemaOf(crdNamed('clusterconfigurations.installer.kapi.io')).properties.spec.properties
      .authentication;
    const client = auth.properties.oauth.properties.clients.items;
    expect(client['x-kubernetes-validations'].map((v: { rule: string }) => v.rule)).toEqual([
      '(has(self.public) && self.public) ? !has(self.secret) && !has(self.secretRef) : has(self.secret) != has(self.secretRef)',
      '!(has(self.public) && self.public && has(self.grantTypes) && self.grantTypes.exists(g, g == "password"))',
    ]);
    expect(auth.properties.oauth.properties.clients['x-kubernetes-list-map-keys']).toEqual(['name']);
    expect(client.properties.grantTypes.items.enum).toEqual(GRANT_TYPES);
    expect(client.properties.redirectURIs.maxItems).toBe(MAX_REDIRECT_URIS);
    expect(client.properties.redirectURIs.items.maxLength).toBe(MAX_REDIRECT_URI_LENGTH);
  });
});
