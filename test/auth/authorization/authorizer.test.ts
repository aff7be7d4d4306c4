import express from 'express';
import request from 'supertest';
import { accessGuard, forbidden } from '../../../src/auth/authorization/access-guard.js';
import { SubjectAccessReviewAuthorizer, reviewOf } from '../../../src/auth/authorization/authorizer.js';
import type { ResourceAttributes, UserInfo } from '../../../src/auth/identity.js';
import type { KubeRequest } from '../../../src/kube/client.js';
import { errorHandler } from '../../../src/server/error-handler.js';
import { ServiceUnavailableError } from '../../../src/server/errors.js';
import { FakeClock, RecordingAuthorizer, capturingLogger } from '../fakes.js';
import { stubClient } from '../stub-client.js';

const alice: UserInfo = { username: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'] };
const listNodes: ResourceAttributes = { verb: 'list', resource: 'nodes' };

/** A SubjectAccessReview endpoint that allows what `allowed` says. */
function reviewer(
  allowed: (spec: { user: string; groups: string[]; resourceAttributes: Record<string, string> }) => boolean,
) {
  return stubClient((req: KubeRequest) => {
    const spec = (req.body as { spec: { user: string; groups: string[]; resourceAttributes: Record<string, string> } })
      .spec;
    return { status: { allowed: allowed(spec), reason: allowed(spec) ? 'RBAC: allowed' : '' } };
  });
}

describe('SubjectAccessReviewAuthorizer', () => {
  test('when asked, then it posts a SubjectAccessReview with user, uid, groups and attributes', async () => {
    const client = reviewer(() => true);
    const authorizer = new SubjectAccessReviewAuthorizer({ client, logger: capturingLogger().logger });
    await expect(authorizer.authorize(alice, listNodes)).resolves.toMatchObject({ allowed: true });
    expect(client.requests[0]).toMatchObject({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: 'alice',
          uid: 'u-1',
          groups: ['dev', 'system:authenticated'],
          resourceAttributes: { verb: 'list', group: '', resource: 'nodes' },
        },
      },
    });
  });

  test('when the same question comes again within the TTL, then the cached decision answers', async () => {
    const clock = new FakeClock();
    const client = reviewer(() => false);
    const authorizer = new SubjectAccessReviewAuthorizer({
      client,
      logger: capturingLogger().logger,
      clock: clock.read,
    });
    expect((await authorizer.authorize(alice, listNodes)).allowed).toBe(false);
    clock.advance(9);
    await authorizer.authorize(alice, listNodes);
    expect(client.requests).toHaveLength(1);
    clock.advance(2);
    await authorizer.authorize(alice, listNodes);
    expect(client.requests).toHaveLength(2);
  });

  test('when decisions are asked for, then each lookup is reported as a cache hit or miss', async () => {
    const clock = new FakeClock();
    const lookups: string[] = [];
    const authorizer = new SubjectAccessReviewAuthorizer({
      client: reviewer(() => true),
      logger: capturingLogger().logger,
      clock: clock.read,
      onCacheLookup: (result) => lookups.push(result),
    });
    await authorizer.authorize(alice, listNodes);
    await authorizer.authorize(alice, listNodes);
    clock.advance(11);
    await authorizer.authorize(alice, listNodes);
    expect(lookups).toEqual(['miss', 'hit', 'miss']);
  });

  test('when a longer TTL is asked for, then it is capped at 10 s', async () => {
    const clock = new FakeClock();
    const client = reviewer(() => true);
    const authorizer = new SubjectAccessReviewAuthorizer({
      client,
      logger: capturingLogger().logger,
      clock: clock.read,
      ttlMs: 600_000,
    });
    await authorizer.authorize(alice, listNodes);
    clock.advance(11);
    await authorizer.authorize(alice, listNodes);
    expect(client.requests).toHaveLength(2);
  });

  test('when the groups, user or attributes differ, then the cached decision is not reused', async () => {
    const client = reviewer((spec) => spec.groups.includes('admins'));
    const authorizer = new SubjectAccessReviewAuthorizer({ client, logger: capturingLogger().logger });
    expect((await authorizer.authorize({ ...alice, groups: ['admins'] }, listNodes)).allowed).toBe(true);
    expect((await authorizer.authorize(alice, listNodes)).allowed).toBe(false);
    expect((await authorizer.authorize({ ...alice, username: 'bob' }, listNodes)).allowed).toBe(false);
    expect((await authorizer.authorize(alice, { ...listNodes, verb: 'get' })).allowed).toBe(false);
    expect(client.requests).toHaveLength(4);
  });

  test('when the same question is asked concurrently, then one review answers all', async () => {
    const client = reviewer(() => true);
    const authorizer = new SubjectAccessReviewAuthorizer({ client, logger: capturingLogger().logger });
    await Promise.all(Array.from({ length: 10 }, () => authorizer.authorize(alice, listNodes)));
    expect(client.requests).toHaveLength(1);
  });

  test('when the cluster cannot be reached, then it is a 503, never an allow, and nothing is cached', async () => {
    let up = false;
    const client = stubClient(() =>
      up ? { status: { allowed: true } } : Promise.reject(new Error('connect ECONNREFUSED')),
    );
    const authorizer = new SubjectAccessReviewAuthorizer({ client, logger: capturingLogger().logger });
    await expect(authorizer.authorize(alice, listNodes)).rejects.toBeInstanceOf(ServiceUnavailableError);
    up = true;
    await expect(authorizer.authorize(alice, listNodes)).resolves.toMatchObject({ allowed: true });
  });

  test('when the review is allowed but also denied, then it is denied', async () => {
    const authorizer = new SubjectAccessReviewAuthorizer({
      client: stubClient(() => ({ status: { allowed: true, denied: true } })),
      logger: capturingLogger().logger,
    });
    expect((await authorizer.authorize(alice, listNodes)).allowed).toBe(false);
  });

  test('when attributes name a namespace, object and subresource, then the review carries them', () => {
    expect(
      reviewOf(alice, { verb: 'get', resource: 'pods', subresource: 'log', namespace: 'ns', name: 'p', group: '' }),
    ).toMatchObject({
      spec: {
        resourceAttributes: {
          verb: 'get',
          group: '',
          resource: 'pods',
          subresource: 'log',
          namespace: 'ns',
          name: 'p',
        },
      },
    });
  });
});

describe('forbidden', () => {
  test.each([
    [
      listNodes,
      undefined,
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    ],
    [
      { verb: 'get', resource: 'pods', subresource: 'log', namespace: 'dev', name: 'web' },
      undefined,
      'pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "dev"',
    ],
    [
      { verb: 'list', resource: 'deployments', group: 'apps' },
      'no RBAC policy matched',
      'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" at the cluster scope: no RBAC policy matched',
    ],
  ] as Array<[ResourceAttributes, string | undefined, string]>)(
    "when %p is denied, then the message is kube-apiserver's",
    (attributes, reason, message) => {
      expect(forbidden('alice', attributes, reason).message).toBe(message);
    },
  );
});

describe('accessGuard', () => {
  function app(allowed: boolean, user: UserInfo | undefined) {
    const authorizer = new RecordingAuthorizer(() => allowed);
    const server = express();
    server.use((req, _res, next) => {
      req.user = user;
      next();
    });
    server.get('/nodes', accessGuard(authorizer)(listNodes), (_req, res) => {
      res.json({ items: [] });
    });
    server.get(
      '/pods/:name',
      accessGuard(authorizer)((req) => ({ verb: 'get', resource: 'pods', name: String(req.params.name) })),
      (_req, res) => {
        res.json({});
      },
    );
    server.use(errorHandler(capturingLogger().logger));
    return { server, authorizer };
  }

  test('when the user may list nodes, then the route runs', async () => {
    await request(app(true, alice).server).get('/nodes').expect(200, { items: [] });
  });

  test('when the user may not, then a 403 Status in kube-apiserver words', async () => {
    const res = await request(app(false, alice).server).get('/nodes').expect(403);
    expect(res.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
      details: { kind: 'nodes', group: '' },
    });
  });

  test('when attributes depend on the request, then the authorizer is asked about that object', async () => {
    const { server, authorizer } = app(true, alice);
    await request(server).get('/pods/web').expect(200);
    expect(authorizer.asked[0]?.attributes).toEqual({ verb: 'get', resource: 'pods', name: 'web' });
  });

  test('when there is no authenticated user, then 401, and the authorizer is not asked', async () => {
    const { server, authorizer } = app(true, undefined);
    await request(server).get('/nodes').expect(401);
    expect(authorizer.asked).toHaveLength(0);
  });
});
