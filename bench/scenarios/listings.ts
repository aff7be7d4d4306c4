import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ClusterScale } from '../../src/sandbox/seed.js';
import { pageLoads } from '../paired-runs.js';
import type { BenchContext, Scenario } from '../context.js';
import { startEnvironment, type Environment } from '../environment.js';
import { backendTrust, setBackendTrust } from '../tls.js';
import { bearer, passwordGrant, send, sendJson } from '../http.js';
import { allocatorNote, startKapiProcess, type KapiProcess } from '../kapi-process.js';
import { accountCpuOf, accountedCpu, cpuPerOperation, throughput } from '../measure.js';
import type { Operation } from '../jobs.js';
import { detail, verdict, type Row } from '../report.js';
import { ms, rate } from '../stats.js';

/**
 * SPEC §11 / §13 listing rows: kapi with every listed kind's cache warm over a cluster of 5,000 nodes, 150,000 pods,
 * 30,000 Deployments with their ReplicaSets, 30,000 Services and 50,000 ConfigMaps (BENCH_LISTING_* shrink it for a
 * quick look), the chart's heap flags: its RSS, and a 10-item pod page sorted by name with a label filter at c1 and
 * c16, with the CPU per page of kapi and of the backend.
 *
 * The row has a backend and a kapi of its own (its kapi's memory is the listings' alone, not what earlier rows left):
 * the sandbox seeded at that scale, or with BENCH_KUBECONFIG the cluster it names (seed it first with
 * `npm run bench:seed-cluster`; the bench user is given read access to every listed kind for the row).
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SIZE = {
  nodes: Number(process.env.BENCH_LISTING_NODES ?? 5_000),
  podsPerNode: Number(process.env.BENCH_LISTING_PODS_PER_NODE ?? 30),
  deployments: Number(process.env.BENCH_LISTING_DEPLOYMENTS ?? 30_000),
  services: Number(process.env.BENCH_LISTING_SERVICES ?? 30_000),
  configMaps: Number(process.env.BENCH_LISTING_CONFIGMAPS ?? 50_000),
  namespaces: Number(process.env.BENCH_LISTING_NAMESPACES ?? 200),
};
const RSS_LIMIT_MIB = 384;

/**
 * The listings row's other objects for a cluster of `nodes` nodes (the real kube-apiserver's seed): SPEC §11's at
 * 5,000 nodes, in proportion for a smaller look, unless BENCH_LISTING_* name them.
 */
export function listingScale(nodes: number): ClusterScale {
  const share = nodes / 5_000;
  const scaled = (name: string, full: number) => Number(process.env[name] ?? Math.max(1, Math.round(full * share)));
  return {
    deployments: scaled('BENCH_LISTING_DEPLOYMENTS', 30_000),
    services: scaled('BENCH_LISTING_SERVICES', 30_000),
    configMaps: scaled('BENCH_LISTING_CONFIGMAPS', 50_000),
    namespaces: scaled('BENCH_LISTING_NAMESPACES', 200),
  };
}
const BASE = '/kapis/resources.kapi.io/v1alpha3';
/** Pods of a ReplicaSet (nearly all of them), by name: the console's "workload pods" view. */
export const POD_PAGE_PATH = `${BASE}/pods?limit=10&sortBy=name&labelSelector=pod-template-hash`;
const WARM_KINDS = [
  'pods',
  'deployments',
  'replicasets',
  'services',
  'configmaps',
  'namespaces',
  'statefulsets',
  'daemonsets',
  'jobs',
  'cronjobs',
  'ingresses',
  'networkpolicies',
  'persistentvolumeclaims',
  'persistentvolumes',
  'storageclasses',
  'serviceaccounts',
  'roles',
  'rolebindings',
  'clusterroles',
  'clusterrolebindings',
  'customresourcedefinitions',
  'events',
];
const READY_TIMEOUT_MS = 600_000;

export const listingMetrics = {
  rss: {
    metric: 'listings: kapi RSS, every kind warm',
    target: `≤ ${RSS_LIMIT_MIB} MiB`,
    reference: '684 MiB (nodes and pods only)',
  },
  p99: { metric: 'pod page (10, by name, label filter) p99 @c1', target: '≤ 10 ms' },
  throughput: { metric: 'pod page @c16', target: '≥ 1,000 pages/s' },
  cpu: { metric: 'kapi CPU per pod page @c16', target: '(info)' },
  warm: { metric: 'listings: every kind’s first list (warm-up)', target: '(info)' },
};

/** On a real cluster the bench user reads nodes only: the row gives it every listed kind (removed at the end). */
async function grantListings(env: Environment): Promise<() => Promise<void>> {
  const name = `${env.kapiUser.name}-listings`;
  const headers = { ...env.adminHeaders, 'Content-Type': 'application/json' };
  const rbac = `${env.backendUrl}/apis/rbac.authorization.k8s.io/v1`;
  await sendJson(`${rbac}/clusterroles`, {
    method: 'POST',
    expect: 201,
    headers,
    body: JSON.stringify({
      metadata: { name },
      rules: [
        {
          apiGroups: [
            '',
            'apps',
            'batch',
            'networking.k8s.io',
            'storage.k8s.io',
            'rbac.authorization.k8s.io',
            'apiextensions.k8s.io',
          ],
          resources: WARM_KINDS,
          verbs: ['get', 'list'],
        },
      ],
    }),
  });
  await sendJson(`${rbac}/clusterrolebindings`, {
    method: 'POST',
    expect: 201,
    headers,
    body: JSON.stringify({
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: env.kapiUser.name }],
    }),
  });
  return async () => {
    for (const kind of ['clusterrolebindings', 'clusterroles']) {
      await send(`${rbac}/${kind}/${name}`, { method: 'DELETE', headers: env.adminHeaders }).catch(() => undefined);
    }
  };
}

/** Lists each kind once (waiting out 503s while its cache reads its first list); the time and sizes. */
async function warm(kapi: KapiProcess, token: string): Promise<{ ms: number; totals: Record<string, number> }> {
  const started = Date.now();
  const totals: Record<string, number> = {};
  for (const kind of WARM_KINDS) {
    for (;;) {
      const answer = await send(`${kapi.url}${BASE}/${kind}?limit=0`, { headers: bearer(token), timeoutMs: 120_000 });
      if (answer.status === 200) {
        totals[kind] = (JSON.parse(answer.body.toString('utf8')) as { totalItems: number }).totalItems;
        break;
      }
      if (answer.status !== 503)
        throw new Error(`${kind}: HTTP ${answer.status} ${answer.body.toString('utf8').slice(0, 200)}`);
      await sleep(500);
    }
  }
  return { ms: Date.now() - started, totals };
}

export const listingsScenario: Scenario = {
  title: `Listings: every kind warm (the sandbox: ${SIZE.nodes.toLocaleString('en-US')} nodes × ${SIZE.podsPerNode} pods, ${SIZE.deployments.toLocaleString('en-US')} deployments + replicasets, ${SIZE.services.toLocaleString('en-US')} services, ${SIZE.configMaps.toLocaleString('en-US')} configmaps; a cluster: what it holds)`,
  planned: Object.values(listingMetrics),
  async run(ctx: BenchContext) {
    const outer = accountedCpu();
    const cluster = ctx.env.target === 'cluster';
    // Its own sandbox sets the thread's backend trust to its CA: the run's backend is trusted again afterwards (the
    // workspaces row, after this one, failed on the sandbox with "self-signed certificate" without it).
    const runTrust = backendTrust();
    const seedStarted = Date.now();
    const env = cluster
      ? ctx.env
      : await startEnvironment({
          nodes: SIZE.nodes,
          podsPerNode: SIZE.podsPerNode,
          tls: process.env.BENCH_SANDBOX_TLS !== '0',
          timeoutMs: READY_TIMEOUT_MS,
          scale: {
            deployments: SIZE.deployments,
            services: SIZE.services,
            configMaps: SIZE.configMaps,
            namespaces: SIZE.namespaces,
          },
        });
    if (!cluster)
      detail(
        `scaled sandbox (child process ${env.sandbox?.pid}) seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`,
      );
    const revoke = cluster ? await grantListings(env) : async () => undefined;
    let kapi: KapiProcess | undefined;
    try {
      kapi = await startKapiProcess({ kubeconfig: env.kubeconfig, root: ROOT, env: env.kapiEnv });
      await kapi.ready(READY_TIMEOUT_MS);
      accountCpuOf({ kapi: kapi.pid, ...env.backendPids });
      const token = await passwordGrant(kapi.url, env.kapiUser);
      const atReady = kapi.memory();
      detail(`kapi (child process ${kapi.pid}) ready: RSS ${atReady.rssMiB.toFixed(0)} MiB (nodes and pods watched)`);
      detail(allocatorNote);

      const warmed = await warm(kapi, token);
      detail(
        `every kind listed once in ${(warmed.ms / 1000).toFixed(1)} s: ${Object.entries(warmed.totals)
          .filter(([, n]) => n > 0)
          .map(([kind, n]) => `${n.toLocaleString('en-US')} ${kind}`)
          .join(', ')}`,
      );
      const heap = await kapi.collectGarbage().catch(() => undefined);
      const { settled, waitedMs, first } = await settledMemory(kapi);
      const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
      detail(
        `after a full GC: RSS ${settled.rssMiB.toFixed(0)} MiB once settled (${(waitedMs / 1000).toFixed(0)} s; ` +
          `${first.rssMiB.toFixed(0)} MiB at 3 s) (peak ${settled.peakMiB.toFixed(0)} MiB)` +
          (heap
            ? `; V8 heap used ${mib(heap.heapUsed)} of ${mib(heap.heapTotal)}, external ${mib(heap.external)} (array buffers ${mib(heap.arrayBuffers)})`
            : ''),
      );
      const metricsText = (await send(kapi.metricsUrl)).body.toString('utf8');
      const bodyBytes = [...metricsText.matchAll(/^kapi_cache_body_bytes\{cache="resources\/(\w+)"\} (\d+)/gm)]
        .filter((m) => Number(m[2]) > 0)
        .map((m) => `${m[1]} ${(Number(m[2]) / 1048576).toFixed(1)} MiB`);
      detail(`compressed bodies off the heap: ${bodyBytes.join(', ')}`);
      if (heap?.spaces) {
        detail(
          `V8 spaces used: ${heap.spaces
            .filter((space) => space.used >= 1048576)
            .map((space) => `${space.space.replace(/_space$/, '')} ${mib(space.used)}`)
            .join(', ')}`,
        );
      }
      // BENCH_HEAP_SNAPSHOT=<file>: where the heap goes (`node dist/bench/heap-summary.js <file>`).
      const snapshotFile = process.env.BENCH_HEAP_SNAPSHOT;
      if (snapshotFile) {
        const started = Date.now();
        await kapi.heapSnapshot(snapshotFile);
        detail(`heap snapshot written to ${snapshotFile} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }

      const page = await sendJson<{ items: { metadata: { name: string } }[]; totalItems: number }>(
        `${kapi.url}${POD_PAGE_PATH}`,
        { headers: bearer(token) },
      );
      detail(
        `pod page: ${page.items.length} items of totalItems=${page.totalItems}; first ${page.items[0]?.metadata.name}`,
      );
      const operation: Operation = {
        kind: 'request',
        url: `${kapi.url}${POD_PAGE_PATH}`,
        headers: bearer(token),
        expect: 200,
      };
      const { c1, c1s, c16, c16s } = await pageLoads(operation);
      const after = kapi.memory();
      const heapAfter = await kapi.collectGarbage().catch(() => undefined);
      const settledAfter = kapi.memory();
      detail(
        `RSS after the page load: ${after.rssMiB.toFixed(0)} MiB (peak ${after.peakMiB.toFixed(0)} MiB); after a full GC ${settledAfter.rssMiB.toFixed(0)} MiB` +
          (heapAfter
            ? `, V8 heap used ${mib(heapAfter.heapUsed)} of ${mib(heapAfter.heapTotal)}, external ${mib(heapAfter.external)}`
            : ''),
      );

      const errors = c1.errors + c16.errors;
      const rows: Row[] = [
        {
          ...listingMetrics.rss,
          value: `${settled.rssMiB.toFixed(0)} MiB (peak ${settled.peakMiB.toFixed(0)} MiB)`,
          verdict: verdict(settled.rssMiB <= RSS_LIMIT_MIB),
        },
        {
          ...listingMetrics.p99,
          value: `${ms(c1s.p99)} (p50 ${ms(c1s.p50)})`,
          verdict: verdict(c1s.p99 <= 10 && errors === 0),
        },
        {
          ...listingMetrics.throughput,
          value: `${rate(throughput(c16))}${c16.errors ? `, ${c16.errors} errors` : ''}`,
          verdict: verdict(throughput(c16) >= 1_000 && errors === 0),
        },
        {
          ...listingMetrics.cpu,
          value: `kapi ${Math.round(cpuPerOperation(c16).kapi ?? Number.NaN)} µs, backend ${Math.round(
            Object.entries(cpuPerOperation(c16))
              .filter(([role]) => role !== 'kapi')
              .reduce((sum, [, us]) => sum + (us ?? 0), 0),
          )} µs (c1 kapi ${Math.round(cpuPerOperation(c1).kapi ?? Number.NaN)} µs)`,
          verdict: 'info',
        },
        { ...listingMetrics.warm, value: `${(warmed.ms / 1000).toFixed(1)} s`, verdict: 'info' },
      ];
      return {
        rows,
        figures: {
          size: SIZE,
          totals: warmed.totals,
          warmMs: warmed.ms,
          atReady,
          settled,
          heapAfterGc: heap,
          bodyBytes,
          pod: {
            path: POD_PAGE_PATH,
            totalItems: page.totalItems,
            c1: { ...c1s, rps: throughput(c1), errors: c1.errors, cpuUsPerPage: cpuPerOperation(c1) },
            c16: { ...c16s, rps: throughput(c16), errors: c16.errors, cpuUsPerPage: cpuPerOperation(c16) },
          },
        },
      };
    } finally {
      accountCpuOf(outer);
      await kapi?.stop();
      await revoke();
      if (!cluster) {
        await env.stop();
        setBackendTrust(runTrust);
      }
    }
  },
};

/**
 * RSS once the allocator has given back what the GC freed: read 3 s after the GC, then each second while it still
 * falls by a MiB or more, for at most 15 s more. glibc gives nothing back later (it stops at once); jemalloc returns
 * freed pages over its decay time (10 s by default) from a background thread.
 */
async function settledMemory(kapi: KapiProcess) {
  const started = Date.now();
  await sleep(3_000);
  const first = kapi.memory();
  let settled = first;
  while (Date.now() - started < 18_000) {
    await sleep(1_000);
    const next = kapi.memory();
    const falling = settled.rssMiB - next.rssMiB >= 1;
    settled = next;
    if (!falling) break;
  }
  return { settled, first, waitedMs: Date.now() - started };
}
