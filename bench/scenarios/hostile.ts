import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import bcrypt from 'bcrypt';
import { fileURLToPath } from 'node:url';
import type { BenchContext, Scenario, ScenarioResult } from '../context.js';
import { bearer, passwordGrantForm, send, sendJson } from '../http.js';
import { ensureLogPods } from './logging.js';
import { readMemory, resetPeakMemory, startKapiProcess } from '../kapi-process.js';
import { accountCpuOf, accountedCpu } from '../measure.js';
import { processCpuMs } from '../process-cpu.js';
import { detail, verdict, type Row } from '../report.js';

/**
 * SPEC §11 "hostile load", with the chart's heap flags (kapi runs with them in every row): what clients can do to
 * kapi's memory.
 * - Without a token: 10,000 requests to unique paths (the shapes of kapi's own and forwarded routes), then a scrape
 *   of /metrics: kapi's peak RSS, the series before and after, and whether kapi still answers.
 * - With tokens: 60 log exports of 200 pods × 10,000 lines (the logging row's pods) by 20 users, whose clients read
 *   the answer's head and then nothing: how many kapi took and refused (429), its peak RSS, whether it still answers
 *   meanwhile, and when the stalled answers were ended (--log-write-timeout) and their places freed.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const READY_TIMEOUT_MS = 180_000;
const UNIQUE_PATHS = Number(process.env.BENCH_HOSTILE_PATHS ?? 10_000);
const CONCURRENCY = 16;
const RSS_LIMIT_MIB = 256;

const metrics = {
  uniquePaths: {
    metric: `hostile: ${UNIQUE_PATHS.toLocaleString('en-US')} unique unauthenticated paths, peak RSS`,
    target: `≤ ${RSS_LIMIT_MIB} MiB, answering`,
  },
  series: { metric: 'hostile: /metrics series before → after the unique paths', target: 'no kapi_* series added' },
  stalledExports: {
    metric: 'hostile: 60 stalled log exports (200 pods × 10k lines), peak RSS',
    target: `≤ ${RSS_LIMIT_MIB} MiB, answering`,
  },
  stalledEnded: { metric: 'hostile: stalled exports ended, places freed', target: '(info)' },
};

const STALLED_EXPORTS = 60;
const EXPORT_USERS = 20;
const WRITE_TIMEOUT_MS = 60_000;

const SHAPES: ((i: number) => string)[] = [
  (i) => `/oauth/x-${i}`,
  (i) => `/kapis/a${i}/b/c`,
  (i) => `/kapis/resources.kapi.io/v1alpha3/nodes/n-${i}`,
  (i) => `/api/v1/namespaces/ns-${i}/pods/p-${i}`,
  (i) => `/apis/made.up.${i}/v1/things`,
  (i) => `/x-${i}`,
];

/** Every series on /metrics, by name and labels (values left out). */
async function seriesOf(ctx: BenchContext): Promise<Set<string>> {
  const answer = await send(ctx.kapi.metricsUrl);
  return new Set(
    answer.body
      .toString('utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.slice(0, line.lastIndexOf(' '))),
  );
}

/** `count` requests without a token (path numbers from `from`), `CONCURRENCY` at a time; the answers by status. */
async function uniquePaths(base: string, from: number, count: number): Promise<Map<number, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const statuses = new Map<number, number>();
  let next = 0;
  const caller = async () => {
    while (next < count) {
      const i = from + next++;
      const answer = await send(`${base}${SHAPES[i % SHAPES.length]!(i)}`, { agent, timeoutMs: 30_000 }).catch(
        () => undefined,
      );
      const status = answer?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, caller));
  agent.destroy();
  return statuses;
}

/** Whether kapi still answers: /readyz and a node page with the bench user's token. */
async function answering(ctx: BenchContext): Promise<string | undefined> {
  const ready = await send(`${ctx.kapi.url}/readyz`, { timeoutMs: 10_000 }).catch(() => undefined);
  if (ready?.status !== 200) return `/readyz answered ${ready?.status ?? 'nothing'}`;
  const page = await send(`${ctx.kapi.url}/kapis/resources.kapi.io/v1alpha3/nodes?limit=1`, {
    headers: bearer(ctx.kapiToken),
    timeoutMs: 10_000,
  }).catch(() => undefined);
  if (page?.status !== 200) return `a node page answered ${page?.status ?? 'nothing'}`;
  return undefined;
}

/** A client that sends an export request, reads the answer's head (its status), then never reads again. */
interface StalledClient {
  status: number;
  socket: net.Socket;
}

function stalledExport(url: string, path: string, token: string): Promise<StalledClient> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: kapi\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    });
    socket.on('error', () => undefined);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0);
      resolve({ status, socket });
    });
    socket.once('error', reject);
  });
}

/** `count` users allowed `get pods/log` cluster-wide, each with an access token from kapi. */
async function logReaders(ctx: BenchContext, count: number): Promise<string[]> {
  const base = ctx.env.backendUrl;
  const json = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
  const names = Array.from({ length: count }, (_, i) => `bench-log-reader-${i}`);
  const password = 'bench-log-reader-pw';
  const hash = await bcrypt.hash(password, 4);
  for (const name of names) {
    await sendJson(`${base}/apis/iam.kapi.io/v1beta1/users`, {
      method: 'POST',
      expect: 201,
      headers: json,
      body: JSON.stringify({
        apiVersion: 'iam.kapi.io/v1beta1',
        kind: 'User',
        metadata: { name },
        spec: { email: `${name}@bench.kapi.test`, password: hash, groups: [] },
      }),
    });
  }
  await sendJson(`${base}/apis/rbac.authorization.k8s.io/v1/clusterroles`, {
    method: 'POST',
    expect: 201,
    headers: json,
    body: JSON.stringify({
      metadata: { name: 'bench-log-reader' },
      rules: [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }],
    }),
  });
  await sendJson(`${base}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, {
    method: 'POST',
    expect: 201,
    headers: json,
    body: JSON.stringify({
      metadata: { name: 'bench-log-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-log-reader' },
      subjects: names.map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
    }),
  });
  const tokens: string[] = [];
  for (const name of names) {
    // kapi's user cache may lag behind a User made a moment ago: a failed login is tried again
    for (let attempt = 0; ; attempt++) {
      const answer = await send(`${ctx.kapi.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: passwordGrantForm({ name, password }),
      });
      if (answer.status === 200) {
        tokens.push((JSON.parse(answer.body.toString('utf8')) as { access_token: string }).access_token);
        break;
      }
      if (attempt > 50) throw new Error(`${name} could not log in: HTTP ${answer.status}`);
      await sleep(200);
    }
  }
  return tokens;
}

/** The stalled-exports row: see the scenario's description. */
async function stalledExports(ctx: BenchContext): Promise<{ rows: Row[]; figures: Record<string, unknown> }> {
  const pid = ctx.kapi.pid;
  const namespace = await ensureLogPods(ctx);
  const logs = `/kapis/logging.kapi.io/v1alpha2/logs?namespaces=${namespace}`;
  // kapi's pod cache has the pods once statistics count every container
  for (const deadline = Date.now() + 60_000; ;) {
    const stats = await sendJson<{ statistics: { containers: number } }>(
      `${ctx.kapi.url}${logs}&operation=statistics`,
      {
        headers: bearer(ctx.kapiToken),
      },
    );
    if (stats.statistics.containers >= 200) break;
    if (Date.now() > deadline) throw new Error(`kapi sees ${stats.statistics.containers} of 200 containers`);
    await sleep(500);
  }
  const tokens = await logReaders(ctx, EXPORT_USERS);
  const peakSince = resetPeakMemory(pid) ? 'since this row began' : 'since start';
  const startMiB = readMemory(pid).rssMiB;
  const started = Date.now();
  const clients: StalledClient[] = [];
  for (let i = 0; i < STALLED_EXPORTS; i++) {
    clients.push(await stalledExport(ctx.kapi.url, `${logs}&operation=export`, tokens[i % tokens.length]!));
  }
  const accepted = clients.filter((c) => c.status === 200);
  const refused = clients.filter((c) => c.status === 429).length;
  // Memory while they stall (well inside the write timeout), and whether kapi answers others meanwhile.
  await sleep(10_000);
  const troubleWhileStalled = await answering(ctx);
  const query = await send(`${ctx.kapi.url}${logs}&size=10`, {
    headers: bearer(ctx.kapiToken),
    timeoutMs: 30_000,
  }).catch(() => undefined);
  const peakWhileStalled = readMemory(pid).peakMiB;
  detail(
    `${STALLED_EXPORTS} exports by ${EXPORT_USERS} users: ${accepted.length} taken, ${refused} refused (429), ${clients.length - accepted.length - refused} other; a log query meanwhile: ${query?.status ?? 'no answer'}`,
  );
  // The stalled answers end after the write timeout, freeing their places: an export (of nothing) by a user who has
  // none running is refused (429, the replica is full) until then.
  let freedAfterMs: number | undefined;
  let again: number | undefined;
  while (Date.now() - started < WRITE_TIMEOUT_MS + 60_000) {
    again = (
      await send(`${ctx.kapi.url}${logs}&operation=export&pods=none`, {
        headers: bearer(tokens[tokens.length - 1]!),
        timeoutMs: 30_000,
      }).catch(() => undefined)
    )?.status;
    if (again === 200) {
      freedAfterMs = Date.now() - started;
      break;
    }
    await sleep(1_000);
  }
  for (const client of clients) client.socket.destroy();
  const peak = readMemory(pid).peakMiB;
  const trouble = troubleWhileStalled ?? (query?.status === 200 ? undefined : `a log query answered ${query?.status}`);
  const endedAfter =
    freedAfterMs === undefined ? 'not within the write timeout + 60 s' : `${(freedAfterMs / 1000).toFixed(0)} s`;
  detail(
    `kapi peak RSS (VmHWM, ${peakSince}): ${peakWhileStalled.toFixed(0)} MiB while stalled, ${peak.toFixed(0)} MiB in all (RSS ${startMiB.toFixed(0)} MiB when the row began); ${trouble ?? 'still answering'}`,
  );
  detail(
    `stalled answers ended and their places freed ${endedAfter} after they began (a new export: ${again ?? 'no answer'})`,
  );
  const rows: Row[] = [
    {
      ...metrics.stalledExports,
      value: `${peak.toFixed(0)} MiB, ${trouble ?? 'answering'} (${accepted.length} taken, ${refused} × 429)`,
      verdict: verdict(peak <= RSS_LIMIT_MIB && trouble === undefined),
    },
    {
      ...metrics.stalledEnded,
      value: `after ${endedAfter} (--log-write-timeout ${WRITE_TIMEOUT_MS / 1000} s)`,
      verdict: 'info',
    },
  ];
  return {
    rows,
    figures: {
      accepted: accepted.length,
      refused,
      peakMiB: peak,
      peakWhileStalledMiB: peakWhileStalled,
      freedAfterMs,
    },
  };
}

export const hostileScenario: Scenario = {
  title: 'Hostile load (the chart heap flags): unique unauthenticated paths, stalled log exports',
  planned: Object.values(metrics),
  async run(outer) {
    // A kapi of its own on the same cluster (the bench user's token holds there too: one signing key, sessions in
    // the cluster), so its memory is what the hostile clients make of a kapi with the SPEC cluster cached, not what
    // the rows before left behind (1,000 watches had grown the shared one to about 290 MiB).
    const own = await startKapiProcess({ kubeconfig: outer.env.kubeconfig, root: ROOT, env: outer.env.kapiEnv });
    const accounted = accountedCpu();
    try {
      await own.ready(READY_TIMEOUT_MS);
      accountCpuOf({ ...accounted, kapi: own.pid });
      detail(`kapi of its own (child process ${own.pid}): RSS ${own.memory().rssMiB.toFixed(0)} MiB at /readyz 200`);
      return await hostileRows({ ...outer, kapi: own });
    } finally {
      accountCpuOf(accounted);
      await own.stop();
    }
  },
};

async function hostileRows(ctx: BenchContext): Promise<ScenarioResult> {
  const pid = ctx.kapi.pid;
  // One request of each shape first: the label sets they make (a 401 or 404 on `other`) are the most there may be.
  await uniquePaths(ctx.kapi.url, 0, SHAPES.length);
  const before = await seriesOf(ctx);
  const peakSince = resetPeakMemory(pid) ? 'since this row began' : 'since start';
  const startMiB = readMemory(pid).rssMiB;
  const cpuBefore = processCpuMs(pid);
  const started = Date.now();
  const statuses = await uniquePaths(ctx.kapi.url, SHAPES.length, UNIQUE_PATHS);
  const seconds = (Date.now() - started) / 1000;
  const cpuPerRequestUs = ((processCpuMs(pid) - cpuBefore) * 1000) / UNIQUE_PATHS;
  const after = await seriesOf(ctx);
  const added = [...after].filter((series) => !before.has(series));
  const [seriesBefore, seriesAfter] = [before.size, after.size];
  const trouble = await answering(ctx);
  const peak = readMemory(pid).peakMiB;
  const byStatus = [...statuses].map(([status, n]) => `${status || 'no answer'}: ${n}`).join(', ');
  detail(
    `${UNIQUE_PATHS.toLocaleString('en-US')} requests in ${seconds.toFixed(1)} s (${byStatus}); CPU/req: kapi ${cpuPerRequestUs.toFixed(0)} µs`,
  );
  detail(
    `series on /metrics: ${seriesBefore} before, ${seriesAfter} after${added.length ? `; added: ${added.join(', ')}` : ''}`,
  );
  detail(
    `kapi peak RSS (VmHWM, ${peakSince}): ${peak.toFixed(0)} MiB (RSS ${startMiB.toFixed(0)} MiB when the row began); ${trouble ?? 'still answering'}`,
  );
  const rows: Row[] = [
    {
      ...metrics.uniquePaths,
      value: `${peak.toFixed(0)} MiB, ${trouble ?? 'answering'} (CPU/req ${cpuPerRequestUs.toFixed(0)} µs)`,
      verdict: verdict(peak <= RSS_LIMIT_MIB && trouble === undefined),
    },
    {
      ...metrics.series,
      value: `${seriesBefore} → ${seriesAfter}`,
      verdict: verdict(added.every((series) => !/^kapi_/.test(series))),
    },
  ];
  const figures: Record<string, unknown> = {
    requests: UNIQUE_PATHS,
    statuses: Object.fromEntries(statuses),
    seriesBefore,
    seriesAfter,
    peakMiB: peak,
    cpuPerRequestUs,
  };
  // The stalled exports need the logging row's pods, made on the sandbox only.
  if (ctx.env.sandbox) {
    const stalled = await stalledExports(ctx);
    rows.push(...stalled.rows);
    figures.stalledExports = stalled.figures;
  } else {
    rows.push({ ...metrics.stalledExports, value: 'not measured: the sandbox only', verdict: 'not measured' });
  }
  return { rows, figures };
}
