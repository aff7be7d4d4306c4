/**
 * Every kind's listing (SPEC §13) against the sandbox, or a real cluster with KUBECONFIG: each kind lists, reads,
 * filters, sorts and pages with KubeSphere's semantics; every answer holds only what the caller may list or get
 * through the cluster's RBAC (a user with rights in one namespace sees only it, on every route, and nothing of
 * secrets without the right); a kind's cache starts on its first request and stops once idle. Queries are scoped to
 * this run's objects by label, so a real cluster's own objects do not disturb them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getJson, login } from './client.js';
import { RUN_LABEL, deleteIgnoringMissing, startE2E, waitFor, type E2E } from './harness.js';
import { READ_EVERY_KIND, createKindSamples, kindSamples, type KindSample } from './kind-samples.js';

interface Item {
  kind: string;
  apiVersion: string;
  metadata: { name: string; namespace?: string; uid: string; managedFields?: unknown; labels?: Record<string, string> };
}
interface List {
  items: Item[];
  totalItems: number;
}
interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
  details?: { causes?: { field?: string }[] };
}

const BASE = '/kapis/resources.kapi.io/v1alpha3';
const PASSWORD = 'e2e-Lister-password-1';
/** Short, so the cache lifecycle can be seen within a test. */
const IDLE_MS = 3_000;

let e2e: E2E;
let samples: KindSample[];
let other: string;
let reader: string;
let limited: string;
let stranger: string;
const cleanup: string[] = [];

const scope = () => `labelSelector=${encodeURIComponent(`${RUN_LABEL}=${e2e.runId},tier=sample`)}`;
const get = <T>(path: string, token: string) => getJson<T>(`${e2e.kapiUrl}${BASE}${path}`, token);

beforeAll(async () => {
  e2e = await startE2E({ metrics: true, listingCacheIdleMs: IDLE_MS });
  samples = kindSamples(e2e);
  cleanup.push(...(await createKindSamples(e2e, samples)));
  // a second namespace with objects of its own, which the limited user must never see
  other = `${e2e.runId}-other`;
  await e2e.admin.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: other, labels: { [RUN_LABEL]: e2e.runId } } },
  });
  cleanup.push(`/api/v1/namespaces/${other}`);
  const inOther = kindSamples(e2e, other).filter((s) => s.namespace !== undefined);
  await createKindSamples(e2e, inOther);

  const user = async (suffix: string) => {
    const name = await e2e.createUser(suffix, PASSWORD);
    return { name, token: (await login(e2e.kapiUrl, name, PASSWORD)).access_token };
  };
  const r = await user('lister');
  await e2e.grant(r.name, READ_EVERY_KIND);
  reader = r.token;
  const l = await user('limited');
  // every listed kind, secrets excepted, in the run's namespace only
  await e2e.admin.request({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${e2e.runId}/rolebindings`,
    body: {
      metadata: { name: 'limited-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${e2e.runId}-limited-role` },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: l.name }],
    },
  });
  await e2e.admin.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    body: {
      metadata: { name: `${e2e.runId}-limited-role`, labels: { [RUN_LABEL]: e2e.runId } },
      rules: READ_EVERY_KIND.map((rule) => ({
        ...rule,
        resources: rule.resources.filter((resource) => resource !== 'secrets'),
      })),
    },
  });
  cleanup.push(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${e2e.runId}-limited-role`);
  limited = l.token;
  stranger = (await user('stranger')).token;
}, 120_000);

afterAll(async () => {
  for (const path of cleanup.reverse()) await deleteIgnoringMissing(e2e.admin, path).catch(() => undefined);
  await e2e?.stop();
});

/** A listing, polled until the watch has brought in what the test made (the cache is never a list per request). */
async function listUntil(path: string, token: string, count: number): Promise<List> {
  let body: List | undefined;
  await waitFor(async () => {
    const res = await get<List>(path, token);
    body = res.status === 200 ? res.body : undefined;
    return body !== undefined && body.totalItems === count;
  });
  return body as List;
}

describe('when every kind is listed by a reader with cluster-wide rights', () => {
  it('then each kind lists its sample across namespaces and in its namespace, and reads it by name as kube serves it', async () => {
    for (const sample of samples) {
      // a namespaced kind's sample is in both of the run's namespaces
      const count = sample.namespace ? 2 : 1;
      const list = await listUntil(`/${sample.resource}?${scope()}`, reader, count);
      expect(list.items.map((item) => item.metadata.name)).toEqual(Array(count).fill(sample.name));
      const item = list.items[0] as Item;
      expect(item.kind).toBe(sample.body.kind);
      expect(item.apiVersion).toBe(sample.body.apiVersion);
      expect(item.metadata.managedFields).toBeUndefined();
      if (sample.namespace) {
        const inNamespace = await get<List>(`/namespaces/${sample.namespace}/${sample.resource}?${scope()}`, reader);
        expect(inNamespace.body.items.map((i) => i.metadata.name)).toEqual([sample.name]);
      }
      const path = sample.namespace
        ? `/namespaces/${sample.namespace}/${sample.resource}/${sample.name}`
        : `/${sample.resource}/${sample.name}`;
      const read = await get<Item>(path, reader);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ kind: sample.body.kind, metadata: { name: sample.name } });
    }
    // the run's namespace and kapi's CRDs are there already
    expect((await get<Item>(`/namespaces/${e2e.runId}`, reader)).body.metadata.name).toBe(e2e.runId);
    const crds = await get<List>('/customresourcedefinitions?name=LoginSession', reader);
    expect(crds.body.items.map((crd) => crd.metadata.name)).toContain('loginsessions.iam.kapi.io');
  }, 180_000);

  it.each([
    // one sample ConfigMap in each of the run's two namespaces
    ['names', 'names=sample-cm,nope', 2],
    ['a name substring', 'name=ample-c', 2],
    ['a namespace', 'namespace=nowhere', 0],
    ['the labels', 'label=tier%3Dsample', 2],
    ['an annotation selector', 'annotation=nothing', 0],
    ['a uid', 'uid=00000000-0000-4000-8000-000000000000', 0],
  ])('then configmaps filter by %s', async (_what, query, count) => {
    const runScope = `labelSelector=${encodeURIComponent(`${RUN_LABEL}=${e2e.runId}`)}`;
    const list = await listUntil(`/configmaps?${runScope}&${query}`, reader, count);
    expect(list.totalItems).toBe(count);
  });

  it('then pages, sorts and counts as KubeSphere does, the kind’s own status and sort keys included', async () => {
    const runScope = `labelSelector=${encodeURIComponent(`${RUN_LABEL}=${e2e.runId},tier=sample`)}`;
    const all = await listUntil(`/deployments?${runScope}`, reader, 2);
    const byName = await get<List>(`/deployments?${runScope}&sortBy=name&ascending=true&limit=1&page=2`, reader);
    expect(byName.body.totalItems).toBe(2);
    expect(byName.body.items.map((i) => i.metadata.namespace)).toEqual([[e2e.runId, other].sort()[1]]);
    expect((await get<List>(`/deployments?${runScope}&limit=0`, reader)).body).toEqual({ items: [], totalItems: 2 });
    expect((await get<List>(`/deployments?${runScope}&page=9&limit=5`, reader)).body.items).toEqual([]);
    expect(all.items).toHaveLength(2);
    // a new deployment has no replicas and none ready: stopped; a suspended CronJob: paused
    expect((await get<List>(`/deployments?${runScope}&status=stopped`, reader)).body.totalItems).toBe(2);
    expect((await get<List>(`/deployments?${runScope}&status=running`, reader)).body.totalItems).toBe(0);
    expect((await get<List>(`/cronjobs?${runScope}&status=paused`, reader)).body.totalItems).toBe(2);
    expect((await get<List>(`/persistentvolumeclaims?${runScope}&status=PENDING`, reader)).body.totalItems).toBe(2);
    expect((await get<List>(`/events?${runScope}&status=warning&reason=Sampled`, reader)).body.totalItems).toBe(2);
    expect((await get<List>(`/deployments?${runScope}&sortBy=lastUpdateTimestamp`, reader)).status).toBe(200);
    const jobs = await get<List>(`/jobs?${runScope}&sortBy=status`, reader);
    expect(jobs.body.totalItems).toBe(2);
  });

  it('then what KubeSphere 3.4.1’s console sends is served: pods by startTime, limit=-1 for all, nameAndAlias', async () => {
    const runScope = `labelSelector=${encodeURIComponent(`${RUN_LABEL}=${e2e.runId},tier=sample`)}`;
    await listUntil(`/pods?${runScope}`, reader, 2);
    // its Pods page: sortBy=startTime&limit=10 (KubeSphere sorts it as the creation time, newest first)
    const byStart = await get<List>(`/pods?${runScope}&sortBy=startTime&limit=10`, reader);
    const byCreation = await get<List>(`/pods?${runScope}&sortBy=createTime&limit=10`, reader);
    expect(byStart.status).toBe(200);
    expect(byStart.body.items.map((i) => i.metadata.namespace)).toEqual(
      byCreation.body.items.map((i) => i.metadata.namespace),
    );
    // its “fetch all”: page=1&limit=-1
    const all = await get<List>(`/deployments?${runScope}&page=1&limit=-1`, reader);
    expect({ items: all.body.items.length, total: all.body.totalItems }).toEqual({ items: 2, total: 2 });
    // its project picker searches namespaces with nameAndAlias
    const named = await get<List>(`/namespaces?nameAndAlias=${other}`, reader);
    expect(named.body.items.map((i) => i.metadata.name)).toEqual([other]);
  });

  it.each([
    ['/deployments?status=paused', 'status'],
    ['/deployments?sortBy=lastScheduleTime', 'sortBy'],
    ['/pods?limit=-2', 'limit'],
    ['/pods?ascending=maybe', 'ascending'],
    ['/configmaps?labelSelector=a%20in%20(b', 'labelSelector'],
    ['/jobs?annotation=%3D%3D', 'annotation'],
  ])('then %s is a 400 Status naming %s', async (path, parameter) => {
    const res = await get<Status>(path, reader);
    expect(res.status).toBe(400);
    expect(res.body.details?.causes?.[0]?.field).toBe(parameter);
  });

  it('then an unknown kind is a 404 Status naming the kinds served, and a missing object a 404 as kube-apiserver words it', async () => {
    const unknown = await get<Status>('/widgets', reader);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('deployments');
    expect(unknown.body.message).toContain('"widgets"');
    const missing = await get<Status>(`/namespaces/${e2e.runId}/deployments/ghost`, reader);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('deployments.apps "ghost" not found');
    expect((await get<Status>('/pods/ghost', reader)).status).toBe(404);
    expect((await get<Status>(`/namespaces/${e2e.runId}/nodes`, reader)).status).toBe(404);
  });
});

describe('when a user may list only in one namespace', () => {
  const namespaced = () => samples.filter((s) => s.namespace && s.resource !== 'secrets');

  it('then every namespaced kind’s cluster-wide listing holds that namespace’s objects only', async () => {
    const runScope = `labelSelector=${encodeURIComponent(`${RUN_LABEL}=${e2e.runId},tier=sample`)}`;
    for (const sample of namespaced()) {
      // the reader sees both namespaces' objects: the limited user only its own
      await listUntil(`/${sample.resource}?${runScope}`, reader, 2);
      const list = await get<List>(`/${sample.resource}?${runScope}`, limited);
      expect(list.status).toBe(200);
      expect(list.body.items.map((i) => i.metadata.namespace)).toEqual([e2e.runId]);
      expect(list.body.totalItems).toBe(1);
    }
  }, 180_000);

  it('then the other namespace’s listings and objects are 403, and so are cluster-scoped kinds', async () => {
    for (const sample of namespaced()) {
      expect((await get(`/namespaces/${other}/${sample.resource}`, limited)).status).toBe(403);
      expect((await get(`/namespaces/${other}/${sample.resource}/${sample.name}`, limited)).status).toBe(403);
      expect((await get(`/${sample.resource}?namespace=${other}`, limited)).status).toBe(403);
      expect((await get(`/namespaces/${e2e.runId}/${sample.resource}/${sample.name}`, limited)).status).toBe(200);
    }
    for (const resource of ['nodes', 'namespaces', 'persistentvolumes', 'storageclasses', 'clusterroles']) {
      expect((await get(`/${resource}`, limited)).status).toBe(403);
    }
  }, 120_000);

  it('then its own namespace is readable by name, as kube-apiserver allows it, and the other is not', async () => {
    // kube-apiserver takes a namespace's name as the namespace of a request for it: the Role there allows the get
    const own = await get<{ metadata: { name: string } }>(`/namespaces/${e2e.runId}`, limited);
    expect(own.status).toBe(200);
    expect(own.body.metadata.name).toBe(e2e.runId);
    const direct = await fetch(`${e2e.kapiUrl}/api/v1/namespaces/${e2e.runId}`, {
      headers: { Authorization: `Bearer ${limited}` },
    });
    expect(direct.status).toBe(200);
    expect((await get(`/namespaces/${other}`, limited)).status).toBe(403);
  });

  it('then nothing of secrets is answered without the right to list or get them', async () => {
    const forbidden = [
      '/secrets',
      `/namespaces/${e2e.runId}/secrets`,
      `/namespaces/${e2e.runId}/secrets/sample-secret`,
      `/secrets?namespace=${e2e.runId}`,
    ];
    for (const path of forbidden) {
      const res = await get<Status>(path, limited);
      expect(res.status).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain('sample-value');
    }
    // the reader may: its answer holds the data, as kube-apiserver's would
    const secrets = await get<List>(`/namespaces/${e2e.runId}/secrets?${scope()}`, reader);
    expect(secrets.body.items.map((i) => i.metadata.name)).toEqual(['sample-secret']);
  });

  it('then a user without any right gets 403 on every route', async () => {
    for (const sample of samples) {
      expect((await get(`/${sample.resource}`, stranger)).status).toBe(403);
    }
  });
});

describe('when a kind is first listed', () => {
  const running = async (cache: string): Promise<number | undefined> => {
    const text = await (await fetch(`http://127.0.0.1:${e2e.kapi.metricsPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`kapi_cache_running{cache="resources/${cache}"}`));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };

  it('then its cache starts, and stops once unused for the idle time; /readyz never waits for it', async () => {
    await waitFor(async () => (await running('networkpolicies')) === 0);
    expect((await fetch(`${e2e.kapiUrl}/readyz`)).status).toBe(200);
    expect((await get<List>('/networkpolicies?limit=0', reader)).status).toBe(200);
    expect(await running('networkpolicies')).toBe(1);
    await waitFor(async () => (await running('networkpolicies')) === 0);
    // and starts again on the next request, with the same answer
    const again = await get<List>(`/networkpolicies?${scope()}`, reader);
    expect(again.body.totalItems).toBe(2);
  });
});
