import type { Authorizer, ResourceAttributes } from '../../../../../src/auth/identity.js';
import { KINDS_BY_RESOURCE, type KindDefinition } from '../../../../../src/apis/resources/v1alpha3/kinds/kind-table.js';
import {
  MAX_REVIEWED_NAMESPACES,
  allowGet,
  listScope,
  type ListScope,
} from '../../../../../src/apis/resources/v1alpha3/listing/listing-access.js';
import { ApiError } from '../../../../../src/server/errors.js';

const user = { username: 'alice', groups: ['dev'] };
const kind = (resource: string) => KINDS_BY_RESOURCE.get(resource) as KindDefinition;

/** An authorizer that allows `list`/`get` of `resource` cluster-wide (`*`) or in the namespaces given. */
function rbac(rights: Record<string, string[]>): Authorizer & { asked: ResourceAttributes[] } {
  const asked: ResourceAttributes[] = [];
  return {
    asked,
    authorize(_user, attributes) {
      asked.push(attributes);
      const where =
        rights[
          `${attributes.verb} ${attributes.group ? `${attributes.resource}.${attributes.group}` : attributes.resource}`
        ] ?? [];
      const allowed =
        where.includes('*') || (attributes.namespace !== undefined && where.includes(attributes.namespace));
      return Promise.resolve({ allowed });
    },
  };
}

const namespaces = (names: string[]) => ({ synced: true, list: () => names.map((name) => ({ name })) });
const names = (scope: ListScope) => (scope.kind === 'all' ? 'all' : [...scope.namespaces].sort());

async function refusal(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
  return 200;
}

describe('listScope', () => {
  test.each([
    ['cluster-wide list, any route', { 'list pods': ['*'] }, undefined, undefined, 'all'],
    ['cluster-wide list, a namespace filter', { 'list pods': ['*'] }, undefined, 'b', ['b']],
    ['a namespace route it may list', { 'list pods': ['a'] }, 'a', undefined, ['a']],
    ['a namespace route with a filter naming another', { 'list pods': ['a'] }, 'a', 'b', []],
    ['across namespaces, two of three allowed', { 'list pods': ['a', 'c'] }, undefined, undefined, ['a', 'c']],
    ['across namespaces, a filter it may list', { 'list pods': ['c'] }, undefined, 'c', ['c']],
  ])('when %s, then the scope is %o', async (_case, rights, route, filter, expected) => {
    const scope = await listScope(
      rbac(rights),
      user,
      kind('pods'),
      { routeNamespace: route, namespaceFilter: filter },
      namespaces(['a', 'b', 'c']),
    );
    expect(names(scope)).toEqual(expected);
  });

  test.each([
    ['a namespace route it may not list', { 'list pods': ['a'] }, 'b', undefined],
    ['across namespaces, none allowed', { 'list pods': [] }, undefined, undefined],
    ['across namespaces, a filter naming a namespace it may not list', { 'list pods': ['a'] }, undefined, 'b'],
  ])('when %s, then 403', async (_case, rights, route, filter) => {
    const code = await refusal(
      listScope(
        rbac(rights),
        user,
        kind('pods'),
        { routeNamespace: route, namespaceFilter: filter },
        namespaces(['a', 'b']),
      ),
    );
    expect(code).toBe(403);
  });

  test('when a cluster-scoped kind is listed, then one cluster-wide review decides (403 without it)', async () => {
    const allowed = rbac({ 'list storageclasses.storage.k8s.io': ['*'] });
    expect(
      names(
        await listScope(
          allowed,
          user,
          kind('storageclasses'),
          { routeNamespace: undefined, namespaceFilter: undefined },
          namespaces([]),
        ),
      ),
    ).toBe('all');
    expect(allowed.asked).toEqual([{ verb: 'list', resource: 'storageclasses', group: 'storage.k8s.io' }]);
    const denied = rbac({});
    expect(
      await refusal(
        listScope(
          denied,
          user,
          kind('storageclasses'),
          { routeNamespace: undefined, namespaceFilter: undefined },
          namespaces([]),
        ),
      ),
    ).toBe(403);
  });

  test('when more namespaces exist than are reviewed one by one, then 400 names the namespace parameter', async () => {
    const many = Array.from({ length: MAX_REVIEWED_NAMESPACES + 1 }, (_, i) => `ns-${i}`);
    const code = await refusal(
      listScope(
        rbac({}),
        user,
        kind('pods'),
        { routeNamespace: undefined, namespaceFilter: undefined },
        namespaces(many),
      ),
    );
    expect(code).toBe(400);
  });

  test('when the namespaces are not known yet, then 503 rather than a guess', async () => {
    const code = await refusal(
      listScope(
        rbac({}),
        user,
        kind('pods'),
        { routeNamespace: undefined, namespaceFilter: undefined },
        { synced: false, list: () => [] },
      ),
    );
    expect(code).toBe(503);
  });
});

describe('allowGet', () => {
  test('when an object is read, then `get` of that name in that namespace is asked, and a denial is 403', async () => {
    const authorizer = rbac({ 'get secrets': ['a'] });
    await allowGet(authorizer, user, kind('secrets'), 'a', 'token');
    expect(authorizer.asked).toEqual([{ verb: 'get', resource: 'secrets', name: 'token', namespace: 'a' }]);
    expect(await refusal(allowGet(authorizer, user, kind('secrets'), 'b', 'token'))).toBe(403);
  });
});
