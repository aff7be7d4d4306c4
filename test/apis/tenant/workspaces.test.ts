import { describe, expect, test } from '@jest/globals';
import { workspaceOf } from '../../../src/apis/tenant/workspaces.js';
import { systemNamespaces, unplacedSystemNamespaces } from '../../../src/apis/tenant/system-workspace.js';
import { withClaimCount } from '../../../src/apis/resources/v1alpha3/listing/resource-listing.js';
import { objectRecord, bodyHeader } from '../../../src/apis/resources/v1alpha3/kinds/object-record.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../../src/apis/resources/v1alpha3/kinds/kind-table.js';

describe('workspaceOf', () => {
  test('when a template is answered as a Workspace, then its name, its template’s labels and spec', () => {
    const template = {
      apiVersion: 'tenant.kapi.io/v1alpha2',
      kind: 'WorkspaceTemplate',
      metadata: { name: 'ws1', uid: 'u1', annotations: { 'kapi.io/creator': 'admin' }, labels: { outer: 'x' } },
      spec: {
        template: { metadata: { labels: { inner: 'y' } }, spec: { manager: 'alice', networkIsolation: false } },
        placement: {},
      },
    };
    expect(workspaceOf(template)).toEqual({
      apiVersion: 'tenant.kapi.io/v1alpha1',
      kind: 'Workspace',
      metadata: { name: 'ws1', uid: 'u1', labels: { inner: 'y' }, annotations: { 'kapi.io/creator': 'admin' } },
      spec: { manager: 'alice', networkIsolation: false },
      status: {},
    });
  });

  test('when a template has no spec, then an empty one', () => {
    expect(workspaceOf({ metadata: { name: 'bare' } }).spec).toEqual({});
  });
});

describe('unplacedSystemNamespaces', () => {
  const system = systemNamespaces();

  test('when system namespaces have no workspace, then those are placed; others, placed ones and kapi’s own are left', () => {
    const namespaces = [
      { name: 'default', createdAt: 0 },
      { name: 'kube-system', createdAt: 0, workspace: 'system-workspace' },
      { name: 'kube-public', createdAt: 0, workspace: 'ops' },
      { name: 'kapi-system', createdAt: 0 },
      { name: 'team-a', createdAt: 0 },
    ];
    expect(unplacedSystemNamespaces(namespaces, system)).toEqual(['default']);
  });
});

describe('withClaimCount', () => {
  test('when a storage class is answered, then it carries its claims’ count beside its own annotations', () => {
    const counts = new Map([['fast', 3]]);
    const answered = (sc: unknown) => JSON.parse(withClaimCount(sc, counts).toString('utf8'));
    expect(answered({ metadata: { name: 'fast', annotations: { a: 'b' } } }).metadata.annotations).toEqual({
      a: 'b',
      'kapi.io/pvc-count': '3',
    });
    // a class without annotations gets them: the console reads them unguarded
    expect(answered({ metadata: { name: 'slow' } }).metadata.annotations).toEqual({ 'kapi.io/pvc-count': '0' });
  });
});

describe('the users listing', () => {
  const users = KINDS_BY_RESOURCE.get('users') as KindDefinition;

  test('when a User is kept for answers, then its password hash and failed logins’ addresses are not', () => {
    const raw = {
      metadata: {
        name: 'bob',
        uid: 'u',
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{"password":"$2a$10$old-hash-applied"}}',
          'kapi.io/description': 'kept',
        },
      },
      spec: { email: 'bob@example.com', password: '$2a$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012' },
      status: { state: 'Active', failedLogins: [{ time: '2026-01-01T00:00:00Z', sourceIP: '10.0.0.9' }] },
    };
    const body = objectRecord(users, bodyHeader(users), raw).body.toString('utf8');
    expect(body).not.toContain('$2a$');
    expect(body).not.toContain('10.0.0.9');
    expect(body).not.toContain('old-hash-applied');
    expect(JSON.parse(body).metadata.annotations).toEqual({ 'kapi.io/description': 'kept' });
    expect(JSON.parse(body)).toMatchObject({ spec: { email: 'bob@example.com' }, status: { state: 'Active' } });
    // the watched object itself is left as it was (identity reads the hash from its own cache)
    expect(raw.spec.password).toMatch(/^\$2a\$/);
  });
});
