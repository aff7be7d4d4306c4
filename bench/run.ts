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
import { sendJson } from './http.js';
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

/** Memory first (an idle kapi with synced caches), the login storm last (it leaves sessions behind). */
const SCENARIOS: { key: string; scenario: Scenario; needsToken: boolean; sandboxOnly?: boolean }[] = [
  { key: 'memory', scenario: memoryScenario, needsToken: false },
  { key: 'nodePage', scenario: nodePageScenario, needsToken: true },
  { key: 'forwarding', scenario: forwardingScenario, needsToken: true },
  // These write to the backend (node patches, a login storm): the sandbox only.
  // Logging before the watch row: 1,000 open watches leave kapi's heap grown, and the logging row's peak is its own.
  { key: 'logging', scenario: loggingScenario, needsToken: true, sandboxOnly: true },
  { key: 'watch', scenario: watchScenario, needsToken: true, sandboxOnly: true },
  // Its own peak (VmHWM started over); after the watches have closed.
  { key: 'hostile', scenario: hostileScenario, needsToken: true },
  { key: 'tokenIssue', scenario: tokenScenario, needsToken: true, sandboxOnly: true },
];

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The bench user's access token from kapi's own password grant, or why there is none. */
async function adminToken(kapi: KapiProcess, env: Environment): Promise<string | Error> {
  try {
    const answer = await sendJson<{ access_token: string }>(`${kapi.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: env.kapiUser.name,
        password: env.kapiUser.password,
        client_id: 'kapi',
        client_secret: 'kapi',
      }).toString(),
    });
    return answer.access_token;
  } catch (error) {
    return new Error(`kapi issued no access token (${reason(error)})`);
  }
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
  let kapi: KapiProcess | undefined;
  try {
    kapi = await startKapiProcess({ kubeconfig: env.kubeconfig, root: ROOT, env: env.kapiEnv });
    const readyMs = await kapi.ready(READY_TIMEOUT_MS);
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
      cores,
      env,
      kapi,
      sandboxUrl: env.backendUrl,
      kapiToken: token instanceof Error ? '' : token,
      nodeName: nodes.items[0]?.metadata.name ?? 'node-1',
    };

    const rows: Row[] = [];
    if (env.seedMs !== undefined) {
      // a figure, not a test bound: seeding time varies with the machine's load
      rows.push({
        metric: `sandbox start, seeding ${env.nodeCount.toLocaleString('en-US')} nodes and ${env.podCount.toLocaleString('en-US')} pods`,
        value: seconds(env.seedMs),
        target: '(info)',
        verdict: 'info',
      });
    }
    const figures: Record<string, unknown> = {};
    for (const { key, scenario, needsToken, sandboxOnly } of SCENARIOS.filter((s) => !ONLY || ONLY.includes(s.key))) {
      section(scenario.title);
      const scenarioStarted = Date.now();
      try {
        if (sandboxOnly && !env.sandbox) throw new Error('runs against the sandbox only');
        if (needsToken && token instanceof Error) throw token;
        const result = await scenario.run(ctx);
        rows.push(...result.rows);
        figures[key] = result.figures;
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
    rows.push({
      metric: 'kapi RSS at the end (after GC)',
      value: `${end.rssMiB.toFixed(0)} MiB (peak ${end.peakMiB.toFixed(0)} MiB)`,
      target: '(info)',
      verdict: 'info',
    });

    section(
      `Summary (${env.nodeCount.toLocaleString('en-US')} nodes, ${env.podCount.toLocaleString('en-US')} pods; ${seconds(Date.now() - started)})`,
    );
    printTable(rows);
    if (env.sandbox) {
      console.log('\nNotes: the direct path runs against the sandbox, which answers lists faster than a real');
      console.log(
        'kube-apiserver (no etcd, no conversion), so real direct-path figures are worse. kapi, the sandbox and the',
      );
      console.log(`load generators share ${cores} cores; a missed target is reported, not failed (exit 0).`);
    } else {
      console.log(
        '\nNotes: the backend is the cluster BENCH_KUBECONFIG names; a missed target is reported, not failed.',
      );
    }
    console.log('CPU/req: utime+stime of each process (/proc/<pid>/stat) over a measured window ÷ the requests in it.');
    writeJson(OUTPUT, {
      at: new Date().toISOString(),
      machine: { cores, cpu: os.cpus()[0]?.model.trim(), node: process.version, loadAverageAtStart: load1 },
      cluster: { nodes: env.nodeCount, pods: env.podCount },
      rows,
      figures,
      endMemoryMiB: end,
    });
    console.log(`figures written to ${path.relative(process.cwd(), OUTPUT)}`);
  } finally {
    await kapi?.stop();
    await env.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
