/**
 * `npm run bench`: the SPEC §11 figures. The sandbox runs as a child process serving HTTPS with its own CA, as
 * kube-apiserver does (seeded with 5,000 nodes and 50,000 pods), kapi-apiserver runs as another child process against
 * it (so the memory and the CPU time of each are their own), and load comes from worker threads.
 * A missed target is a result, not a failure: the exit code is non-zero only when the bench itself cannot run.
 */
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { BenchContext, Scenario } from './context.js';
import { startClusterEnvironment } from './cluster-environment.js';
import { startEnvironment, type Environment } from './environment.js';
import { startKitEnvironment } from './kit-environment.js';
import { kitHome } from './kit.js';
import { passwordGrant, sendJson } from './http.js';
import { startKapiProcess, type KapiProcess } from './kapi-process.js';
import { accountCpuOf } from './measure.js';
import { detail, notMeasured, printTable, section, writeJson, type Row } from './report.js';
import { forwardingScenario } from './scenarios/forwarding.js';
import { hostileScenario } from './scenarios/hostile.js';
import { loggingScenario } from './scenarios/logging.js';
import { memoryScenario } from './scenarios/memory.js';
import { nodePageScenario } from './scenarios/node-page.js';
import { tokenScenario } from './scenarios/token-issue.js';
import { watchScenario } from './scenarios/watch-relay.js';
import { accountsScenario } from './scenarios/accounts.js';
import { usersScenario } from './scenarios/users.js';
import { eventsScenario } from './scenarios/events.js';
import { workspacesScenario } from './scenarios/workspaces.js';
import { monitoringScenario } from './scenarios/monitoring.js';
import { listingScale, listingsScenario } from './scenarios/listings.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUTPUT = path.join(ROOT, '.cache/bench/last.json');
/** SPEC §11's cluster; BENCH_NODES / BENCH_PODS_PER_NODE shrink it for a quick look (the figures then say so). */
const NODES = Number(process.env.BENCH_NODES ?? 5_000);
const PODS_PER_NODE = Number(process.env.BENCH_PODS_PER_NODE ?? 10);
const READY_TIMEOUT_MS = 180_000;
/** BENCH_ONLY=nodePage,watch runs just those scenarios (while working on one). */
const ONLY = process.env.BENCH_ONLY?.split(',').filter(Boolean);
/** BENCH_SANDBOX_TLS=0: the sandbox on plain http (to see what the TLS hop costs); HTTPS by default. */
const SANDBOX_TLS = process.env.BENCH_SANDBOX_TLS !== '0';
/** BENCH_KUBECONFIG=<file>: a real cluster as the backend (forwarding, node page, memory rows; see cluster-environment.ts). */
const CLUSTER_KUBECONFIG = process.env.BENCH_KUBECONFIG;
/**
 * The kit's cluster (BENCH_REAL): SPEC §11's memory row, 5,000 nodes and 150,000 pods, unless BENCH_REAL_NODES /
 * BENCH_REAL_PODS_PER_NODE (or BENCH_NODES) say otherwise. kapi's first list of 150,000 pods takes a while.
 */
const REAL_NODES = Number(process.env.BENCH_REAL_NODES ?? process.env.BENCH_NODES ?? 5_000);
const REAL_PODS_PER_NODE = Number(process.env.BENCH_REAL_PODS_PER_NODE ?? 30);
const REAL_READY_TIMEOUT_MS = 900_000;

/** Memory first (an idle kapi with synced caches), the login storm last (it leaves sessions behind). */
const SCENARIOS: ScenarioEntry[] = [
  { key: 'memory', scenario: memoryScenario, needsToken: false, real: true },
  { key: 'nodePage', scenario: nodePageScenario, needsToken: true, real: true },
  { key: 'forwarding', scenario: forwardingScenario, needsToken: true, real: true },
  // The logging row needs the sandbox's generated logs; the login storm writes sessions: the sandbox only.
  // Logging before the watch row: 1,000 open watches leave kapi's heap grown, and the logging row's peak is its own.
  { key: 'logging', scenario: loggingScenario, needsToken: true, sandboxOnly: true },
  // Patches a node: the sandbox or the bench's own kit, never a BENCH_KUBECONFIG cluster.
  { key: 'watch', scenario: watchScenario, needsToken: true, real: true },
  // 10,000 Users made at the backend and deleted again: the console's Users page over them.
  { key: 'users', scenario: usersScenario, needsToken: true, real: true },
  // 50,000 events written at the backend and deleted again: the console's Event Search over them.
  { key: 'events', scenario: eventsScenario, needsToken: true },
  // Its own peak (VmHWM started over); after the watches have closed.
  { key: 'hostile', scenario: hostileScenario, needsToken: true },
  { key: 'tokenIssue', scenario: tokenScenario, needsToken: true, sandboxOnly: true },
  // Rewrites the ClusterConfiguration (records off and on, a directory provider) and leaves sessions behind: after
  // the token row. On the kit too: the writes per login are counted by kube-apiserver's own apiserver_request_total.
  { key: 'accounts', scenario: accountsScenario, needsToken: false, real: true },
  // A backend and a kapi of its own (the scaled cluster), so its memory is the listings' alone.
  { key: 'listings', scenario: listingsScenario, needsToken: false, real: true },
  // The console's node Monitoring tab over the sandbox's Prometheus (a process of the bench's; one node's series).
  { key: 'monitoring', scenario: monitoringScenario, needsToken: true, sandboxOnly: true },
  // Last: on a kit (no namespace controller) its 1,000 deleted namespaces stay Terminating.
  { key: 'workspaces', scenario: workspacesScenario, needsToken: true, real: true },
];

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The bench user's access token from kapi's own password grant, or why there is none. */
async function adminToken(kapi: KapiProcess, env: Environment): Promise<string | Error> {
  try {
    return await passwordGrant(kapi.url, env.kapiUser);
  } catch (error) {
    return new Error(`kapi issued no access token (${reason(error)})`);
  }
}

/** A scenario of the run: `real` ones also run against the kit (BENCH_REAL), `sandboxOnly` ones never leave it. */
interface ScenarioEntry {
  key: string;
  scenario: Scenario;
  needsToken: boolean;
  sandboxOnly?: boolean;
  real?: boolean;
}

/** What one backend gave: its rows (metrics already labelled), raw figures and kapi's memory at the end. */
interface BackendResult {
  label: string;
  cluster: { nodes: number; pods: number };
  rows: Row[];
  figures: Record<string, unknown>;
  endMemoryMiB?: { rssMiB: number; peakMiB: number };
}

/**
 * Starts kapi against `env`, runs `scenarios` in order and stops both. Rows of a backend other than the first get
 * its label in front (`[kube-apiserver 1.32] forwarding added p50 @c1`), so one table holds them all.
 */
async function benchOn(
  env: Environment,
  scenarios: readonly ScenarioEntry[],
  options: { label: string; prefix: string; readyTimeoutMs: number; cores: number },
): Promise<BackendResult> {
  const rows: Row[] = [];
  const figures: Record<string, unknown> = {};
  const result: BackendResult = {
    label: options.label,
    cluster: { nodes: env.nodeCount, pods: env.podCount },
    rows,
    figures,
  };
  let kapi: KapiProcess | undefined;
  try {
    kapi = await startKapiProcess({ kubeconfig: env.kubeconfig, root: ROOT, env: env.kapiEnv });
    const readyMs = await kapi.ready(options.readyTimeoutMs);
    detail(
      `kapi-apiserver (child process ${kapi.pid}, KAPI_CLUSTER=kubeconfig): /readyz 200 after ${seconds(readyMs)}`,
    );
    // Every load run reads the CPU time of these processes over its measured window.
    accountCpuOf({ kapi: kapi.pid, ...env.backendPids });
    const token = await adminToken(kapi, env);
    if (token instanceof Error) detail(`WARNING: ${token.message}`);
    const nodes = await sendJson<{ items: { metadata: { name: string } }[] }>(
      `${env.backendUrl}/api/v1/nodes?limit=1`,
      {
        headers: env.adminHeaders,
      },
    );
    const ctx: BenchContext = {
      cores: options.cores,
      env,
      kapi,
      sandboxUrl: env.backendUrl,
      kapiToken: token instanceof Error ? '' : token,
      nodeName: nodes.items[0]?.metadata.name ?? 'node-1',
    };

    if (env.seedMs !== undefined) {
      // a figure, not a test bound: seeding time varies with the machine's load
      rows.push({
        metric: `sandbox start, seeding ${env.nodeCount.toLocaleString('en-US')} nodes and ${env.podCount.toLocaleString('en-US')} pods`,
        value: seconds(env.seedMs),
        target: '(info)',
        verdict: 'info',
      });
    }
    for (const { key, scenario, needsToken, sandboxOnly } of scenarios) {
      section(`${options.prefix}${scenario.title}`);
      const scenarioStarted = Date.now();
      try {
        if (sandboxOnly && !env.sandbox) throw new Error('runs against the sandbox only');
        if (needsToken && token instanceof Error) throw token;
        const outcome = await scenario.run(ctx);
        rows.push(...outcome.rows);
        figures[key] = outcome.figures;
      } catch (error) {
        detail(`not measured: ${reason(error)}`);
        rows.push(...scenario.planned.map((p) => notMeasured(p.metric, p.target, reason(error), p.reference)));
        figures[key] = { notMeasured: reason(error) };
      }
      detail(`(${seconds(Date.now() - scenarioStarted)})`);
    }
    // What the run left behind (closed watches, login sessions), after a full GC like the memory row.
    await kapi.collectGarbage().catch(() => undefined);
    await sleep(1_000);
    const end = kapi.memory();
    result.endMemoryMiB = end;
    rows.push({
      metric: 'kapi RSS at the end (after GC)',
      value: `${end.rssMiB.toFixed(0)} MiB (peak ${end.peakMiB.toFixed(0)} MiB)`,
      target: '(info)',
      verdict: 'info',
    });
  } finally {
    await kapi?.stop();
    await env.stop();
    if (options.prefix) for (const row of rows) row.metric = `${options.prefix}${row.metric}`;
  }
  return result;
}

/**
 * BENCH_REAL: the forwarding, node-page, watch-relay and memory rows also against a real kube-apiserver 1.32 (the kit
 * of ../shared/kube, which the bench makes, seeds, starts and stops itself). Unset: on when the kit is there and no
 * BENCH_KUBECONFIG names another cluster; 1: required; 0: off; only: the kit's rows alone, no sandbox rows.
 */
function realKitWanted(): { wanted: boolean; alone: boolean; home: string | undefined; why?: string } {
  const setting = process.env.BENCH_REAL;
  const home = kitHome(ROOT);
  if (setting === '0') return { wanted: false, alone: false, home, why: 'BENCH_REAL=0' };
  if (setting === '1' || setting === 'only') return { wanted: true, alone: setting === 'only', home };
  if (CLUSTER_KUBECONFIG) return { wanted: false, alone: false, home, why: 'BENCH_KUBECONFIG names the backend' };
  if (!home) return { wanted: false, alone: false, home, why: 'no kit (KUBE_KIT_DIR, ../shared/kube)' };
  return { wanted: true, alone: false, home };
}

async function main(): Promise<void> {
  const cores = os.availableParallelism();
  const started = Date.now();
  console.log('kapi-apiserver benchmark (SPEC §11)');
  console.log(
    `machine: ${cores} cores (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, ${os.platform()}`,
  );

  // Other processes on the machine skew every figure: say how busy it was.
  const [load1] = os.loadavg();
  console.log(
    `load average (1 min) at start: ${load1?.toFixed(2)}${(load1 ?? 0) > 0.5 ? ' — the machine is busy; figures may be low' : ''}`,
  );
  const real = realKitWanted();
  const chosen = SCENARIOS.filter((s) => !ONLY || ONLY.includes(s.key));
  const results: BackendResult[] = [];

  if (!real.alone) {
    section('Set-up');
    const env = CLUSTER_KUBECONFIG
      ? await startClusterEnvironment(CLUSTER_KUBECONFIG)
      : await startEnvironment({
          nodes: NODES,
          podsPerNode: PODS_PER_NODE,
          tls: SANDBOX_TLS,
          timeoutMs: READY_TIMEOUT_MS,
        });
    const backend = env.sandbox
      ? `sandbox (child process ${env.sandbox.pid}, ${SANDBOX_TLS ? 'HTTPS, its own CA' : 'plain http'})`
      : `cluster ${env.backendUrl} (BENCH_KUBECONFIG; CPU of ${Object.keys(env.backendPids).join(', ') || 'no backend process'} accounted)`;
    detail(
      `${backend}: ${env.nodeCount.toLocaleString('en-US')} nodes, ${env.podCount.toLocaleString('en-US')} pods, ready in ${seconds(Date.now() - started)}`,
    );
    results.push(
      await benchOn(env, chosen, {
        label: env.sandbox ? 'sandbox' : 'BENCH_KUBECONFIG',
        prefix: '',
        readyTimeoutMs: READY_TIMEOUT_MS,
        cores,
      }),
    );
  }

  const realScenarios = chosen.filter((s) => s.real);
  if (real.wanted && realScenarios.length > 0) {
    // SPEC §11's memory rows and the listings row share one cluster: its pods belong to the listings' Deployments
    // (BENCH_REAL_LISTING=0: nodes and pods only, a quicker seed when the listings row is not wanted)
    const size = {
      nodes: REAL_NODES,
      podsPerNode: REAL_PODS_PER_NODE,
      ...(process.env.BENCH_REAL_LISTING !== '0' && { scale: listingScale(REAL_NODES) }),
    };
    const prefix = '[kube-apiserver 1.32] ';
    section(`${prefix}Set-up: a real kube-apiserver (BENCH_REAL; the kit of ../shared/kube)`);
    const setUpStarted = Date.now();
    try {
      if (!real.home) throw new Error('no kit: set KUBE_KIT_DIR to the directory of kit.sh');
      const env = await startKitEnvironment({
        root: ROOT,
        home: real.home,
        size,
        port: Number(process.env.BENCH_KIT_PORT ?? 18443),
        etcdPort: Number(process.env.BENCH_KIT_ETCD_PORT ?? 13379),
        issuerPort: Number(process.env.BENCH_ISSUER_PORT ?? 18454),
      });
      detail(
        `kube-apiserver ${env.backendUrl} (pids: ${Object.entries(env.backendPids)
          .map(([role, pid]) => `${role} ${pid}`)
          .join(
            ', ',
          )}): ${env.nodeCount.toLocaleString('en-US')} nodes, ${env.podCount.toLocaleString('en-US')} pods, ready in ${seconds(Date.now() - setUpStarted)}`,
      );
      const result = await benchOn(env, realScenarios, {
        label: 'kube-apiserver 1.32 (kit)',
        prefix,
        readyTimeoutMs: REAL_READY_TIMEOUT_MS,
        cores,
      });
      result.rows.unshift({
        metric: `${prefix}kit seed, ${env.nodeCount.toLocaleString('en-US')} nodes and ${env.podCount.toLocaleString('en-US')} pods`,
        value: env.seed.reused ? 'reused from an earlier run' : `written in ${seconds(env.seed.ms)}`,
        target: '(info)',
        verdict: 'info',
      });
      results.push(result);
    } catch (error) {
      detail(`not measured: ${reason(error)}`);
      results.push({
        label: 'kube-apiserver 1.32 (kit)',
        cluster: { nodes: size.nodes, pods: 0 },
        rows: realScenarios.flatMap(({ scenario }) =>
          scenario.planned.map((p) => notMeasured(`${prefix}${p.metric}`, p.target, reason(error), p.reference)),
        ),
        figures: { notMeasured: reason(error) },
      });
    }
  } else if (!real.wanted) {
    console.log(`
(no rows on a real kube-apiserver: ${real.why}; BENCH_REAL=1 asks for them)`);
  }

  const clusters = results
    .map(
      (r) =>
        `${r.label}: ${r.cluster.nodes.toLocaleString('en-US')} nodes, ${r.cluster.pods.toLocaleString('en-US')} pods`,
    )
    .join('; ');
  section(`Summary (${clusters}; ${seconds(Date.now() - started)})`);
  printTable(results.flatMap((r) => r.rows));
  if (results.some((r) => r.label === 'sandbox')) {
    console.log('\nNotes: the direct path runs against the sandbox, which answers lists faster than a real');
    console.log(
      'kube-apiserver (no etcd, no conversion), so real direct-path figures are worse. kapi, the sandbox and the',
    );
    console.log(`load generators share ${cores} cores; a missed target is reported, not failed (exit 0).`);
  }
  if (results.some((r) => r.label !== 'sandbox')) {
    console.log(
      '\nNotes: rows in [kube-apiserver 1.32] ran against the kit of ../shared/kube on this machine (its CPU and etcd’s',
    );
    console.log(
      'accounted); a BENCH_KUBECONFIG backend is whatever cluster it names. A missed target is reported, not failed.',
    );
  }
  console.log('CPU/req: utime+stime of each process (/proc/<pid>/stat) over a measured window ÷ the requests in it.');
  const first = results[0];
  writeJson(OUTPUT, {
    at: new Date().toISOString(),
    machine: { cores, cpu: os.cpus()[0]?.model.trim(), node: process.version, loadAverageAtStart: load1 },
    cluster: first?.cluster,
    rows: results.flatMap((r) => r.rows),
    figures: first?.figures,
    endMemoryMiB: first?.endMemoryMiB,
    backends: results,
  });
  console.log(`figures written to ${path.relative(process.cwd(), OUTPUT)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
