import type { Sandbox } from '../../src/sandbox/index.js';
import { call, configMap, testSandbox, type Json } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await testSandbox({ nodes: 12, podsPerNode: 6 });
});
afterAll(() => sandbox.stop());

interface List {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: {
    kind?: string;
    metadata: { name: string; namespace?: string; resourceVersion: string; labels?: Record<string, string> };
    spec?: Json;
    status?: Json;
  }[];
}

const names = (list: List): string[] => list.items.map((i) => i.metadata.name);

async function listAll(path: string, limit: number): Promise<{ pages: List[]; names: string[] }> {
  const pages: List[] = [];
  let token = '';
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await call<List>(
      sandbox,
      'GET',
      `${path}${sep}limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
    );
    expect(res.status).toBe(200);
    pages.push(res.body);
    token = res.body.metadata.continue ?? '';
  } while (token && pages.length < 100);
  return { pages, names: pages.flatMap(names) };
}

describe('list', () => {
  test('when nodes are listed, then the list carries kind, the current resourceVersion and items in name order without kind', async () => {
    const res = await call<List>(sandbox, 'GET', '/api/v1/nodes');
    expect(res.body.kind).toBe('NodeList');
    expect(res.body.apiVersion).toBe('v1');
    expect(Number(res.body.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(res.body.items).toHaveLength(12);
    expect(names(res.body)).toEqual([...names(res.body)].sort());
    expect(res.body.items[0]!.kind).toBeUndefined();
    expect(res.body.metadata.continue).toBeUndefined();
  });

  test('when paged with limit and continue, then every object comes exactly once, in order, with remainingItemCount', async () => {
    const all = await call<List>(sandbox, 'GET', '/api/v1/nodes');
    const { pages, names: paged } = await listAll('/api/v1/nodes', 5);
    expect(paged).toEqual(names(all.body));
    expect(pages.map((p) => p.items.length)).toEqual([5, 5, 2]);
    expect(pages[0]!.metadata.remainingItemCount).toBe(7);
    expect(pages[2]!.metadata.continue).toBeUndefined();
    expect(new Set(pages.map((p) => p.metadata.resourceVersion)).size).toBe(1);
  });

  test("when objects change between pages, then later pages still show the first page's snapshot", async () => {
    // A namespace of its own: the seeded ones hold ConfigMaps that would come first.
    await call(sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'snapshots' } } });
    for (const n of ['snap-a', 'snap-b', 'snap-c', 'snap-d'])
      await call(sandbox, 'POST', '/api/v1/namespaces/snapshots/configmaps', { body: configMap(n) });
    const first = await call<List>(sandbox, 'GET', '/api/v1/namespaces/snapshots/configmaps?limit=2');
    expect(names(first.body)).toEqual(['snap-a', 'snap-b']);
    await call(sandbox, 'DELETE', '/api/v1/namespaces/snapshots/configmaps/snap-c');
    await call(sandbox, 'POST', '/api/v1/namespaces/snapshots/configmaps', { body: configMap('snap-e') });
    await call(sandbox, 'PATCH', '/api/v1/namespaces/snapshots/configmaps/snap-d', {
      body: { data: { a: 'changed' } },
      contentType: 'application/merge-patch+json',
    });
    const second = await call<Json>(
      sandbox,
      'GET',
      `/api/v1/namespaces/snapshots/configmaps?limit=10&continue=${first.body.metadata.continue}`,
    );
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    expect(second.body.items.map((i: Json) => i.metadata.name)).toEqual(['snap-c', 'snap-d']);
    expect(second.body.items[1].data).toEqual({ a: '1' });
  });

  test('when a continue token outlives the history (compactHistory), then it is 410 Expired with a fresh token', async () => {
    const first = await call<List>(sandbox, 'GET', '/api/v1/nodes?limit=3');
    await call(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: configMap('advance-rv') });
    sandbox.compactHistory();
    const res = await call<Json>(sandbox, 'GET', `/api/v1/nodes?limit=3&continue=${first.body.metadata.continue}`);
    expect(res.status).toBe(410);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
    expect(res.body.message).toMatch(/^The provided continue parameter is too old/);
    const fresh = await call<List>(sandbox, 'GET', `/api/v1/nodes?limit=3&continue=${res.body.metadata.continue}`);
    expect(fresh.status).toBe(200);
    expect(names(fresh.body)[0]).toBe('node-12');
  });

  test('when a continue token is garbage, then it is 400', async () => {
    const res = await call<Json>(sandbox, 'GET', '/api/v1/nodes?limit=3&continue=%25%25%25');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/continue/);
  });

  test('when all namespaces are listed, then namespaced objects come from every namespace', async () => {
    const res = await call<List>(sandbox, 'GET', '/api/v1/pods');
    const namespaces = new Set(res.body.items.map((i) => i.metadata.namespace));
    expect(namespaces).toEqual(new Set(['default', 'demo', 'kapi-system', 'kube-system']));
    const { names: paged } = await listAll('/api/v1/pods', 7);
    expect(paged).toEqual(names(res.body));
  });
});

describe('resourceVersion semantics', () => {
  test('when resourceVersion is "0" or a past version (NotOlderThan), then the current state is served', async () => {
    const current = await call<List>(sandbox, 'GET', '/api/v1/nodes');
    const zero = await call<List>(sandbox, 'GET', '/api/v1/nodes?resourceVersion=0');
    expect(zero.body.items).toHaveLength(12);
    const past = await call<List>(sandbox, 'GET', '/api/v1/nodes?resourceVersion=1&resourceVersionMatch=NotOlderThan');
    expect(past.status).toBe(200);
    expect(past.body.metadata.resourceVersion).toBe(current.body.metadata.resourceVersion);
  });

  test('when an exact resourceVersion is asked, then that snapshot is served', async () => {
    await call(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: configMap('exact-1') });
    const before = await call<List>(sandbox, 'GET', '/api/v1/namespaces/default/configmaps');
    await call(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: configMap('exact-2') });
    const rv = before.body.metadata.resourceVersion;
    const exact = await call<List>(
      sandbox,
      'GET',
      `/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`,
    );
    expect(exact.body.metadata.resourceVersion).toBe(rv);
    expect(names(exact.body)).toEqual(names(before.body));
    const legacy = await call<List>(
      sandbox,
      'GET',
      `/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&limit=500`,
    );
    expect(names(legacy.body)).not.toContain('exact-2');
  });

  test('when the exact version is older than the history, then it is 410; newer than current, 504 Timeout', async () => {
    sandbox.compactHistory();
    await call(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: configMap('after-compaction') });
    const old = await call<Json>(
      sandbox,
      'GET',
      '/api/v1/namespaces/default/configmaps?resourceVersion=2&resourceVersionMatch=Exact',
    );
    expect(old.status).toBe(410);
    expect(old.body.reason).toBe('Expired');
    const future = await call<Json>(sandbox, 'GET', '/api/v1/nodes?resourceVersion=999999999');
    expect(future.status).toBe(504);
    expect(future.body).toMatchObject({
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge' }], retryAfterSeconds: 1 },
    });
  });

  test('when list options conflict, then it is 422 on ListOptions like kube', async () => {
    const noRv = await call<Json>(sandbox, 'GET', '/api/v1/nodes?resourceVersionMatch=Exact');
    expect(noRv.status).toBe(422);
    expect(noRv.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const bogus = await call<Json>(sandbox, 'GET', '/api/v1/nodes?resourceVersion=1&resourceVersionMatch=Sometimes');
    expect(bogus.status).toBe(422);
    const both = await call<Json>(sandbox, 'GET', '/api/v1/nodes?resourceVersion=5&continue=abc');
    expect(both.status).toBe(400);
    expect(both.body.message).toBe('specifying resource version is not allowed when using continue');
    // kube lets a list's unparsable resourceVersion reach its storage, whose error it answers as a 500 (no reason)
    const unparsable = await call(sandbox, 'GET', '/api/v1/nodes?resourceVersion=abc');
    expect(unparsable.status).toBe(500);
    expect(unparsable.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
      code: 500,
    });
    expect((await call(sandbox, 'GET', '/api/v1/nodes?watch=1&resourceVersion=abc')).status).toBe(500);
    expect((await call(sandbox, 'GET', '/api/v1/nodes?limit=1&resourceVersion=abc')).status).toBe(400);
    const limit = await call(sandbox, 'GET', '/api/v1/nodes?limit=ten');
    expect([limit.status, limit.body.message]).toEqual([400, 'strconv.ParseInt: parsing "ten": invalid syntax']);
  });
});

describe('selectors', () => {
  test('when a label selector uses set syntax, then only matching nodes are listed', async () => {
    const workers = await call<List>(
      sandbox,
      'GET',
      `/api/v1/nodes?labelSelector=${encodeURIComponent('node-role.kubernetes.io/worker')}`,
    );
    expect(workers.body.items).toHaveLength(11);
    const controlPlane = await call<List>(
      sandbox,
      'GET',
      `/api/v1/nodes?labelSelector=${encodeURIComponent('!node-role.kubernetes.io/worker')}`,
    );
    expect(names(controlPlane.body)).toEqual(['node-1']);
    const zones = await call<List>(
      sandbox,
      'GET',
      `/api/v1/nodes?labelSelector=${encodeURIComponent('topology.kubernetes.io/zone in (zone-a,zone-b),kubernetes.io/os=linux')}`,
    );
    expect(
      zones.body.items.every((n) => ['zone-a', 'zone-b'].includes(n.metadata.labels!['topology.kubernetes.io/zone']!)),
    ).toBe(true);
    expect(zones.body.items).toHaveLength(8);
  });

  test('when a label selector is malformed, then it is a 400 Status', async () => {
    const res = await call<Json>(sandbox, 'GET', `/api/v1/nodes?labelSelector=${encodeURIComponent('a in (b')}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(res.body.message).toMatch(/^unable to parse requirement/);
  });

  test('when field selectors are given, then =, == and != combine with AND', async () => {
    const onNode = await call<List>(sandbox, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-3');
    expect(onNode.body.items.length).toBe(6);
    expect(onNode.body.items.every((p) => p.spec.nodeName === 'node-3')).toBe(true);
    const running = await call<List>(
      sandbox,
      'GET',
      '/api/v1/pods?fieldSelector=spec.nodeName%3D%3Dnode-3,status.phase%21%3DRunning',
    );
    expect(running.body.items.every((p) => p.spec.nodeName === 'node-3' && p.status.phase !== 'Running')).toBe(true);
    const unschedulable = await call<List>(sandbox, 'GET', '/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue');
    expect(names(unschedulable.body)).toEqual(['node-10']);
    const byName = await call<List>(
      sandbox,
      'GET',
      '/api/v1/namespaces/kube-system/pods?fieldSelector=metadata.name%3Detcd-node-1,metadata.namespace%3Dkube-system',
    );
    expect(names(byName.body)).toEqual(['etcd-node-1']);
  });

  test('when a field selector names an unsupported field or is malformed, then it is 400 like kube', async () => {
    const unknown = await call<Json>(sandbox, 'GET', '/api/v1/nodes?fieldSelector=spec.podCIDR%3Dx');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('field label not supported: spec.podCIDR');
    const malformed = await call<Json>(sandbox, 'GET', '/api/v1/nodes?fieldSelector=metadata.name');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/invalid selector/);
  });

  test('when a selector filters a paged list, then pages hold only matches and still chain with continue', async () => {
    const { names: paged } = await listAll(
      `/api/v1/pods?labelSelector=${encodeURIComponent('app in (kube-proxy,calico-node)')}`,
      5,
    );
    const all = await call<List>(
      sandbox,
      'GET',
      `/api/v1/pods?labelSelector=${encodeURIComponent('app in (kube-proxy,calico-node)')}`,
    );
    expect(paged).toEqual(names(all.body));
    expect(paged).toHaveLength(24);
  });
});
