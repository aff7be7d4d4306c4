import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import bcrypt from 'bcrypt';
import { loadCells, loadFigures, pageLoads, rssIncreaseCell } from '../paired-runs.js';
import type { BenchContext, Scenario } from '../context.js';
import { grantBenchUser } from '../grants.js';
import { bearer, send, sendJson } from '../http.js';
import type { Operation } from '../jobs.js';
import { detail, verdict, type Row } from '../report.js';

/**
 * SPEC §17's users list (issue 25's row): the console's Users page (`iam.kapi.io/v1alpha2/users?sortBy=createTime
 * &limit=10`, each with its platform role) over 10,000 Users (BENCH_USERS for another count): p99 at c1, pages/s at
 * c16, kapi's CPU per page, and kapi's RSS increase for holding them (after a full GC, before and after they were
 * made). The Users are made straight at the backend (as `kubectl apply` would) and deleted at the end; they hold no
 * platform role of their own (10,000 GlobalRoleBindings would be realized as as many ClusterRoleBindings, which
 * every review at kube-apiserver then scans: a measure of its own).
 */
const COUNT = Number(process.env.BENCH_USERS ?? 10_000);
const USERS = '/apis/iam.kapi.io/v1beta1/users';
const PAGE = '/kapis/iam.kapi.io/v1alpha2/users?sortBy=createTime&limit=10';
const LABEL = 'bench.kapi.io/users-row';
const WRITERS = 16;

export const usersMetrics = {
  p99: { metric: `users list (console page, ${COUNT.toLocaleString('en-US')} users) p99 @c1`, target: '≤ 10 ms' },
  throughput: { metric: 'users list @c16', target: '(info)' },
  cpu: { metric: 'kapi CPU per users page @c16', target: '(info)' },
  rss: { metric: `kapi RSS increase for ${COUNT.toLocaleString('en-US')} users`, target: '(info)' },
};

async function writeAll(ctx: BenchContext, paths: string[], method: 'POST' | 'DELETE', body?: (i: number) => unknown) {
  const headers = { ...ctx.env.adminHeaders, 'Content-Type': 'application/json' };
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      for (let i = next++; i < paths.length; i = next++) {
        const answer = await send(`${ctx.env.backendUrl}${paths[i]}`, {
          method,
          headers,
          body: body ? JSON.stringify(body(i)) : undefined,
        });
        if (answer.status >= 300 && !(method === 'DELETE' && answer.status === 404))
          throw new Error(`${method} ${paths[i]}: HTTP ${answer.status}`);
      }
    }),
  );
}

export const usersScenario: Scenario = {
  title: `Users list: the console's Users page over ${COUNT.toLocaleString('en-US')} users`,
  planned: Object.values(usersMetrics),
  async run(ctx: BenchContext) {
    const names = Array.from({ length: COUNT }, (_, i) => `bench-user-${String(i).padStart(5, '0')}`);
    const revoke = await grantBenchUser(ctx, 'users-row', [
      { apiGroups: ['iam.kapi.io'], resources: ['users'], verbs: ['list'] },
    ]);
    try {
      const page = (token: string) =>
        sendJson<{ items: unknown[]; totalItems: number }>(`${ctx.kapi.url}${PAGE}`, { headers: bearer(token) });
      await page(ctx.kapiToken); // the users cache is kapi's identity watch: warm from the start
      await ctx.kapi.collectGarbage();
      await sleep(1_000);
      const before = ctx.kapi.memory();
      // a hash of a password no one knows: the CRD takes a hash only, and no one logs in as these users
      const hash = await bcrypt.hash(randomBytes(16).toString('hex'), 4);
      const started = Date.now();
      await writeAll(
        ctx,
        names.map(() => USERS),
        'POST',
        (i) => ({
          apiVersion: 'iam.kapi.io/v1beta1',
          kind: 'User',
          metadata: { name: names[i], labels: { [LABEL]: 'true' } },
          spec: { email: `${names[i]}@bench.kapi.test`, password: hash },
        }),
      );
      let total = 0;
      for (;;) {
        total = (await page(ctx.kapiToken)).totalItems;
        if (total >= COUNT) break;
        await sleep(200);
      }
      detail(
        `${COUNT.toLocaleString('en-US')} users made and seen by kapi in ${((Date.now() - started) / 1000).toFixed(1)} s (totalItems ${total})`,
      );
      await ctx.kapi.collectGarbage();
      await sleep(1_000);
      const after = ctx.kapi.memory();
      const operation: Operation = {
        kind: 'request',
        url: `${ctx.kapi.url}${PAGE}`,
        headers: bearer(ctx.kapiToken),
        expect: 200,
      };
      const loads = await pageLoads(operation);
      const { c1, c1s, c16 } = loads;
      const cells = loadCells(loads);
      const rows: Row[] = [
        { ...usersMetrics.p99, value: cells.p99, verdict: verdict(c1.errors + c16.errors === 0 && c1s.p99 <= 10) },
        { ...usersMetrics.throughput, value: cells.throughput, verdict: 'info' },
        { ...usersMetrics.cpu, value: cells.cpu, verdict: 'info' },
        { ...usersMetrics.rss, value: rssIncreaseCell(before.rssMiB, after.rssMiB), verdict: 'info' },
      ];
      return {
        rows,
        figures: {
          count: COUNT,
          rssBeforeMiB: before.rssMiB,
          rssAfterMiB: after.rssMiB,
          ...loadFigures(loads, 'cpuUsPerPage'),
        },
      };
    } finally {
      await writeAll(
        ctx,
        names.map((name) => `${USERS}/${name}`),
        'DELETE',
      ).catch((error: unknown) => detail(`users left behind: ${String(error)}`));
      await revoke();
    }
  },
};
