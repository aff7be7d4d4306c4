import { describe, expect, it } from '@jest/globals';
import { readableNamespaces, READ_LOGS, type NamespaceList } from '../../../../src/apis/logging/v1alpha2/access.js';
import { MAX_UNNAMED_NAMESPACES } from '../../../../src/apis/logging/v1alpha2/operations.js';
import type { LogFilter } from '../../../../src/apis/logging/v1alpha2/query.js';
import { FLUENT_BIT_FIELDS } from '../../../../src/apis/logging/v1alpha2/search/fields.js';
import { filterClauses } from '../../../../src/apis/logging/v1alpha2/search/query-body.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../../src/auth/identity.js';
import type { CachedNamespace } from '../../../../src/kube/namespace-cache.js';
import { ForbiddenError, InvalidParameterError, ServiceUnavailableError } from '../../../../src/server/errors.js';

const USER: UserInfo = { username: 'alice', groups: ['dev'] };
const FILTER: LogFilter = { startTime: undefined, endTime: 1_700_000_000 };
const NOW = 1_700_000_000;
const CONTEXT = { now: NOW };
const NAMESPACES = {
  synced: true,
  list: () => [
    { name: 'demo', createdAt: 100 },
    { name: 'kube-system', createdAt: 50 },
    { name: 'team-a', createdAt: 300 },
  ],
  get(name: string) {
    return this.list().find((ns) => ns.name === name);
  },
};

/** Allows by namespace ('*' for the cluster-wide question) and records every question. */
class FakeAuthorizer implements Authorizer {
  readonly asked: ResourceAttributes[] = [];
  constructor(private readonly allowed: ReadonlySet<string>) {}
  async authorize(_user: UserInfo, attributes: ResourceAttributes) {
    this.asked.push(attributes);
    return { allowed: this.allowed.has(attributes.namespace ?? '*') };
  }
}

/** A synced cache holding `count` namespaces ns-0, ns-1, … */
function cacheOf(count: number): NamespaceList {
  const all: CachedNamespace[] = Array.from({ length: count }, (_, i) => ({ name: `ns-${i}`, createdAt: i }));
  return { synced: true, list: () => all, get: (name) => all.find((ns) => ns.name === name) };
}

describe('readableNamespaces', () => {
  it('when the user may read logs cluster-wide, then one review answers: every namespace', async () => {
    const authorizer = new FakeAuthorizer(new Set(['*']));
    expect(
      await readableNamespaces(authorizer, USER, { ...FILTER, namespaces: ['demo'] }, NAMESPACES, CONTEXT),
    ).toEqual({
      kind: 'all',
    });
    expect(authorizer.asked).toEqual([READ_LOGS]);
    expect(READ_LOGS).toEqual({ verb: 'get', resource: 'pods', subresource: 'log' });
  });

  it('when the user names namespaces it may read, then those come with their creation times', async () => {
    const authorizer = new FakeAuthorizer(new Set(['demo', 'team-a']));
    const scope = await readableNamespaces(
      authorizer,
      USER,
      { ...FILTER, namespaces: ['demo', 'team-a'] },
      NAMESPACES,
      CONTEXT,
    );
    expect(scope).toEqual({
      kind: 'some',
      namespaces: new Map([
        ['demo', 100],
        ['team-a', 300],
      ]),
    });
  });

  it('when the user names a namespace it may not read, then it is a 403 naming that namespace', async () => {
    const authorizer = new FakeAuthorizer(new Set(['demo']));
    const attempt = readableNamespaces(
      authorizer,
      USER,
      { ...FILTER, namespaces: ['demo', 'kube-system'] },
      NAMESPACES,
      CONTEXT,
    );
    await expect(attempt).rejects.toThrow(ForbiddenError);
    await expect(attempt).rejects.toThrow(
      'pods is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "kube-system"',
    );
  });

  it('when the user names none, then the existing namespaces it may read are found, filtered by namespace_query', async () => {
    const authorizer = new FakeAuthorizer(new Set(['demo', 'kube-system']));
    expect(await readableNamespaces(authorizer, USER, FILTER, NAMESPACES, CONTEXT)).toEqual({
      kind: 'some',
      namespaces: new Map([
        ['demo', 100],
        ['kube-system', 50],
      ]),
    });
    const narrowed = new FakeAuthorizer(new Set(['demo', 'kube-system']));
    expect(
      await readableNamespaces(narrowed, USER, { ...FILTER, namespaceQuery: ['kube'] }, NAMESPACES, CONTEXT),
    ).toEqual({
      kind: 'some',
      namespaces: new Map([['kube-system', 50]]),
    });
    // the cluster-wide question, then only the namespaces the keyword leaves
    expect(narrowed.asked.map((a) => a.namespace)).toEqual([undefined, 'kube-system']);
  });

  it('when a named namespace is not in the cache (yet), then it counts as created now: older documents are excluded', async () => {
    // e.g. deleted and made again for a new tenant, the watch not delivered yet: the old owner's logs must stay hidden
    const authorizer = new FakeAuthorizer(new Set(['recreated']));
    const filter = { ...FILTER, namespaces: ['recreated'] };
    const scope = await readableNamespaces(authorizer, USER, filter, NAMESPACES, CONTEXT);
    expect(scope).toEqual({ kind: 'some', namespaces: new Map([['recreated', NOW]]) });
    expect(filterClauses(filter, scope, FLUENT_BIT_FIELDS)[0]).toEqual({
      bool: {
        filter: [
          { term: { 'kubernetes.namespace_name.keyword': 'recreated' } },
          { range: { time: { gte: NOW * 1000, format: 'epoch_millis' } } },
        ],
      },
    });
  });

  it('when the namespace cache has not synced, then it is a 503 rather than a guess', async () => {
    const unsynced = { ...NAMESPACES, synced: false };
    for (const filter of [{ ...FILTER, namespaces: ['demo'] }, FILTER]) {
      const authorizer = new FakeAuthorizer(new Set(['demo']));
      const attempt = readableNamespaces(authorizer, USER, filter, unsynced, CONTEXT);
      await expect(attempt).rejects.toThrow(ServiceUnavailableError);
      expect(authorizer.asked).toEqual([READ_LOGS]);
    }
    // cluster-wide readers need no namespace list
    const admin = new FakeAuthorizer(new Set(['*']));
    expect(await readableNamespaces(admin, USER, FILTER, unsynced, CONTEXT)).toEqual({ kind: 'all' });
  });

  it('when none are named and more namespaces match than the cap, then it is a 400 on namespaces, reviewing none', async () => {
    const authorizer = new FakeAuthorizer(new Set(['ns-0']));
    const attempt = readableNamespaces(authorizer, USER, FILTER, cacheOf(MAX_UNNAMED_NAMESPACES + 1), CONTEXT);
    await expect(attempt).rejects.toThrow(InvalidParameterError);
    await expect(attempt).rejects.toMatchObject({
      code: 400,
      details: { causes: [{ field: 'namespaces' }] },
    });
    expect(authorizer.asked).toEqual([READ_LOGS]);

    // at the cap, every one is reviewed; namespace_query narrowing below the cap is enough
    const atCap = new FakeAuthorizer(new Set(['ns-0']));
    const scope = await readableNamespaces(atCap, USER, FILTER, cacheOf(MAX_UNNAMED_NAMESPACES), CONTEXT);
    expect(scope).toEqual({ kind: 'some', namespaces: new Map([['ns-0', 0]]) });
    expect(atCap.asked).toHaveLength(1 + MAX_UNNAMED_NAMESPACES);
    const narrowed = new FakeAuthorizer(new Set(['ns-1']));
    const few = { ...FILTER, namespaceQuery: ['ns-1'] }; // of ns-0…ns-399: ns-1, ns-10…ns-19, ns-100…ns-199
    await readableNamespaces(narrowed, USER, few, cacheOf(2 * MAX_UNNAMED_NAMESPACES), CONTEXT);
    expect(narrowed.asked).toHaveLength(1 + 111);
  });

  it('when the client goes away during the per-namespace reviews, then no further reviews are asked', async () => {
    const abort = new AbortController();
    const authorizer = new FakeAuthorizer(new Set());
    const ask = authorizer.authorize.bind(authorizer);
    authorizer.authorize = async (user, attributes) => {
      const decision = await ask(user, attributes);
      if (authorizer.asked.length > 17) abort.abort(new Error('the client went away')); // during the second batch
      return decision;
    };
    const attempt = readableNamespaces(authorizer, USER, FILTER, cacheOf(100), { now: NOW, signal: abort.signal });
    await expect(attempt).rejects.toThrow('the client went away');
    // the cluster-wide review, the first batch of 16 and the second already in flight: the other 68 never asked
    expect(authorizer.asked).toHaveLength(1 + 16 + 16);
  });
});
