import bcrypt from 'bcrypt';
import type { BenchContext, Scenario } from '../context.js';
import { passwordGrantForm, sendJson } from '../http.js';
import type { LoadResult, RequestOperation } from '../jobs.js';
import { cpuNote, cpuPerOperation, errorNote, load, throughput } from '../measure.js';
import { formatCpu } from '../process-cpu.js';
import { detail, verdict, type Row } from '../report.js';
import { formatSummary, ms, rate, summarize } from '../stats.js';
import { nodePageOperation } from './node-page.js';

/** bcrypt checks timed for the bound; the median is used (the first is a warm-up). */
const BCRYPT_SAMPLES = 5;
const STORM_MS = 6_000;

export const tokenMetrics = {
  logins: { metric: 'password-grant logins/s', target: '≥ 80% of bcrypt bound', reference: '~30 logins/s' },
  pageUnderStorm: { metric: 'node page p99 during logins', target: '≤ 2× without', reference: '×4; crashes' },
  oneUser: {
    metric: 'logins c16, one user, one address',
    target: 'all succeed, p99 ≤ 1 s',
    reference: 'all succeed, p99 0.96 s, 22/s',
  },
  oneUserWithReads: {
    metric: 'logins c16, one user, one address, 16 reads alongside',
    target: 'all succeed, p99 ≤ 1 s',
    reference: 'all succeed, p99 0.96 s',
  },
};

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

/** Parallel logins of one user from one address (every load worker is 127.0.0.1), as a console behind one ingress. */
const ONE_USER_CONCURRENCY = 16;

/** "812 ok, 0 × 503, 0 × 429" and whether every login succeeded. */
function outcomes(result: LoadResult): { text: string; allOk: boolean } {
  const by = result.errorsByStatus ?? {};
  const others = Object.entries(by)
    .filter(([status]) => status !== '503' && status !== '429')
    .map(([status, n]) => `, ${n} × ${status}`)
    .join('');
  return {
    text: `${result.latenciesNs.length} ok, ${by['503'] ?? 0} × 503, ${by['429'] ?? 0} × 429${others}`,
    allOk: result.errors === 0,
  };
}

function loginOperation(ctx: BenchContext): RequestOperation {
  const user = ctx.env.loginUser;
  return {
    kind: 'request',
    method: 'POST',
    url: `${ctx.kapi.url}/oauth/token`,
    headers: FORM,
    body: passwordGrantForm(user),
    expect: 200,
  };
}

/** One bcrypt check at the admin's cost, timed here with the same native library kapi uses: the median of a few. */
async function bcryptCheckMs(password: string, hash: string): Promise<number> {
  await bcrypt.compare(password, hash);
  const samples: number[] = [];
  for (let i = 0; i < BCRYPT_SAMPLES; i++) {
    const started = process.hrtime.bigint();
    if (!(await bcrypt.compare(password, hash))) throw new Error('the login user’s hash does not match its password');
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)] as number;
}

/** A 429 among the failures means kapi limits successful logins, which the bench reports rather than hides. */
function limitedNote(result: LoadResult): string {
  return result.firstError?.startsWith('HTTP 429') ? ' — kapi rate-limited successful logins (HTTP 429)' : '';
}

/**
 * SPEC §11 token row: password-grant logins per second at concurrency cores×2, against the bound bcrypt sets
 * (cores ÷ one check at the admin's cost); then the node page's p99 at c1 with and without a login storm running in
 * another worker. The storm logs in as a User of its own, so the admin's sessions are never touched.
 */
export const tokenScenario: Scenario = {
  title: 'Token issue: POST /oauth/token (password grant) and the node page during a login storm',
  planned: Object.values(tokenMetrics),
  async run(ctx) {
    const user = ctx.env.loginUser;
    const checkMs = await bcryptCheckMs(user.password, user.hash);
    const bound = ctx.cores / (checkMs / 1000);
    detail(
      `bcrypt cost ${ctx.env.adminHashCost}: one check ${ms(checkMs)} → bound ${ctx.cores} cores ÷ ${ms(checkMs)} = ${rate(bound, 'logins/s')}`,
    );

    const login = loginOperation(ctx);
    await sendJson<{ access_token: string }>(login.url, { method: 'POST', headers: FORM, body: login.body });
    const concurrency = ctx.cores * 2;
    const storm = await load(login, concurrency, 1_000, STORM_MS);
    const logins = throughput(storm);
    const share = logins / bound;
    detail(
      `logins at c${concurrency} (cores×2): ${rate(logins, 'logins/s')} = ${(share * 100).toFixed(0)}% of the bound; ${formatSummary(summarize(storm.latenciesNs))}${cpuNote(storm, 'login')}${errorNote(storm)}${limitedNote(storm)}`,
    );

    const page = nodePageOperation(ctx);
    const quiet = await load(page, 1);
    const quietS = summarize(quiet.latenciesNs);
    detail(`node page c1, no logins : ${formatSummary(quietS)}${cpuNote(quiet)}${errorNote(quiet)}`);
    // The storm starts first and outlasts the measured window of the page load on its own worker.
    const [busy, during] = await Promise.all([load(page, 1, 1_500, 5_000), load(login, concurrency, 0, 7_000)]);
    const busyS = summarize(busy.latenciesNs);
    const factor = busyS.p99 / quietS.p99;
    detail(`node page c1, login storm: ${formatSummary(busyS)}${errorNote(busy)}`);
    detail(`  storm meanwhile: ${rate(throughput(during), 'logins/s')}${errorNote(during)}; p99 ×${factor.toFixed(2)}`);

    // One user, one address, 16 at once: correct logins are never refused and wait only for the checks ahead of them.
    const oneUser = await load(login, ONE_USER_CONCURRENCY, 1_000, STORM_MS);
    const oneUserS = summarize(oneUser.latenciesNs);
    const oneUserOut = outcomes(oneUser);
    detail(
      `logins c${ONE_USER_CONCURRENCY}, one user and address: ${oneUserOut.text}; ${rate(throughput(oneUser), 'logins/s')}; ${formatSummary(oneUserS)}${cpuNote(oneUser, 'login')}`,
    );
    const pageC16 = nodePageOperation(ctx);
    const [withReads, reads] = await Promise.all([
      load(login, ONE_USER_CONCURRENCY, 1_000, STORM_MS),
      load(pageC16, 16, 0, STORM_MS + 2_000),
    ]);
    const withReadsS = summarize(withReads.latenciesNs);
    const withReadsOut = outcomes(withReads);
    detail(
      `  with 16 node-page reads alongside: ${withReadsOut.text}; ${rate(throughput(withReads), 'logins/s')}; ${formatSummary(withReadsS)}; reads ${rate(throughput(reads), 'req/s')}${errorNote(reads)}`,
    );

    const rows: Row[] = [
      {
        ...tokenMetrics.logins,
        value: `${rate(logins, 'logins/s')} = ${(share * 100).toFixed(0)}% of ${rate(bound, '/s')}${storm.errors ? `, ${storm.errors} errors` : ''}`,
        verdict: verdict(share >= 0.8 && storm.errors === 0),
      },
      {
        ...tokenMetrics.pageUnderStorm,
        value: `×${factor.toFixed(2)} (${ms(busyS.p99)} vs ${ms(quietS.p99)})`,
        verdict: verdict(factor <= 2 && busy.errors === 0 && quiet.errors === 0),
      },
      {
        ...tokenMetrics.oneUser,
        value: `${oneUserOut.text}; p99 ${ms(oneUserS.p99)}; ${formatCpu(cpuPerOperation(oneUser), 'login')}`,
        verdict: verdict(oneUserOut.allOk && oneUserS.p99 <= 1_000),
      },
      {
        ...tokenMetrics.oneUserWithReads,
        value: `${withReadsOut.text}; p99 ${ms(withReadsS.p99)}`,
        verdict: verdict(withReadsOut.allOk && withReadsS.p99 <= 1_000),
      },
    ];
    return {
      rows,
      figures: {
        bcrypt: { cost: ctx.env.adminHashCost, checkMs, samples: BCRYPT_SAMPLES, boundPerSecond: bound },
        storm: {
          concurrency,
          loginsPerSecond: logins,
          shareOfBound: share,
          errors: storm.errors,
          firstError: storm.firstError,
          latency: summarize(storm.latenciesNs),
        },
        nodePage: {
          quiet: { ...quietS, errors: quiet.errors },
          duringStorm: {
            ...busyS,
            errors: busy.errors,
            loginsPerSecond: throughput(during),
            stormErrors: during.errors,
          },
          p99Factor: factor,
        },
        oneUser: {
          concurrency: ONE_USER_CONCURRENCY,
          ok: oneUser.latenciesNs.length,
          errorsByStatus: oneUser.errorsByStatus,
          loginsPerSecond: throughput(oneUser),
          latency: oneUserS,
          cpuUsPerLogin: cpuPerOperation(oneUser),
          withReads: {
            ok: withReads.latenciesNs.length,
            errorsByStatus: withReads.errorsByStatus,
            loginsPerSecond: throughput(withReads),
            latency: withReadsS,
            readsPerSecond: throughput(reads),
          },
        },
      },
    };
  },
};
