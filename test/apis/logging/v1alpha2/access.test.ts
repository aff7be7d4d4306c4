import { describe, expect, it } from '@jest/globals';
import { readableNamespaces, READ_LOGS } from '../../../../src/apis/logging/v1alpha2/access.js';
import type { LogFilter } from '../../../../src/apis/logging/v1alpha2/query.js';
import type { Authorizer, ResourceAttributes, UserInfo } from '../../../../src/auth/identity.js';
import { ForbiddenError } from '../../../../src/server/errors.js';

const USER: UserInfo = { username: 'alice', groups: ['dev'] };
const FILTER: LogFilter = { startTime: undefined, endTime: 1_700_000_000 };
const NAMESPACES = {
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

describe('readableNamespaces', () => {
  it('when the user may read logs cluster-wide, then one review answers: every namespace', async () => {
    const authorizer = new FakeAuthorizer(new Set(['*']));
    expect(await readableNamespaces(authorizer, USER, { ...FILTER, namespaces: ['demo'] }, NAMESPACES)).toEqual({
      kind: 'all',
    });
    expect(authorizer.asked).toEqual([READ_LOGS]);
    expect(READ_LOGS).toEqual({ verb: 'get', resource: 'pods', subresource: 'log' });
  });

  it('when the user names namespaces it may read, then those come with their creation times', async () => {
    const authorizer = new FakeAuthorizer(new Set(['demo', 'team-a']));
    const scope = await readableNamespaces(authorizer, USER, { ...FILTER, namespaces: ['demo', 'team-a'] }, NAMESPACES);
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
    );
    await expect(attempt).rejects.toThrow(ForbiddenError);
    await expect(attempt).rejects.toThrow(
      'pods is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "kube-system"',
    );
  });

  it('when the user names none, then the existing namespaces it may read are found, filtered by namespace_query', async () => {
    const authorizer = new FakeAuthorizer(new Set(['demo', 'kube-system']));
    expect(await readableNamespaces(authorizer, USER, FILTER, NAMESPACES)).toEqual({
      kind: 'some',
      namespaces: new Map([
        ['demo', 100],
        ['kube-system', 50],
      ]),
    });
    const narrowed = new FakeAuthorizer(new Set(['demo', 'kube-system']));
    expect(await readableNamespaces(narrowed, USER, { ...FILTER, namespaceQuery: ['kube'] }, NAMESPACES)).toEqual({
      kind: 'some',
      namespaces: new Map([['kube-system', 50]]),
    });
    // the cluster-wide question, then only the namespaces the keyword leaves
    expect(narrowed.asked.map((a) => a.namespace)).toEqual([undefined, 'kube-system']);
  });
});
